"""A project's ``[tool.uv.sources]`` entries that name a local path, applied to its requirements as uv applies
them. Pure, but for making the folder's path absolute.

uv takes a dependency that ``[tool.uv.sources]`` maps to ``{ path = "libs/mylib" }`` from that folder (or file),
never from an index (uv's docs, "Dependency sources": a source replaces where the requirement is looked up; its
version specifier is then not consulted). Read as an index name instead, the lock would take whatever project of
that name an index serves: another project, another author's (a dependency confusion). Such an entry is made the
direct reference ``name[extras] @ file:///abs/path ; marker`` the requirement files and the command line already
lock (a folder as PEP 751 ``[packages.directory]``, ``editable = true`` with the entry's ``editable``).

Only the plain form is taken: one table with ``path`` and, at most, ``editable`` and ``package``. A list of sources,
a ``marker``, ``extra`` or ``group`` key, or a git, url, index or workspace source is left as before: the lock then
names ``tool.uv.sources`` among the settings it does not read (``lock.uv-settings-ignored``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["PathSources", "apply_path_sources", "path_sources"]

#: The keys of a source table this module takes; any other makes the entry one it leaves alone.
_PLAIN_KEYS: Final = frozenset({"path", "editable", "package"})


@dataclass(frozen=True, slots=True, kw_only=True)
class PathSources:
    """Each project name (normalized) that a plain path source maps -> its ``file:`` URL; ``editable``: the names
    whose entry says ``editable = true``; ``complete``: whether every entry of the table was such a one."""

    urls: Mapping[str, str] = field(default_factory=dict)
    editable: tuple[str, ...] = ()
    complete: bool = True


def path_sources(data: Mapping[str, Any], folder: Path) -> PathSources:
    """The plain path entries of ``[tool.uv.sources]`` in ``data`` (a pyproject mapping), their paths taken from
    ``folder`` (the pyproject's own); any shape this module does not take makes ``complete`` False."""
    from cudaresolve.core.platforms import canonical_name

    tool = data.get("tool")
    uv = tool.get("uv") if isinstance(tool, Mapping) else None
    sources = uv.get("sources") if isinstance(uv, Mapping) else None
    if not isinstance(sources, Mapping):
        return PathSources(complete=sources is None)
    urls: dict[str, str] = {}
    editable: list[str] = []
    complete = True
    for name, entry in sources.items():
        path = entry.get("path") if isinstance(entry, Mapping) else None
        flag = entry.get("editable", False) if isinstance(entry, Mapping) else None
        if not isinstance(path, str) or not path.strip() or "\x00" in path or not isinstance(flag, bool) \
                or not set(entry) <= _PLAIN_KEYS or not isinstance(name, str):  # fmt: skip
            complete = False
            continue
        key = str(canonical_name(name))
        urls[key] = (folder / path).resolve().as_uri()
        if flag:
            editable.append(key)
    return PathSources(urls=urls, editable=tuple(editable), complete=complete)


def apply_path_sources(requirements: tuple[str, ...], sources: PathSources) -> tuple[str, ...]:
    """``requirements`` with each one on a name ``sources`` maps (and no URL of its own) made the direct reference
    to its path, its extras and marker kept; the others as they were (a string packaging cannot read is left for
    the lock's own parse to refuse)."""
    if not sources.urls:
        return requirements
    from packaging.requirements import InvalidRequirement, Requirement

    from cudaresolve.core.platforms import canonical_name

    out = []
    for line in requirements:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            out.append(line)
            continue
        url = sources.urls.get(str(canonical_name(req.name)))
        if url is None or req.url is not None:
            out.append(line)
            continue
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
        marker = f" ; {req.marker}" if req.marker is not None else ""
        out.append(f"{req.name}{extras} @ {url}{marker}")
    return tuple(out)
