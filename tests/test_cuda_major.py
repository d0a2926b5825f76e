"""One CUDA major per environment: the [[cuda-major]] rows, the solver keeping one major, ``cuda-major-mixed``.

The solver tests use the shipped database and a dict-backed source whose torch builds require the
CUDA libraries their variant brings (``nvidia-*-cu12`` for CUDA 12 builds, the unsuffixed 13.x
names for CUDA 13), as the real wheels do; the last test locks through the CLI from an index
served on 127.0.0.1.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from local_index import LocalIndex
from packaging.requirements import Requirement
from packaging.version import Version

from cudaresolve.core.versions import CudaVersion
from cudaresolve.db.cudamajor import major_of
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.errors import InvalidCompatData, NoSolution
from cudaresolve.resolve.solve import solve
from cudaresolve.resolve.source import Artifact, IndexRelease
from cudaresolve.target.build import TargetOptions, build_target
from test_source_solve import DictSource
from test_whole_env_lock import run_cli

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from cudaresolve.target.model import Target

CU12 = "nvidia-cuda-runtime-cu12==12.8.90"
CU13 = "nvidia-cuda-runtime==13.0.96"


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(None)


def h100(db: CompatDB, driver: str = "580.65.06") -> Target:
    return build_target(TargetOptions(gpus=("H100",), driver=driver, python="3.11", platform="linux_x86_64"), db)


class TorchSource(DictSource):
    """Every database build listed; torch's metadata requires the CUDA runtime of its build's major."""

    def __init__(self, db: CompatDB, projects: dict[str, list[tuple[str, list[str], bool]]]) -> None:
        super().__init__(projects)
        self.majors = {v.name: v.cuda.major for v in db.variants if v.cuda is not None}
        self.pypi = {str(r.version): r.pypi_variant for r in db.packages("torch")}

    def build_release(self, name: str, version: str, index_url: str) -> IndexRelease | None:
        url = f"{index_url}/{name}-{version}-cp311-cp311-linux_x86_64.whl"
        artifact = Artifact(filename=url.rsplit("/", 1)[1], url=url, sha256="0" * 64)
        return IndexRelease(name=name, version=Version(version), index_url=index_url, artifact=artifact)

    def requires(self, release: IndexRelease) -> Sequence[Requirement]:
        if release.name != "torch":
            return super().requires(release)
        local = release.version.local or self.pypi.get(release.version.public) or "cpu"
        major = self.majors.get(str(local))
        return [Requirement(CU13 if major == 13 else CU12)] if major else []


PROJECTS: dict[str, list[tuple[str, list[str], bool]]] = {
    "nvidia-cuda-runtime": [("13.0.96", [], False), ("0.0.1.dev5", [], False)],
    "nvidia-cuda-runtime-cu12": [("12.8.90", [], False)],
    "nvidia-cublas-cu12": [("12.8.4.1", [], False)],
    "nvidia-cufft": [("12.0.0.61", [], False)],
    "cuda-toolkit": [("13.0.2", [], False), ("12.8.1", [], False)],
    "app": [("1.0", ["nvidia-cublas-cu12"], False)],
    # jax[cuda12]'s shape: the newest release's extra needs CUDA 12 libraries, an old one has no such extra
    "gpuapp": [("2.0", ['nvidia-cublas-cu12; extra == "cuda12"'], False), ("0.1", [], False)],
    # nvidia-cutlass-dsl's shape: its CUDA 12 libraries on every install, the CUDA 13 ones added by an extra
    "nvidia-cutlass-dsl-libs-cu12": [("4.8.0", [], False)],
    "dsl": [("4.8.0", ["nvidia-cutlass-dsl-libs-cu12==4.8.0"], False), ("0.1", [], False)],
}


def lock(db: CompatDB, requests: list[str], target: Target | None = None) -> dict[str, str]:
    solution = solve(requests, db, target or h100(db), source=TorchSource(db, PROJECTS)).solution
    return {p.name: p.version for p in solution.packages} | {"<variant>": solution.variant}


@pytest.mark.parametrize(
    ("name", "version", "major"),
    [
        ("nvidia-cublas-cu12", "12.8.4.1", 12),
        ("nvidia-cudnn-cu13", "9.13.0.50", 13),  # the major is the name's, not cuDNN's version
        ("nvidia-nccl-cu11", "2.21.5", 11),
        ("nvidia-cuda-runtime", "13.0.96", 13),
        ("cuda-toolkit", "12.8.1", 12),
        ("nvidia-cufft", "12.0.0.61", 13),  # cuFFT 12 ships with CUDA 13
        ("nvidia-curand", "10.4.0.35", 13),
        ("nvidia-cuda-runtime", "0.0.1.dev5", None),  # NVIDIA's placeholder ties nothing
        ("nvidia-cuda-runtime-cu130-fake", "1.0", None),
        ("nvidia-cutlass-dsl-libs-cu12", "4.8.0", None),  # installed beside the cu13 one: no major (``unbound``)
        ("numpy", "2.1.0", None),
    ],
)
def test_rows_tie_names_and_versions_to_a_major(db: CompatDB, name: str, version: str, major: int | None) -> None:
    assert major_of(db.cuda_majors, name, version) == major


def test_a_bad_row_is_reported_by_db_check(db: CompatDB) -> None:
    from cudaresolve.core.decode import loads_toml
    from cudaresolve.db.database import shipped_path

    data = loads_toml(shipped_path().read_text(encoding="utf-8"))
    data["cuda-major"].append({"names": ["Nvidia cu{major}"], "source": "https://example.org"})
    with pytest.raises(InvalidCompatData) as caught:
        CompatDB.from_dict(data)
    assert "cuda-major" in str(caught.value.problems)


def test_torch_alone_keeps_its_own_major(db: CompatDB) -> None:
    pins = lock(db, ["torch"])
    major = 13 if pins["<variant>"].startswith("cu13") else 12
    tied = {n for n in pins if major_of(db.cuda_majors, n, pins[n]) is not None}
    assert tied and {major_of(db.cuda_majors, n, pins[n]) for n in tied} == {major}


def test_a_cuda12_library_moves_torch_to_a_cuda12_build(db: CompatDB) -> None:
    free = lock(db, ["torch"])
    assert free["<variant>"].startswith("cu13")  # what the driver 580 box gets by itself
    pins = lock(db, ["torch", "app"])  # app needs nvidia-cublas-cu12
    assert pins["<variant>"].startswith("cu12")
    assert pins["nvidia-cublas-cu12"] == "12.8.4.1" and "nvidia-cuda-runtime" not in pins
    assert "nvidia-cuda-runtime-cu12" in pins


def test_a_set_without_torch_takes_the_major_its_libraries_need(db: CompatDB) -> None:
    """No package of the database in the set: the variant is the major the libraries chose, never a better
    variant bought by an old release without them (found: jax[cuda12] locked as jax 0.4.21 on cu130)."""
    pins = lock(db, ["gpuapp[cuda12]"])
    assert pins["gpuapp"] == "2.0" and "nvidia-cublas-cu12" in pins and pins["<variant>"].startswith("cu12")


def test_a_library_family_installed_beside_the_other_majors_ties_none(db: CompatDB) -> None:
    """torch on CUDA 13 with a package that needs the CUTLASS DSL's CUDA 12 libraries (vllm 0.33.0 with
    nvidia-cutlass-dsl 4.8.0): the newest release is kept, torch stays on its CUDA 13 build."""
    pins = lock(db, ["torch", "dsl"])
    assert pins["dsl"] == "4.8.0" and pins["<variant>"].startswith("cu13")


def test_cuda_toolkit_release_follows_the_variant(db: CompatDB) -> None:
    assert lock(db, ["torch", "cuda-toolkit"])["cuda-toolkit"] == "13.0.2"
    assert lock(db, ["torch", "cuda-toolkit", "nvidia-cublas-cu12"])["cuda-toolkit"] == "12.8.1"


def test_a_set_mixing_majors_is_refused_with_its_own_reason(db: CompatDB) -> None:
    cu130 = next(str(r.version) for r in db.packages("torch") if any(b.variant == "cu130" for b in r.builds))
    with pytest.raises(NoSolution) as caught:
        lock(db, [f"torch=={cu130}+cu130", "app"])
    first = caught.value.findings[0]
    assert first.code == "cuda-major-mixed"
    assert (first.package, first.required) == ("nvidia-cublas-cu12", "12")
    assert first.found is not None and first.found.startswith("13 (torch ")
    assert "<cuda>" not in " ".join(f.message for f in caught.value.findings)  # no virtual name shown


def test_a_major_need_no_other_major_opposes_is_no_finding(db: CompatDB) -> None:
    """Found against uv on real PyPI: a failure whose causes held CUDA 12 needs only said "nvidia-nvtx-cu12 carries
    CUDA 12 libraries, but the rest of the set is built for CUDA another major ... built for CUDA ?"."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version
    from resolvelib.structs import RequirementInformation

    from cudaresolve.resolve.catalog import CUDA, Candidate, Need, build_catalog
    from cudaresolve.resolve.cudamajor import mixed

    catalog = build_catalog(db, h100(db, "580.65.06"))

    def lib(name: str) -> Candidate:
        return Candidate(name=name, version=Version("12.6.77"), variant=None, index_url="i")

    twelve = [Need(name=CUDA, specifier=SpecifierSet("==12.*"), parent=f"{n} 12.6.77") for n in ("a-cu12", "b-cu12")]
    causes = [RequirementInformation(twelve[0], lib("a-cu12")), RequirementInformation(twelve[1], lib("b-cu12"))]
    assert mixed(twelve[0], lib("a-cu12"), causes, catalog) is None
    thirteen = Need(name=CUDA, specifier=SpecifierSet("==13.*"), parent="c-cu13 13.0")
    found = mixed(twelve[0], lib("a-cu12"), [*causes, RequirementInformation(thirteen, lib("c-cu13"))], catalog)
    assert found is not None and (found.required, found.found) == ("12", "13 (c-cu13 12.6.77)")


