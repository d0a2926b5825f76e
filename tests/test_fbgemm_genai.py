"""fbgemm-gpu-genai: released in lockstep with fbgemm-gpu, paired with torch as its twin is.

The [[fbgemm-gpu-genai]] rows take the torch pairing and PyPI variant of the fbgemm-gpu row of the same
version (the wheels state no torch requirement) and their own SASS, read from each PyPI wheel. The
solver then pairs it with torch exactly like fbgemm-gpu: the release line of the chosen torch, on a
variant the driver runs, covering the GPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from cudaresolve.core.archs import Coverage, coverage
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.errors import NoSolution
from cudaresolve.resolve.solve import solve
from cudaresolve.target.build import TargetOptions, build_target
from test_cuda_major import PROJECTS, TorchSource

if TYPE_CHECKING:
    from cudaresolve.target.model import Target

GENAI = "fbgemm-gpu-genai"


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(None)


def box(db: CompatDB, gpu: str = "H100", driver: str = "580.65.06") -> Target:
    options = TargetOptions(gpus=(gpu,), driver=driver, python="3.12", platform="manylinux_2_35_x86_64")
    return build_target(options, db)


def lock(db: CompatDB, requests: list[str], target: Target) -> dict[str, str]:
    solution = solve(requests, db, target, source=TorchSource(db, PROJECTS), gpu_source="pypi").solution
    return {p.name: p.version for p in solution.packages} | {"<variant>": solution.variant}


def test_every_row_is_paired_like_its_fbgemm_gpu_twin(db: CompatDB) -> None:
    twins = {r.version: r for r in db.packages("fbgemm-gpu")}
    rows = db.packages(GENAI)
    assert len(rows) >= 10
    for row in rows:
        twin = twins[row.version]
        assert [str(r) for r in row.requires] == [str(r) for r in twin.requires], row.version
        assert row.pypi_variant == twin.pypi_variant
        (build,) = row.builds
        assert (build.variant, build.channel) == (twin.pypi_variant, "pypi") and build.sass, row.version


@pytest.mark.parametrize(
    ("driver", "genai", "torch_line", "major"),
    [("580.65.06", "1.9.0", "2.14.", 13), ("570.86.10", "1.5.0", "2.10.", 12)],
)
def test_the_release_of_torchs_line_on_a_variant_the_driver_runs(
    db: CompatDB, driver: str, genai: str, torch_line: str, major: int
) -> None:
    pins = lock(db, [GENAI], box(db, driver=driver))
    assert pins[GENAI] == genai and pins["torch"].startswith(torch_line)
    assert pins["<variant>"].startswith(f"cu{major}")


@pytest.mark.parametrize(("torch", "genai"), [("torch==2.9.*", "1.4.0"), ("torch==2.6.*", "1.1.0")])
def test_a_torch_pin_picks_the_genai_release_of_its_line(db: CompatDB, torch: str, genai: str) -> None:
    pins = lock(db, [torch, GENAI, "fbgemm-gpu"], box(db))
    assert pins[GENAI] == genai == pins["fbgemm-gpu"]  # lockstep: the same release line as fbgemm-gpu


def test_a_genai_release_of_another_torch_is_refused(db: CompatDB) -> None:
    with pytest.raises(NoSolution) as caught:
        lock(db, ["torch==2.13.*", f"{GENAI}==1.9.0"], box(db))
    assert caught.value.findings[0].code in ("pin-conflict", "request-conflict")


def test_a_gpu_below_every_sass_list_is_refused_with_the_sm(db: CompatDB) -> None:
    rows = db.packages(GENAI)
    target = box(db, "P100", "535.104.05")
    (gpu,) = target.gpus
    covered = [r for r in rows for b in r.builds if coverage(b.archs, gpu.cc) is not Coverage.NONE]
    assert covered == []  # the GenAI kernels start at sm_70 (1.0-1.3), sm_75 or sm_80 in the wheels read
    with pytest.raises(NoSolution) as caught:
        lock(db, [GENAI], target)
    assert caught.value.findings[0].code in ("sm-not-covered", "gpu-too-old")
    assert any(f.package == GENAI for f in caught.value.findings)


def test_sass_lists_differ_by_release(db: CompatDB) -> None:
    """Read per wheel, not copied: sm_70 up to 1.3.0, sm_75 and sm_120a in 1.4.0 only, sm_100f in 1.9.0."""
    lists = {str(r.version): {a.name for b in r.builds for a in b.sass} for r in db.packages(GENAI)}
    assert "sm_70" in lists["1.3.0"] and "sm_70" not in lists["1.4.0"]
    assert "sm_75" in lists["1.4.0"] and "sm_100f" in lists["1.9.0"]
