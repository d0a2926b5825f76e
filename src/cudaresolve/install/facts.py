"""The few database facts installing a lock needs, kept small so that a warm install loads no database. Does
I/O: reads and writes one small file in the user cache (and loads the database when it is missing).

Installing a lock asks the database three things: its default index (``lock.request.all_mirrors``: the
mirror a pip or uv setting names stands for it), the PyTorch index root (a project's bare
``index-mirror`` URL replaces it) and the packages the doctor pass checks (``package_kinds``: is
there anything to check after the install). Loading the built database costs the import of its
modules and the unpickling of some 1,100 rows on every run, ten times what the rest of a warm
install of a small lock costs in Python; these three are kept as JSON in
``install-facts-v1/<entry>.json`` instead.

The entry is named as ``db.cache`` names the built database (``entry_name``: the shipped file's path,
size and modification time, and ``code_key`` of the code that reads it), so an edited database or an
upgraded cudaresolve writes a new one; the folder keeps the newest ``KEEP``. An entry that cannot be
read, is not this module's JSON, or cannot be written is no error: the database is loaded. A
``--compat`` file is always loaded (and validated) instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.files import read_text_or_none

if TYPE_CHECKING:
    from cudaresolve.db.database import CompatDB

__all__ = ["FACTS", "InstallFacts", "facts_of", "install_facts"]

#: The folder under the user cache that keeps the facts.
FACTS: Final = "install-facts-v1"
_KEEP: Final = 3
_NAMES: Final = re.compile(r"[0-9a-f]{8}-[0-9]+-[0-9]+-[0-9a-z]+-v[0-9]+\.json")
_BUILT_FROM: Final = ("db", "core", "install")  # the code that reads the facts from the database


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallFacts:
    """The database's default index, its PyTorch index root and the packages the doctor pass checks."""

    default_index: str
    pytorch_index_root: str
    package_kinds: tuple[str, ...]


def facts_of(db: CompatDB) -> InstallFacts:
    """The facts of a loaded database."""
    return InstallFacts(default_index=db.default_index, pytorch_index_root=db.pytorch_index_root,
                        package_kinds=tuple(db.package_kinds))


def install_facts(compat: str | None = None, *, cache: Path | None = None) -> InstallFacts:
    """The facts of the shipped database (``compat`` None) from the kept entry, else from the database loaded
    (and then kept); those of a ``--compat`` file from the file. ``cache``: the user cache (None: the default)."""
    if compat is not None:
        from cudaresolve.db.database import load_compat

        return facts_of(load_compat(compat))
    entry = _entry(cache)
    found = _read(entry) if entry is not None else None
    if found is not None:
        return found
    from cudaresolve.db.database import load_compat

    facts = facts_of(load_compat(None))
    if entry is not None:
        _write(entry, facts)
    return facts


def _entry(cache: Path | None) -> Path | None:
    import cudaresolve
    from cudaresolve.db.cache import code_key, entry_name

    package = Path(cudaresolve.__file__).parent
    shipped = package / "data" / "compat.toml"  # where db.database.shipped_path finds it
    if cache is None:
        from cudaresolve.core.paths import default_cache_dir

        cache = default_cache_dir()
    try:
        name = entry_name(shipped.resolve(), code_key(package / d for d in _BUILT_FROM))
    except OSError:  # not a plain file (a zipped install): the database is loaded
        return None
    return cache / FACTS / name.replace(".pickle", ".json")


def _read(entry: Path) -> InstallFacts | None:
    try:
        data: Any = json.loads(read_text_or_none(entry, 1 << 20) or "null")  # a FIFO or /dev/zero: no entry
        facts = InstallFacts(default_index=data["default_index"], pytorch_index_root=data["pytorch_index_root"],
                             package_kinds=tuple(data["package_kinds"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    strings = [facts.default_index, facts.pytorch_index_root, *facts.package_kinds]
    return facts if all(isinstance(s, str) and s for s in strings) else None


def _write(entry: Path, facts: InstallFacts) -> None:
    from cudaresolve.core.files import store_bounded

    data = {"default_index": facts.default_index, "pytorch_index_root": facts.pytorch_index_root,
            "package_kinds": list(facts.package_kinds)}
    store_bounded(entry, json.dumps(data).encode(), keep=_KEEP, names=_NAMES)
