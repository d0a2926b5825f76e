"""Which of a lock's selections need each package: the PEP 751 ``packages.marker`` of the packages that only some
chosen extras or dependency groups bring in. Pure (the source's metadata was read by the solve before).

One set is solved over everything the lock holds (``features.Chosen.requirements``); a package is then needed by
the project itself when its own requirements reach it, else by each extra and group whose requirements do. The
edges are the solver's own (``CatalogProvider.get_dependencies`` on the final pins: the database's needs and each
release's ``Requires-Dist`` for the target), so ``name[extra]`` pins and the ``<cuda>`` variant count as they did in
the search. A package the walk does not reach from any root keeps no marker: it is installed whatever is chosen.

Markers use PEP 751's names (https://packaging.python.org/en/latest/specifications/pylock-toml/):
``'cuda' in extras or 'test' in dependency_groups``. Names are normalized (PEP 685, PEP 735), so quoting them in
single quotes is safe.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudaresolve.core.platforms import canonical_name

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from cudaresolve.db.database import CompatDB
    from cudaresolve.lock.features import Chosen
    from cudaresolve.resolve.catalog import Candidate
    from cudaresolve.resolve.model import Solution
    from cudaresolve.resolve.provider import CatalogProvider
    from cudaresolve.resolve.solve import Resolved
    from cudaresolve.resolve.source import PackageSource

__all__ = ["feature_markers", "marked", "marker_text"]


def marked(
    resolved: Resolved, chosen: Chosen | None, *, db: CompatDB, source: PackageSource, environment: Mapping[str, str]
) -> Solution:
    """``resolved``'s solution with each package's marker (``feature_markers``) over the solve's own edges."""
    from dataclasses import replace

    from cudaresolve.resolve.provider import CatalogProvider
    from cudaresolve.resolve.solve import parse_requests

    solution = resolved.solution
    if chosen is None or not (chosen.extras or chosen.groups):
        return solution
    pins = resolved.pins
    needs = parse_requests(chosen.requirements, environment, direct=True)
    direct = {n.name: pins[n.name] for n in needs if n.url and n.name in pins}  # ``name @ URL``: its one file
    provider = CatalogProvider(resolved.catalog, anchor=db.anchor, source=source, environment=environment,
                               direct=direct)  # fmt: skip
    markers = feature_markers(pins, provider, chosen, environment)
    packages = tuple(replace(p, marker=markers.get(str(canonical_name(p.name)))) for p in solution.packages)
    return replace(solution, packages=packages)


def feature_markers(
    pins: Mapping[str, Candidate], provider: CatalogProvider, chosen: Chosen, environment: Mapping[str, str]
) -> dict[str, str]:
    """Package name -> its marker, for each pinned package that the project's own requirements do not reach but
    some chosen extra or group does. ``provider``: one over the solve's catalog and source (its edges)."""
    if not chosen.extras and not chosen.groups:
        return {}
    edges: dict[str, tuple[str, ...]] = {}

    def reached(texts: Iterable[str]) -> set[str]:
        from cudaresolve.resolve.solve import parse_requests

        asked = tuple(texts)  # a project with no requirements of its own: nothing reached
        todo = [n.key for n in parse_requests(asked, environment, direct=True) if n.key in pins] if asked else []
        seen = set(todo)
        while todo:
            key = todo.pop()
            if key not in edges:  # a ``constrains`` row narrows, never brings a package in: no edge
                needs = provider.get_dependencies(pins[key])
                edges[key] = tuple(provider.identify(n) for n in needs if not n.constraint)
            for child in edges[key]:
                if child in pins and child not in seen:
                    seen.add(child)
                    todo.append(child)
        return {str(canonical_name(pins[k].name)) for k in seen}

    base = reached(chosen.base)
    needed: dict[str, list[str]] = {}
    for extra, texts in chosen.extras.items():
        for name in reached(texts) - base:
            needed.setdefault(name, []).append(f"'{extra}' in extras")
    for group, texts in chosen.groups.items():
        for name in reached(texts) - base:
            needed.setdefault(name, []).append(f"'{group}' in dependency_groups")
    return {name: marker_text(terms) for name, terms in needed.items()}


def marker_text(terms: Iterable[str]) -> str:
    """``a or b`` of marker terms, each once, in order."""
    return " or ".join(dict.fromkeys(terms))
