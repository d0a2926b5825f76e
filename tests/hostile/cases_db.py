"""A bad ``--compat`` file: binary bytes, deep nesting, a directory, a FIFO, an endless device, a huge file.

Each runs both as ``db check PATH`` and as ``lock --compat PATH``; every one must end in a coded
error (``invalid-compat-data`` or ``invalid-input``), never a traceback. The bound on work: the
loader reads at most ``MAX_COMPAT_BYTES`` (16 MiB) of any file, so /dev/zero and an oversized
file end with the message naming that limit rather than a read to the end.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from hostile.case import Case, Result

if TYPE_CHECKING:
    from pathlib import Path

_LIMIT = 16 * 1024 * 1024  # cudaresolve.db.database.MAX_COMPAT_BYTES


def _binary(tmp: Path) -> None:
    (tmp / "bad.toml").write_bytes(b"\xff\xfe\x00\x01schema-version = 1\n\x80\x81")


def _deep(tmp: Path) -> None:
    depth = 100_000
    (tmp / "bad.toml").write_text("a = " + "[" * depth + "]" * depth + "\n", encoding="utf-8")


def _directory(tmp: Path) -> None:
    (tmp / "bad.toml").mkdir()


def _fifo(tmp: Path) -> None:
    os.mkfifo(tmp / "bad.toml")  # nobody ever writes to it: a blocking read would wait for ever


def _huge(tmp: Path) -> None:
    with (tmp / "bad.toml").open("wb") as f:  # sparse: no real disk use
        f.truncate(_LIMIT * 4)


def _code(code: str, *, limit: bool = False) -> object:
    def check(result: Result, tmp: Path) -> None:
        assert result.stderr.startswith(f"error: {code}: "), result.stderr[:300]
        if limit:
            assert str(_LIMIT) in result.stderr  # stopped at the cap, not at the end of the file
    return check


_LOCK = ["lock", "torch", "--gpu", "8.0", "--driver", "550.54.15", "--compat"]
_FILES = [
    ("binary", _binary, "{tmp}/bad.toml", "invalid-compat-data", False),
    ("deep-nesting", _deep, "{tmp}/bad.toml", "invalid-compat-data", False),
    ("directory", _directory, "{tmp}/bad.toml", "invalid-input", False),
    ("fifo", _fifo, "{tmp}/bad.toml", "invalid-input", False),
    ("dev-zero", None, "/dev/zero", "invalid-compat-data", True),
    ("sparse-64mib", _huge, "{tmp}/bad.toml", "invalid-compat-data", True),
]

CASES = [
    Case(f"db-{cmd}-{name}", [*argv, path], setup=setup, codes=(1,), check=_code(code, limit=limit))  # type: ignore[arg-type]
    for name, setup, path, code, limit in _FILES
    for cmd, argv in (("check", ["db", "check"]), ("lock-compat", _LOCK))
]
