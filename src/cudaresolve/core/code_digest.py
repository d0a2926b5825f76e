"""The SHA-256 of this package's code, by content, read back from the cache while no file changed. Does I/O.

A lock's stamp covers the code that made it by content (``lock.keep.inputs_key``), so the same lock keeps
its stamp in another clone or on another machine. Hashing every module and message file costs 5-7 ms, a
few per cent of a repeated lock; looking at their sizes and modification times costs about one. The digest
is kept in the cache under the digest of those stats (the package's real path; each file's path inside it,
size, modification time in nanoseconds, device and inode: Python's own bytecode cache trusts size and
time), and hashed again whenever any of them differs. On a file system whose times are coarse (FAT's two
seconds), an edit that keeps a file's size within one tick goes unseen, as it does for the bytecode cache.
A kept file is read only when it is this user's own regular file that nobody else may write
(``core.files.private_entry``), and only whole (``core.files.write_sealed``): one damaged or edited reads
as absent. The folder keeps the newest ``_KEEP``.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["code_digest"]

_SUBDIR: Final = "code-v1"
_KEEP: Final = 8
_NAMES: Final = re.compile(r"[0-9a-f]{64}\.json")
_DIGEST: Final = re.compile(r"[0-9a-f]{64}")
_MAX_BYTES: Final = 256  # a kept file: its seal, a newline and the digest as JSON
_ROOT: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def code_digest(cache: Path | None, root: str = _ROOT) -> str:
    """The SHA-256 of the ``.py`` and ``.toml`` files under ``root`` (this package), but its ``data`` folder
    (the database, which a stamp covers by its own digest), by path inside ``root`` and content; kept in
    ``cache`` (None: not kept) as the module docstring says."""
    files = _files(root)
    stats = hashlib.sha256(f"{os.path.realpath(root)}\n".encode("utf-8", errors="surrogatepass"))
    for relative, path in files:
        st = os.stat(path)
        line = f"{relative}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_dev}\0{st.st_ino}\n"
        stats.update(line.encode("utf-8", errors="surrogatepass"))
    kept = cache / _SUBDIR / f"{stats.hexdigest()}.json" if cache is not None else None
    if kept is not None:
        from cudaresolve.core.files import private_entry, read_sealed

        found = read_sealed(kept) if private_entry(kept, _MAX_BYTES) else None
        if isinstance(found, str) and _DIGEST.fullmatch(found):
            return found
    digest = hashlib.sha256()
    for relative, path in files:
        with open(path, "rb") as handle:
            digest.update(f"{relative}\0".encode("utf-8", errors="surrogatepass"))
            digest.update(handle.read())
    value = digest.hexdigest()
    if kept is not None:
        import json

        from cudaresolve.core.files import sealed, store_bounded

        store_bounded(kept, sealed(json.dumps(value)), keep=_KEEP, names=_NAMES)
    return value


def _files(root: str) -> list[tuple[str, str]]:
    """(path inside ``root``, path) of each file the digest covers, in a fixed order."""
    found: list[tuple[str, str]] = []
    root = os.path.abspath(root)
    cut = len(os.path.join(root, ""))  # what ``os.path.relpath(path, root)`` takes off a path walked from ``root``
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d not in ("__pycache__", "data"))
        for name in sorted(n for n in names if n.endswith((".py", ".toml"))):
            path = os.path.join(folder, name)
            found.append((path[cut:], path))
    return found