def test_a_major_the_driver_cannot_run_names_the_driver(db: CompatDB) -> None:
    with pytest.raises(NoSolution) as caught:
        lock(db, ["torch", "nvidia-cufft==12.0.0.61"], h100(db, "535.104.05"))  # CUDA 13 on an R535 driver
    assert caught.value.findings[0].code == "driver-too-old"


@pytest.mark.parametrize(
    ("name", "version", "cuda"),
    [
        ("nvidia-cuda-runtime-cu12", "12.9.79", (12, 9)),
        ("nvidia-cuda-runtime-cu11", "11.8.89", (11, 8)),
        ("nvidia-cuda-runtime", "13.0.96", (13, 0)),
        ("nvidia-cublas-cu12", "12.9.1.4", None),  # cuBLAS is versioned as itself, not as the toolkit
        ("nvidia-cuda-runtime", "0.0.1.dev5", None),  # NVIDIA's placeholder
        ("numpy", "2.1.0", None),
    ],
)
def test_the_cuda_runtimes_own_releases_name_their_cuda_release(
    db: CompatDB, name: str, version: str, cuda: tuple[int, int] | None
) -> None:
    from cudaresolve.db.cudamajor import runtime_of

    assert runtime_of(db.cuda_majors, name, version) == cuda


def test_a_newer_runtime_an_index_release_pulls_in_is_said_to_run_by_minor_compat(db: CompatDB) -> None:
    """Found by the hardware audit: a package from an index that requires the CUDA 12.9 runtime, locked for a driver
    of CUDA 12.2 (R535), said nothing: the set runs there only through minor-version compatibility, as a variant
    newer than the driver does, and the lock says so with the driver that supports it in full."""
    projects = {**PROJECTS, "uses12": [("1.0", ["nvidia-cuda-runtime-cu12==12.9.79"], False)],
                "nvidia-cuda-runtime-cu12": [("12.9.79", [], False), ("12.1.105", [], False)]}  # fmt: skip
    target = build_target(TargetOptions(gpus=("A100",), driver="535.54.03", python="3.11", platform="linux_x86_64"), db)
    solution = solve(["uses12"], db, target, source=TorchSource(db, projects)).solution
    [told] = [w for w in solution.warnings if w.code == "minor-version-compat"]
    fields = dict(told.text.fields)
    assert (fields["package"], fields["cuda"], fields["found"]) == ("nvidia-cuda-runtime-cu12", "12.9", "535.54.03")
    release = db.cuda_release(CudaVersion(12, 9))
    assert release is not None and fields["required"] == str(release.min_driver("linux_x86_64"))
    older = solve(["nvidia-cuda-runtime-cu12==12.1.105"], db, target, source=TorchSource(db, projects)).solution
    assert not [w for w in older.warnings if w.code == "minor-version-compat"]  # 12.1 runs on R535 in full
    newer = build_target(TargetOptions(gpus=("A100",), driver="580.65.06", python="3.11", platform="linux_x86_64"), db)
    full = solve(["uses12"], db, newer, source=TorchSource(db, projects)).solution
    assert not [w for w in full.warnings if w.code == "minor-version-compat"]


