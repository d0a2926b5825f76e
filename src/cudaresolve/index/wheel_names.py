"""Distribution file names parsed once per distinct part within one page. Pure.

A page lists each version's wheels for many tag sets and each tag set for many versions, and
``packaging.utils.parse_wheel_filename`` parses the version and the tag set of every name anew: a
tenth of a cold lock of a large project went there. ``WheelNames`` parses each distinct project name
part, version and tag set (``py-abi-platform``) once, each through ``parse_wheel_filename`` itself
(given with fixed valid other parts) or ``Version``, which is all that function does with a version; a
name is accepted exactly when every part is, so it says what ``parse_wheel_filename`` says of the
whole name. A name with a build tag is parsed whole. ``sdist`` does the same for ``parse_sdist_filename``
(an sdist's version is most often a wheel's too). One lives as long as the reading of one page or one
stored form; only the tag sets, which the pages of a lock share (``cp311-cp311-manylinux_2_17_x86_64...``,
``py3-none-any``), are kept for the process (``_tags_of``, at most ``_TAG_SETS``), the very same set for every
page, so that ranking it against the target's tags is remembered too (``target.environment.tag_priority``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Final, TypeVar

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

if TYPE_CHECKING:
    from collections.abc import Callable

    from packaging.tags import Tag
    from packaging.utils import BuildTag, NormalizedName

__all__ = ["WheelNames"]

_ANY_TAGS: Final = "py3-none-any"  # completes a head into a whole name
_ANY_HEAD: Final = "a-0"  # completes a tag set into a whole name
_ANY_VERSION: Final = "0"  # completes a project name part into a head

Head = tuple["NormalizedName", "Version", "BuildTag"]


class WheelNames:
    """``parse_wheel_filename`` and ``parse_sdist_filename`` for the names of one page, their parts memoized
    (module docstring)."""

    __slots__ = ("_heads", "_names", "_sdist_names", "_tags", "_versions")

    def __init__(self) -> None:
        self._heads: dict[str, Head | None] = {}  # None: refused
        self._names: dict[str, NormalizedName | None] = {}  # a wheel's project name part
        self._sdist_names: dict[str, NormalizedName] = {}  # an sdist's, canonicalized as it is
        self._versions: dict[str, Version | None] = {}
        self._tags: dict[str, frozenset[Tag] | None] = {}

    def parse(self, filename: str) -> tuple[NormalizedName, Version, BuildTag, frozenset[Tag]] | None:
        """What ``parse_wheel_filename(filename)`` returns; None where it raises."""
        if not filename.endswith(".whl"):
            return None
        stem = filename[:-4]
        if stem.count("-") not in (4, 5):
            return None
        head = stem.rsplit("-", 3)[0]
        tags = self._tag_set(stem[len(head) + 1 :])
        parsed = self._head(head) if tags is not None else None
        if tags is None or parsed is None:
            return None
        return parsed[0], parsed[1], parsed[2], tags

    def sdist(self, filename: str) -> tuple[NormalizedName, Version] | None:
        """What ``parse_sdist_filename(filename)`` returns for a ``.tar.gz`` or ``.zip`` name; None where it raises."""
        stem = filename[:-7] if filename.endswith(".tar.gz") else filename[:-4] if filename.endswith(".zip") else None
        if stem is None:
            return None
        name_part, dash, version_part = stem.rpartition("-")
        version = self._version(version_part)
        if not dash or not name_part or version is None:
            return None
        name = self._sdist_names.get(name_part)
        if name is None:
            name = self._sdist_names[name_part] = canonicalize_name(name_part)
        return name, version

    def _head(self, head: str) -> Head | None:
        if head in self._heads:
            return self._heads[head]
        found: Head | None
        name_part, dash, version_part = head.partition("-")
        if "-" in version_part:  # a build tag: the whole head, as ``parse_wheel_filename`` reads it
            try:
                name, version, build, _ = parse_wheel_filename(f"{head}-{_ANY_TAGS}.whl")
                found = (name, version, build)
            except (InvalidWheelFilename, InvalidVersion):
                found = None
        else:
            known, at = self._name(name_part), self._version(version_part)
            found = (known, at, ()) if dash and known is not None and at is not None else None
        self._heads[head] = found
        return found

    def _name(self, part: str) -> NormalizedName | None:
        return _memoized(self._names, part, _name_of)

    def _version(self, part: str) -> Version | None:
        return _memoized(self._versions, part, Version)

    def _tag_set(self, tags: str) -> frozenset[Tag] | None:
        return _memoized(self._tags, tags, _tags_of)


V = TypeVar("V")


def _memoized(table: dict[str, V | None], part: str, parse: Callable[[str], V]) -> V | None:
    """``parse(part)``, kept in ``table``; None, kept too, where it refuses the part."""
    if part in table:
        return table[part]
    try:
        found: V | None = parse(part)
    except (InvalidWheelFilename, InvalidVersion):
        found = None
    table[part] = found
    return found


def _name_of(part: str) -> NormalizedName:
    return parse_wheel_filename(f"{part}-{_ANY_VERSION}-{_ANY_TAGS}.whl")[0]


_TAG_SETS: Final = 4096  # distinct tag sets kept for the process: a bound on memory, not a fact


@lru_cache(maxsize=_TAG_SETS)
def _tags_of(tags: str) -> frozenset[Tag]:
    return parse_wheel_filename(f"{_ANY_HEAD}-{tags}.whl")[3]
