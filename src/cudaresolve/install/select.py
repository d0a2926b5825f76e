"""Which of a lock's packages to install: PEP 751 selection by extras, dependency groups and the environment. Pure.

A lock made from a project holds several selections (``lock.feature_markers``): each package that only some
extras or dependency groups need carries a ``packages.marker`` such as ``'cuda' in extras or 'test' in
dependency_groups``. ``select_packages`` keeps the packages whose marker holds for the chosen extras and groups and
the target interpreter's environment (https://packaging.python.org/en/latest/specifications/pylock-toml/, evaluated
by ``packaging.markers.Marker`` in its ``lock_file`` context), as ``uv sync`` chooses them from its flags:

- extras: none by default; ``--extra NAME`` (repeatable), ``--all-extras``;
- groups: the lock's ``default-groups`` (``dev``), unless ``--no-default-groups``; plus ``--group NAME``
  (repeatable) or ``--all-groups``; less ``--no-group NAME`` and, with ``--no-dev``, ``dev``.

A name the lock does not hold is ``InvalidInput`` listing the ones it does. A package without a marker is always
installed. (``uv pip sync --group NAME`` differs: there the named groups replace the default ones.)
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from cudaresolve.core.platforms import canonical_name
from cudaresolve.errors import InvalidInput, InvalidLockfile
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Collection, Iterable, Mapping
    from collections.abc import Set as AbstractSet

    from cudaresolve.lock.features import Selection
    from cudaresolve.lock.model import Lock

__all__ = ["DEV_GROUP", "chosen_features", "select_packages"]

#: The group ``--no-dev`` leaves out (uv's name for it).
DEV_GROUP = "dev"


def chosen_features(lock: Lock, selection: Selection, *, source: str) -> tuple[frozenset[str], frozenset[str]]:
    """(extras, dependency groups) ``selection`` chooses from ``lock``; a name it does not hold is ``InvalidInput``."""
    held_groups = (*lock.groups, *lock.default_groups)
    extras = set(lock.extras) if selection.all_extras else _held(selection.extras, lock.extras, "extra", source)
    groups = set() if selection.no_default_groups else set(lock.default_groups)
    groups |= set(held_groups) if selection.all_groups else _held(selection.groups, held_groups, "group", source)
    groups -= _held(selection.no_groups, held_groups, "group", source)
    if selection.no_dev:
        groups.discard(DEV_GROUP)
    return frozenset(extras), frozenset(groups)


def select_packages(lock: Lock, selection: Selection, environment: Mapping[str, str], *, source: str) -> Lock:
    """``lock`` with only the packages whose marker holds for ``selection`` (``chosen_features``) on the
    interpreter whose marker values are ``environment``; ``source`` names the lock in messages. ``InvalidLockfile``
    when the markers leave out every package."""
    extras, groups = chosen_features(lock, selection, source=source)
    if not any(p.marker for p in lock.packages):
        return lock
    from packaging.markers import Marker, UndefinedComparison, UndefinedEnvironmentName

    values: dict[str, str | AbstractSet[str]] = {**environment, "extras": extras, "dependency_groups": groups}
    kept = []
    for i, package in enumerate(lock.packages):
        try:
            holds = package.marker is None or Marker(package.marker).evaluate(values, context="lock_file")
        except (UndefinedEnvironmentName, UndefinedComparison) as exc:  # ``extra == 'x'``: no name in a lock
            raise InvalidLockfile(
                Text.of("lock.marker-undefined", source=source, path=f"packages[{i}].marker", reason=str(exc)[:200]),
                hint=Text("lock.regenerate.hint"),
            ) from exc
        if holds:
            kept.append(package)
    if not kept:  # said apart from a lock of no packages: this one holds some, for other choices or interpreters
        raise InvalidLockfile(Text.of("lock.select.none", source=source, count=len(lock.packages)),
                              hint=Text("lock.select.none.hint"))
    return replace(lock, packages=tuple(kept))


def _held(names: Iterable[str], held: Collection[str], kind: str, source: str) -> set[str]:
    out = set()
    for name in names:
        key = str(canonical_name(name))
        if key not in held:
            known = ", ".join(sorted(set(held))) or "none"
            raise InvalidInput(
                Text.of("lock.select.unknown", source=source, kind=kind, name=name[:100], known=known),
                hint=Text("lock.select.unknown.hint"),
            )
        out.add(key)
    return out
