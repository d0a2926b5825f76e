"""Releases with only an sdist, end to end: served on 127.0.0.1, locked from PKG-INFO, built by real pip and uv.

The PyPI stand-in (``tools/local_index.py``) holds ``app`` (a wheel) that requires ``only-sdist``,
whose one release is an sdist with static metadata (PEP 643) requiring idna; sdists whose
dependencies are dynamic; one whose PKG-INFO the index serves as a PEP 658 file; a newer
sdist-only release beside an older one with a wheel; and broken archives. The sdists build
themselves (``tiny_wheels.build_sdist``: a backend inside, no build dependencies), so pip and uv
build them with nothing but 127.0.0.1.
"""

from __future__ import annotations

import json
import sys
import tomllib
from dataclasses import replace
from hashlib import sha256
from typing import TYPE_CHECKING, Any

import pytest
from local_index import LocalIndex, find_uv, fresh_venv, printed_by, uv_synced_venv

from test_direct_e2e import run_cli

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

TARGET = ["--cpu", "--python-version", "3.11", "--platform", "linux_x86_64"]
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX venv layout")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("sdists")
    index = LocalIndex(root)
    index.add("pypi", "idna", "3.10")
    index.add("pypi", "app", "1.0", requires=["only-sdist"])
    index.add_sdist("pypi", "only-sdist", "1.0", requires=["idna>=3"], origin="sdist")
    index.add_sdist("pypi", "dynamic-deps", "1.0", dynamic=["Requires-Dist"], built_requires=["idna>=3"])
    index.add_sdist("pypi", "old-metadata", "2.0", metadata_version="2.1")
    index.add("pypi", "fails-to-build", "1.0")
    index.add_sdist("pypi", "fails-to-build", "2.0", dynamic=["Requires-Dist"], backend_error="needs nvcc 99")
    index.add("pypi", "newer-dynamic", "1.0")
    index.add_sdist("pypi", "newer-dynamic", "2.0", metadata_version="2.1", built_requires=["idna"])
    index.add_sdist("pypi", "zipped", "1.0", zip_format=True, requires=["idna"])
    index.add_sdist("pypi", "listed-metadata", "1.0", metadata=True)
    index.add("pypi", "mixed", "1.0")
    index.add_sdist("pypi", "mixed", "1.0")  # the wheel of the same release wins
    index.add_sdist("pypi", "mixed", "2.0")  # a newer release with only an sdist: taken, as pip and uv do
    # wheels for another Python only, beside an sdist whose dependencies are dynamic and whose backend fails
    index.add("pypi", "other-wheels", "1.0", tag="cp39-cp39-manylinux_2_17_x86_64", requires=["idna>=3"])
    index.add_sdist("pypi", "other-wheels", "1.0", dynamic=["Requires-Dist"], backend_error="needs torch to build")
    broken = index.add_sdist("pypi", "broken", "1.0")
    truncated = index.add_sdist("pypi", "truncated", "1.0")
    garbage = b"\x1f\x8b\x08 truncated"
    (root / "files" / truncated.filename).write_bytes(garbage)  # listed with the garbage's own hash
    entry = index.entries["pypi"]["truncated"][0]
    index.entries["pypi"]["truncated"][0] = replace(entry, wheel=replace(truncated, sha256=sha256(garbage).hexdigest()))
    with index.serve() as base:
        (root / "files" / broken.filename).write_bytes(garbage)  # after its hash was listed
        yield root, base, index


