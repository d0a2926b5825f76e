"""Platform facts: uv's ``--python-platform`` names as target platforms, and the OSes each package serves. Pure.

The names and what each stands for are facts of uv's documentation; they live in compat.toml's
``[index.python-platform]`` table (``read_python_platforms`` reads it). A name spelled
``ARCH-manylinux_2_N`` (and PEP 600's ``manylinux_2_N_ARCH``) carries its glibc in the name itself,
so it needs no row: ``parse_python_platform`` reads it as Linux on ARCH with glibc 2.N.
``[packages.os]`` (``read_package_os``) says which operating systems each package table serves,
``[packages.cpu-package]`` (``read_cpu_packages``) which PyPI project is a package's CPU-only build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.platforms import OPERATING_SYSTEMS, PLATFORMS
from cudaresolve.db.fields import join
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cudaresolve.db.fields import Collector

__all__ = [
    "PACKAGE_FACT_KEYS", "PythonPlatform", "parse_manylinux_name", "read_cpu_packages", "read_floors",
    "read_package_os", "read_python_platforms", "read_runs_without_gpu",
]

#: The ``[packages]`` keys read here, beside ``tables``, ``anchor``, ``os``, ``source`` and ``note``.
PACKAGE_FACT_KEYS: Final = ("runs-without-gpu", "runs-without-gpu-source", "cpu-package", "cpu-package-source",
                             "index-floors", "index-floors-source")

_KEYS: Final = {"platform", "glibc", "macos"}
_DOTTED: Final = re.compile(r"[0-9]{1,2}\.[0-9]{1,2}")
_PROJECT: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")  # a PEP 503 normal name
_MANYLINUX: Final = re.compile(r"(x86_64|aarch64)-manylinux_2_([0-9]{1,2})")


@dataclass(frozen=True, slots=True, kw_only=True)
class PythonPlatform:
    """What a ``--python-platform`` name stands for: a platform key and, where the name fixes
    them, the glibc (Linux) or macOS version the target is assumed to have."""

    name: str
    platform: str
    glibc: str | None = None
    macos: str | None = None


def parse_manylinux_name(name: str) -> PythonPlatform | None:
    """``x86_64-manylinux_2_31`` -> Linux x86_64 with glibc 2.31; None for any other spelling."""
    found = _MANYLINUX.fullmatch(name.strip().lower())
    if found is None:
        return None
    arch, minor = found.groups()
    return PythonPlatform(name=name.strip(), platform=f"linux_{arch}", glibc=f"2.{int(minor)}")


def read_python_platforms(c: Collector, row: Mapping[str, Any]) -> tuple[PythonPlatform, ...]:
    """The ``[index.python-platform]`` table: ``NAME = { platform = KEY, glibc = "2.28" }`` rows."""
    table = row.get("python-platform")
    if table is None:
        return ()
    path = join("index", "python-platform")
    if not isinstance(table, dict):
        c.add(path, Text("db.expected-table"))
        return ()
    found = []
    for name, entry in table.items():
        where = f"{path}.{name}"
        if not isinstance(entry, dict):
            c.add(where, Text("db.expected-table"))
            continue
        c.keys(entry, _KEYS, where)
        platform = c.get(entry, "platform", str, where, required=True)
        if platform is not None and platform not in PLATFORMS:
            c.add(f"{where}.platform", Text.of("db.bad-choice", expected=PLATFORMS, found=repr(platform[:40])))
            continue
        versions = {key: c.get(entry, key, str, where) for key in ("glibc", "macos")}
        for key, value in versions.items():
            if value is not None and not _DOTTED.fullmatch(value):
                c.add(f"{where}.{key}", Text.of("db.bad-choice", expected=("'MAJOR.MINOR'",), found=repr(value[:40])))
        if platform is not None:
            found.append(PythonPlatform(name=name, platform=platform, glibc=versions["glibc"], macos=versions["macos"]))
    return tuple(found)


def read_package_os(c: Collector, row: Mapping[str, Any], tables: list[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``[packages.os]``: the operating systems each package serves; when given, one entry per table."""
    table = row.get("os")
    if table is None:
        return ()
    if not isinstance(table, dict):
        c.add("packages.os", Text("db.expected-table"))
        return ()
    known = tuple(OPERATING_SYSTEMS.values())
    found: list[tuple[str, tuple[str, ...]]] = []
    for name, systems in table.items():
        where = f"packages.os.{name}"
        if name not in tables:
            c.add(where, Text.of("db.bad-table-name", name=repr(name)))
        elif not isinstance(systems, list) or not systems or any(s not in known for s in systems):
            c.add(where, Text.of("db.bad-choice", expected=known, found=repr(systems)[:60]))
        else:
            found.append((name, tuple(systems)))
    for name in tables:
        if name not in table:
            c.add(f"packages.os.{name}", Text("db.missing-field"))
    return tuple(found)


