"""The wheel's build hook: what every run would otherwise make anew when its cache is empty, made once here and
carried in the wheel, as pip compiles a wheel's modules to bytecode when it installs them:

- ``cudaresolve/data/compat.built``, the shipped database built (``src/cudaresolve/db/built.py``);
- ``cudaresolve/data/compiled/<Python build>.marshal``, the code ``dataclasses`` compiles for the package's classes
  and the programs of the patterns its modules compile when imported (``src/cudaresolve/core/compiled_code.py``).

It runs in the build's own environment, which has packaging (``[build-system] requires``) and this checkout's
``src``. Whatever goes wrong here, the wheel is built without the files (a warning says so): a run then makes
them itself, as an editable install or a checkout always does.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # ``make`` alone, run by bench/bench_lock.installed_src in an environment without hatchling
    BuildHookInterface = object


class BuiltDatabaseHook(BuildHookInterface):  # type: ignore[type-arg]
    """Adds the built database and the compiled code to a wheel (not to an editable one: its runs read ``src``)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        self._scratch = Path(tempfile.mkdtemp(prefix="cudaresolve-built-"))
        src = str(Path(self.root) / "src")
        sys.path.insert(0, src)
        try:
            made = make(self._scratch)
        except Exception as exc:  # the wheel without the files: a run makes them itself
            self.app.display_warning(f"cudaresolve: nothing carried built ({type(exc).__name__}: {exc})")
            return
        finally:
            sys.path.remove(src)
        build_data["force_include"].update(made)

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def make(scratch: Path) -> dict[str, str]:
    """The files made in ``scratch``, each to its path in the wheel."""
    from cudaresolve.core.compiled_code import compiled_once, kept_file

    re.purge()  # a pattern this process compiled already would come from re's own cache, and not be kept
    with compiled_once(scratch / "cache"):
        import cudaresolve

        for module in pkgutil.walk_packages(cudaresolve.__path__, "cudaresolve."):
            if not module.name.endswith("__main__"):
                try:
                    importlib.import_module(module.name)
                except ImportError:  # resolvelib, httpx, rich are not in the build's environment
                    pass
        from cudaresolve.db.built import FILE_NAME, write_built
        from cudaresolve.db.database import load_compat, shipped_path

        db = load_compat(cache_dir=scratch / "cache", store=False)
        for name in db.package_names:  # every package table read, so the file holds it typed
            db.packages(name)
    built = scratch / FILE_NAME
    write_built(db, shipped_path(), built)
    compiled = kept_file(scratch / "cache")
    return {str(built): f"cudaresolve/data/{FILE_NAME}", str(compiled): f"cudaresolve/data/compiled/{compiled.name}"}
