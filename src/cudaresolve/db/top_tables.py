"""The ``[index]`` and ``[packages]`` tables of compat.toml, read first. Pure.

They say which hosts a row's URL may name and which package tables the file holds, so
``read.read_database`` reads them before any row.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.db import python_platforms
from cudaresolve.db.index_floors import read_index_floors
from cudaresolve.db.python_platforms import read_package_os, read_python_platforms, read_runs_without_gpu
from cudaresolve.db.rows import IndexFacts, PackageFacts
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cudaresolve.db.fields import Collector

__all__ = ["FIXED_TOP_KEYS", "read_index", "read_package_facts"]

FIXED_TOP_KEYS: Final = {"schema-version", "snapshot-date", "index", "packages", "cuda", "forward-compat", "gpu",
                         "driver-gpu", "variant", "cuda-major", "cudnn-major", "prebuilt", "torch-cxx11-abi",
                         "wheel-page", "ptx-isa"}
_INDEX_KEYS: Final = {
    "default", "pytorch-root", "allowed-hosts", "manylinux-glibc", "macos-version", "jetson-wheels", "python-platform",
    "source", "note",
}
_PACKAGES_KEYS: Final = {"tables", "anchor", "source", "note", "os", *python_platforms.PACKAGE_FACT_KEYS}


def _dotted(c: Collector, row: Mapping[str, Any], key: str) -> str | None:
    """An optional ``MAJOR.MINOR`` string of the [index] table (``"2.28"``)."""
    value: str | None = c.get(row, key, str, "index")
    if value is not None and re.fullmatch(r"[0-9]{1,2}\.[0-9]{1,2}", value) is None:
        c.add(f"index.{key}", Text.of("db.bad-choice", expected=("'MAJOR.MINOR'",), found=repr(value[:40])))
        return None
    return value


def read_index(c: Collector, data: Mapping[str, Any]) -> IndexFacts:
    row = c.table(data, "index")
    if row is None:
        return IndexFacts(default="", pytorch_root="", allowed_hosts=(), source="")
    c.keys(row, _INDEX_KEYS, "index")
    hosts = tuple(c.get(row, "allowed-hosts", list, "index", required=True) or ())
    c.allowed_hosts = hosts
    return IndexFacts(
        default=c.url(row, "default", "index", required=True) or "",
        pytorch_root=c.url(row, "pytorch-root", "index", required=True) or "",
        allowed_hosts=hosts,
        manylinux_glibc=_dotted(c, row, "manylinux-glibc"),
        macos_version=_dotted(c, row, "macos-version"),
        jetson_wheels=_docs_url(c, row, "jetson-wheels"),
        python_platforms=read_python_platforms(c, row),
        source=c.source(row, "index"),
    )


def _docs_url(c: Collector, row: Mapping[str, Any], key: str) -> str | None:
    """An https page for people to read (not an index: the allowed hosts do not apply)."""
    text = c.get(row, key, str, "index")
    if text is not None and not text.startswith("https://"):
        c.add(f"index.{key}", Text.of("db.not-https", url=repr(text)))
        return None
    return str(text) if text is not None else None


def read_package_facts(c: Collector, data: Mapping[str, Any]) -> PackageFacts:
    row = c.table(data, "packages")
    if row is None:
        return PackageFacts(tables=(), anchor="", source="")
    c.keys(row, _PACKAGES_KEYS, "packages")
    listed = tuple(c.get(row, "tables", list, "packages", required=True) or ())
    tables: list[str] = []
    for i, name in enumerate(listed):
        if name in FIXED_TOP_KEYS or name in tables:
            c.add(f"packages.tables[{i}]", Text.of("db.bad-table-name", name=repr(name)))
        else:
            tables.append(name)
    anchor = c.get(row, "anchor", str, "packages", required=True) or ""
    if anchor and anchor not in tables:
        c.add("packages.anchor", Text.of("db.anchor-not-a-table", name=repr(anchor)))
    rows: list[Any] = [r for k in ("prebuilt", "wheel-page") if isinstance(data.get(k), list) for r in data[k]]
    built = dict.fromkeys(r["package"] for r in rows if isinstance(r, dict) and isinstance(r.get("package"), str))
    systems, cpu = read_package_os(c, row, [*tables, *built]), read_runs_without_gpu(c, row, tables)
    return PackageFacts(tables=tuple(tables), anchor=anchor, source=c.source(row, "packages"), os=systems,
                        runs_without_gpu=cpu, cpu_packages=python_platforms.read_cpu_packages(c, row, tables),
                        index_floors=read_index_floors(c, row, tables))