def read_floors(c: Collector, row: Mapping[str, Any], path: str) -> tuple[tuple[str, str, str], ...]:
    """A release's ``floors``: ``{ macosx_arm64 = "14.0", "macosx_arm64@3.14" = "14.0", linux_x86_64 = "2.28" }``:
    the macOS or glibc version its PyPI wheel for a platform (and, after ``@``, one Python) needs."""
    table = row.get("floors")
    if table is None:
        return ()
    if not isinstance(table, dict):
        c.add(join(path, "floors"), Text("db.expected-table"))
        return ()
    found = []
    for key, value in table.items():
        platform, _, python = str(key).partition("@")
        where = join(path, f"floors.{key}")
        if platform not in PLATFORMS or platform.startswith("win"):
            c.add(where, Text.of("db.bad-choice", expected=PLATFORMS, found=repr(platform[:40])))
        elif not isinstance(value, str) or not _DOTTED.fullmatch(value):
            c.add(where, Text.of("db.bad-choice", expected=("'MAJOR.MINOR'",), found=repr(value)[:40]))
        else:
            found.append((platform, python, value))
    return tuple(found)


def read_runs_without_gpu(c: Collector, row: Mapping[str, Any], tables: list[str]) -> frozenset[str]:
    """``[packages] runs-without-gpu``: package tables whose CUDA builds run on a machine without a GPU (PyPI's
    wheel may serve a CPU target), with ``runs-without-gpu-source`` required beside it."""
    cpu = tuple(c.get(row, "runs-without-gpu", list, "packages") or ())
    for i, name in enumerate(cpu):
        if name not in tables:
            c.add(f"packages.runs-without-gpu[{i}]", Text.of("db.anchor-not-a-table", name=repr(name)))
    c.get(row, "runs-without-gpu-source", str, "packages", required=bool(cpu))  # the fact's own source
    return frozenset(cpu)


def read_cpu_packages(c: Collector, row: Mapping[str, Any], tables: list[str]) -> tuple[tuple[str, str], ...]:
    """``[packages.cpu-package]``: for a package table, the PyPI project that is its CPU-only build
    (``fbgemm-gpu = "fbgemm-gpu-cpu"``), with ``cpu-package-source`` required beside it."""
    table = row.get("cpu-package")
    if table is None:
        return ()
    if not isinstance(table, dict):
        c.add("packages.cpu-package", Text("db.expected-table"))
        return ()
    found = []
    for name, project in table.items():
        if name not in tables:
            c.add(f"packages.cpu-package.{name}", Text.of("db.anchor-not-a-table", name=repr(name)))
        elif not isinstance(project, str) or not _PROJECT.fullmatch(project):
            c.add(f"packages.cpu-package.{name}", Text.of("db.bad-choice", expected=("a project name",),
                                                          found=repr(project)[:40]))
        else:
            found.append((name, project))
    c.get(row, "cpu-package-source", str, "packages", required=bool(table))  # the fact's own source
    return tuple(found)
