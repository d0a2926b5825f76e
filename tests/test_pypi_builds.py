"""PyPI-hosted GPU builds as first-class sources (issue 13, item 1).

A torch release's PyPI wheel is the same build as its ``pypi-variant`` index build, under the plain
version (``2.10.0`` for ``2.10.0+cu128``). When the chosen variant is the one PyPI carries, the build
comes from the default index unless the user asks for the PyTorch index (``--gpu-source pytorch``);
when the PyTorch index cannot be reached, the lock is made of what PyPI carries, complete and
hashed, and one ``index-unreachable-pypi-set`` warning names the better set and why. Indexes of
tiny real wheels are served on 127.0.0.1 (``tools/local_index.py``); the unreachable PyTorch index
is a closed port on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tomllib
from typing import TYPE_CHECKING, Any

import pytest
from local_index import LocalIndex, find_uv, uv_synced_venv
from packaging.version import Version

from cudaresolve.db.database import load_compat
from cudaresolve.resolve.catalog import build_catalog
from cudaresolve.resolve.solve import solve
from cudaresolve.target.build import TargetOptions, build_target

if TYPE_CHECKING:
    from pathlib import Path

    from cudaresolve.resolve.model import Solution

PYPI = "https://pypi.org/simple"
PYTORCH = "https://download.pytorch.org/whl"
TAG = "cp311-cp311-manylinux_2_28_x86_64"
SRC = os.path.join(os.path.dirname(__file__), "..", "src")
# Driver 560 runs cu126 fully and cu128 only through minor-version compatibility: the database's best set is
# a cu126 one from the PyTorch index, while the newest set PyPI carries is a cu128 one (PyPI never has cu126 here).
OLD = TargetOptions(gpus=("H100",), driver="560.35.03", python="3.11", platform="linux_x86_64")
# Driver 580 runs cu130, PyPI's variant of the newest torch that pairs with fbgemm-gpu.
NEW = TargetOptions(gpus=("H100",), driver="580.65.06", python="3.11", platform="linux_x86_64")
REQUEST = ["torch", "fbgemm-gpu", "numpy"]


def _args(target: TargetOptions) -> list[str]:
    return ["--gpu", "H100", "--driver", str(target.driver), "--python-version", "3.11", "--platform", "linux_x86_64"]


def _db_set(target: TargetOptions, gpu_source: str) -> Solution:
    db = load_compat(None)
    return solve(["torch", "fbgemm-gpu"], db, build_target(target, db), gpu_source=gpu_source).solution


def _closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on: connecting to it is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _add_set(index: LocalIndex, solution: Solution, name: str, where: dict[str, str]) -> None:
    """The set's wheel of ``name`` on the local index standing in for its real one (``where``: URL -> name);
    a companion requires the set's torch release, as fbgemm-gpu's pairing does."""
    torch = next(Version(p.version).public for p in solution.packages if p.name == "torch")
    for p in solution.packages:
        if p.name != name:
            continue
        local = where[p.index.rstrip("/")]
        if p.name == "torch":
            cuda = f"nvidia-cuda-runtime-{solution.variant}-fake"
            index.add(local, "torch", p.version, tag=TAG, requires=["filelock", f"{cuda}==1.0"], imports=["filelock"])
            index.add("pypi", cuda, "1.0", tag="py3-none-manylinux_2_17_x86_64")
        else:
            index.add(local, p.name, p.version, tag=TAG, requires=[f"torch=={torch}"])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """PyPI with the sets it carries (old and new driver); the PyTorch index with the index builds."""
    root = tmp_path_factory.mktemp("indexes")
    index = LocalIndex(root)
    sets = {
        "old-best": _db_set(OLD, "auto"),
        "old-pypi": _db_set(OLD, "pypi"),
        "new-auto": _db_set(NEW, "auto"),
        "new-pytorch": _db_set(NEW, "pytorch"),
    }
    where = {PYPI: "pypi", **{f"{PYTORCH}/{v}": f"whl/{v}" for v in ("cu126", "cu128", "cu130", "cu132")}}
    added: set[tuple[str, str, str]] = set()
    for solution in sets.values():
        for p in solution.packages:
            if (p.index, p.name, p.version) not in added:
                added.add((p.index, p.name, p.version))
                _add_set(index, solution, p.name, where)
    index.add("pypi", "filelock", "3.16.1")
    index.add("pypi", "numpy", "1.26.4", tag=TAG)
    with index.serve() as base:
        yield base, sets, index


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(SRC), "CUDARESOLVE_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "cudaresolve", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def _mirrors(pypi: str, pytorch: str) -> list[str]:
    return [f"--index-mirror={PYPI}={pypi}/pypi/simple", f"--index-mirror={PYTORCH}={pytorch}/whl"]


def test_database_sets_the_scenarios_rest_on() -> None:
    """The premises: on driver 560 the best set is an index (cu126) one and PyPI's best is cu128; on 580 the
    chosen variant is PyPI's, so ``auto`` takes the PyPI builds and ``pytorch`` the index's."""
    old_best, old_pypi = _db_set(OLD, "auto"), _db_set(OLD, "pypi")
    assert (old_best.variant, old_pypi.variant) == ("cu126", "cu128")
    assert {p.index for p in old_best.packages} == {f"{PYTORCH}/cu126"}
    assert {p.index for p in old_pypi.packages} == {PYPI} and old_pypi.index_url == PYPI
    assert all(Version(p.version).local is None for p in old_pypi.packages)
    new_auto, new_pytorch = _db_set(NEW, "auto"), _db_set(NEW, "pytorch")
    assert new_auto.variant == new_pytorch.variant
    torch_auto = next(p for p in new_auto.packages if p.name == "torch")
    torch_index = next(p for p in new_pytorch.packages if p.name == "torch")
    assert (torch_auto.index, torch_index.index) == (PYPI, f"{PYTORCH}/{new_auto.variant}")
    assert torch_index.version == f"{torch_auto.version}+{new_auto.variant}"  # the same build, two names


def test_the_pypi_twin_is_the_pypi_variant_build() -> None:
    """Each release's PyPI wheel is modelled as its ``pypi-variant`` index build: the same code, the plain
    version, the default index, on Linux x86_64 only; releases with their own ``channel = "pypi"`` row
    (the 2.13.0 wheel differs from the index's) get no second one."""
    db = load_compat(None)
    catalog = build_catalog(db, build_target(NEW, db))
    for release in db.packages("torch"):
        twins = [c for c in catalog.for_name("torch") if c.release is release and c.channel == "pypi"]
        explicit = [b for b in release.builds if b.channel == "pypi" and "linux_x86_64" in b.platforms]
        if not twins:
            continue
        assert len(twins) == 1 and twins[0].variant == release.pypi_variant
        assert (twins[0].version, twins[0].index_url) == (release.version, PYPI)
        source = explicit[0] if explicit else next(b for b in release.builds if b.variant == release.pypi_variant)
        assert twins[0].build is not None and twins[0].build.archs == source.archs
    win = build_catalog(db, build_target(TargetOptions(gpus=("H100",), driver="580.65.06", python="3.11",
                                                       platform="win_amd64"), db))
    assert not [c for c in win.for_name("torch") if c.channel == "pypi"]  # PyPI's Windows torch is a CPU build


def test_an_old_driver_still_gets_the_index_build() -> None:
    """A target whose best variant is not PyPI's (driver 470 on an A800: cu118) comes from the PyTorch index."""
    db = load_compat(None)
    target = build_target(TargetOptions(gpus=("A800",), driver="470.129.06", python="3.11"), db)
    solution = solve(["torch"], db, target).solution
    torch = next(p for p in solution.packages if p.name == "torch")
    assert (solution.variant, torch.index, solution.index_url) == ("cu118", f"{PYTORCH}/cu118", f"{PYTORCH}/cu118")
    assert torch.version.endswith("+cu118")


def test_unreachable_pytorch_index_gives_a_complete_lock_from_pypi(served: Any, tmp_path: Path) -> None:
    base, sets, _ = served
    closed = f"http://127.0.0.1:{_closed_port()}"
    result = _run(["lock", *REQUEST, *_args(OLD), *_mirrors(base, closed), "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["complete"] is True and out["output"] == "pylock.toml"
    lock = tomllib.loads((tmp_path / "pylock.toml").read_text())
    locked = {p["name"]: p for p in lock["packages"]}
    pypi_set = {p.name: p.version for p in sets["old-pypi"].packages}
    assert {n: locked[n]["version"] for n in pypi_set} == pypi_set
    assert {locked[n]["index"] for n in pypi_set} == {f"{base}/pypi/simple"}  # the mirror that served each file
    assert {"numpy", "filelock", "nvidia-cuda-runtime-cu128-fake"} <= set(locked)
    for package in lock["packages"]:
        wheel = package["wheels"][0]
        assert len(wheel["hashes"]["sha256"]) == 64 and wheel["url"].startswith(f"{base}/files/")
    assert lock["tool"]["cudaresolve"]["variant"] == "cu128"
    codes = [w["code"] for w in out["warnings"]]
    assert "index-unavailable-fallback" not in codes and "incomplete-lock" not in codes
    better = [w["message"] for w in out["warnings"] if w["code"] == "index-unreachable-pypi-set"]
    assert len(better) == 1
    best_torch = next(p.version for p in sets["old-best"].packages if p.name == "torch")
    assert f"torch {best_torch}" in better[0] and f"{PYTORCH}/cu126" in better[0]
    assert closed in better[0] and "ConnectError" in better[0]  # the URL asked and the error
    # offline afterwards: the same lock from the cache, and the same warning, now naming the missing page
    offline = _run(["lock", *REQUEST, *_args(OLD), *_mirrors(base, closed), "--offline", "--json", "-o",
                    "pylock.offline.toml"], tmp_path)  # fmt: skip
    assert offline.returncode == 0, offline.stderr
    again = json.loads(offline.stdout)
    assert again["complete"] is True and again["packages"] == out["packages"]
    later = [w["message"] for w in again["warnings"] if w["code"] == "index-unreachable-pypi-set"]
    assert len(later) == 1 and f"torch {best_torch}" in later[0] and "is not in the cache" in later[0]
    uv = find_uv()
    if uv is None:
        pytest.skip("uv is not installed")
    python = uv_synced_venv(uv, tmp_path, tmp_path / "venv")
    imported = subprocess.run([str(python), "-c", "import torch, numpy; print(torch.ORIGIN, torch.__version__)"],
                              capture_output=True, text=True, timeout=60)
    assert imported.stdout.split() == ["pypi", pypi_set["torch"]]


@pytest.mark.parametrize("output", ["pylock.toml", "requirements.txt"])
def test_a_lock_made_without_the_pytorch_index_asks_it_again_on_every_repeat(
    served: Any, tmp_path: Path, output: str
) -> None:
    """Each repeat of a lock made while the PyTorch index was down asks the index again and, while it is still
    down, says so again, in its output and in the file; such a lock is never stamped to be kept (``lock.keep``)."""
    base, sets, _ = served
    closed = f"http://127.0.0.1:{_closed_port()}"
    fmt = ["--format", "requirements"] if output.endswith(".txt") else []
    argv = ["lock", *REQUEST, *_args(OLD), *_mirrors(base, closed), *fmt, "--json", "-o", output]
    pypi_set = {p.name: p.version for p in sets["old-pypi"].packages}
    for attempt in range(3):
        result = _run(argv, tmp_path)
        assert result.returncode == 0, (attempt, result.stderr)
        out = json.loads(result.stdout)
        codes = [w["code"] for w in out["warnings"]]
        assert codes.count("index-unreachable-pypi-set") == 1, (attempt, codes)
        assert {p["name"]: p["version"] for p in out["packages"] if p["name"] in pypi_set} == pypi_set
        text = (tmp_path / output).read_text()
        assert "index-unreachable-pypi-set" in text and "inputs = " not in text, attempt  # never stamped


def test_reachable_indexes_take_pypi_builds_by_default_and_the_index_when_asked(served: Any, tmp_path: Path) -> None:
    base, sets, _index = served
    auto = _run(["lock", *REQUEST, *_args(NEW), *_mirrors(base, base), "--json", "-o", "pylock.auto.toml"], tmp_path)
    assert auto.returncode == 0, auto.stderr
    out = json.loads(auto.stdout)
    assert out["complete"] is True and out["index_url"] == PYPI
    wanted = {p.name: (p.version, p.index) for p in sets["new-auto"].packages}
    assert {p["name"]: (p["version"], p["index"]) for p in out["packages"] if p["name"] in wanted} == wanted
    assert all(index == PYPI for _, index in wanted.values())
    assert not [w for w in out["warnings"] if w["code"].startswith("index-")]
    asked = ["lock", *REQUEST, *_args(NEW), *_mirrors(base, base), "--json", "-o", "pylock.index.toml"]
    pinned = _run([*asked, "--gpu-source", "pytorch"], tmp_path)
    assert pinned.returncode == 0, pinned.stderr
    out = json.loads(pinned.stdout)
    wanted = {p.name: (p.version, p.index) for p in sets["new-pytorch"].packages}
    assert {p["name"]: (p["version"], p["index"]) for p in out["packages"] if p["name"] in wanted} == wanted
    torch = next(p for p in out["packages"] if p["name"] == "torch")
    assert torch["index"].startswith(f"{PYTORCH}/cu") and "+cu" in torch["version"]
    assert torch["url"].startswith(f"{base}/files/torch-") and out["complete"] is True
    (tmp_path / "pyproject.toml").write_text('[tool.cudaresolve]\ngpu-source = "pytorch"\n')
    project = _run([*asked[:-1], "pylock.project.toml"], tmp_path)
    assert project.returncode == 0, project.stderr
    assert next(p for p in json.loads(project.stdout)["packages"] if p["name"] == "torch") == torch


@pytest.mark.parametrize("value", ['"index"', "1", '"PyPI"'])
def test_a_bad_gpu_source_setting_is_a_coded_error(tmp_path: Path, value: str) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[tool.cudaresolve]\nrequirements = ["torch"]\ngpu-source = {value}\n')
    result = _run(["lock", *_args(NEW), "--offline"], tmp_path)
    assert result.returncode == 1
    assert result.stderr.startswith("error: invalid-input: ") and "gpu-source must be one of" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.network
def test_real_pypi_lock_with_the_pytorch_index_unreachable(tmp_path: Path) -> None:
    """Against real PyPI: torch + numpy for an H100 on driver 595 with the PyTorch index unreachable is a
    complete, hashed pylock.toml, torch from PyPI (metadata only: no wheel is downloaded)."""
    closed = f"http://127.0.0.1:{_closed_port()}"
    target = TargetOptions(gpus=("H100",), driver="595.45.04", python="3.11", platform="linux_x86_64")
    result = _run(["lock", "torch", "numpy", *_args(target), f"--index-mirror={PYTORCH}={closed}/whl", "--json"],
                  tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["complete"] is True
    lock = tomllib.loads((tmp_path / "pylock.toml").read_text())
    torch = next(p for p in lock["packages"] if p["name"] == "torch")
    assert torch["index"] == PYPI and Version(torch["version"]).local is None
    assert len(lock["packages"]) > 10  # torch's nvidia libraries, triton, sympy ...
    for package in lock["packages"]:
        wheel = package["wheels"][0]
        assert len(wheel["hashes"]["sha256"]) == 64 and wheel["url"].startswith("https://files.pythonhosted.org/")
