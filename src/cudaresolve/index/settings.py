"""The default index the user has chosen, read where pip and uv read it. Pure parsers plus one reader.

Users point pip and uv at a PyPI mirror through the environment and configuration files; a lock
made here must use the same mirror, or it fetches from a host they cannot reach. The sources, from
the weakest to the strongest (a later one wins):

1. pip's configuration files, in pip's load order: ``PIP_CONFIG_FILE``, the global files
   (``$XDG_CONFIG_DIRS/pip/pip.conf``, ``/etc/pip.conf``), the user files (``~/.pip/pip.conf``,
   then ``$XDG_CONFIG_HOME/pip/pip.conf``), the site file (``$VIRTUAL_ENV/pip.conf``); in each,
   ``[install] index-url`` over ``[global] index-url``. ``PIP_CONFIG_FILE=/dev/null`` turns all off.
2. ``PIP_INDEX_URL``.
3. uv's configuration: ``UV_CONFIG_FILE`` if set, else the system file (``$XDG_CONFIG_DIRS/uv/uv.toml``
   or ``/etc/uv/uv.toml``), the user file (``$XDG_CONFIG_HOME/uv/uv.toml``) and the project's
   ``uv.toml`` or ``pyproject.toml [tool.uv]`` (the nearest directory up from the working one that
   has one); ``UV_NO_CONFIG`` turns all off. In a file: an ``[[index]]`` with ``default = true``,
   else ``index-url``, else ``[pip] index-url``.
4. ``UV_INDEX_URL``, then ``UV_DEFAULT_INDEX`` (uv's current name wins over the deprecated one).
5. ``[tool.cudaresolve] index-url`` in the project.
6. ``--index-url`` / ``--default-index`` on the command line.

Every value is checked like an ``--index-mirror`` URL (http or https); a bad one is one coded
error naming where it was set. Files are read up to ``MAX_CONFIG_BYTES``.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.decode import loads_toml
from cudaresolve.core.files import PROJECT_FILE_MOST, NotRegularFile, read_regular_bounded
from cudaresolve.core.urls import shown_url, split_url
from cudaresolve.errors import InvalidInput
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

__all__ = [
    "MAX_CONFIG_BYTES",
    "IndexSetting",
    "check_index_url",
    "default_index",
    "pip_config_files",
    "pip_index",
    "uv_config_files",
    "uv_index",
]

#: A configuration file larger than this is not a configuration file (bounded work on any input).
MAX_CONFIG_BYTES: Final = 1 << 20
_MAX_PARENTS: Final = 64  # directories walked up looking for a project's uv.toml


@dataclass(frozen=True, slots=True)
class IndexSetting:
    """A default index and where the user set it (``PIP_INDEX_URL``, a file and its key, ``--index-url`` ...)."""

    url: str  # checked; credentials kept (they are needed to fetch), never shown (``redact``)
    origin: str


def check_index_url(value: object, origin: str) -> IndexSetting:
    text = value.strip() if isinstance(value, str) else ""
    parts = split_url(text)  # None: malformed (``http://[::1``, a port that is not a number), or whitespace in it
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        shown = shown_url(text) if text else repr(value)[:80]
        raise InvalidInput(
            Text.of("index.bad-default-index", origin=origin, url=shown), hint=Text("index.bad-default-index.hint")
        )
    if parts.query or parts.fragment:
        shown = f"{origin}: {shown_url(text)}"
        raise InvalidInput(Text.of("index.url-query", url=shown), hint=Text("index.url-query.hint"))
    return IndexSetting(text.rstrip("/"), origin)


def _read(path: Path) -> str | None:
    """The file's text, None when it does not exist (or is ``os.devnull``, pip's way to turn its files off, or a
    directory, or a name no file can have, which pip's ``os.path.exists`` calls absent too); too large, unreadable
    or not a regular file (a FIFO would block the read) is ``InvalidInput``. A ``pyproject.toml`` is read up to the
    project's own bound (``core.files.PROJECT_FILE_MOST``), which the lock then reads whole anyway."""
    if str(path) == os.devnull or os.path.isdir(path):
        return None
    most = PROJECT_FILE_MOST if path.name == "pyproject.toml" else MAX_CONFIG_BYTES
    reason: Text | str
    try:
        data = read_regular_bounded(path, most)
        if len(data) <= most:
            return data.decode("utf-8", errors="replace")
        reason = Text.of("index.config-too-large", limit=most)
    except (FileNotFoundError, NotADirectoryError, ValueError):  # ValueError: a null byte in the name
        return None
    except NotRegularFile:
        reason = Text("index.config-not-regular")
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            return None
        reason = e.strerror or type(e).__name__
    raise InvalidInput(
        Text.of("index.config-unreadable", path=str(path), error=reason), hint=Text("index.config-unreadable.hint")
    )


def pip_index(text: str, path: str) -> IndexSetting | None:
    """``[install] index-url`` else ``[global] index-url`` of a pip configuration file's text."""
    import configparser  # here: most runs find no pip configuration file

    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text, source=path)
    except configparser.Error as e:
        first = str(e).splitlines()[0][:200]
        raise InvalidInput(
            Text.of("index.config-unreadable", path=path, error=first), hint=Text("index.config-unreadable.hint")
        ) from e
    for section in ("install", "global"):
        for key in ("index-url", "index_url", "i"):
            if parser.has_option(section, key):
                return check_index_url(parser.get(section, key), f"{path} [{section}] {key}")
    return None


