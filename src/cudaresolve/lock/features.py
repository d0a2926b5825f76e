"""A project's optional features: ``[project.optional-dependencies]`` (extras) and PEP 735 ``[dependency-groups]``,
read from pyproject.toml and chosen as uv chooses them. Pure.

The requirements a lock holds are the project's dependencies, plus those of each extra asked for
(``--extra NAME``, ``--all-extras``), plus those of each dependency group: ``dev`` when the project has one
(uv's default, ``--no-dev`` or ``--no-default-groups`` leaves it out), ``--group NAME``, ``--all-groups``, less
``--no-group NAME``. A group may include another (``{include-group = "test"}``); a cycle or an unknown name is
``InvalidInput``. Names are compared normalized (PEP 685 for extras, PEP 735 for groups), as pip and uv compare
them. ``choose`` keeps each chosen extra's and group's own requirements apart (``Chosen``), so that the lock can
mark the packages only some of them need (PEP 751 ``packages.marker``); ``dev`` is the lock's default group
unless it was left out of the default.
Specs: https://packaging.python.org/en/latest/specifications/dependency-groups/ and PEP 621.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.platforms import canonical_name, leading_name
from cudaresolve.errors import InvalidInput
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from packaging.requirements import Requirement

__all__ = ["DEFAULT_GROUP", "Chosen", "Features", "Selection", "choose", "features_from_dict", "select"]

#: The group uv installs unless told ``--no-dev``.
DEFAULT_GROUP: Final = "dev"
#: Include chains deeper than this are refused (a bound on work, not a fact).
_MAX_DEPTH: Final = 64
#: The most requirements the project's own extras may expand to, over every extra and group: the bound on the work
#: a pyproject of chained self-references (``e0 = ["me[e1]"]``, ``e1 = ["me[e2]"]`` ...) may cost.
_MAX_EXPANDED: Final = 100_000
#: A requirement's leading project name (PEP 508: letters, digits, ``.``, ``_``, ``-``).


@dataclass(frozen=True, slots=True, kw_only=True)
class Features:
    """The project's extras and dependency groups, each name (normalized) -> its requirement strings, includes
    already resolved."""

    extras: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """What the user asked for: extras and groups by name, or all of them, and whether ``dev`` is left out."""

    extras: tuple[str, ...] = ()
    all_extras: bool = False
    groups: tuple[str, ...] = ()
    all_groups: bool = False
    no_dev: bool = False
    no_groups: tuple[str, ...] = ()  # --no-group NAME: left out, even under --all-groups (uv sync)
    no_default_groups: bool = False  # --no-default-groups: the default groups (``dev``) are not added

    @property
    def asked(self) -> bool:
        """Whether any extra or group was named (which needs the project's own requirements)."""
        return bool(self.extras or self.all_extras or self.groups or self.all_groups or self.no_groups)


@dataclass(frozen=True, slots=True, kw_only=True)
class Chosen:
    """The requirements one lock holds, by what asked for them: the project's own (``base``), each chosen extra's
    and each chosen group's (includes expanded), and the groups installed by default (PEP 751 ``default-groups``)."""

    base: tuple[str, ...] = ()
    extras: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    default_groups: tuple[str, ...] = ()

    @property
    def requirements(self) -> tuple[str, ...]:
        """Every requirement, each once, in order: one consistent set is solved over all of them."""
        features = [r for reqs in (*self.extras.values(), *self.groups.values()) for r in reqs]
        return tuple(dict.fromkeys((*self.base, *features)))


def choose(features: Features, selection: Selection, base: Sequence[str] = ()) -> Chosen:
    """What a lock of the project with requirements ``base`` holds for ``selection``; an unknown name is
    ``InvalidInput`` listing the names the project has."""
    extras = sorted(features.extras) if selection.all_extras else _known(selection.extras, features.extras, "extra")
    groups = sorted(features.groups) if selection.all_groups else _known(selection.groups, features.groups, "group")
    dropped = set(_known(selection.no_groups, features.groups, "group"))
    by_default = not (selection.no_dev or selection.no_default_groups)
    if DEFAULT_GROUP in features.groups and DEFAULT_GROUP not in groups and by_default:
        groups.append(DEFAULT_GROUP)
    named = {str(canonical_name(g)) for g in selection.groups}
    if not by_default and not selection.all_groups and DEFAULT_GROUP not in named:
        dropped.add(DEFAULT_GROUP)
    kept = sorted(g for g in groups if g not in dropped)
    # a dependency whose marker compares ``extra`` (``attrs ; extra == 'fast'``) belongs, in the built metadata, to
    # the extras that make it true: read with no extra for the base, and with each chosen extra's name for that one
    theirs = tuple(t for t in base if "extra" in t.partition(";")[2])
    return Chosen(
        base=_in_extra(tuple(base), ""),
        extras={e: tuple(dict.fromkeys((*features.extras[e], *_in_extra(theirs, e)))) for e in extras},
        groups={g: features.groups[g] for g in kept},
        default_groups=(DEFAULT_GROUP,) if by_default and DEFAULT_GROUP in kept else (),
    )


def features_from_dict(data: Mapping[str, Any], source: str) -> Features:
    """The extras and groups of a pyproject mapping; a wrong shape is ``InvalidInput`` naming the table."""
    project = data.get("project", {})
    extras_table = project.get("optional-dependencies", {}) if isinstance(project, Mapping) else {}
    extras = {
        str(canonical_name(name)): _in_extra(_strings(reqs, f"{source} [project.optional-dependencies] {name}"), name)
        for name, reqs in _mapping(extras_table, f"{source} [project.optional-dependencies]").items()
    }
    raw = _mapping(data.get("dependency-groups", {}), f"{source} [dependency-groups]")
    normalized = {str(canonical_name(k)): v for k, v in raw.items()}
    for table, names in (("[dependency-groups]", list(raw)), ("[project.optional-dependencies]", list(extras_table))):
        seen: dict[str, str] = {}
        for name in names:  # PEP 735 and PEP 685 compare names normalized: two spellings of one are ambiguous
            if (first := seen.setdefault(str(canonical_name(str(name))), str(name))) != str(name):
                raise InvalidInput(Text.of("lock.feature.same-name", where=f"{source} {table}", first=repr(first),
                                           second=repr(str(name))), hint=Text("lock.feature.same-name.hint"))
    memo: dict[str, tuple[str, ...]] = {}
    groups = {name: _group(name, normalized, source, (), memo) for name in normalized}
    name = project.get("name") if isinstance(project, Mapping) else None
    if isinstance(name, str) and name:  # ``all = ["me[cuda,test]"]``: the project's own extras, as uv reads them
        own, budget = str(canonical_name(name)), [_MAX_EXPANDED]
        extras = {e: _own(reqs, own, extras, f"{source} [project.optional-dependencies] {e}", budget)
                  for e, reqs in extras.items()}  # fmt: skip
        groups = {g: _own(reqs, own, extras, f"{source} [dependency-groups] {g}", budget) for g, reqs in groups.items()}
    return Features(extras=extras, groups=groups)


def _requirement(text: str) -> Requirement | None:
    """``text`` as a PEP 508 requirement; None when it is none (the solver's own parse names it with a coded
    error)."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


def _in_extra(reqs: tuple[str, ...], extra: str) -> tuple[str, ...]:
    """An extra's requirements with ``extra`` in their markers given that extra's name, as pip and uv read the
    project's metadata (``orjson ; extra == 'all'`` listed under ``all`` holds when ``all`` is chosen; one naming
    another extra never does): a requirement whose marker is then false is left out, one whose marker is then
    true loses it. Only lines that mention ``extra`` are parsed; a marker of a form not read here is kept."""
    out: list[str] = []
    for text in reqs:
        if "extra" not in text.partition(";")[2]:  # no marker, or one that does not name ``extra``
            out.append(text)
            continue
        req = _requirement(text)
        if req is None or req.marker is None:
            out.append(text)
            continue
        try:
            verdict = _given(getattr(req.marker, "_markers", None), str(canonical_name(extra)))
        except _Unread:
            out.append(text)
            continue
        if verdict is False:
            continue
        from packaging.markers import Marker

        req.marker = None if verdict is True else Marker(verdict)
        out.append(str(req))
    return tuple(out)


class _Unread(Exception):
    """A marker whose structure is not packaging's as read here."""


