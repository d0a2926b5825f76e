"""The database a wheel carries built (db/built.py, hatch_build.py): used while it was built from what is installed,
never otherwise, and a first run's cache filled from it without reading the TOML."""

from __future__ import annotations

import json
import os
import shutil
from importlib import metadata
from typing import TYPE_CHECKING

import pytest

from cudaresolve.db import built
from cudaresolve.db.database import CompatDB, load_compat, shipped_path
from cudaresolve.db.deferred import load_shipped

if TYPE_CHECKING:
    from pathlib import Path


def _package(tmp_path: Path) -> Path:
    """A package's layout: data/compat.toml and the modules of ``BUILT_FROM``; the compat.toml's path."""
    package = tmp_path / "pkg"
    for name in built.BUILT_FROM:
        (package / name).mkdir(parents=True)
        (package / name / "rows.py").write_text(f"# the {name} modules\n")
    (package / "data").mkdir()
    shipped = package / "data" / "compat.toml"
    shipped.write_text("[meta]\nschema = 1\n")
    (package / "data").chmod(0o755)
    return shipped


def test_a_built_file_is_read_back_while_what_it_was_built_from_is_unchanged(tmp_path: Path) -> None:
    shipped = _package(tmp_path)
    built.write_built({"rows": [1, 2]}, shipped, shipped.with_name(built.FILE_NAME))
    assert built.load_built(shipped, dict) == {"rows": [1, 2]}
    assert built.load_built(shipped, list) is None  # a value of another type is no database


@pytest.mark.parametrize("change", ["toml", "module", "new module", "cut short", "pickle", "key"])
def test_a_built_file_is_not_used_once_anything_it_was_built_from_changed(tmp_path: Path, change: str) -> None:
    shipped = _package(tmp_path)
    path = shipped.with_name(built.FILE_NAME)
    built.write_built({"rows": [1]}, shipped, path)
    package = shipped.parent.parent
    if change == "toml":
        shipped.write_text(shipped.read_text() + "# edited\n")
    elif change == "module":
        (package / "db" / "rows.py").write_text("# edited\n")
    elif change == "new module":
        (package / "core" / "more.py").write_text("X = 1\n")
    elif change == "cut short":
        path.write_bytes(path.read_bytes()[:-10])
    elif change == "pickle":
        blob = bytearray(path.read_bytes())
        blob[-5] ^= 0xFF
        path.write_bytes(bytes(blob))
    else:
        path.write_bytes(b"0" * 64 + path.read_bytes().partition(b"\n")[1] + path.read_bytes().partition(b"\n")[2])
    assert built.load_built(shipped, dict) is None


def test_a_built_file_others_may_write_or_a_link_is_not_read(tmp_path: Path) -> None:
    shipped = _package(tmp_path)
    path = shipped.with_name(built.FILE_NAME)
    built.write_built({"rows": [1]}, shipped, path)
    path.chmod(0o666)
    assert built.load_built(shipped, dict) is None
    path.chmod(0o644)
    shipped.parent.chmod(0o777)
    assert built.load_built(shipped, dict) is None
    shipped.parent.chmod(0o755)
    elsewhere = tmp_path / "elsewhere.built"
    shutil.move(path, elsewhere)
    path.symlink_to(elsewhere)
    assert built.load_built(shipped, dict) is None
    os.unlink(path)
    shutil.move(elsewhere, path)
    assert built.load_built(shipped, dict) == {"rows": [1]}


def test_a_cold_cache_takes_the_built_database_and_builds_nothing(tmp_path: Path) -> None:
    shipped = _package(tmp_path)
    built.write_built({"rows": [7]}, shipped, shipped.with_name(built.FILE_NAME))

    def build() -> dict[str, list[int]]:
        raise AssertionError("the TOML was read although the package carries the database built")

    assert load_shipped(shipped, tmp_path / "cache", build, expect=dict) == {"rows": [7]}
    shipped.write_text(shipped.read_text() + "# edited\n")  # the built file is stale now: the TOML is read
    assert load_shipped(shipped, tmp_path / "cache", lambda: {"rows": [8]}, expect=dict) == {"rows": [8]}


def test_the_shipped_database_built_reads_as_the_toml_does(tmp_path: Path) -> None:
    """What the wheel's hook writes: the shipped database with every table read, the same database."""
    db = load_compat(cache_dir=tmp_path / "a")
    for name in db.package_names:
        db.packages(name)
    package = tmp_path / "copy"
    shutil.copytree(shipped_path().parent.parent, package, ignore=shutil.ignore_patterns("__pycache__", "*.built"))
    shipped = package / "data" / "compat.toml"
    built.write_built(db, shipped, shipped.with_name(built.FILE_NAME))
    again = built.load_built(shipped, CompatDB)
    fresh = load_compat(cache_dir=tmp_path / "b")
    assert again is not None
    assert again.package_names == fresh.package_names
    assert all(again.packages(n) == fresh.packages(n) for n in fresh.package_names)
    assert again.gpus == fresh.gpus and again.variants == fresh.variants


def test_an_installed_wheel_carries_the_database_built() -> None:
    """The install CI makes (``pip install .``) runs hatch_build.py: its package holds a compat.built that is read,
    and the compiled code of its Python. A checkout's editable install has neither (its runs make them as before)."""
    direct = metadata.distribution("cudaresolve").read_text("direct_url.json")
    if direct is None or json.loads(direct).get("dir_info", {}).get("editable"):
        pytest.skip("an editable install: the wheel's build hook did not run")
    assert isinstance(built.load_built(shipped_path(), CompatDB), CompatDB)
    from cudaresolve.core import compiled_code  # and the code compiled for this Python's classes and patterns

    assert len(compiled_code._read(compiled_code.shipped_file(), installed=True)) > 100
