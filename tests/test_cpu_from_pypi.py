"""A CPU target whose cpu builds cannot be had: the set PyPI carries (issue 22, item 2).

PyPI's Linux x86_64 torch, torchvision and torchaudio are CUDA builds whose CPU code runs without a GPU
(``[packages] runs-without-gpu`` in compat.toml). A CPU target takes them only when PyPI is the one source
(``--gpu-source pypi``), or when the PyTorch index's cpu builds cannot be read, with an
``index-unreachable-pypi-set`` warning naming the smaller cpu set; packages without that fact (xformers) are
never taken for a CPU target.
"""

from __future__ import annotations

import json
import tomllib
from typing import TYPE_CHECKING, Any

import pytest
from local_index import LocalIndex

from cudaresolve.db.database import load_compat
from cudaresolve.errors import NoSolution
from cudaresolve.resolve.catalog import CUDA, build_catalog
from cudaresolve.resolve.solve import solve
from cudaresolve.target.build import TargetOptions, build_target
from test_pypi_builds import PYPI, PYTORCH, TAG, _closed_port, _mirrors, _run

if TYPE_CHECKING:
    from pathlib import Path

CPU = TargetOptions(cpu=True, python="3.11", platform="linux_x86_64")
ARGS = ["--cpu", "--python-version", "3.11", "--platform", "linux_x86_64"]


def test_only_pypi_as_source_gives_a_cpu_target_pypis_cuda_builds_of_packages_that_run_without_a_gpu() -> None:
    db = load_compat(None)
    target = build_target(CPU, db)
    assert db.package_facts.runs_without_gpu >= {"torch", "torchvision"}
    auto = solve(["torch", "torchvision"], db, target).solution
    assert auto.variant == "cpu" and {p.version.split("+")[1] for p in auto.packages} == {"cpu"}
    pypi = solve(["torch", "torchvision"], db, target, gpu_source="pypi").solution
    assert pypi.variant != "cpu" and {p.index for p in pypi.packages} == {PYPI}
    releases = {p.name: p.version for p in pypi.packages}
    torch_row = next(r for r in db.packages("torch") if str(r.version) == releases["torch"])
    assert pypi.variant == torch_row.pypi_variant  # the very wheel PyPI carries for that release
    catalog = build_catalog(db, target, gpu_source="pypi")
    assert next(c.variant for c in catalog.for_name(CUDA)) != "cpu"  # no cpu build is on PyPI for Linux


def test_a_package_not_known_to_run_without_a_gpu_is_never_taken_for_a_cpu_target() -> None:
    db = load_compat(None)
    assert "xformers" not in db.package_facts.runs_without_gpu
    with pytest.raises(NoSolution):
        solve(["xformers"], db, build_target(CPU, db), gpu_source="pypi")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """PyPI carrying the twin set a CPU target falls back to, plus numpy; the PyTorch index is never served."""
    db = load_compat(None)
    pypi_set = solve(["torch", "torchvision"], db, build_target(CPU, db), gpu_source="pypi").solution
    best = solve(["torch", "torchvision"], db, build_target(CPU, db)).solution
    index = LocalIndex(tmp_path_factory.mktemp("indexes"))
    torch = next(p.version for p in pypi_set.packages if p.name == "torch")
    index.add("pypi", "torch", torch, tag=TAG, requires=["filelock"])
    for p in pypi_set.packages:
        if p.name != "torch":
            index.add("pypi", p.name, p.version, tag=TAG, requires=[f"torch=={torch}"])
    index.add("pypi", "filelock", "3.16.1")
    index.add("pypi", "numpy", "1.26.4", tag=TAG)
    index.add("pypi", "app", "0.1")  # an early release that needed no torch
    index.add("pypi", "app", "2.0", requires=["torch"])
    with index.serve() as base:
        yield base, pypi_set, best


