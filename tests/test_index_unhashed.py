"""A file its index lists with no hash (a web server's folder listing given as ``--find-links``) is downloaded once
and hashed, as uv and pip-tools do, so that the pylock.toml is still written and pip and uv check what they install
(found in this stop's own check of ``python -m http.server`` over a folder of wheels: the lock was refused)."""

from __future__ import annotations

import json
import tomllib
from typing import TYPE_CHECKING, Any

import pytest
from local_index import LocalIndex

from test_direct_e2e import run_cli

if TYPE_CHECKING:
    from pathlib import Path

TARGET = ["--cpu", "--python-version", "3.11", "--platform", "linux_x86_64"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("unhashed")
    index = LocalIndex(root)
    listed = index.add("links", "listed", "1.5", requires=["other"])
    other = index.add("links", "other", "2.0")
    with index.serve() as base:
        page = root / "bare" / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("".join(
            f'<a href="{base}/files/{w.filename}">{w.filename}</a>\n' for w in (listed, other)
        ))  # fmt: skip
        yield base, {w.filename: w.sha256 for w in (listed, other)}


def test_a_bare_listing_is_locked_with_the_hashes_of_its_files(served: Any, tmp_path: Path) -> None:
    base, sha = served
    result = run_cli(["lock", "listed", *TARGET, "-f", f"{base}/bare", "--json"], tmp_path, tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    lock = tomllib.loads((tmp_path / "pylock.toml").read_text())
    wheels = {p["name"]: p["wheels"][0] for p in lock["packages"]}
    assert {w["name"]: w["hashes"]["sha256"] for w in wheels.values()} == sha
    assert all(w["size"] > 0 for w in wheels.values())
    told = [w["message"] for w in json.loads(result.stdout)["warnings"] if w["code"] == "index-unhashed"]
    assert len(told) == 2 and all("with no hash, so the file was downloaded" in t for t in told)


def test_offline_nothing_is_downloaded(served: Any, tmp_path: Path) -> None:
    base, _ = served
    cache = tmp_path / "cache"
    assert (
        run_cli(["lock", "listed", *TARGET, "-f", f"{base}/bare", "-o", "pylock.toml"], tmp_path, cache).returncode == 0
    )
    (tmp_path / "pylock.toml").unlink()
    result = run_cli(["lock", "listed", *TARGET, "-f", f"{base}/bare", "--offline", "--format", "requirements",
                      "-o", "r.txt"], tmp_path, cache)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "index-unhashed" not in result.stderr and "--hash" not in (tmp_path / "r.txt").read_text()
