"""The wheel's build hook: the shipped database built once, here, and carried in the wheel as
``cudaresolve/data/compat.built`` (``src/cudaresolve/db/built.py`` says why and how a run uses it).

It runs in the build's own environment, which has packaging (``[build-system] requires``) and this checkout's
``src``. Whatever goes wrong here, the wheel is built without the file (a warning says so): a run then builds
the database from ``compat.toml``, as an editable install or a checkout always does.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class BuiltDatabaseHook(BuildHookInterface):  # type: ignore[type-arg]
    """Adds ``cudaresolve/data/compat.built`` to a wheel (not to an editable one: its runs read ``src``)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        self._scratch = Path(tempfile.mkdtemp(prefix="cudaresolve-built-"))
        out = self._scratch / "compat.built"
        src = str(Path(self.root) / "src")
        sys.path.insert(0, src)
        try:
            from cudaresolve.db.built import write_built
            from cudaresolve.db.database import load_compat, shipped_path

            db = load_compat(cache_dir=self._scratch / "cache", store=False)
            for name in db.package_names:  # every package table read, so the file holds it typed
                db.packages(name)
            write_built(db, shipped_path(), out)
        except Exception as exc:  # the wheel without the file: a run builds the database itself
            self.app.display_warning(f"cudaresolve: the database is not carried built ({type(exc).__name__}: {exc})")
            return
        finally:
            sys.path.remove(src)
        build_data["force_include"][str(out)] = "cudaresolve/data/compat.built"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
