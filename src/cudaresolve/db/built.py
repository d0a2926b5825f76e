"""The shipped database as the wheel carries it built: ``compat.built`` beside ``compat.toml``. Does I/O: reads
and writes that one file.

A run whose cache holds no built database (a first run, a new ``--cache-dir``, ``--no-cache``) builds it from
``compat.toml``: 0.2-0.3 s of CPU on the development machine (tomllib, and the typing of every row), most of a
cold lock's own work before its first request. A wheel carries it built, as pip compiles a wheel's modules to
bytecode when it installs them: ``hatch_build.py``, at the repository's root, calls ``write_built`` when the wheel
is built. The file is one line naming what it was built from (``content_key``: the bytes of ``compat.toml`` and
of every module of ``BUILT_FROM``, Python's major and minor version, packaging's version), then the ``CompatDB``
with every package table read, pickled and sealed (``core.files.seal``). ``load_built`` gives it back only while
that line names what is installed now: an edited ``compat.toml`` or module, another Python or packaging, a file
cut short or missing (an editable install, a checkout) all leave the database to be built from the TOML, as
without it. The file is part of the package and as trusted as its modules; it is still read only when it is a
regular file of bounded size, owned by this user or root, that neither group nor others may write, in a folder
alike.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Final, TypeVar

from cudaresolve.core.files import installed_entry, seal, unseal, write_bytes_atomic

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

__all__ = ["BUILT_FROM", "FILE_NAME", "built_folders", "content_key", "load_built", "write_built"]

FILE_NAME: Final = "compat.built"
#: The package's folders whose classes the built database holds (``db.cache.code_key`` watches them too).
BUILT_FROM: Final = ("db", "core")
FORMAT: Final = 1  # bump when the file's meaning changes
MAX_BYTES: Final = 64 * 1024 * 1024  # the shipped database, every table read, pickles to about 0.6 MB

T = TypeVar("T")


def built_folders(shipped: Path) -> list[Path]:
    """The folders of ``BUILT_FROM`` in the package whose ``data/compat.toml`` is ``shipped``."""
    package = shipped.parent.parent
    return [package / name for name in BUILT_FROM]


def content_key(shipped: Path, folders: Iterable[Path]) -> str:
    """The SHA-256 of what a built database depends on (module docstring), in hex."""
    import hashlib

    import packaging

    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    digest = hashlib.sha256(f"v{FORMAT}\0{python}\0{packaging.__version__}\0".encode())
    digest.update(shipped.read_bytes())
    for folder in folders:
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.name.endswith(".py") and entry.is_file():
                with open(entry.path, "rb") as f:
                    digest.update(b"\0" + entry.name.encode() + b"\0" + f.read())
    return digest.hexdigest()


def write_built(value: object, shipped: Path, out: Path) -> None:
    """Write ``value`` (the database built from ``shipped``, every table read) to ``out`` as ``load_built`` reads it."""
    import pickle

    key = content_key(shipped, built_folders(shipped))
    write_bytes_atomic(out, key.encode() + b"\n" + seal(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)))


def load_built(shipped: Path, expect: type[T]) -> T | None:
    """The database built from ``shipped`` that the package carries beside it; None when there is none, or it was
    built from anything other than what is installed now, or cannot be read (module docstring)."""
    path = shipped.with_name(FILE_NAME)
    if not installed_entry(path, MAX_BYTES):
        return None
    try:
        with open(path, "rb") as f:
            blob = f.read(MAX_BYTES + 1)
        key, newline, sealed = blob.partition(b"\n")
        if not newline or key.decode("ascii") != content_key(shipped, built_folders(shipped)):
            return None
        data = unseal(sealed)
        if data is None:
            return None
        import pickle

        value = pickle.loads(data)
    except Exception:  # a damaged or foreign file is left alone, whatever it raises: built anew
        return None
    return value if isinstance(value, expect) else None
