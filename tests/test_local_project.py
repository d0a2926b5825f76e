"""Local project folders as requirements (issue 22, item 1): ``NAME @ file:///dir``, ``-e PATH`` and ``./dir``,
locked as PEP 751 ``[packages.directory]`` from what their own build backend says."""

from __future__ import annotations

import json
import sys
import tarfile
import tomllib
from typing import TYPE_CHECKING, Any

import pytest
from local_index import LocalIndex, find_uv, printed_by, uv_synced_venv
from packaging.pylock import Pylock
from tiny_wheels import build_sdist

from test_direct_e2e import run_cli

if TYPE_CHECKING:
    from pathlib import Path

TARGET = ["--cpu", "--python-version", f"{sys.version_info[0]}.{sys.version_info[1]}", "--platform", "linux_x86_64"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    index = LocalIndex(tmp_path_factory.mktemp("local"))
    index.add("pypi", "idna", "3.10")
    with index.serve() as base:
        yield base


def _project(root: Path, name: str = "My_Local", requires: tuple[str, ...] = ("idna>=3",)) -> Path:
    """A project folder whose in-tree backend says it requires ``requires`` (its pyproject.toml names it)."""
    sdist = build_sdist(root / "dist", name, "0.3", built_requires=list(requires), dynamic=["Requires-Dist"])
    with tarfile.open(root / "dist" / sdist.filename) as archive:
        archive.extractall(root, filter="data")
    folder = root / sdist.filename.removesuffix(".tar.gz")
    pyproject = folder / "pyproject.toml"
    pyproject.write_text(f'[project]\nname = "{name}"\ndynamic = ["version", "dependencies"]\n' + pyproject.read_text())
    return folder


def _lock(base: str, args: list[str], cwd: Path) -> Any:
    mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
    return run_cli(["lock", *args, *TARGET, mirror, "--json"], cwd, cwd / "cache")


def test_a_folder_named_by_url_is_locked_as_a_directory_entry(served: Any, tmp_path: Path) -> None:
    folder = _project(tmp_path / "src")
    work = tmp_path / "work"
    work.mkdir()
    result = _lock(served, [f"my-local @ {folder.as_uri()}"], work)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert {p["name"]: p["kind"] for p in out["packages"]} == {"my-local": "directory", "idna": "wheel"}
    data = tomllib.loads((work / "pylock.toml").read_text())
    entry = next(p for p in data["packages"] if p["name"] == "my-local")
    assert entry == {"name": "my-local", "directory": {"path": f"../src/{folder.name}", "editable": False}}
    Pylock.from_dict(data)  # valid PEP 751: no version, no index, no hash for a folder
    again = json.loads(_lock(served, [f"my-local @ {folder.as_uri()}"], work).stdout)
    assert again["unchanged"] is True and again["changes"] == []  # the folder, written without a version, is no change


def test_editable_lines_and_path_arguments_name_the_folder(served: Any, tmp_path: Path) -> None:
    folder = _project(tmp_path)
    (tmp_path / "requirements.txt").write_text(f"-e ./{folder.name}\n")
    result = _lock(served, ["-r", "requirements.txt"], tmp_path)
    assert result.returncode == 0, result.stderr
    entry = next(p for p in tomllib.loads((tmp_path / "pylock.toml").read_text())["packages"] if "directory" in p)
    assert entry["directory"] == {"path": folder.name, "editable": True}
    plain = _lock(served, [f"./{folder.name}", "-o", "pylock.plain.toml"], tmp_path)
    assert plain.returncode == 0, plain.stderr
    entry = next(p for p in tomllib.loads((tmp_path / "pylock.plain.toml").read_text())["packages"] if "directory" in p)
    assert entry["directory"] == {"path": folder.name, "editable": False}
    uv = find_uv()
    if uv is not None:
        python = uv_synced_venv(uv, tmp_path, tmp_path / "venv")
        assert printed_by(python, "import my_local, idna; print(my_local.__version__)").strip() == "0.3"


def test_a_folder_that_may_not_be_built_or_is_no_project_is_a_coded_error(served: Any, tmp_path: Path) -> None:
    folder = _project(tmp_path)
    refused = _lock(served, [f"my-local @ {folder.as_uri()}", "--no-build"], tmp_path)
    assert refused.returncode == 1 and "--no-build forbids running it" in refused.stdout
    (tmp_path / "empty").mkdir()
    empty = _lock(served, [f"x @ {(tmp_path / 'empty').as_uri()}"], tmp_path)
    assert empty.returncode == 1 and "not a project folder" in empty.stdout
    other = _lock(served, [f"someone-else @ {folder.as_uri()}"], tmp_path)
    assert other.returncode == 1
    assert "holds the project my-local, not someone-else" in json.loads(other.stdout)["error"]["message"]
    (tmp_path / "r.txt").write_text("-e ./empty\n")
    bad = _lock(served, ["-r", "r.txt"], tmp_path)
    assert bad.returncode == 1 and "r.txt:1: -e ./empty is not a folder" in bad.stdout


def test_a_project_whose_dependencies_are_dynamic_locks_what_its_backend_says(served: Any, tmp_path: Path) -> None:
    """``[project] dynamic = ["dependencies"]``: the static table says nothing, so the project's own requirements
    come from its build backend, the project locked editable with them (uv's ``pip compile pyproject.toml`` asks
    the backend too); no silent lock of nothing."""
    folder = _project(tmp_path)
    result = _lock(served, [], folder)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert {p["name"]: p["kind"] for p in out["packages"]} == {"my-local": "directory", "idna": "wheel"}
    entry = next(p for p in tomllib.loads((folder / "pylock.toml").read_text())["packages"] if "directory" in p)
    assert entry["directory"] == {"path": ".", "editable": True}
    pyproject = folder / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"dependencies"]', '"dependencies", "optional-dependencies"]'))
    refused = _lock(served, ["--all-extras", "-o", "pylock.all.toml"], folder)
    assert refused.returncode == 1, refused.stdout  # its extras cannot be listed before it is built
    assert json.loads(refused.stdout)["error"]["code"] == "invalid-input"
    assert "--all-extras: the project's extras are dynamic" in refused.stdout
    assert not (folder / "pylock.all.toml").exists()


