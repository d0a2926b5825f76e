"""Whether an installed distribution holds exactly a wheel's files, by their RECORDs. Pure, plus reading a
wheel and a cache of verified wheels' RECORDs.

pip records no hash of the wheel it installed, but every wheel carries a RECORD (each file's path
and sha256) and pip writes one for the installed distribution (PEP 376/627). A distribution is the
locked wheel when every file the wheel's RECORD lists sits at the same path with the same hash in
the installed RECORD, and the installed RECORD lists nothing else but what installing adds:
byte-code (``__pycache__/*.pyc``), the installer's own files in ``.dist-info`` (``INSTALLER``,
``REQUESTED``, ``direct_url.json``) and files outside site-packages (``../``: scripts, data,
headers, which pip rewrites). Files under ``<name>.data/purelib/`` and ``platlib/`` are installed at
the top; the rest of ``.data/`` goes outside site-packages and is not compared.

The RECORD of a wheel whose sha256 pip has checked is kept under that sha256 (``store_record``),
so that the next comparison against the same locked file needs no download (``cached_record``).

Spec: https://packaging.python.org/en/latest/specifications/binary-distribution-format/ and
https://packaging.python.org/en/latest/specifications/recording-installed-packages/
"""

from __future__ import annotations

import csv
import re
from typing import TYPE_CHECKING, Final

from cudaresolve.core.files import read_text_or_none, write_private_atomic

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = [
    "KEEP_RECORDS", "MAX_RECORD_BYTES", "cached_record", "parse_record", "read_wheel_record", "same_files",
    "store_record",
]

#: The largest RECORD read, from a wheel or an environment (torch's is about 2 MB).
MAX_RECORD_BYTES: Final = 32 * 1024 * 1024
_INSTALLER_FILES: Final = frozenset({"INSTALLER", "REQUESTED", "direct_url.json", "RECORD", "uv_cache.json"})
_DATA_TOP: Final = re.compile(r"^[^/]+\.data/(?:purelib|platlib)/(.+)$")
_DATA_OTHER: Final = re.compile(r"^[^/]+\.data/")
_SHA256: Final = re.compile(r"^[0-9a-f]{64}$")
_RECORD_NAMES: Final = re.compile(r"[0-9a-f]{64}\.RECORD")
#: How many wheels' RECORDs are kept (the newest written); one is a few KB to 2 MB.
KEEP_RECORDS: Final = 2048


def parse_record(text: str) -> dict[str, str]:
    """RECORD text -> ``{path: "sha256=..."}`` for every row that has a hash (RECORD itself has none)."""
    rows: dict[str, str] = {}
    for row in csv.reader(text.splitlines()):
        if len(row) >= 2 and row[0] and row[1]:
            rows[row[0]] = row[1]
    return rows


def read_wheel_record(path: Path) -> str | None:
    """The text of ``*.dist-info/RECORD`` inside the wheel at ``path``; None when the file is not a
    wheel, has no RECORD (or several) or a RECORD over ``MAX_RECORD_BYTES``."""
    import zipfile  # here: a warm install reads its RECORDs from the cache

    try:
        with zipfile.ZipFile(path) as archive:
            found = [i for i in archive.infolist() if re.fullmatch(r"[^/]+\.dist-info/RECORD", i.filename)]
            if len(found) != 1 or found[0].file_size > MAX_RECORD_BYTES:
                return None
            return archive.read(found[0]).decode("utf-8")
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError, ValueError):
        return None


def cached_record(cache: Path, sha256: str) -> str | None:
    """The RECORD stored for the wheel with this sha256, or None (not stored, unreadable, too large)."""
    if not _SHA256.match(sha256):
        return None
    return read_text_or_none(cache / f"{sha256}.RECORD", MAX_RECORD_BYTES)  # a FIFO: None, never waited on


def store_record(cache: Path, sha256: str, text: str) -> None:
    """Keep ``text``, the RECORD of the hash-checked wheel with this sha256; a cache that cannot be
    written is skipped (the next run downloads again). Atomic but not synced to disk: an entry lost in a
    crash is read from the wheel again."""
    if not _SHA256.match(sha256):
        return
    from cudaresolve.core.files import keep_newest, make_cache_dir

    try:
        make_cache_dir(cache)  # marked as this tool's when made here: only then are old entries removed
        write_private_atomic(cache / f"{sha256}.RECORD", text.encode("utf-8"))
        keep_newest(cache, KEEP_RECORDS, _RECORD_NAMES, spare=f"{sha256}.RECORD")
    except OSError:
        return


def same_files(wheel: Mapping[str, str], installed: Mapping[str, str]) -> bool:
    """Whether ``installed`` (a parsed installed RECORD) holds exactly ``wheel``'s files (a parsed
    wheel RECORD), by path and hash, and nothing else but what installing adds (module docstring)."""
    expected: dict[str, str] = {}
    for path, digest in wheel.items():
        top = _DATA_TOP.match(path)
        if top:
            expected[top.group(1)] = digest
        elif not _DATA_OTHER.match(path):
            expected[path] = digest
    if not expected:
        return False
    if any(installed.get(path) != digest for path, digest in expected.items()):
        return False
    return all(path in expected or _added_by_installer(path) for path in installed)


def _added_by_installer(path: str) -> bool:
    if path.startswith("../") or path.startswith("/"):
        return True
    parts = path.split("/")
    if len(parts) >= 2 and parts[-2] == "__pycache__" and parts[-1].endswith(".pyc"):
        return True
    return len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] in _INSTALLER_FILES
