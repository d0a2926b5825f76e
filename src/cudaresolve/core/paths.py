"""Where cudaresolve keeps its user cache. Pure, apart from reading the environment and the home directory.

Both caches live under this one directory: index pages (``index/http_cache.py``) and the parsed
copy of the shipped database (``db/load.py``).
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

__all__ = ["CACHE_DIR_ENV", "check_cache_dir", "default_cache_dir", "use_cache_dir"]

#: Environment variable that overrides the cache directory.
CACHE_DIR_ENV: Final = "CUDARESOLVE_CACHE_DIR"
#: The directory ``--cache-dir`` (or ``--no-cache``'s temporary one) names for this run; a plain global,
#: not a ContextVar, so that worker threads see it too.
_OVERRIDE: list[Path | None] = [None]


@contextmanager
def use_cache_dir(path: Path | None) -> Iterator[None]:
    """Within the block ``default_cache_dir()`` is ``path`` (None: no change): the flag beats the environment."""
    before = _OVERRIDE[0]
    if path is not None:
        _OVERRIDE[0] = path
    try:
        yield
    finally:
        _OVERRIDE[0] = before


def default_cache_dir(env: Mapping[str, str] | None = None, *, platform: str | None = None) -> Path:
    """The user cache directory for cudaresolve.

    ``--cache-dir`` (``use_cache_dir``) wins, then ``$CUDARESOLVE_CACHE_DIR``; otherwise
    ``$XDG_CACHE_HOME/cudaresolve`` or ``~/.cache/cudaresolve`` (XDG Base Directory spec,
    https://specifications.freedesktop.org/basedir-spec/latest/), ``%LOCALAPPDATA%\\cudaresolve\\Cache``
    on Windows and ``~/Library/Caches/cudaresolve`` on macOS (the platformdirs conventions).
    """
    override = _OVERRIDE[0]
    if override is not None:
        return override
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    if env.get(CACHE_DIR_ENV):
        return Path(env[CACHE_DIR_ENV]).expanduser()
    if platform == "win32" and env.get("LOCALAPPDATA"):
        return Path(env["LOCALAPPDATA"]) / "cudaresolve" / "Cache"
    if platform == "darwin":
        return Path.home() / "Library" / "Caches" / "cudaresolve"
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "cudaresolve"
    return Path.home() / ".cache" / "cudaresolve"


def check_cache_dir(path: Path) -> None:
    """``InvalidInput`` when the system refuses ``path`` as a name at all (a part longer than the file system's
    NAME_MAX, the whole past PATH_MAX, a NUL): no cache can be kept there. A cache folder that is missing, a file or
    unreadable is not refused here: the run then goes on without a cache, as each reader and writer decides."""
    import errno

    text = str(path)
    try:
        os.stat(path)
        return
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            return
        reason = exc.strerror or "name too long"
        shown = text if len(text) <= 120 else f"{text[:60]}...{text[-40:]}"
    except ValueError:  # a NUL in the name
        reason, shown = "a NUL byte", repr(text)[:120]
    from cudaresolve.errors import InvalidInput
    from cudaresolve.text.model import Text

    raise InvalidInput(Text.of("cli.cache-dir-unusable", path=shown, reason=reason),
                       hint=Text("cli.cache-dir-unusable.hint"))  # fmt: skip
