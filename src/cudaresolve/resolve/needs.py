"""The user's requirement strings read into the solver's ``Need`` values: requests and constraints. Pure.

Markers are evaluated for the target (a false one leaves its line out, and ``skipped_requests``
says which for a notice), extras kept, and a direct reference (``name @ URL``) kept with its URL
(checked by ``direct.parse_direct``) when the caller can fetch it; nothing is dropped silently.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Final

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from cudaresolve.core.platforms import canonical_name
from cudaresolve.core.urls import strip_credentials
from cudaresolve.errors import InvalidInput
from cudaresolve.resolve import DEFAULT_PRERELEASE
from cudaresolve.resolve.catalog import Candidate, Need
from cudaresolve.resolve.direct import local_directory, parse_direct, same_reference
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

__all__ = ["IF_NECESSARY", "held_pins", "parse_constraints", "parse_requests", "passed_over", "skipped_requests"]


#: ``--prerelease`` modes under which a pre-release is taken when no final release is left.
IF_NECESSARY: Final = ("if-necessary", "if-necessary-or-explicit")


def passed_over(
    needs: Iterable[Need], candidate: Candidate, prerelease: str = DEFAULT_PRERELEASE, limit: SpecifierSet | None = None
) -> str | None:
    """Why pip and uv pass ``candidate``, a release from an index, over for ``needs`` (None: they take it):
    ``"yanked"``, a yanked file being taken only for an exact ``==``/``===`` pin (PEP 592; one in the ``-c``
    constraint ``limit`` counts, as in uv), or
    ``"pre-release"``, taken under ``--prerelease`` ``allow``, and under ``explicit`` or
    ``if-necessary-or-explicit`` (the default, uv's) when a specifier names one (``IF_NECESSARY`` modes take it
    when no final release is left: the provider's part). The provider's rule and the explanation's."""
    if candidate.source is None:
        return None
    needs = list(needs)
    specifiers = [s for n in needs for s in n.specifier] + list(limit or ())
    exact = any(s.operator == "===" or (s.operator == "==" and not s.version.endswith(".*"))
                for s in specifiers)  # ==1.0.* is a range, not a pin: pip and uv pass its yanked files over
    if candidate.source.yanked and not exact:
        return "yanked"
    if not candidate.version.is_prerelease or prerelease == "allow":
        return None
    named = prerelease in ("explicit", "if-necessary-or-explicit") and any(n.specifier.prereleases for n in needs)
    return None if named else "pre-release"


def parse_requests(
    texts: Sequence[str], environment: Mapping[str, str] | None = None, *, direct: bool = False
) -> list[Need]:
    """PEP 508 strings -> one ``Need`` per package and extras, in first-seen order; a malformed one is
    ``InvalidInput``. A package named again is merged (its specifiers intersected), so the solver's
    work does not grow with repetition (``torch`` given 2,000 times is one Need).

    With the target's marker ``environment``, a requirement whose marker is false there is left out
    (``skipped_requests`` says which, for a notice). A direct URL reference is checked
    (``direct.parse_direct``) and kept in ``Need.url`` when ``direct`` (the caller reads files from the
    network: ``lock``, ``install``); otherwise it is refused with a coded error, never dropped. One
    name given two different URLs is an error."""
    merged: dict[str, Need] = {}
    urls: dict[str, str] = {}
    for text in texts:
        req = _parse(text)
        if req.url:
            if not direct:
                raise InvalidInput(
                    Text.of("resolve.direct-reference", text=_short(text)), hint=Text("resolve.direct-reference.hint")
                )
            if local_directory(req.url) is None:  # a local project folder is read when it is solved
                parse_direct(req.name, req.url)
        if environment is not None and req.marker is not None and not req.marker.evaluate({**environment}):
            continue
        need = Need.from_requirement(req)
        if req.url:
            first = urls.setdefault(need.name, req.url)
            if not same_reference(first, req.url):
                raise InvalidInput(
                    Text.of(
                        "resolve.conflicting-urls",
                        name=need.name,
                        first=strip_credentials(first)[:300],
                        second=strip_credentials(req.url)[:300],
                    ),
                    hint=Text("resolve.conflicting-urls.hint"),
                )
            need = replace(need, url=first)
        seen = merged.get(need.key)
        if seen is not None:
            need = replace(seen, specifier=seen.specifier & need.specifier, url=seen.url or need.url)
        merged[need.key] = need
    if not texts:  # requirements whose markers are all false on the target are an empty set, as uv locks them
        raise InvalidInput(Text("resolve.nothing-to-resolve"), hint=Text("resolve.nothing-to-resolve.hint"))
    return [replace(n, url=urls.get(n.name)) for n in merged.values()]


def _parse(text: str) -> Requirement:
    try:
        req = Requirement(text)
        for spec in req.specifier:  # a version packaging parses but int() cannot (5,000 digits)
            if spec.operator != "===":
                Version(spec.version.removesuffix(".*"))
    except (InvalidRequirement, ValueError) as exc:
        raise InvalidInput(
            Text.of("resolve.not-a-requirement", text=_short(text)), hint=Text("resolve.not-a-requirement.hint")
        ) from exc
    return req


def parse_constraints(texts: Sequence[str], environment: Mapping[str, str] | None = None) -> dict[str, SpecifierSet]:
    """``-c`` lines -> one specifier per package (intersected when a name comes again); a line whose
    marker is false on the target is left out. Constraints narrow versions and add no package; a URL
    in one is refused (it would pin a file, which only a requirement may)."""
    found: dict[str, SpecifierSet] = {}
    for text in texts:
        try:
            req = Requirement(text)
        except InvalidRequirement as exc:
            raise InvalidInput(
                Text.of("resolve.not-a-requirement", text=_short(text)), hint=Text("resolve.not-a-requirement.hint")
            ) from exc
        if req.url:
            raise InvalidInput(
                Text.of("resolve.constraint-url", text=_short(text)), hint=Text("resolve.constraint-url.hint")
            )
        if environment is not None and req.marker is not None and not req.marker.evaluate({**environment}):
            continue
        name = canonical_name(req.name)
        found[name] = found[name] & req.specifier if name in found else req.specifier
    return found


def skipped_requests(texts: Sequence[str], environment: Mapping[str, str]) -> list[str]:
    """The requests whose marker is false on the target (``parse_requests`` leaves them out)."""
    out = []
    for text in texts:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.marker is not None and not req.marker.evaluate({**environment}):
            out.append(text)
    return out


def _short(text: str) -> str:
    return repr(text) if len(text) <= 120 else repr(f"{text[:60]}…{text[-20:]}")


def held_pins(
    preferences: Mapping[str, str], known: Iterable[str], needs: Iterable[Need], direct: Iterable[str]
) -> dict[str, SpecifierSet]:
    """A previous lock's builds of the database's packages (``known``) as exact pins (``==2.11.0+cu130``), for a
    first search that keeps them; a package a direct reference pins keeps that instead."""
    from packaging.specifiers import InvalidSpecifier

    pinned = set(direct) | {n.name for n in needs if n.url}
    names = set(known)
    held: dict[str, SpecifierSet] = {}
    for name, version in preferences.items():
        if name in names and name not in pinned:
            try:
                held[name] = SpecifierSet(f"=={version}")
            except InvalidSpecifier:
                continue
    return held