def _given(items: object, extra: str) -> bool | str:
    """``items`` (packaging's parsed marker: atoms, ``"and"``/``"or"`` and nested lists) with each comparison of
    ``extra`` decided for ``extra``: True, False, or the marker text left. ``and`` binds tighter than ``or``."""
    if not isinstance(items, list) or not items or len(items) % 2 == 0:
        raise _Unread
    terms: list[list[bool | str]] = [[]]
    for at, item in enumerate(items):
        if at % 2:
            if item not in ("and", "or"):
                raise _Unread
            if item == "or":
                terms.append([])
            continue
        terms[-1].append(_atom(item, extra))
    left: list[str] = []
    for conj in terms:
        if any(t is False for t in conj):
            continue
        rest = [t for t in conj if isinstance(t, str)]
        if not rest:
            return True
        left.append(" and ".join(rest))
    if not left:
        return False
    return left[0] if len(left) == 1 else " or ".join(f"({t})" for t in left)


def _atom(item: object, extra: str) -> bool | str:
    if isinstance(item, list):
        inner = _given(item, extra)
        return inner if isinstance(inner, bool) else f"({inner})"
    if not isinstance(item, tuple) or len(item) != 3:
        raise _Unread
    try:
        text = " ".join(node.serialize() for node in item)
    except AttributeError:
        raise _Unread from None
    if not any(type(node).__name__ == "Variable" and getattr(node, "value", None) == "extra" for node in item):
        return text
    from packaging.markers import Marker

    return bool(Marker(text).evaluate({"extra": extra}))


