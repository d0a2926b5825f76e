"""``[packages.index-floors]``: the glibc the PyTorch index's own Linux wheels need. Pure.

PyPI's wheel tags are read per release (``floors``); the PyTorch index's wheels are described by
the build platform of each release's build matrix instead: from torch 2.7 every Linux wheel is
built on manylinux 2.28 (glibc 2.28), in 2.6 the CUDA 12.6 and aarch64 ones. One row says, for a
package table, which releases (a PEP 440 specifier), which variants (all when absent) and which
platforms need which glibc::

    torch = [{ versions = ">=2.7", platforms = ["linux_x86_64", "linux_aarch64"], glibc = "2.28" }]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from cudaresolve.core.platforms import PLATFORMS
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from packaging.version import Version

    from cudaresolve.db.fields import Collector

__all__ = ["IndexFloor", "index_floor", "read_index_floors"]

_ROW_KEYS: Final = {"versions", "variants", "platforms", "glibc"}
_DOTTED: Final = re.compile(r"[0-9]{1,2}\.[0-9]{1,2}")


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexFloor:
    """One row: the releases ``versions`` of ``package`` need glibc ``glibc`` on ``platforms``."""

    package: str
    versions: str
    variants: tuple[str, ...]  # empty: every variant
    platforms: tuple[str, ...]
    glibc: str


def index_floor(rows: tuple[IndexFloor, ...], package: str, version: Version, variant: str,
                platform: str) -> str | None:
    """The glibc the PyTorch-index wheel of ``package`` ``version`` (``variant``) for ``platform`` needs;
    None when no row says (the highest when several do)."""
    found = [r.glibc for r in rows if r.package == package and platform in r.platforms
             and (not r.variants or variant in r.variants)
             and SpecifierSet(r.versions).contains(version, prereleases=True)]
    return max(found, key=lambda v: tuple(int(p) for p in v.split(".")), default=None)


def _row(c: Collector, entry: Any, where: str, package: str) -> IndexFloor | None:
    if not isinstance(entry, dict) or set(entry) - _ROW_KEYS or not _ROW_KEYS - {"variants"} <= set(entry):
        c.add(where, Text.of("db.bad-choice", expected=tuple(sorted(_ROW_KEYS)), found=repr(entry)[:60]))
        return None
    versions, glibc = entry["versions"], entry["glibc"]
    platforms, variants = entry["platforms"], entry.get("variants", [])
    try:
        SpecifierSet(versions)
    except (InvalidSpecifier, TypeError):
        expected = ("a PEP 440 specifier",)
        c.add(f"{where}.versions", Text.of("db.bad-choice", expected=expected, found=repr(versions)[:40]))
        return None
    linux = tuple(p for p in PLATFORMS if p.startswith("linux"))
    if not isinstance(platforms, list) or not platforms or any(p not in linux for p in platforms):
        c.add(f"{where}.platforms", Text.of("db.bad-choice", expected=linux, found=repr(platforms)[:60]))
        return None
    if not isinstance(variants, list) or any(not isinstance(v, str) for v in variants):
        c.add(f"{where}.variants", Text.of("db.bad-choice", expected=("variant names",), found=repr(variants)[:60]))
        return None
    if not isinstance(glibc, str) or not _DOTTED.fullmatch(glibc):
        c.add(f"{where}.glibc", Text.of("db.bad-choice", expected=("'MAJOR.MINOR'",), found=repr(glibc)[:40]))
        return None
    return IndexFloor(package=package, versions=versions, variants=tuple(variants), platforms=tuple(platforms),
                      glibc=glibc)


def read_index_floors(c: Collector, row: Mapping[str, Any], tables: list[str]) -> tuple[IndexFloor, ...]:
    """``[packages.index-floors]``, with ``index-floors-source`` required beside it."""
    table = row.get("index-floors")
    if table is None:
        return ()
    if not isinstance(table, dict):
        c.add("packages.index-floors", Text("db.expected-table"))
        return ()
    found: list[IndexFloor] = []
    for name, entries in table.items():
        where = f"packages.index-floors.{name}"
        if name not in tables:
            c.add(where, Text.of("db.anchor-not-a-table", name=repr(name)))
        elif not isinstance(entries, list):
            c.add(where, Text("db.expected-table"))
        else:
            found.extend(r for i, e in enumerate(entries) if (r := _row(c, e, f"{where}[{i}]", name)) is not None)
    c.get(row, "index-floors-source", str, "packages", required=bool(table))  # the fact's own source
    return tuple(found)
