"""Typed getters for compat.toml rows: each problem is recorded with its dotted path, never raised. Pure.

``Collector`` gathers ``(path, Text)`` problems (``torch[3].build[1].sass[2]: expected sm_XY form``);
a getter that records one returns None, so a reader can go on and report every problem at once
(pylock's and trove-classifiers' approach). The list helpers read the value kinds that recur
across tables: arch lists, Python versions, platforms, requirements, URLs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.archs import Arch, parse_arch
from cudaresolve.core.platforms import PLATFORMS
from cudaresolve.errors import CudaResolveError, InvalidInput
from cudaresolve.text.model import Text, literal

if TYPE_CHECKING:
    from collections.abc import Callable, Collection

    from packaging.requirements import Requirement
    from packaging.version import Version

__all__ = ["Collector", "join", "local_http", "parse_release_version", "parse_requirement"]

_PYTHON_RE: Final = re.compile(r"^3\.\d{1,2}$")
_HTTPS_HOST: Final = re.compile(r"^https://([^/]+)/")
_TYPE_KEYS: Final = {str: "db.expected-string", bool: "db.expected-bool", int: "db.expected-int"}


def local_http(url: str) -> bool:
    """Whether a row's URL (a pattern: ``{variant}`` and such in its path) is plain http to this machine (a test's
    copy of a page), judged by its parsed host, never by its first characters (``http://localhost@evil/``)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    return parts.scheme == "http" and "@" not in parts.netloc and host in ("127.0.0.1", "localhost")


def join(path: str, key: str) -> str:
    """``torch[3]`` + ``build`` -> ``torch[3].build``; a top-level key stands alone."""
    return f"{path}.{key}" if path else key


class Collector:
    """Records problems with dotted paths; typed getters return None after recording one."""

    def __init__(self, allowed_hosts: Collection[str] = ()) -> None:
        self.problems: list[tuple[str, Text]] = []
        self.allowed_hosts = tuple(allowed_hosts)

    def add(self, path: str, problem: Text) -> None:
        self.problems.append((path, problem))

    def keys(self, row: Mapping[str, Any], allowed: Collection[str], path: str) -> None:
        for key in row:
            if key not in allowed:
                self.add(join(path, key), Text("db.unrecognized-field"))

    def get(self, row: Mapping[str, Any], key: str, kind: type, path: str, *, required: bool = False) -> Any:
        if key not in row:
            if required:
                self.add(join(path, key), Text("db.missing-field"))
            return None
        value = row[key]
        wrong = not isinstance(value, kind) or (kind is int and isinstance(value, bool))
        if kind in _TYPE_KEYS and wrong:
            self.add(join(path, key), Text.of(_TYPE_KEYS[kind], type=type(value).__name__))
            return None
        if kind is list and (wrong or not all(isinstance(v, str) for v in value)):
            self.add(join(path, key), Text("db.expected-string-list"))
            return None
        return value

    def table(self, data: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
        """A required single table (``[index]``); None after recording a problem."""
        value = data.get(key)
        if value is None:
            self.add(key, Text("db.missing-field"))
            return None
        if not isinstance(value, Mapping):
            self.add(key, Text("db.expected-table"))
            return None
        return value

    def table_list(self, data: Mapping[str, Any], key: str, path: str = "") -> list[Mapping[str, Any]]:
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
            self.add(join(path, key), Text("db.expected-tables"))
            return []
        return value

    def parse(self, path: str, func: Callable[[str], Any], text: str | None) -> Any:
        if text is None:
            return None
        try:
            return func(text)
        except CudaResolveError as exc:
            self.add(path, exc.text)
        except ValueError as exc:
            self.add(path, literal(str(exc)))
        return None

    def source(self, row: Mapping[str, Any], path: str, *, required: bool = True) -> str:
        text = self.get(row, "source", str, path, required=required)
        if text is not None and not text.strip():
            self.add(join(path, "source"), Text("db.empty-field"))
        return text or ""

    def verified(self, row: Mapping[str, Any], path: str) -> bool:
        return self.get(row, "verified", bool, path) is not False

    def url(self, row: Mapping[str, Any], key: str, path: str, *, required: bool = False) -> str | None:
        """An https URL on one of the allowed hosts, without a trailing slash."""
        text = self.get(row, key, str, path, required=required)
        if text is None:
            return None
        host = _HTTPS_HOST.match(text + "/")
        if not host:
            self.add(join(path, key), Text.of("db.not-https", url=repr(text)))
        elif self.allowed_hosts and host.group(1) not in self.allowed_hosts:
            self.add(join(path, key), Text.of("db.host-not-allowed", host=repr(host.group(1)),
                                              hosts=self.allowed_hosts))
        return str(text).rstrip("/")

    def arch_list(self, row: Mapping[str, Any], key: str, path: str, *, ptx: bool) -> tuple[Arch, ...]:
        items = self.get(row, key, list, path) or []
        out: list[Arch] = []
        for i, item in enumerate(items):
            where = f"{path}.{key}[{i}]"
            parsed = self.parse(where, parse_arch, item)
            if parsed is None:
                continue
            if len(parsed) != 1 or parsed[0].ptx != ptx or not item.startswith("compute_" if ptx else "sm_"):
                self.add(where, Text.of("db.arch-form", form="compute_XY" if ptx else "sm_XY", item=repr(item)))
                continue
            out.append(parsed[0])
        return tuple(out)

    def python_list(self, row: Mapping[str, Any], path: str, *, required: bool) -> tuple[str, ...]:
        items = self.get(row, "python", list, path, required=required) or []
        for i, item in enumerate(items):
            if not _PYTHON_RE.match(item):
                self.add(f"{path}.python[{i}]", Text.of("db.python-form", item=repr(item)))
        return tuple(items)

    def platform_list(
        self, row: Mapping[str, Any], path: str, default: tuple[str, ...], *, key: str = "platforms"
    ) -> tuple[str, ...]:
        items = self.get(row, key, list, path)
        if items is None:
            return default
        for i, item in enumerate(items):
            if (item != "any" or key != "platforms") and item not in PLATFORMS:
                self.add(f"{path}.{key}[{i}]", Text.of("db.unknown-platform", item=repr(item)))
        return tuple(items)

    def requirement_list(self, row: Mapping[str, Any], key: str, path: str) -> tuple[Requirement, ...]:
        items = self.get(row, key, list, path) or []
        parsed = (self.parse(f"{path}.{key}[{i}]", parse_requirement, t) for i, t in enumerate(items))
        return tuple(r for r in parsed if r is not None)


@functools.lru_cache(maxsize=4096)
def parse_requirement(text: str) -> Requirement:
    """A PEP 508 requirement; ``InvalidInput`` naming packaging's reason otherwise."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(text)
    except InvalidRequirement as exc:
        reason = str(exc).splitlines()[0]
        raise InvalidInput(Text.of("db.bad-requirement", text=repr(text), reason=literal(reason))) from exc


@functools.lru_cache(maxsize=4096)
def parse_release_version(text: str) -> Version:
    """A release version without a local tag (``2.7.1``, not ``2.7.1+cu118``)."""
    from packaging.version import InvalidVersion, Version

    try:
        version = Version(text)
    except InvalidVersion as exc:
        raise InvalidInput(Text.of("db.bad-version", text=repr(text))) from exc
    if version.local:
        raise InvalidInput(Text.of("db.local-version", text=repr(text)))
    return version
