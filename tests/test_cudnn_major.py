"""One cuDNN major per environment: the [[cudnn-major]] rows, the solver keeping one major, ``cudnn-major-mixed``.

The locks run through the CLI from an index served on 127.0.0.1 holding tiny wheels under the real
file names, with the real ``Requires-Dist`` of their CUDA and cuDNN libraries (torch 2.3.1 pins
``nvidia-cudnn-cu12==8.9.2.26``, torch 2.4.0 ``==9.1.0.70``, torch 2.8.0 ``==9.10.2.21``, as PyPI's
METADATA says); onnxruntime-gpu names no cuDNN in its metadata before 1.21, so only the database's rows
tie it. The general rule is also checked on a package the shipped rows do not name (``app``, tied by a
row added here).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from local_index import LocalIndex
from packaging.requirements import Requirement

from cudaresolve.core.decode import loads_toml
from cudaresolve.db.cudamajor import major_of
from cudaresolve.db.database import CompatDB, load_compat, shipped_path
from cudaresolve.errors import InvalidCompatData, NoSolution
from cudaresolve.resolve.solve import solve
from test_cuda_major import h100
from test_source_solve import DictSource
from test_whole_env_lock import run_cli

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from cudaresolve.resolve.source import IndexRelease

LINUX = 'platform_system == "Linux" and platform_machine == "x86_64"'
TORCH = {  # PyPI's METADATA of the cp311 manylinux x86_64 wheels (read 2026-11-26)
    "2.3.1": ["nvidia-cuda-runtime-cu12==12.1.105", "nvidia-cudnn-cu12==8.9.2.26"],
    "2.4.0": ["nvidia-cuda-runtime-cu12==12.1.105", "nvidia-cudnn-cu12==9.1.0.70"],
    "2.8.0": ["nvidia-cuda-runtime-cu12==12.8.90", "nvidia-cudnn-cu12==9.10.2.21"],
}
ORT = {  # the tag of each release's cp311 manylinux x86_64 wheel on PyPI; 1.21.0 on: the cuda/cudnn extras
    "1.18.1": "cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64",
    "1.19.2": "cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64",
    "1.26.0": "cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64",
    "1.27.0": "cp311-cp311-manylinux_2_27_x86_64.manylinux_2_28_x86_64",
}
ORT_EXTRAS = {
    "1.26.0": ['nvidia-cuda-runtime-cu12~=12.0; extra == "cuda"', 'nvidia-cudnn-cu12~=9.0; extra == "cudnn"'],
    "1.27.0": ['nvidia-cuda-runtime-cu13~=13.0; extra == "cuda"', 'nvidia-cudnn-cu13~=9.0; extra == "cudnn"'],
}
ARGS = ["--gpu", "H100", "--driver", "580.65.06", "--python-version", "3.11", "--platform", "linux_x86_64",
        "--gpu-source", "pypi", "--json"]  # fmt: skip


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(None)


@pytest.mark.parametrize(
    ("name", "version", "cuda", "cudnn"),
    [
        ("nvidia-cudnn-cu12", "9.1.0.70", 12, 9),  # the name says CUDA, the version cuDNN
        ("nvidia-cudnn-cu12", "8.9.2.26", 12, 8),
        ("nvidia-cudnn-cu11", "8.7.0.84", 11, 8),
        ("nvidia-cudnn-cu13", "9.13.0.50", 13, 9),
        ("nvidia-cudnn-cu12", "0.0.1.dev5", 12, None),  # a placeholder ties no cuDNN major
        ("onnxruntime-gpu", "1.11.0", 11, 8),
        ("onnxruntime-gpu", "1.18.1", 11, 8),
        ("onnxruntime-gpu", "1.19.0", 12, 9),
        ("onnxruntime-gpu", "1.26.0", 12, 9),
        ("onnxruntime-gpu", "1.27.0", 13, 9),
        ("onnxruntime-gpu", "1.40.0", None, None),  # after the rows: unknown, tied to nothing
        ("onnxruntime", "1.19.0", None, None),  # the CPU package
        ("torch", "2.4.0", None, None),
    ],
)
def test_rows_tie_releases_to_cuda_and_cudnn_majors(
    db: CompatDB, name: str, version: str, cuda: int | None, cudnn: int | None
) -> None:
    assert major_of(db.cuda_majors, name, version) == cuda
    assert major_of(db.cuda_majors, name, version, library="cudnn") == cudnn


def test_every_onnxruntime_row_has_a_source_naming_pypi(db: CompatDB) -> None:
    rows = [r for r in db.cuda_majors if "onnxruntime-gpu" in r.names]
    assert {r.library for r in rows} == {"cuda", "cudnn"}
    assert all("pypi.org/project/onnxruntime-gpu" in r.source for r in rows)


def test_a_bad_cudnn_row_is_reported_by_db_check() -> None:
    data = loads_toml(shipped_path().read_text(encoding="utf-8"))
    data["cudnn-major"].append({"names": ["Bad Name"], "source": "https://example.org"})
    with pytest.raises(InvalidCompatData) as caught:
        CompatDB.from_dict(data)
    assert "cudnn-major" in str(caught.value.problems)


def _with_app_rows(db: CompatDB) -> CompatDB:
    """The shipped database plus rows tying ``app`` 1.x to cuDNN 8 and 2.x to cuDNN 9 (both CUDA 12)."""
    data = loads_toml(shipped_path().read_text(encoding="utf-8"))
    data["cudnn-major"] += [
        {"names": ["app"], "versions": "<2", "major": 8, "source": "https://example.org/app"},
        {"names": ["app"], "versions": ">=2", "major": 9, "source": "https://example.org/app"},
    ]
    return CompatDB.from_dict(data)


class TorchPins(DictSource):
    """Every database build listed; torch's metadata pins the CUDA runtime and cuDNN above."""

    def requires(self, release: IndexRelease) -> Sequence[Requirement]:
        if release.name == "torch":
            return [Requirement(r) for r in TORCH.get(release.version.public, [])]
        return super().requires(release)


