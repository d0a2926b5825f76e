"""Requires-Python from a release's core metadata, end to end: an index page without ``data-requires-python``.

A mirror may drop the page attribute, so the lock must read ``Requires-Python`` where pip and uv do,
in the metadata: a PEP 658 ``.metadata`` file, a wheel's METADATA read out of the wheel, an sdist's
PKG-INFO. The PyPI stand-in (``tools/local_index.py``) serves, for each of these, a 1.0 for every
Python and a 2.0 whose metadata says ``Requires-Python: >=3.12`` while its page says nothing; a
package all of whose releases need 3.12; and one whose metadata's Requires-Python is no specifier.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import pytest
from local_index import LocalIndex

from test_direct_e2e import run_cli

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX paths")
NEW = ">=3.12"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    index = LocalIndex(tmp_path_factory.mktemp("requires-python"))
    quiet = {"listed_requires_python": False}  # the page carries no data-requires-python
    index.add("pypi", "rp-wheel", "1.0")
    index.add("pypi", "rp-wheel", "2.0", requires_python=NEW, **quiet)  # PEP 658 .metadata file
    index.add("pypi", "rp-ranged", "1.0", metadata=False)
    index.add("pypi", "rp-ranged", "2.0", requires_python=NEW, metadata=False, **quiet)  # METADATA out of the wheel
    index.add_sdist("pypi", "rp-sdist", "1.0")
    index.add_sdist("pypi", "rp-sdist", "2.0", requires_python=NEW, **quiet)  # PKG-INFO out of the archive
    index.add("pypi", "rp-app", "1.0", requires=["rp-wheel"])  # met through a dependency
    index.add("pypi", "rp-none", "1.0", requires_python=NEW, **quiet)
    index.add("pypi", "rp-none", "2.0", requires_python=">=3.13", **quiet)
    index.add("pypi", "rp-invalid", "1.0")
    index.add("pypi", "rp-invalid", "2.0", requires_python="not a specifier", **quiet)
    with index.serve() as base:
        yield base


def _lock(base: str, args: list[str], python: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    target = ["--cpu", "--python-version", python, "--platform", "linux_x86_64"]
    mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
    return run_cli(["lock", *args, *target, mirror, "--json"], cwd, cwd / "cache")


def _versions(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["complete"] is True
    return {p["name"]: p["version"] for p in out["packages"]}


def test_a_release_whose_metadata_excludes_the_target_python_is_passed_over(served: str, tmp_path: Path) -> None:
    result = _lock(served, ["rp-wheel", "rp-ranged", "rp-sdist"], "3.11", tmp_path)
    assert _versions(result) == {"rp-wheel": "1.0", "rp-ranged": "1.0", "rp-sdist": "1.0"}
    assert "rp_wheel-2.0" not in (tmp_path / "pylock.toml").read_text()


def test_the_same_releases_are_taken_for_a_python_they_admit(served: str, tmp_path: Path) -> None:
    result = _lock(served, ["rp-wheel", "rp-ranged", "rp-sdist"], "3.12", tmp_path)
    assert _versions(result) == {"rp-wheel": "2.0", "rp-ranged": "2.0", "rp-sdist": "2.0"}


def test_a_dependency_falls_back_to_an_older_release_too(served: str, tmp_path: Path) -> None:
    assert _versions(_lock(served, ["rp-app"], "3.11", tmp_path)) == {"rp-app": "1.0", "rp-wheel": "1.0"}


def test_no_release_for_the_target_python_fails_naming_requires_python(served: str, tmp_path: Path) -> None:
    result = _lock(served, ["rp-none"], "3.11", tmp_path)
    assert result.returncode == 1, result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "no-solution"
    assert [(f["code"], f["package"], f["required"], f["found"]) for f in error["findings"]] == [
        ("requires-python", "rp-none", ">=3.13", "3.11"),
        ("requires-python", "rp-none", ">=3.12", "3.11"),
    ]
    assert error["findings"][1]["message"] == (
        "rp-none 1.0 declares Requires-Python >=3.12, which leaves out the target's Python 3.11;"
        " pip and uv would not install it"
    )
    assert not (tmp_path / "pylock.toml").exists()
    text = run_cli(["lock", "rp-none", "--cpu", "--python-version", "3.11", "--platform", "linux_x86_64",
                    f"--index-mirror=https://pypi.org/simple={served}/pypi/simple"], tmp_path, tmp_path / "cache")
    assert text.returncode == 1 and "declares Requires-Python >=3.13" in text.stderr, text.stderr


def test_a_requires_python_that_is_no_specifier_is_ignored_with_a_warning(served: str, tmp_path: Path) -> None:
    """As pip does (a warning, then the release counts), and as a direct reference's metadata is read."""
    result = _lock(served, ["rp-invalid"], "3.11", tmp_path)
    assert _versions(result) == {"rp-invalid": "2.0"}
    warnings = json.loads(result.stdout)["warnings"]
    assert [w["code"] for w in warnings] == ["invalid-requires-python"]
    assert warnings[0]["message"] == (
        "rp-invalid 2.0: the Requires-Python of rp_invalid-2.0-py3-none-any.whl's metadata, 'not a specifier',"
        " is not a version specifier; it is ignored, as pip does"
    )