def _own(
    reqs: tuple[str, ...], own: str, extras: Mapping[str, tuple[str, ...]], where: str, budget: list[int]
) -> tuple[str, ...]:
    """``reqs`` with each requirement on the project itself (``own``) replaced by its extras' requirements, the
    reference's marker joined to each (``me[gpu] ; sys_platform == 'linux'``); the project alone adds nothing (its
    dependencies are the lock's base). An extra reached again adds nothing more, so a cycle ends. A requirement
    whose leading name is another project's is kept as written without being parsed (nor ``packaging`` loaded).
    References nest at most ``_MAX_DEPTH`` deep, and ``budget`` (what is left of ``_MAX_EXPANDED``) bounds the
    requirements looked at: past either, ``InvalidInput`` naming ``where``."""
    out: list[str] = []
    todo: list[tuple[str, str | None, int]] = [(r, None, 0) for r in reversed(reqs)]
    seen: set[str] = set()
    while todo:
        text, outer, depth = todo.pop()
        budget[0] -= 1
        if depth > _MAX_DEPTH or budget[0] < 0:
            raise InvalidInput(Text.of("lock.feature.too-deep", where=where[:300], limit=_MAX_DEPTH,
                                       total=_MAX_EXPANDED), hint=Text("lock.feature.too-deep.hint"))  # fmt: skip
        named = leading_name(text)
        if outer is None and named is not None and named != own:
            out.append(text)
            continue
        from packaging.markers import Marker

        req = _requirement(text)
        if req is None:
            out.append(text)
            continue
        if outer is not None:
            req.marker = Marker(f"({req.marker}) and ({outer})") if req.marker else Marker(outer)
        if str(canonical_name(req.name)) != own or req.url:
            out.append(text if outer is None else str(req))
            continue
        for extra in sorted((str(canonical_name(e)) for e in req.extras), reverse=True):  # popped in order
            if extra not in extras:
                known = ", ".join(sorted(extras)) or "none"
                raise InvalidInput(Text.of("lock.feature.unknown", kind="extra", name=extra[:100], known=known),
                                   hint=Text("lock.feature.unknown.hint"))  # fmt: skip
            if extra not in seen:
                seen.add(extra)
                marker = str(req.marker) if req.marker else None
                todo.extend((r, marker, depth + 1) for r in reversed(extras[extra]))
    return tuple(dict.fromkeys(out))


def select(features: Features, selection: Selection) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(requirement strings, extras chosen, groups chosen) for ``selection`` (``choose``, without the base)."""
    chosen = choose(features, selection)
    return chosen.requirements, tuple(chosen.extras), tuple(chosen.groups)


def _known(names: Sequence[str], table: Mapping[str, tuple[str, ...]], kind: str) -> list[str]:
    out: list[str] = []
    for name in names:
        key = str(canonical_name(name))
        if key not in table:
            raise InvalidInput(
                Text.of("lock.feature.unknown", kind=kind, name=name[:100], known=", ".join(sorted(table)) or "none"),
                hint=Text("lock.feature.unknown.hint"),
            )
        out.append(key)
    return list(dict.fromkeys(out))


def _group(
    name: str, groups: Mapping[str, Any], source: str, seen: tuple[str, ...], memo: dict[str, tuple[str, ...]]
) -> tuple[str, ...]:
    """A group's requirements, its includes expanded (PEP 735), each line once; ``memo``: the groups expanded so
    far (a group including the next one several times had grown as the power of the count, and hung the lock)."""
    if name in memo:
        return memo[name]
    where = f"{source} [dependency-groups] {name}"
    if name in seen:
        raise InvalidInput(Text.of("lock.feature.group-cycle", where=where, chain=" -> ".join((*seen, name))[:300]),
                           hint=Text("lock.feature.group-cycle.hint"))  # fmt: skip
    if len(seen) > _MAX_DEPTH:
        raise InvalidInput(Text.of("lock.feature.too-deep", where=where[:300], limit=_MAX_DEPTH, total=_MAX_EXPANDED),
                           hint=Text("lock.feature.too-deep.hint"))  # fmt: skip
    if name not in groups:
        raise InvalidInput(
            Text.of("lock.feature.unknown", kind="group", name=name[:100], known=", ".join(sorted(groups)) or "none"),
            hint=Text("lock.feature.unknown.hint"),
        )
    items = groups[name]
    if not isinstance(items, list):
        raise _bad(where)
    out: list[str] = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Mapping) and set(item) == {"include-group"} and isinstance(item["include-group"], str):
            out.extend(_group(str(canonical_name(item["include-group"])), groups, source, (*seen, name), memo))
        else:
            raise _bad(where)
        if len(out) > _MAX_EXPANDED:
            raise InvalidInput(Text.of("lock.feature.too-deep", where=where[:300], limit=_MAX_DEPTH,
                                       total=_MAX_EXPANDED), hint=Text("lock.feature.too-deep.hint"))  # fmt: skip
    memo[name] = tuple(dict.fromkeys(out))
    return memo[name]


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad(where)
    return value


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _bad(where)
    return tuple(value)


def _bad(where: str) -> InvalidInput:
    return InvalidInput(Text.of("lock.feature.bad-shape", where=where[:300]), hint=Text("lock.project.readme.hint"))