PROJECTS = {
    "nvidia-cudnn-cu12": [("9.10.2.21", [], False), ("9.1.0.70", [], False), ("8.9.2.26", [], False)],
    "nvidia-cuda-runtime-cu12": [("12.8.90", [], False), ("12.1.105", [], False)],
    "app": [("2.0", [], False), ("1.0", [], False)],
}


@pytest.mark.parametrize(("torch", "app"), [("torch<2.4", "1.0"), ("torch>=2.4,<2.9", "2.0")])
def test_the_rule_picks_the_release_of_torchs_cudnn_major(db: CompatDB, torch: str, app: str) -> None:
    ruled = _with_app_rows(db)
    solution = solve([torch, "app"], ruled, h100(ruled), source=TorchPins(PROJECTS), gpu_source="pypi").solution
    pins = {p.name: p.version for p in solution.packages}
    assert pins["app"] == app
    assert "<cudnn>" not in pins  # the virtual major is no package
    assert (
        major_of(ruled.cuda_majors, "nvidia-cudnn-cu12", pins["nvidia-cudnn-cu12"], library="cudnn") == int(app[0]) + 7
    )


def test_without_the_rows_nothing_is_tied(db: CompatDB) -> None:
    solution = solve(["torch<2.4", "app"], db, h100(db), source=TorchPins(PROJECTS), gpu_source="pypi").solution
    assert {p.name: p.version for p in solution.packages}["app"] == "2.0"  # the newest: no row, no tie


def test_a_pin_forcing_a_mix_is_refused_with_the_cudnn_reason(db: CompatDB) -> None:
    ruled = _with_app_rows(db)
    with pytest.raises(NoSolution) as caught:
        solve(["torch==2.3.1", "app==2.0"], ruled, h100(ruled), source=TorchPins(PROJECTS), gpu_source="pypi")
    first = caught.value.findings[0]
    assert first.code == "cudnn-major-mixed"
    assert first.package in ("app", "nvidia-cudnn-cu12")
    assert "<cudnn>" not in " ".join(f.message for f in caught.value.findings)


