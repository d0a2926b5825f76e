"""Wheel file names parsed once per distinct part within one page. Pure.

A page lists each version's wheels for many tag sets and each tag set for many versions, and
``packaging.utils.parse_wheel_filename`` parses the version and the tag set of every name anew: a
tenth of a cold lock of a large project went there. ``WheelNames`` parses each distinct head
(``name-version[-build]``) and each distinct tag set (``py-abi-platform``) once, each through
``parse_wheel_filename`` itself, given with a fixed valid other half; a name is accepted exactly
when both halves are, so it says what ``parse_wheel_filename`` says of the whole name. One lives
as long as the reading of one page or one stored form: nothing is kept between pages or runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import InvalidVersion

if TYPE_CHECKING:
    from packaging.tags import Tag
    from packaging.utils import BuildTag, NormalizedName
    from packaging.version import Version

__all__ = ["WheelNames"]

_ANY_TAGS: Final = "py3-none-any"  # completes a head into a whole name
_ANY_HEAD: Final = "a-0"  # completes a tag set into a whole name

Head = tuple["NormalizedName", "Version", "BuildTag"]


class WheelNames:
    """``parse_wheel_filename`` for the names of one page, its halves memoized (module docstring)."""

    __slots__ = ("_heads", "_tags")

    def __init__(self) -> None:
        self._heads: dict[str, Head | None] = {}  # None: refused
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

    def _head(self, head: str) -> Head | None:
        if head in self._heads:
            return self._heads[head]
        try:
            name, version, build, _ = parse_wheel_filename(f"{head}-{_ANY_TAGS}.whl")
            found: Head | None = (name, version, build)
        except (InvalidWheelFilename, InvalidVersion):
            found = None
        self._heads[head] = found
        return found

    def _tag_set(self, tags: str) -> frozenset[Tag] | None:
        if tags in self._tags:
            return self._tags[tags]
        try:
            found: frozenset[Tag] | None = parse_wheel_filename(f"{_ANY_HEAD}-{tags}.whl")[3]
        except (InvalidWheelFilename, InvalidVersion):
            found = None
        self._tags[tags] = found
        return found
