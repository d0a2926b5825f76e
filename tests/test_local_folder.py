"""A folder of wheels on this machine as ``--find-links DIR`` (pip's and uv's wheelhouse): listed as a page of links,
its files read where they are, the pins hashed, and the lock installed by cudaresolve and by uv."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from typing import TYPE_CHECKING

import pytest
from local_index import find_uv, fresh_venv, printed_by, uv_synced_venv
from tiny_wheels import build_wheel

from cudaresolve.index.local_folder import folder_listing
from test_pypi_builds import _closed_port, _run

if TYPE_CHECKING:
    from pathlib import Path

PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
TARGET = ["--cpu", "--python-version", PYTHON, "--platform", "linux_x86_64"]


def _wheelhouse(root: Path) -> tuple[Path, dict[str, str]]:
    """``root/wheels``: an app that needs a helper, two releases of the helper, and files that are no wheels."""
    folder = root / "wheels"
    made = [
        build_wheel(folder, "app", "1.0", "py3-none-any", requires=["helper>=1"]),
        build_wheel(folder, "helper", "1.0", "py3-none-any"),
        build_wheel(folder, "helper", "1.1", "py3-none-any"),
    ]
    (folder / "README.txt").write_text("not a distribution\n")
    (folder / "sub.whl").mkdir()  # a folder with a wheel's name: left out
    return folder, {w.filename: w.sha256 for w in made}


def test_a_folder_is_a_page_of_links_to_its_distribution_files(tmp_path: Path) -> None:
    folder, made = _wheelhouse(tmp_path)
    os.mkfifo(folder / "pipe-1.0-py3-none-any.whl")  # no regular file: left out, never opened
    page = folder_listing(folder.as_uri())
    assert page.status == 200 and page.content_type == "text/html"
    links = sorted(part.split('"')[1] for part in page.body.split("href=")[1:])
    assert links == sorted(f"{folder.as_uri()}/{name}" for name in made)


def test_a_folder_of_wheels_locks_and_installs(tmp_path: Path) -> None:
    folder, made = _wheelhouse(tmp_path)
    closed = f"http://127.0.0.1:{_closed_port()}/simple"  # no index at all: the folder alone
    result = _run(["lock", "app", "-f", "wheels", "--index-url", closed, *TARGET, "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["complete"] is True
    locked = {p["name"]: p for p in tomllib.loads((tmp_path / "pylock.toml").read_text())["packages"]}
    assert {n: p["version"] for n, p in locked.items()} == {"app": "1.0", "helper": "1.1"}
    for package in locked.values():
        (wheel,) = package["wheels"]
        assert package["index"] == folder.as_uri()
        assert wheel["url"] == f"{folder.as_uri()}/{wheel['name']}"
        assert wheel["hashes"] == {"sha256": made[wheel["name"]]}
    venv = fresh_venv(tmp_path / "venv")
    installed = _run(["install", "--from", "pylock.toml", "--python", str(venv)], tmp_path)
    assert installed.returncode == 0, installed.stderr
    assert printed_by(venv, "import app, helper; print(app.__version__, helper.__version__)") == "1.0 1.1"
    uv = find_uv()
    if uv is not None:
        synced = uv_synced_venv(uv, tmp_path, tmp_path / "uv-venv")
        assert printed_by(synced, "import app, helper; print(helper.__version__)") == "1.1"


def test_a_changed_file_in_the_folder_is_refused_at_install(tmp_path: Path) -> None:
    """The lock holds the files' hashes: a wheel replaced in the folder after the lock is not installed."""
    folder, _ = _wheelhouse(tmp_path)
    closed = f"http://127.0.0.1:{_closed_port()}/simple"
    assert _run(["lock", "helper==1.0", "-f", str(folder), "--index-url", closed, *TARGET], tmp_path).returncode == 0
    build_wheel(folder, "helper", "1.0", "py3-none-any", origin="another build")
    venv = fresh_venv(tmp_path / "venv")
    installed = _run(["install", "--from", "pylock.toml", "--python", str(venv)], tmp_path)
    assert installed.returncode != 0
    assert ("sha256" in installed.stderr or "cannot be the locked file" in installed.stderr), installed.stderr
    assert "Traceback" not in installed.stderr


@pytest.mark.parametrize("given", ["missing-folder", "file:///no/such/folder"])
def test_a_find_links_that_is_no_folder_and_no_url_is_refused(tmp_path: Path, given: str) -> None:
    result = _run(["lock", "app", "-f", given, *TARGET], tmp_path)
    assert result.returncode != 0
    assert "error: invalid-input" in result.stderr and "Traceback" not in result.stderr


def test_a_requirements_lock_pins_a_folders_wheel_by_its_url(tmp_path: Path) -> None:
    """pip reads one index: a wheel of a local folder is a direct reference by its file:// URL (with its hash), which
    pip and cudaresolve install alike."""
    folder, made = _wheelhouse(tmp_path)
    closed = f"http://127.0.0.1:{_closed_port()}/simple"
    result = _run(["lock", "app", "-f", str(folder), "--index-url", closed, *TARGET, "--format", "requirements",
                   "-o", "requirements.txt"], tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    pins = [line for line in (tmp_path / "requirements.txt").read_text().splitlines() if line.startswith(("app", "h"))]
    assert pins == [f"{n} @ {folder.as_uri()}/{f} --hash=sha256:{made[f]}" for n, f in
                    (("app", "app-1.0-py3-none-any.whl"), ("helper", "helper-1.1-py3-none-any.whl"))]
    venv = fresh_venv(tmp_path / "venv")
    installed = _run(["install", "--from", "requirements.txt", "--python", str(venv)], tmp_path)
    assert installed.returncode == 0, installed.stderr
    assert printed_by(venv, "import app, helper; print(helper.__version__)") == "1.1"


def test_a_folder_of_wheels_locks_offline(tmp_path: Path) -> None:
    """Found against uv: ``lock -f DIR --offline`` failed: on an empty cache the solve was not tried at all (``not in
    the cache``), and on a warm one the lock was refused (``without a hash``), no file hashed offline, not even one
    read from this machine; uv locks it."""
    _, made = _wheelhouse(tmp_path)
    result = _run(["lock", "app", "-f", "wheels", "--offline", *TARGET, "--json"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    locked = tomllib.loads((tmp_path / "pylock.toml").read_text())["packages"]
    assert {p["name"]: p["wheels"][0]["hashes"]["sha256"] for p in locked} == {
        "app": made["app-1.0-py3-none-any.whl"], "helper": made["helper-1.1-py3-none-any.whl"]
    }  # fmt: skip