def _index(tmp_path: Path) -> LocalIndex:
    index = LocalIndex(tmp_path / "index")
    manylinux = "py3-none-manylinux_2_27_x86_64"
    for version, requires in TORCH.items():
        tag = "cp311-cp311-manylinux_2_28_x86_64" if version == "2.8.0" else "cp311-cp311-manylinux1_x86_64"
        index.add("pypi", "torch", version, tag=tag, requires=[f"{r}; {LINUX}" for r in requires])
    for name, versions in PROJECTS.items():
        if name.startswith("nvidia-"):
            for version, _, _ in versions:
                index.add("pypi", name, version, tag=manylinux)
    for version, tag in ORT.items():
        index.add("pypi", "onnxruntime-gpu", version, tag=tag, requires=["numpy>=1.21.6", *ORT_EXTRAS.get(version, [])])
    index.add("pypi", "numpy", "2.1.0", tag="cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64")
    return index


def _lock(base: str, requests: list[str], folder: Path, cache: Path) -> tuple[int, dict[str, object]]:
    folder.mkdir()
    mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
    done = run_cli(["lock", *requests, *ARGS, mirror], folder, cache)
    return done.returncode, json.loads(done.stdout)


def test_onnxruntime_beside_torch_from_a_local_index(tmp_path: Path) -> None:
    """torch 2.8.0 (CUDA 12, cuDNN 9): onnxruntime-gpu 1.26.0, not 1.27.0 (CUDA 13) nor 1.18.1 (CUDA 11, cuDNN 8);
    torch 2.3.1 (cuDNN 8) with 1.19.2 (cuDNN 9) is refused with ``cudnn-major-mixed``; nothing is written."""
    index = _index(tmp_path)
    cache = tmp_path / "cache"
    with index.serve() as base:
        rc, good = _lock(base, ["torch", "onnxruntime-gpu"], tmp_path / "good", cache)
        rc_old, old = _lock(base, ["torch==2.4.0", "onnxruntime-gpu"], tmp_path / "old", cache)
        rc_bad, bad = _lock(base, ["torch==2.3.1", "onnxruntime-gpu==1.19.2"], tmp_path / "bad", cache)
    assert rc == 0, good
    pins = {p["name"]: p["version"] for p in good["packages"]}  # type: ignore[index]
    assert (pins["torch"], pins["onnxruntime-gpu"], pins["nvidia-cudnn-cu12"]) == ("2.8.0", "1.26.0", "9.10.2.21")
    assert rc_old == 0, old
    assert {p["name"]: p["version"] for p in old["packages"]}["onnxruntime-gpu"] == "1.26.0"  # type: ignore[index]
    assert rc_bad != 0
    findings = bad["error"]["findings"]  # type: ignore[index]
    assert findings[0]["code"] == "cudnn-major-mixed", bad
    assert "1.19.2" in findings[0]["message"] or "2.3.1" in findings[0]["message"]
    assert not (tmp_path / "bad" / "pylock.toml").exists()


def test_db_show_counts_the_rows_that_tie_onnxruntime(db: CompatDB, tmp_path: Path) -> None:
    majors = db.summary().to_dict()["majors"]
    ort = {m["library"]: m["rows"] for m in majors if m["names"] == "onnxruntime-gpu"}
    assert ort == {lib: sum(r.library == lib and "onnxruntime-gpu" in r.names for r in db.cuda_majors) for lib in ort}
    assert ort["cuda"] >= 3 and ort["cudnn"] >= 2  # CUDA 11, 12, 13; cuDNN 8, 9
    done = run_cli(["db", "show"], tmp_path, tmp_path / "cache")
    assert done.returncode == 0 and "onnxruntime-gpu cudnn" in " ".join(done.stdout.split())