def test_a_cpu_target_with_the_pytorch_index_down_locks_pypis_set_and_names_the_cpu_one(
    served: Any, tmp_path: Path
) -> None:
    base, pypi_set, best = served
    closed = f"http://127.0.0.1:{_closed_port()}"
    result = _run(["lock", "torch", "torchvision", "numpy", *ARGS, *_mirrors(base, closed), "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["complete"] is True and out["variant"] == pypi_set.variant
    locked = {p["name"]: p for p in tomllib.loads((tmp_path / "pylock.toml").read_text())["packages"]}
    assert set(locked) == {"torch", "torchvision", "numpy", "filelock"}
    assert {n: locked[n]["version"] for n in ("torch", "torchvision")} == {p.name: p.version for p in pypi_set.packages}
    assert {p["index"] for p in locked.values()} == {f"{base}/pypi/simple"}  # the mirror that served them
    (better,) = [w["message"] for w in out["warnings"] if w["code"] == "index-unreachable-pypi-set"]
    best_torch = next(p.version for p in best.packages if p.name == "torch")
    assert f"torch {best_torch}" in better and f"{PYTORCH}/cpu" in better and "ConnectError" in better
    codes = [w["code"] for w in out["warnings"]]
    assert "incomplete-lock" not in codes and "index-unavailable-fallback" not in codes


def test_under_exclude_newer_no_database_set_is_offered_instead(served: Any, tmp_path: Path) -> None:
    """Found by the real-project audit: with ``--exclude-newer 2024-06-01`` and the PyTorch index down, the lock
    said the best set was torch 2.15.0+cpu, a release from after that date: the database knows no upload times."""
    base, pypi_set, _ = served
    closed = f"http://127.0.0.1:{_closed_port()}"
    args = ["lock", "torch", "torchvision", *ARGS, *_mirrors(base, closed), "--exclude-newer", "2024-06-01", "--json"]
    result = _run(args, tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert {p["name"]: p["version"] for p in out["packages"] if p["name"] in ("torch", "torchvision")} == {
        p.name: p.version for p in pypi_set.packages
    }  # the files here state no upload time: kept, as PEP 700 allows
    assert "index-unreachable-pypi-set" not in {w["code"] for w in out["warnings"]}


def test_a_project_needing_torch_is_not_backtracked_to_a_release_without_it(served: Any, tmp_path: Path) -> None:
    """With the cpu builds unreadable, a set that dodges torch (app 0.1, which needs none) is no answer: the lock
    takes PyPI's torch for the newest app, and says the cpu set could not be reached (found: accelerate 0.0.1)."""
    base, pypi_set, _ = served
    closed = f"http://127.0.0.1:{_closed_port()}"
    result = _run(["lock", "app", *ARGS, *_mirrors(base, closed), "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    pins = {p["name"]: p["version"] for p in out["packages"]}
    torch = next(p.version for p in pypi_set.packages if p.name == "torch")
    assert pins == {"app": "2.0", "torch": torch, "filelock": "3.16.1"}
    assert [w["code"] for w in out["warnings"]].count("index-unreachable-pypi-set") == 1


def test_gpu_source_pypi_on_a_cpu_target_needs_no_pytorch_index_at_all(served: Any, tmp_path: Path) -> None:
    base, _, _ = served
    closed = f"http://127.0.0.1:{_closed_port()}"
    args = ["lock", "torch", *ARGS, *_mirrors(base, closed), "--gpu-source", "pypi", "--json"]
    out = json.loads(_run(args, tmp_path).stdout)
    assert out["complete"] is True and [w["code"] for w in out["warnings"]] == []
    assert {p["name"] for p in out["packages"]} == {"torch", "filelock"}


def test_a_cpu_target_with_the_pytorch_index_down_does_not_walk_every_release_first(tmp_path: Path) -> None:
    """The search stops at the first package whose cpu builds cannot be read: it does not read the metadata of
    every older release of the project that needs it (deepspeed's hundred sdists, each built) before the lock
    takes PyPI's set."""
    db = load_compat(None)
    pypi_set = solve(["torch"], db, build_target(CPU, db), gpu_source="pypi").solution
    torch = next(p.version for p in pypi_set.packages if p.name == "torch")
    index = LocalIndex(tmp_path / "indexes")
    index.add("pypi", "torch", torch, tag=TAG)
    releases = [f"1.{i}" for i in range(12)]
    for version in releases:
        index.add("pypi", "app", version, requires=["torch"])
    with index.serve() as base:
        closed = f"http://127.0.0.1:{_closed_port()}"
        result = _run(["lock", "app", *ARGS, *_mirrors(base, closed), "--json"], tmp_path)
        assert result.returncode == 0, result.stderr
        read = {p for p, n in index.requests.items() if n and "/app-" in p and p.endswith(".metadata")}
    assert {p["name"]: p["version"] for p in json.loads(result.stdout)["packages"]} == {"app": "1.11", "torch": torch}
    assert len(read) <= 2, sorted(read)  # the newest, and at most the one read ahead with it
