"""The whole environment locked: every requirement and dependency from real index metadata, for the target.

Two indexes of tiny real wheels are served on 127.0.0.1 (``tools/local_index.py``): one plays
the PyTorch index (the GPU builds the database chooses, with ``Requires-Dist`` as the real wheels
have them) and one plays PyPI (everything else, plus bait: a yanked release, a pre-release, a
release for a newer Python, a wheel for another platform). The fake torch imports its
dependencies, so it fails to import when the lock misses one. The lock is checked for closure:
every ``Requires-Dist`` of every locked wheel, evaluated for the target with its extras, is
satisfied by a locked package.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from typing import TYPE_CHECKING, Any

import pytest
from local_index import LocalIndex, find_uv, fresh_venv, uv_synced_venv
from packaging.requirements import Requirement
from packaging.version import Version

from cudaresolve.db.database import load_compat
from cudaresolve.resolve.solve import solve
from cudaresolve.target.build import TargetOptions, build_target
from cudaresolve.target.environment import marker_environment

if TYPE_CHECKING:
    from pathlib import Path

TARGET = ["--gpu", "H100", "--driver", "580.65.06", "--python-version", "3.11", "--platform", "linux_x86_64"]
PYTHON_TAG = "cp311-cp311-manylinux_2_28_x86_64"
SRC = os.path.join(os.path.dirname(__file__), "..", "src")


def _gpu_pins() -> dict[str, tuple[str, str, str]]:
    """What the database alone picks for torch + torchrec on the target: name -> (version, index, variant)."""
    db = load_compat(None)
    target = build_target(TargetOptions(gpus=("H100",), driver="580.65.06", python="3.11", platform="linux_x86_64"), db)
    solution = solve(["torch", "torchrec"], db, target).solution
    return {p.name: (p.version, p.index, solution.variant) for p in solution.packages}


def build_indexes(root: Path) -> tuple[LocalIndex, dict[str, str]]:
    """The two indexes; returns them and the pins the database chose (name -> version)."""
    index = LocalIndex(root)
    pins = _gpu_pins()
    torch_version = Version(pins["torch"][0]).public
    for name, (version, url, variant) in pins.items():
        where = "whl/" + url.rstrip("/").rsplit("/", 1)[1] if "download.pytorch.org" in url else "pypi"
        requires: list[str] = []
        imports: list[str] = []
        tag = PYTHON_TAG
        if name == "torch":
            requires = [
                "filelock",
                "sympy>=1.13.3",
                "typing-extensions>=4.10.0",
                f"nvidia-cuda-runtime-{variant}-fake==1.0; platform_system == 'Linux' and platform_machine == 'x86_64'",
                "pywin32-fake; sys_platform == 'win32'",
                "opt-einsum>=3.3; extra == 'opt-einsum'",
            ]
            imports = ["filelock", "sympy", "typing_extensions"]
        elif name == "fbgemm-gpu":
            requires = ["numpy"]
        elif name == "torchrec":
            requires = [f"fbgemm-gpu=={Version(pins['fbgemm-gpu'][0]).public}", "tqdm"]
            tag = "py3-none-any"
        index.add(where, name, version, tag=tag, requires=requires, imports=imports)
    pypi = "pypi"
    index.add(pypi, "torch", "99.0", tag=PYTHON_TAG)  # bait: PyPI never serves torch to this lock
    index.add(pypi, "filelock", "3.16.1")
    index.add(pypi, "sympy", "1.13.3", requires=["mpmath<1.4,>=1.1.0"])
    index.add(pypi, "mpmath", "1.3.0", requires=["pytest; extra == 'develop'"])
    index.add(pypi, "typing-extensions", "4.12.2", requires_python=">=3.8")
    index.add(pypi, f"nvidia-cuda-runtime-{pins['torch'][2]}-fake", "1.0", tag="py3-none-manylinux_2_17_x86_64")
    index.add(pypi, "tqdm", "4.67.1", requires=["colorama; platform_system == 'Windows'"])
    index.add(pypi, "numpy", "1.26.4", tag=PYTHON_TAG, requires_python=">=3.9")
    index.add(pypi, "numpy", "1.26.5", tag=PYTHON_TAG, yanked="broken build")
    index.add(pypi, "numpy", "1.27.0rc1", tag=PYTHON_TAG)
    index.add(pypi, "numpy", "2.1.0", tag=PYTHON_TAG, requires_python=">=3.10")
    index.add(pypi, "numpy", "1.26.9", tag="cp311-cp311-win_amd64")  # another platform only
    index.add(pypi, "numpy", "1.26.8", tag=PYTHON_TAG, requires_python=">=3.12")  # another Python only
    index.add(
        pypi,
        "transformers",
        "4.46.0",
        requires=[
            "numpy>=1.17",
            "filelock",
            "tqdm>=4.27",
            f"torch>={torch_version}; extra == 'torch'",
            "accelerate>=0.26.0; extra == 'torch'",
            "tensorflow>2.9; extra == 'tf'",
        ],
    )
    index.add(pypi, "accelerate", "1.1.0", requires=["numpy<3.0.0,>=1.17", "torch>=2.0.0", "psutil"])
    index.add(pypi, "psutil", "6.1.0", tag="cp36-abi3-manylinux_2_17_x86_64")
    index.add("private", "internal-tool", "1.0", requires=["idna"])
    index.add(pypi, "internal-tool", "9.0")  # bait: a public name squatter with a higher version
    index.add(pypi, "idna", "3.10")
    return index, {n: v[0] for n, v in pins.items()}


def mirrors(base: str) -> list[str]:
    return [
        f"--index-mirror=https://pypi.org/simple={base}/pypi/simple",
        f"--index-mirror=https://download.pytorch.org/whl={base}/whl",
    ]


def run_cli(args: list[str], cwd: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(SRC), "CUDARESOLVE_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "cudaresolve", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


def closure_problems(lock: dict[str, Any], files: Path, environment: dict[str, str]) -> list[str]:
    """Every Requires-Dist of every locked wheel (with the extras asked of it) met by a locked package."""
    locked = {p["name"]: Version(p["version"]) for p in lock["packages"]}
    wanted_extras: dict[str, set[str]] = {"transformers": {"torch"}}
    problems = []
    todo = list(locked)
    while todo:
        name = todo.pop()
        entry = next(p for p in lock["packages"] if p["name"] == name)
        filename = entry["wheels"][0]["name"]
        with zipfile.ZipFile(files / filename) as wheel:
            meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
            lines = wheel.read(meta).decode().splitlines()
        for line in lines:
            if not line.startswith("Requires-Dist: "):
                continue
            req = Requirement(line.removeprefix("Requires-Dist: "))
            extras = wanted_extras.get(name, set())
            if req.marker is not None and not any(
                req.marker.evaluate({**environment, "extra": e}) for e in ("", *extras)
            ):
                continue
            dep = req.name.lower().replace("_", "-")
            if dep not in locked or not req.specifier.contains(locked[dep], prereleases=True):
                problems.append(f"{name}: {req} not met by {locked.get(dep)}")
            elif req.extras:
                new = set(req.extras) - wanted_extras.setdefault(dep, set())
                if new:
                    wanted_extras[dep] |= new
                    todo.append(dep)
    return problems


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("indexes")
    index, pins = build_indexes(root)
    with index.serve() as base:
        yield root, base, pins, index


PROJECT = (
    '[project]\nname = "demo"\nversion = "0"\ndependencies = ["torch", "torchrec", "transformers[torch]", "numpy<2"]\n'
)


def test_project_locks_whole_environment(served: Any, tmp_path: Path) -> None:
    root, base, pins, _ = served
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    result = run_cli(["lock", *TARGET, *mirrors(base), "--json"], tmp_path, tmp_path / "cache")
    assert result.returncode == 0, result.stderr + result.stdout
    out = json.loads(result.stdout)
    assert out["complete"] is True
    lock = tomllib.loads((tmp_path / "pylock.toml").read_text())
    versions = {p["name"]: p["version"] for p in lock["packages"]}
    assert versions["numpy"] == "1.26.4"  # not yanked 1.26.5, not 1.27.0rc1, not 2.x, not win/3.12-only
    assert versions["torch"] == pins["torch"]  # the GPU build, not PyPI's bait 99.0
    assert "pywin32-fake" not in versions and "tensorflow" not in versions and "colorama" not in versions
    assert {"accelerate", "psutil", "sympy", "mpmath", "filelock", "tqdm", "typing-extensions"} <= set(versions)
    for package in lock["packages"]:
        wheel = package["wheels"][0]
        assert len(wheel["hashes"]["sha256"]) == 64 and wheel["url"].startswith("http")
    assert _gpu_pins()["torch"][1] == "https://pypi.org/simple"  # PyPI carries this cu130 build (--gpu-source auto)
    served = {p["index"] for p in lock["packages"] if p["name"] in ("torch", "numpy")}
    assert len(served) == 1 and served.pop().endswith("/pypi/simple")  # the PyPI mirror that really served them
    env = {
        k: v
        for k, v in marker_environment(
            build_target(
                TargetOptions(gpus=("H100",), driver="580.65.06", python="3.11", platform="linux_x86_64"),
                load_compat(None),
            )
        ).items()
    }
    assert closure_problems(lock, root / "files", env) == []


def test_offline_after_online_is_the_same_lock(served: Any, tmp_path: Path) -> None:
    _, base, _, index = served
    cache = tmp_path / "cache"
    args = ["lock", "torch", "transformers[torch]", "numpy<2", *TARGET, *mirrors(base)]
    first = run_cli([*args, "-o", "pylock.online.toml"], tmp_path, cache)
    assert first.returncode == 0, first.stderr
    before = sum(index.requests.values())
    second = run_cli([*args, "--offline", "-o", "pylock.offline.toml"], tmp_path, cache)
    assert second.returncode == 0, second.stderr
    assert sum(index.requests.values()) == before  # offline asked nothing
    # the same packages and fields; only the stamp of what each answers differs (``--offline`` is an input)
    strip = lambda text: [line for line in text.splitlines() if "created" not in line and "inputs =" not in line]  # noqa: E731
    assert strip((tmp_path / "pylock.online.toml").read_text()) == strip((tmp_path / "pylock.offline.toml").read_text())


def test_offline_cold_cache_unknown_package_is_an_error(tmp_path: Path) -> None:
    result = run_cli(["lock", "numpy", *TARGET, "--offline"], tmp_path, tmp_path / "cache")
    assert result.returncode == 1
    assert "numpy" in result.stderr and "Traceback" not in result.stderr


def test_offline_cold_cache_gpu_stack_is_incomplete(tmp_path: Path) -> None:
    result = run_cli(["lock", "torch", "torchrec", *TARGET, "--offline", "--json"], tmp_path, tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["complete"] is False and out["output"] is None
    assert {"torch", "torchrec"} <= {p["name"] for p in out["packages"]}
    assert any(w["code"] == "incomplete-lock" for w in out["warnings"])
    # the page named missing is the chosen torch's, on the index it was chosen from
    torch = next(p for p in out["packages"] if p["name"] == "torch")
    missing = next(w["message"] for w in out["warnings"] if w["code"] == "incomplete-lock")
    assert f"torch: {torch['index'].rstrip('/')}/torch/ is not in the cache" in missing
    assert not (tmp_path / "pylock.toml").exists()
    req = run_cli(
        ["lock", "torch", *TARGET, "--offline", "--format", "requirements", "-o", "r.txt"], tmp_path, tmp_path / "cache"
    )
    assert req.returncode == 0, req.stderr
    assert (tmp_path / "r.txt").read_text().startswith("# NOT A COMPLETE LOCK")


def test_offline_with_every_request_false_on_the_target_is_a_whole_lock_of_nothing(tmp_path: Path) -> None:
    """Found by the hostile-input audit: offline on an empty cache, a request whose marker is false on the target
    (``torch; python_version<"3"``) was "incomplete: network error" and wrote nothing, though no page is needed
    (online the same request writes a lock of nothing)."""
    args = ["lock", 'torch; python_version<"3"', *TARGET, "--offline", "--json"]
    result = run_cli(args, tmp_path, tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["complete"] is True and out["packages"] == []
    assert [w["code"] for w in out["warnings"]] == ["requirement-skipped"]
    assert tomllib.loads((tmp_path / "pylock.toml").read_text())["packages"] == []


def test_an_online_lock_a_mirror_cannot_complete_is_not_told_to_run_online(tmp_path: Path) -> None:
    """Found by the real-project audit: online, a named ``-o`` the mirror could not make complete (it lists no such
    torch wheel) was told "run online to add the hashes": the hint now points at the index or mirror."""
    index = LocalIndex(tmp_path / "index")
    index.add("whl/cpu", "torch", "1.0+cpu")  # the mirror's torch page lacks the release the database picks
    with index.serve() as base:
        args = ["lock", "torch", "--cpu", "--python-version", "3.11", f"--index-mirror=https://download.pytorch.org/whl="
                f"{base}/whl", "-o", "pylock.toml"]  # fmt: skip
        result = run_cli(args, tmp_path, tmp_path / "cache")
    assert result.returncode == 1 and "error: invalid-input: cannot write pylock.toml" in result.stderr
    assert "lists no torch" in result.stderr and "run online" not in result.stderr
    assert "check the index URL or mirror" in result.stderr
    offline = run_cli(["lock", "torch", "--cpu", "--offline", "-o", "pylock.toml"], tmp_path, tmp_path / "empty")
    assert offline.returncode == 1 and "run online to add the hashes" in offline.stderr
    assert not (tmp_path / "pylock.toml").exists()


def test_marker_false_request_is_skipped_with_a_notice(served: Any, tmp_path: Path) -> None:
    _, base, _, _ = served
    args = ["lock", "numpy<2", "pywin32-fake; sys_platform == 'win32'", *TARGET, *mirrors(base), "--json"]
    result = run_cli(args, tmp_path, tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert [p["name"] for p in out["packages"]] == ["numpy"]
    assert any(w["code"] == "requirement-skipped" for w in out["warnings"])


def _imports_torch(python: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-c", "import torch, torchrec, transformers, numpy; print(torch.ORIGIN, torch.__version__)"],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX venv layout")
def test_lock_installs_with_pip_and_uv(served: Any, tmp_path: Path) -> None:
    """The same pylock.toml gives a working environment through cudaresolve (pip) and through uv."""
    _, base, pins, _ = served
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    cache = tmp_path / "cache"
    locked = run_cli(["lock", *TARGET, *mirrors(base)], tmp_path, cache)
    assert locked.returncode == 0, locked.stderr
    pip_python = fresh_venv(tmp_path / "pip-venv")
    before = _imports_torch(pip_python)
    assert before.returncode != 0
    env_args = ["install", "--from", "pylock.toml", "--python", str(pip_python), *mirrors(base)]
    installed = run_cli(env_args, tmp_path, cache)
    assert installed.returncode == 0, installed.stderr + installed.stdout
    after = _imports_torch(pip_python)
    assert after.returncode == 0, after.stderr
    origin, version = after.stdout.split()
    assert origin == "pypi" and version == pins["torch"]  # the chosen variant's build, as PyPI carries it
    uv = find_uv()
    if uv is None:
        pytest.skip("uv is not installed")
    uv_python = uv_synced_venv(uv, tmp_path, tmp_path / "uv-venv")
    assert _imports_torch(uv_python).stdout == after.stdout


def test_package_index_maps_a_name_to_one_index(served: Any, tmp_path: Path) -> None:
    _, base, _, _ = served
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "0"\ndependencies = ["internal-tool"]\n'
        f'[tool.cudaresolve.package-index]\n"Internal_Tool" = "{base}/private"\n'
    )
    result = run_cli(["lock", *TARGET, *mirrors(base), "--json"], tmp_path, tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    packages = {p["name"]: p for p in json.loads(result.stdout)["packages"]}
    assert packages["internal-tool"]["version"] == "1.0" and packages["internal-tool"]["index"] == f"{base}/private"
    assert packages["idna"]["index"] == "https://pypi.org/simple"


@pytest.mark.parametrize(
    "table", ['"x" = "http://example.org/simple"', '"a b" = "https://example.org/simple"', '"x" = "file:///etc"']
)
def test_bad_package_index_is_a_coded_error(tmp_path: Path, table: str) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "d"\nversion = "0"\ndependencies = ["x"]\n[tool.cudaresolve.package-index]\n{table}\n'
    )
    result = run_cli(["lock", *TARGET, "--offline"], tmp_path, tmp_path / "cache")
    assert result.returncode in (1, 2) and result.stderr.startswith("error: invalid-input")
    assert "Traceback" not in result.stderr


@pytest.mark.network
def test_pypi_lock_matches_uv(tmp_path: Path) -> None:
    """Against real PyPI: the same pins as uv for a CPU target, every one hashed."""
    request = ["requests", "numpy<2", "pandas"]
    result = run_cli(["lock", *request, "--cpu", "--python-version", "3.11", "--platform", "linux_x86_64", "--json"],
                     tmp_path, tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    ours = {p["name"]: p["version"] for p in json.loads(result.stdout)["packages"]}
    lock = tomllib.loads((tmp_path / "pylock.toml").read_text())
    assert all(len(p["wheels"][0]["hashes"]["sha256"]) == 64 for p in lock["packages"])
    uv = shutil.which("uv") or os.path.join(os.path.dirname(sys.executable), "uv")
    if not os.path.exists(uv):
        pytest.skip("uv is not installed")
    (tmp_path / "in.txt").write_text("\n".join(request) + "\n")
    compiled = subprocess.run(
        [uv, "pip", "compile", "in.txt", "--python-version", "3.11", "--python-platform", "x86_64-manylinux_2_28",
         "--index-url", "https://pypi.org/simple", "--no-header", "--no-annotate", "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env={**os.environ, "UV_NO_CONFIG": "1"},
    )
    assert compiled.returncode == 0, compiled.stderr
    theirs = dict(line.split("==") for line in compiled.stdout.split() if "==" in line)
    assert ours == theirs