def _lock(served: Any, args: list[str], cwd: Path, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
    _, base, _ = served
    mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
    return run_cli(["lock", *args, *TARGET, mirror], cwd, cache or cwd / "cache")


def test_an_sdist_only_dependency_is_locked_from_its_pkg_info(served: Any, tmp_path: Path) -> None:
    result = _lock(served, ["app", "zipped", "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["complete"] is True
    assert {p["name"]: (p["version"], p["kind"]) for p in out["packages"]} == {
        "app": ("1.0", "wheel"), "only-sdist": ("1.0", "sdist"), "idna": ("3.10", "wheel"),
        "zipped": ("1.0", "sdist"),
    }  # fmt: skip  # idna: a Requires-Dist read from the sdists' PKG-INFO
    assert sorted(w["code"] for w in out["warnings"]) == ["sdist-build", "sdist-build"]
    assert "only-sdist 1.0 has no wheel for this target" in out["warnings"][0]["message"]
    entry = next(p for p in tomllib.loads((tmp_path / "pylock.toml").read_text())["packages"]
                 if p["name"] == "only-sdist")  # fmt: skip
    assert set(entry) == {"name", "version", "index", "sdist"}
    assert entry["sdist"]["name"] == "only_sdist-1.0.tar.gz" and len(entry["sdist"]["hashes"]["sha256"]) == 64


def test_the_wheel_wins_within_a_release_and_a_pep_658_file_spares_the_download(served: Any, tmp_path: Path) -> None:
    _, _, index = served
    result = _lock(served, ["mixed<2", "listed-metadata", "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    kinds = {p["name"]: (p["version"], p["kind"]) for p in json.loads(result.stdout)["packages"]}
    assert kinds == {"mixed": ("1.0", "wheel"), "listed-metadata": ("1.0", "sdist")}
    assert index.requests["/files/listed_metadata-1.0.tar.gz"] == 0
    assert index.requests["/files/listed_metadata-1.0.tar.gz.metadata"] == 1
    newer = _lock(served, ["mixed", "--json", "-o", "pylock.newer.toml"], tmp_path)  # not the kept pin of pylock.toml
    assert [(p["version"], p["kind"]) for p in json.loads(newer.stdout)["packages"]] == [("2.0", "sdist")]


def test_dynamic_metadata_is_prepared_by_the_sdists_build_backend(served: Any, tmp_path: Path) -> None:
    # PKG-INFO lists no dependency and marks Requires-Dist dynamic; the backend's metadata requires idna
    _, _, index = served
    before = index.requests["/files/dynamic_deps-1.0.tar.gz"]
    result = _lock(served, ["dynamic-deps", "old-metadata", "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert {p["name"]: p["version"] for p in out["packages"]} == {
        "dynamic-deps": "1.0", "idna": "3.10", "old-metadata": "2.0"
    }  # fmt: skip
    built = [w["message"] for w in out["warnings"] if w["code"] == "sdist-metadata-built"]
    assert len(built) == 2 and built[0].startswith("dynamic-deps 1.0: its sdist (dynamic_deps-1.0.tar.gz) declares")
    # at most two downloads: the walk ahead reads PKG-INFO (it never builds), the solver's pin builds
    downloads = index.requests["/files/dynamic_deps-1.0.tar.gz"]
    assert before < downloads <= before + 2
    again = _lock(served, ["dynamic-deps", "-o", "pylock.again.toml"], tmp_path)  # the same cache: built metadata kept
    assert again.returncode == 0 and "sdist-metadata-built" in again.stderr
    assert index.requests["/files/dynamic_deps-1.0.tar.gz"] == downloads


def test_a_wheel_for_another_target_stands_for_a_dynamic_sdists_metadata(served: Any, tmp_path: Path) -> None:
    """uv's rule: a release whose only file for the target is an sdist with dynamic metadata, but which has wheels
    for other targets (auto-gptq 0.7.1: cp38-cp311 wheels, a Python 3.12 target), is resolved on a wheel's
    metadata and locked as its sdist: nothing is built (its backend may need torch), nothing passed over."""
    _, _, index = served
    result = _lock(served, ["other-wheels", "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert {p["name"]: (p["version"], p["kind"]) for p in out["packages"]} == {
        "other-wheels": ("1.0", "sdist"), "idna": ("3.10", "wheel"),
    }  # fmt: skip  # idna: the cp39 wheel's Requires-Dist
    assert [w["code"] for w in out["warnings"]] == ["sdist-build"]
    assert index.requests["/files/other_wheels-1.0.tar.gz"] == 1  # its PKG-INFO read once, to see it is dynamic
    assert index.requests["/files/other_wheels-1.0-cp39-cp39-manylinux_2_17_x86_64.whl.metadata"] == 1


def test_no_build_passes_a_dynamic_sdist_over_for_an_older_release_with_a_wheel(served: Any, tmp_path: Path) -> None:
    newest = _lock(served, ["newer-dynamic", "--json"], tmp_path)
    assert [(p["name"], p["version"]) for p in json.loads(newest.stdout)["packages"]] == [
        ("idna", "3.10"), ("newer-dynamic", "2.0")
    ]  # fmt: skip
    result = _lock(served, ["newer-dynamic", "--no-build", "--json", "-o", "pylock.nb.toml"], tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert [(p["name"], p["version"], p["kind"]) for p in out["packages"]] == [("newer-dynamic", "1.0", "wheel")]
    passed = [w["message"] for w in out["warnings"] if w["code"] == "sdist-unusable"]
    assert passed == [
        "newer-dynamic 2.0 was passed over for another release: newer-dynamic 2.0 has only an sdist"
        " (newer_dynamic-2.0.tar.gz) for this target, and its dependencies cannot be read without building it:"
        " its PKG-INFO is Metadata-Version 2.1, which does not promise static metadata (PEP 643 needs 2.2 or newer)"
    ]


def test_a_failing_build_passes_the_release_over_and_says_why(served: Any, tmp_path: Path) -> None:
    result = _lock(served, ["fails-to-build", "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert [(p["name"], p["version"]) for p in out["packages"]] == [("fails-to-build", "1.0")]
    (passed,) = [w["message"] for w in out["warnings"] if w["code"] == "sdist-unusable"]
    assert passed.startswith("fails-to-build 2.0 was passed over for another release: the metadata of"
                             " fails_to_build-2.0.tar.gz could not be prepared by its build backend: its build"
                             " backend failed (exit 1): ")
    assert "RuntimeError: needs nvcc 99" in passed


@pytest.mark.parametrize("package", ["dynamic-deps", "old-metadata"])
def test_with_no_build_and_no_other_release_the_failure_names_the_sdist(
    served: Any, tmp_path: Path, package: str
) -> None:
    result = _lock(served, ["idna", package, "--no-build"], tmp_path)
    assert result.returncode == 1 and not (tmp_path / "pylock.toml").exists()
    assert result.stderr.startswith("error: no-solution: "), result.stderr
    assert f"sdist-unusable: {package} " in result.stderr
    assert "has only an sdist for this target, whose dependencies are known only by building it" in result.stderr


def test_a_broken_sdist_is_a_coded_error_not_a_crash(served: Any, tmp_path: Path) -> None:
    result = _lock(served, ["broken"], tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: hash-mismatch: the file at "), result.stderr  # the index's hash first
    result = _lock(served, ["truncated"], tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    start = "error: no-solution: the index's answer for truncated cannot be used"  # online: no cache is to blame
    assert result.stderr.startswith(f"{start}: truncated 1.0: the core metadata at "), result.stderr
    assert "cannot be used: not a readable sdist (" in result.stderr


def test_offline_after_online_is_the_same_lock(served: Any, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _lock(served, ["app", "-o", "pylock.online.toml"], tmp_path, cache).returncode == 0
    offline = _lock(served, ["app", "--offline", "-o", "pylock.offline.toml"], tmp_path, cache)
    assert offline.returncode == 0, offline.stderr
    unstamped = lambda name: [ln for ln in (tmp_path / name).read_text().splitlines() if "inputs =" not in ln]  # noqa: E731
    assert unstamped("pylock.online.toml") == unstamped("pylock.offline.toml")  # --offline is an input: its stamp


def _imports(python: Path) -> str:
    return printed_by(python, "import app, idna, only_sdist; print(only_sdist.ORIGIN, only_sdist.__version__)")


def test_the_sdist_is_built_and_installed_by_pip_and_by_uv(served: Any, tmp_path: Path) -> None:
    _, base, _ = served
    mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
    assert _lock(served, ["app"], tmp_path).returncode == 0
    assert _lock(served, ["app", "--format", "requirements", "-o", "r.txt"], tmp_path).returncode == 0
    for lock in ("pylock.toml", "r.txt"):
        python = fresh_venv(tmp_path / f"pip-{lock}")
        installed = run_cli(["install", "--from", lock, "--python", str(python), mirror], tmp_path, tmp_path / "c")
        assert installed.returncode == 0, installed.stderr + installed.stdout
        assert _imports(python) == "sdist 1.0"
        again = run_cli(["install", "--from", lock, "--python", str(python), mirror, "--json"], tmp_path,
                        tmp_path / "c")  # fmt: skip
        assert again.returncode == 0 and json.loads(again.stdout)["installed"] == []  # kept as locked
    uv = find_uv()
    if uv is None:
        pytest.skip("uv is not installed")
    python = uv_synced_venv(uv, tmp_path, tmp_path / "uv-venv")
    assert _imports(python) == "sdist 1.0"