def uv_index(data: Mapping[str, Any], origin: str) -> IndexSetting | None:
    """The default index of a uv settings table (``uv.toml``, or ``[tool.uv]`` of a pyproject.toml)."""
    indexes = data.get("index", [])
    for entry in indexes if isinstance(indexes, list) else []:
        if isinstance(entry, dict) and entry.get("default") is True:
            return check_index_url(entry.get("url"), f"{origin} [[index]] default")
    if "index-url" in data:
        return check_index_url(data["index-url"], f"{origin} index-url")
    pip = data.get("pip")
    if isinstance(pip, dict) and "index-url" in pip:
        return check_index_url(pip["index-url"], f"{origin} [pip] index-url")
    return None


def _split_dirs(value: str | None, default: str) -> list[Path]:
    return [Path(p) for p in (value or default).split(":") if p]


def pip_config_files(environ: Mapping[str, str], home: Path) -> list[Path]:
    """pip's configuration files in its load order (a later file wins); [] when ``PIP_CONFIG_FILE`` is the null
    device. As pip loads them: the global files, the user's (not when ``PIP_CONFIG_FILE`` names a file that
    exists), the virtual environment's, then ``PIP_CONFIG_FILE``'s, which wins. Files that do not exist are listed
    too (the reader skips them)."""
    named = environ.get("PIP_CONFIG_FILE")
    if named == "/dev/null":
        return []
    files = [d / "pip" / "pip.conf" for d in _split_dirs(environ.get("XDG_CONFIG_DIRS"), "/etc/xdg")]
    files.append(Path("/etc/pip.conf"))
    if not (named and os.path.exists(named)):  # as pip asks: False for a name no file can have
        files.append(home / ".pip" / "pip.conf")
        files.append(Path(environ.get("XDG_CONFIG_HOME") or home / ".config") / "pip" / "pip.conf")
    if environ.get("VIRTUAL_ENV"):
        files.append(Path(environ["VIRTUAL_ENV"]) / "pip.conf")
    if named:
        files.append(Path(named))
    return files


def _project_uv(cwd: Path) -> Iterator[tuple[Path, str]]:
    """(file, table) of the nearest project setting: ``uv.toml``, else a ``pyproject.toml`` with ``[tool.uv]``."""
    for depth, directory in enumerate((cwd, *cwd.parents)):
        if depth >= _MAX_PARENTS:
            return
        if os.path.isfile(directory / "uv.toml"):
            yield directory / "uv.toml", ""
            return
        pyproject = directory / "pyproject.toml"
        if os.path.isfile(pyproject) and "[tool.uv" in (_read(pyproject) or ""):
            yield pyproject, "tool.uv"
            return


def uv_config_files(environ: Mapping[str, str], home: Path, cwd: Path) -> list[tuple[Path, str]]:
    """uv's configuration files, weakest first, each with the table that holds uv's settings ("" for the top)."""
    if environ.get("UV_NO_CONFIG", "").lower() in ("1", "true", "yes", "on"):
        return []
    if environ.get("UV_CONFIG_FILE"):
        return [(Path(environ["UV_CONFIG_FILE"]), "")]
    system = [d / "uv" / "uv.toml" for d in _split_dirs(environ.get("XDG_CONFIG_DIRS"), "/etc/xdg")]
    first_system = next((p for p in system if os.path.isfile(p)), Path("/etc/uv/uv.toml"))  # no error: a bad name
    user = Path(environ.get("XDG_CONFIG_HOME") or home / ".config") / "uv" / "uv.toml"
    return [(first_system, ""), (user, ""), *_project_uv(cwd)]


def _uv_file(path: Path, table: str) -> IndexSetting | None:
    text = _read(path)
    if text is None:
        return None
    try:
        data: Any = loads_toml(text)
    except ValueError as e:  # tomllib.TOMLDecodeError, decode.TooDeep
        raise InvalidInput(
            Text.of("index.config-unreadable", path=str(path), error=str(e)[:200]),
            hint=Text("index.config-unreadable.hint"),
        ) from e
    for key in table.split(".") if table else ():
        data = data.get(key, {}) if isinstance(data, dict) else {}
    return uv_index(data, f"{path}{f' [{table}]' if table else ''}") if isinstance(data, dict) else None


def default_index(
    environ: Mapping[str, str],
    *,
    home: Path,
    cwd: Path,
    project: IndexSetting | None = None,
    flag: str | None = None,
) -> IndexSetting | None:
    """The strongest setting of the default index (see the module's order), or None when nothing sets one.

    ``project``: ``[tool.cudaresolve] index-url`` as read with the project; ``flag``: ``--index-url``."""
    if flag is not None:
        return check_index_url(flag, "--index-url")
    if project is not None:
        return project
    for name in ("UV_DEFAULT_INDEX", "UV_INDEX_URL"):
        if environ.get(name):
            return check_index_url(environ[name], name)
    for path, table in reversed(uv_config_files(environ, home, cwd)):
        found = _uv_file(path, table)
        if found is not None:
            return found
    if environ.get("PIP_INDEX_URL"):
        return check_index_url(environ["PIP_INDEX_URL"], "PIP_INDEX_URL")
    for path in reversed(pip_config_files(environ, home)):
        text = _read(path)
        found = pip_index(text, str(path)) if text is not None else None
        if found is not None:
            return found
    return None
