"""A cache folder that is not the tool's: ``--cache-dir`` over the user's files, a cache subfolder that is a
link to a user folder, a planted mark that is itself a link. The database cache writes an entry on each of
these runs (a fresh cache misses) and then prunes its folder: every user file must still be there, with
its bytes, and no folder the tool did not make may change mode."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from hostile.case import Case, Result

if TYPE_CHECKING:
    from pathlib import Path

_SUBDIR = "compat-v2"  # cudaresolve.db.cache.SUBDIR
_MARK = ".cudaresolve-cache"  # cudaresolve.core.files.CACHE_MARK
#: Names the tool itself could give an entry, and plain ones: none is the tool's to remove here.
_NAMES = [f"0badcafe-{n}-{n}000-c0de-v2.pickle" for n in range(6)] + ["a.json", "b.pickle", "notes.txt"]


def _fill(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True, mode=0o755)
    os.chmod(folder, 0o755)
    for name in _NAMES:
        (folder / name).write_text(f"user data {name}\n")


def _cwd_is_cache(tmp: Path) -> None:
    _fill(tmp / "compat")  # the folder name the tool used before
    _fill(tmp / _SUBDIR)


def _linked_subfolder(tmp: Path) -> None:
    _fill(tmp / "mine")
    (tmp / ".cache").mkdir()
    (tmp / ".cache" / _SUBDIR).symlink_to(tmp / "mine")


def _linked_mark(tmp: Path) -> None:
    _fill(tmp / _SUBDIR)
    (tmp / "elsewhere").write_text("not a mark\n")
    (tmp / _SUBDIR / _MARK).symlink_to(tmp / "elsewhere")


def _kept(*folders: str) -> object:
    def check(result: Result, tmp: Path) -> None:
        for folder in folders:
            for name in _NAMES:
                assert (tmp / folder / name).read_text() == f"user data {name}\n", (folder, name)
            assert (tmp / folder).stat().st_mode & 0o777 == 0o755, folder  # never chmod-ed
    return check


_GPUS = ["gpus", "A100"]
CASES = [
    Case("cache-dir-over-user-folder", [*_GPUS, "--cache-dir", "."], setup=_cwd_is_cache, codes=(0,),
         check=_kept("compat", _SUBDIR)),  # type: ignore[arg-type]
    Case("cache-subfolder-links-to-user-folder", _GPUS, setup=_linked_subfolder, codes=(0,),
         check=_kept("mine")),  # type: ignore[arg-type]
    Case("cache-mark-is-a-link", [*_GPUS, "--cache-dir", "."], setup=_linked_mark, codes=(0,),
         check=_kept(_SUBDIR)),  # type: ignore[arg-type]
    Case("cache-dir-over-user-folder-lock", ["lock", "torch", "--gpu", "8.0", "--driver", "550.54.15",
         "--offline", "-o", "pylock.toml", "--cache-dir", "."], setup=_cwd_is_cache, codes=(0, 1, 2),
         check=_kept("compat", _SUBDIR)),  # type: ignore[arg-type]
]
