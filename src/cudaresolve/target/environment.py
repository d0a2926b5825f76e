"""What a target installs: its PEP 508 marker environment and the wheel tags it accepts, best first. Pure.

A declared target has no interpreter to ask, so both are derived from the Target value: CPython
``X.Y`` on one platform key (``linux_x86_64`` ...). The glibc of a Linux target and the macOS
version of a Mac target bound which ``manylinux_2_N``/``macosx_N_M`` wheels fit; they come from
the target when detected and from the database's ``[index]`` defaults (uv's assumptions) when
declared; with neither, any glibc and macOS version is accepted.

Specs: https://packaging.python.org/en/latest/specifications/dependency-specifiers/#environment-markers
and https://packaging.python.org/en/latest/specifications/platform-compatibility-tags/
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from packaging.tags import Tag

    from cudaresolve.target.model import Target

__all__ = ["full_python", "interpreter_tags", "marker_environment", "tag_priority", "wheel_tags"]

#: platform key -> (sys_platform, platform_system, platform_machine, os_name)
_MARKERS: Final = {
    "linux_x86_64": ("linux", "Linux", "x86_64", "posix"),
    "linux_aarch64": ("linux", "Linux", "aarch64", "posix"),
    "win_amd64": ("win32", "Windows", "AMD64", "nt"),
    "macosx_arm64": ("darwin", "Darwin", "arm64", "posix"),
    "macosx_x86_64": ("darwin", "Darwin", "x86_64", "posix"),
}
#: With no bound known, manylinux_2_N up to this N are accepted (a bound on work, not a fact).
_ANY_GLIBC_MINOR: Final = 99
_ANY_MACOS_MAJOR: Final = 30


def full_python(python: str) -> str:
    """A target's Python as X.Y.Z, as markers and ``Requires-Python`` compare it (``.0`` when only X.Y is known)."""
    return python if python.count(".") >= 2 else f"{python}.0"


def marker_environment(target: Target) -> dict[str, str]:
    """The PEP 508 marker values for ``target`` (CPython; the patch level is ``.0`` when only X.Y is known)."""
    sys_platform, system, machine, os_name = _MARKERS.get(target.platform, _MARKERS["linux_x86_64"])
    full = full_python(target.python)
    short = ".".join(full.split(".")[:2])
    return {
        "implementation_name": "cpython",
        "implementation_version": full,
        "os_name": os_name,
        "platform_machine": machine,
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_system": system,
        "platform_version": "",
        "python_full_version": full,
        "python_version": short,
        "sys_platform": sys_platform,
        "extra": "",
    }


def _platform_tags(platform: str, glibc: str | None, macos: str | None) -> list[str]:
    """Platform tags best first: the newest manylinux/macOS floor first, the generic ones last."""
    if platform.startswith("linux_"):
        arch = platform.removeprefix("linux_")
        top = int(glibc.split(".")[1]) if glibc else _ANY_GLIBC_MINOR
        tags = [f"manylinux_2_{minor}_{arch}" for minor in range(top, 4, -1)]
        legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}  # PEP 600 aliases
        out: list[str] = []
        for tag in tags:
            out.append(tag)
            minor = int(tag.split("_")[2])
            if minor in legacy and (arch == "x86_64" or minor == 17):
                out.append(f"{legacy[minor]}_{arch}")
        return [*out, platform]
    if platform.startswith("macosx_"):  # packaging's own list, as pip and uv take it: universal2 10.x on arm64 too
        from packaging.tags import mac_platforms

        parts = [int(p) for p in macos.split(".")[:2]] if macos else [_ANY_MACOS_MAJOR]
        version = (parts[0], parts[1] if len(parts) > 1 else 0)  # 10.15 keeps its minor: 10.x tags count it
        return list(mac_platforms(version, platform.removeprefix("macosx_")))
    return [platform]


@lru_cache(maxsize=16)
def _tags(python: str, platform: str, glibc: str | None, macos: str | None) -> tuple[Tag, ...]:
    from packaging.tags import compatible_tags, cpython_tags

    major, minor = (int(p) for p in python.split(".")[:2])
    platforms = _platform_tags(platform, glibc, macos)
    return (*cpython_tags((major, minor), platforms=platforms), *compatible_tags((major, minor), platforms=platforms))


def interpreter_tags(python: str, platform: str, glibc: str | None) -> tuple[Tag, ...]:
    """Every tag a wheel for an interpreter (``X.Y``, its platform key and glibc) may carry, best first."""
    return _tags(python, platform, glibc, None)


def wheel_tags(target: Target, *, glibc: str | None = None, macos: str | None = None) -> tuple[Tag, ...]:
    """Every tag a wheel for ``target`` may carry, best first (as ``packaging.tags.sys_tags`` orders them)."""
    return _tags(target.python, target.platform, glibc, macos)


#: Rank tables of the tag tuples seen, by identity: a tuple of ~700 tags rehashes every element each time it is
#: a dict or cache key (CPython does not cache a tuple's hash), and every file of every page is ranked. Beside each
#: table, the ranks of the tag sets already ranked against it (a frozenset keeps its hash; a page's wheels share a
#: few sets, and a lock's pages a few hundred): a set's rank is a dict lookup, not a pass of ``Tag.__eq__`` calls.
_RANKS: dict[int, tuple[tuple[Tag, ...], dict[Tag, int], dict[frozenset[Tag], int | None]]] = {}
_MAX_RANK_TABLES: Final = 16
_MAX_SETS: Final = 8192  # tag sets remembered per table: a bound on memory, not a fact


def _priority(tags: tuple[Tag, ...]) -> tuple[dict[Tag, int], dict[frozenset[Tag], int | None]]:
    found = _RANKS.get(id(tags))
    if found is not None and found[0] is tags:
        return found[1], found[2]
    ranks = {tag: i for i, tag in enumerate(tags)}
    sets: dict[frozenset[Tag], int | None] = {}
    if len(_RANKS) >= _MAX_RANK_TABLES:
        _RANKS.clear()
    _RANKS[id(tags)] = (tags, ranks, sets)  # the tuple is kept, so its id is not reused while the entry lives
    return ranks, sets


def tag_priority(file_tags: frozenset[Tag], supported: tuple[Tag, ...]) -> int | None:
    """The rank of a wheel's best tag among ``supported`` (lower is better); None: it does not install."""
    ranks, sets = _priority(supported)
    if file_tags in sets:
        return sets[file_tags]
    rank = min((ranks[t] for t in file_tags if t in ranks), default=None)
    if len(sets) >= _MAX_SETS:
        sets.clear()
    sets[file_tags] = rank
    return rank