def test_mixed_majors_refused_from_a_local_index(db: CompatDB, tmp_path: Path) -> None:
    target = h100(db)
    torch = solve(["torch"], db, target, gpu_source="pypi").solution
    version = next(p.version for p in torch.packages if p.name == "torch")
    major = 13 if torch.variant.startswith("cu13") else 12
    other = 12 if major == 13 else 13
    index = LocalIndex(tmp_path / "index")
    tag = "cp311-cp311-manylinux_2_28_x86_64"
    index.add("pypi", "torch", version, tag=tag, requires=[CU13 if major == 13 else CU12])
    index.add("pypi", "nvidia-cuda-runtime", "13.0.96", tag="py3-none-manylinux_2_27_x86_64")
    index.add("pypi", "nvidia-cuda-runtime-cu12", "12.8.90", tag="py3-none-manylinux_2_27_x86_64")
    index.add("pypi", "nvidia-cublas-cu12", "12.8.4.1", tag="py3-none-manylinux_2_27_x86_64")
    index.add("pypi", "nvidia-cublas", "13.1.0.3", tag="py3-none-manylinux_2_27_x86_64")
    wanted = "nvidia-cublas-cu12" if other == 12 else "nvidia-cublas"
    args = ["--gpu", "H100", "--driver", "580.65.06", "--python-version", "3.11", "--platform", "linux_x86_64"]
    same = "nvidia-cublas" if major == 13 else "nvidia-cublas-cu12"
    with index.serve() as base:
        mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
        (tmp_path / "ok").mkdir()
        good = run_cli(["lock", "torch", same, *args, mirror,
                        "--gpu-source", "pypi", "--json"], tmp_path / "ok", tmp_path / "cache")  # fmt: skip
        bad = run_cli(["lock", f"torch=={version}", wanted, *args, mirror, "--gpu-source", "pypi", "--json"], tmp_path,
                      tmp_path / "cache")  # fmt: skip
    assert good.returncode == 0, good.stdout + good.stderr
    assert bad.returncode != 0
    out = json.loads(bad.stdout)
    codes = [f["code"] for f in out["error"]["findings"]]
    assert codes[0] == "cuda-major-mixed", out
    assert not (tmp_path / "pylock.toml").exists()
    lock = json.loads(good.stdout)
    assert lock["complete"] is True and {p["name"] for p in lock["packages"]} >= {"torch", same}
