"""A repeated lock, answered from the record of the last identical one. Does I/O: the cache folder, stat, stdio.

``cudaresolve lock`` is a function of what it was given and what it read (``core.journal``). A
run records, next to its answer (what it printed, its exit status, the file it wrote), the
state of every file it read and the time until which every index page it used stays fresh. A
later run with the same command line, folder, environment and terminal, on the same interpreter,
gives that answer again without solving when, and only when:

* every recorded file is as it was (``os.stat``: mtime and ctime in ns, size, inode, device,
  mode; a file that was absent is still absent), every folder it listed holds the same names, and
  every folder Python imports from holds the same importable names (a new ``foo.py`` beside the
  project could shadow a module; a new lock file or cache folder cannot); a file that had changed
  less than three seconds before the record was written is also checked by content, as git checks
  its "racily clean" files (a file system with coarse timestamps could hide an edit);
* every page is still fresh (so the full run would not have asked the index either);
* the lock file it wrote is still the file it wrote (its own stat), so nothing is rewritten;
* the record is the user's own (owned by this user, writable by no one else, a regular file of at
  most ``MAX_RECORD_BYTES``); anything else is ignored and the run is made in full.

Not recorded: a run that detected the GPU, met an index that failed, served a stale page, wrote
to a stream or downloaded a whole file (``journal.volatile``); a run with ``--no-cache`` or ``-v``,
or one that drew live progress; a usage error (exit 2) or an unexpected one. ``--no-cache`` never
reads a record either.

Records live in ``<cache>/answers-v1/<key>.json``, the key being the SHA-256 of the command line,
working folder, environment, terminal and interpreter.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from cudaresolve.core import journal
from cudaresolve.core.decode import loads_json
from cudaresolve.core.files import keep_newest, make_cache_dir, read_regular_bounded, write_private_atomic

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

__all__ = [
    "MAX_RECORDS", "MAX_RECORD_BYTES", "Capture", "answer_from_record", "capturing", "record_path", "store_record",
]

_FORMAT: Final = 1
_SUBDIR: Final = "answers-v1"
#: The largest record read back; a record is mostly paths and the printed answer.
MAX_RECORD_BYTES: Final = 16 * 1024 * 1024
#: The records kept; writing one more removes the oldest.
MAX_RECORDS: Final = 256
#: Environment variables that change between identical commands and say nothing to a lock.
_SHELL_NOISE: Final = frozenset({"_", "OLDPWD", "PWD", "SHLVL"})
#: The exit statuses recorded: an answer (0) or a coded refusal of the request (1). A usage error (2) may
#: turn on where stdout goes (``--json -o -``), which no key holds; it is cheap to find again anyway.
_RECORDED_CODES: Final = frozenset({0, 1})
#: An input changed this recently (seconds) when the record is written is also recorded by content, and a
#: file of at most ``_RACY_MAX_BYTES`` is hashed (``_entry``).
_RACY_SECONDS: Final = 3.0
_RACY_MAX_BYTES: Final = 4 * 1024 * 1024
#: A record is not worth writing when its pages go stale sooner than this (seconds).
_MIN_LIFETIME: Final = 1.0


def _key(argv: Sequence[str], environ: Mapping[str, str]) -> str:
    """The SHA-256 of everything a lock depends on that no file holds."""
    from cudaresolve import __version__

    streams = []
    for stream in (sys.stdout, sys.stderr):
        try:
            tty = bool(stream.isatty())
            size = tuple(os.get_terminal_size(stream.fileno())) if tty else None
        except (AttributeError, OSError, ValueError):
            tty, size = False, None
        streams.append((tty, size))
    identity = {
        "format": _FORMAT,
        "version": __version__,
        "argv": list(argv),
        "cwd": os.getcwd(),
        "env": sorted((k, v) for k, v in environ.items() if k not in _SHELL_NOISE),
        "streams": streams,
        "python": [sys.executable, sys.version, list(sys.flags)],
        "uid": os.getuid() if hasattr(os, "getuid") else None,
    }
    encoded = json.dumps(identity, ensure_ascii=True, sort_keys=True, default=str).encode("ascii")
    return hashlib.sha256(encoded).hexdigest()


def record_path(cache_dir: Path, argv: Sequence[str], environ: Mapping[str, str]) -> Path:
    return cache_dir / _SUBDIR / f"{_key(argv, environ)}.json"


def _cache_dir_of(argv: Sequence[str]) -> Path | None:
    """The cache folder a lock with ``argv`` uses, read off the flags as argparse would; None when records
    are off (``--no-cache``) or the flags are not plain enough to read here (an abbreviation)."""
    from cudaresolve.core.paths import default_cache_dir

    chosen: Path | None = None
    for i, token in enumerate(argv):
        if token == "--":
            break
        if token.startswith("--no-c"):
            return None
        if token.startswith("--ca"):
            if token.startswith("--cache-dir="):
                chosen = Path(token.partition("=")[2]).expanduser()
            elif token == "--cache-dir" and i + 1 < len(argv):
                chosen = Path(argv[i + 1]).expanduser()
            else:
                return None
    return chosen if chosen is not None else default_cache_dir()


def answer_from_record(argv: Sequence[str], *, out: IO[str], err: IO[str]) -> int | None:
    """The exit status of a lock answered from its record (its output printed), or None: run it in full."""
    if "lock" not in argv:
        return None
    cache_dir = _cache_dir_of(argv)
    if cache_dir is None:
        return None
    path = record_path(cache_dir, argv, os.environ)
    record = _read_record(path)
    if record is None or record.get("key") != path.stem or not _still_holds(record):
        return None
    if not (_encodes(record["stdout"], out) and _encodes(record["stderr"], err)):
        return None
    try:
        out.write(record["stdout"])
        out.flush()
        err.write(record["stderr"])
        err.flush()
    except (OSError, ValueError):  # a closed or broken stream: the answer stands, as a full run's would
        pass
    return int(record["code"])


def _encodes(text: str, stream: IO[str]) -> bool:
    """Whether ``stream`` can print ``text`` (a record's own words always can; a planted one may not)."""
    try:
        text.encode(getattr(stream, "encoding", None) or "utf-8")
    except (UnicodeError, LookupError):
        return False
    return True


def _is_stdio(signature: journal.Signature) -> bool:
    """Whether standard output or error is the file of ``signature`` (``>> out.txt`` beside ``-o out.txt``)."""
    if not (isinstance(signature, tuple) and isinstance(signature[0], int)):
        return False
    for fd in (1, 2):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if (st.st_ino, st.st_dev) == (signature[3], signature[4]):
            return True
    return False


def _read_record(path: Path) -> dict[str, Any] | None:
    """The record at ``path`` when it is the user's own, regular and small enough; else None."""
    if not _private_folder(path.parent):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        owner_ok = not hasattr(os, "getuid") or st.st_uid == os.getuid()
        if not stat.S_ISREG(st.st_mode) or not owner_ok or st.st_mode & 0o022 or st.st_size > MAX_RECORD_BYTES:
            return None
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            data = loads_json(handle.read(MAX_RECORD_BYTES + 1))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    return data if _well_formed(data) else None


def _private_folder(folder: Path) -> bool:
    """The records' folder is a real folder of this user's that no one else may write into (else another
    user could rename one record over another's key)."""
    try:
        st = os.lstat(folder)
    except OSError:
        return False
    owner_ok = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return stat.S_ISDIR(st.st_mode) and owner_ok and not st.st_mode & 0o022


def _well_formed(data: Any) -> bool:
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        return False
    types: dict[str, type | tuple[type, ...]] = {
        "stdout": str, "stderr": str, "code": int, "fresh_until": (int, float), "read": list, "wrote": list,
    }
    return all(isinstance(data.get(name), kind) for name, kind in types.items()) and data["code"] in _RECORDED_CODES


def _entry(path: str, signature: journal.Signature, replaced: set[str], now: float) -> list[Any]:
    """``[path, signature]``, plus the file's SHA-256 when it changed less than ``_RACY_SECONDS`` ago and
    the run did not write it: on a file system with coarse timestamps an edit within the same tick could keep
    its signature (git's "racily clean" files are checked the same way)."""
    entry: list[Any] = [path, _sig(signature)]
    if (
        isinstance(signature, tuple) and isinstance(signature[0], int) and stat.S_ISREG(int(signature[5]))
        and path not in replaced and signature[0] > (now - _RACY_SECONDS) * 1e9 and signature[2] <= _RACY_MAX_BYTES
    ):  # fmt: skip
        digest = _content(path)
        if digest is not None:
            entry.append(digest)
    return entry


def _content(path: str) -> str | None:
    """The SHA-256 of a regular file (opened non-blocking: a FIFO is never waited on); None for anything else."""
    try:
        return hashlib.sha256(read_regular_bounded(path, _RACY_MAX_BYTES)).hexdigest()
    except OSError:
        return None


def _still_holds(record: Mapping[str, Any]) -> bool:
    """Every page still fresh, every file read unchanged, every file written still as written."""
    if not time.time() < record["fresh_until"]:
        return False
    for entry in record["read"]:
        if not (isinstance(entry, list) and len(entry) in (2, 3) and isinstance(entry[0], str)):
            return False
        if _sig(journal.signature(entry[0])) != entry[1]:
            return False
        if len(entry) == 3 and _content(entry[0]) != entry[2]:
            return False
    for entry in record["wrote"]:
        if not (isinstance(entry, list) and len(entry) == 3 and all(isinstance(e, str) for e in entry[:2])):
            return False
        given, real, sig = entry
        now = journal.signature(real)
        if os.path.realpath(given) != real or _sig(now) != sig or _is_stdio(now):
            return False
    return True


def _sig(signature: journal.Signature) -> list[int | str] | None:
    return None if signature is None else list(signature)


class Capture:
    """What a run printed, stream by stream, while it is still printed as usual."""

    def __init__(self) -> None:
        self.stdout: list[str] = []
        self.stderr: list[str] = []


class _Tee:
    """A text stream that writes through to ``stream`` and keeps a copy in ``kept``."""

    def __init__(self, stream: IO[str], kept: list[str]) -> None:
        self._stream, self._kept = stream, kept

    def write(self, text: str) -> int:
        self._kept.append(text)
        return self._stream.write(text)

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, flush, encoding, ...: the real stream's
        return getattr(self._stream, name)


@contextmanager
def capturing() -> Iterator[Capture]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` are kept in the returned ``Capture`` too."""
    kept = Capture()
    before = sys.stdout, sys.stderr
    sys.stdout = _Tee(before[0], kept.stdout)
    sys.stderr = _Tee(before[1], kept.stderr)
    try:
        yield kept
    finally:
        sys.stdout, sys.stderr = before


def store_record(target: Path, record: journal.Journal, capture: Capture, code: int) -> bool:
    """Write the record of a finished run to ``target`` (``record_path``, taken before the run) when it may be
    replayed (module docstring); True when written."""
    now = time.time()
    if code not in _RECORDED_CODES or record.volatile or record.fresh_until < now + _MIN_LIFETIME:
        return False
    wrote = []
    for path, written in sorted(record.written.items()):
        real = os.path.realpath(path)
        now_sig = journal.signature(real)
        if now_sig != written or _is_stdio(now_sig):  # another process wrote there since, or stdout goes there
            return False
        wrote.append([path, real, _sig(now_sig)])
    inputs = record.inputs()
    if inputs is None:  # an input changed while the run read it
        return False
    read = [_entry(p, s, record.replaced, now) for p, s in inputs]
    data = {
        "format": _FORMAT,
        "key": target.stem,
        "created": now,
        "fresh_until": record.fresh_until if record.fresh_until != float("inf") else 1e300,
        "code": code,
        "stdout": "".join(capture.stdout),
        "stderr": "".join(capture.stderr),
        "read": read,
        "wrote": wrote,
    }
    text = json.dumps(data, ensure_ascii=False)
    if len(text.encode("utf-8")) > MAX_RECORD_BYTES:
        return False
    try:
        make_cache_dir(target.parent)
        write_private_atomic(target, text.encode("utf-8"))
    except OSError:
        return False  # the record is only an optimisation
    # one per command would pile up
    keep_newest(target.parent, MAX_RECORDS, re.compile("[0-9a-f]{64}[.]json"), spare=target.name)
    return True