def test_a_uv_path_source_takes_the_dependency_from_its_folder_not_an_index(served: Any, tmp_path: Path) -> None:
    """Found by the real-project audit: ``[tool.uv.sources] my-local = { path = "libs/..." }`` was only named as
    unread, and the dependency was looked up on the index, where any project of that name may be served (here
    ``idna``, standing for a stranger's project). uv takes it from the folder; so does the lock now, the folder
    locked editable when the source says so, and the source no longer named as unread."""
    folder = _project(tmp_path / "libs")
    relative = folder.relative_to(tmp_path).as_posix()
    work = tmp_path / "app"
    work.mkdir()
    (work / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "1.0"\n'
        'dependencies = ["idna>=3", "My-Local>=0.1 ; python_version >= \'3\'"]\n'
        '[project.optional-dependencies]\nextra = ["my_local"]\n'
        f'[tool.uv.sources]\nmy-local = {{ path = "../{relative}", editable = true }}\n'
    )
    result = _lock(served, ["--all-extras"], work)
    assert result.returncode == 0, result.stdout
    out = json.loads(result.stdout)
    assert {p["name"]: p["kind"] for p in out["packages"]} == {"my-local": "directory", "idna": "wheel"}
    assert "uv-settings-ignored" not in {w["code"] for w in out["warnings"]}
    entry = next(p for p in tomllib.loads((work / "pylock.toml").read_text())["packages"] if "directory" in p)
    assert entry["directory"] == {"path": f"../{relative}", "editable": True}
    # a source this lock does not take (an index) is still named, and its dependency left to the indexes
    (work / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "1.0"\ndependencies = ["idna>=3"]\n'
        '[tool.uv.sources]\nidna = { index = "own" }\n'
    )
    other = _lock(served, ["-o", "pylock.other.toml"], work)
    assert other.returncode == 0, other.stdout
    assert "uv-settings-ignored" in {w["code"] for w in json.loads(other.stdout)["warnings"]}
