"""The database's ``constrains`` rows inside the search: they narrow a package that something requires, and never
bring one in.

Found by the hardware audit: ``flashinfer-python flashinfer-cubin`` ended in ``no-solution`` although
flashinfer-python 0.6.13 and flashinfer-cubin 0.6.13 go together. The rows were checked only on the finished
set, so the search kept the newest flashinfer-python that no cubin release accepts. The tests take every pair of
packages that the shipped database's rows join by ``constrains``, so that a new pairing of the kind is covered
too.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import product

import pytest

from cudaresolve.core.platforms import canonical_name
from cudaresolve.db.database import PackageRelease, load_compat
from cudaresolve.errors import NoSolution
from cudaresolve.resolve.catalog import ABSENT, Candidate, Need
from cudaresolve.resolve.provider import CatalogProvider
from cudaresolve.resolve.solve import solve
from cudaresolve.target.build import TargetOptions, build_target

DB = load_compat()
TARGET = build_target(TargetOptions(gpus=("H100",), driver="580.65.06", python="3.11"), DB)
PAIRS = sorted({
    (release.name, canonical_name(req.name))
    for name in DB.package_names for release in DB.packages(name) for req in release.constrains
})  # fmt: skip


def _accept(one: PackageRelease, other: PackageRelease) -> bool:
    return all(
        not r.specifier or r.specifier.contains(other.version, prereleases=True)
        for r in one.constrains
        if canonical_name(r.name) == other.name
    )


def _held(pins: dict[str, Candidate]) -> None:
    for candidate in pins.values():
        for req in candidate.release.constrains if candidate.release is not None else ():
            other = pins.get(canonical_name(req.name))
            assert other is None or req.specifier.contains(other.version, prereleases=True), (candidate, str(req))


def test_the_shipped_database_has_constrains_rows() -> None:
    assert PAIRS  # else the tests below test nothing


@pytest.mark.parametrize(("name", "other"), PAIRS)
def test_two_packages_a_constrains_row_joins_are_locked_together_when_a_pair_fits(name: str, other: str) -> None:
    try:
        resolved = solve([name, other], DB, TARGET)
    except NoSolution:
        pairs = product(DB.packages(name), DB.packages(other))
        assert not any(_accept(a, b) and _accept(b, a) for a, b in pairs), "a pair fits, yet no set was found"
        return
    _held(dict(resolved.pins))
    assert {name, other} <= set(resolved.pins)


@pytest.mark.parametrize("name", sorted({name for name, _ in PAIRS}))
def test_a_constrains_row_never_brings_its_package_in(name: str) -> None:
    pins = dict(solve([name], DB, TARGET).pins)
    _held(pins)
    constrained = {canonical_name(r.name) for r in pins[name].release.constrains} if pins[name].release else set()
    required = {canonical_name(r.name) for c in pins.values() if c.release for r in c.release.requires}
    assert not (constrained - required) & set(pins)
    assert all(c.channel != ABSENT for c in pins.values())


def test_a_name_only_constrained_has_one_candidate_its_absence() -> None:
    from cudaresolve.resolve.catalog import build_catalog

    name, other = PAIRS[0]
    provider = CatalogProvider(build_catalog(DB, TARGET), anchor="torch")
    only = Need(name=other, constraint=True, parent=f"{name} 1.0")
    (absent,) = provider.find_matches(other, {other: iter([only])}, {other: iter(())})
    assert absent.channel == ABSENT and provider.get_dependencies(absent) == ()
    assert provider.is_satisfied_by(only, absent)
    assert not provider.is_satisfied_by(Need(name=other), absent)
    gone = provider.find_matches(other, {other: iter([only])}, {other: iter([absent])})
    assert list(gone) == []  # its absence ruled out: nothing else meets a row that only narrows


def test_two_requested_packages_whose_rows_narrow_a_third_differently_still_pair() -> None:
    """Neither requires the third package: its absence meets both rows, so the pairing check (``Companions``) must
    not leave either out for want of one release of it that both accept."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from cudaresolve.resolve.catalog import Catalog
    from cudaresolve.resolve.pairing import Companions

    def made(name: str, version: str, *needs: Need) -> Candidate:
        return Candidate(name=name, version=Version(version), variant=None, index_url="i", dependencies=needs)

    def narrows(name: str, spec: str) -> Need:
        return Need(name=name, specifier=SpecifierSet(spec), constraint=True)

    a, b = made("a", "1", narrows("c", "==1")), made("b", "1", narrows("c", "==2"))
    c = (made("c", "2"), made("c", "1"))
    catalog = Catalog(target=TARGET, candidates={"a": (a,), "b": (b,), "c": c}, rejections=(),
                      known=frozenset("abc"))  # fmt: skip
    companions = Companions(catalog, [Need(name="a"), Need(name="b")])
    assert companions.fits(a) and companions.fits(b)
    required = replace(b, dependencies=(Need(name="c", specifier=SpecifierSet("==2")),))  # b brings c 2 in: a's row
    catalog = replace(catalog, candidates={"a": (a,), "b": (required,), "c": c})
    assert not Companions(catalog, [Need(name="a"), Need(name="b")]).fits(a)  # then narrows it to nothing


def test_a_constrains_row_is_no_edge_for_extras_markers_or_the_set() -> None:
    """Found in review: once constrains rows were needs, the extras' markers followed them as edges, so an extra
    asking for one flashinfer package was marked as needing the other too; and a project with no requirements of
    its own failed there with "nothing to resolve"."""
    from cudaresolve.lock.feature_markers import feature_markers
    from cudaresolve.lock.features import Chosen
    from cudaresolve.resolve.catalog import build_catalog

    name, other = PAIRS[0]
    pins = dict(solve([name, other], DB, TARGET).pins)
    provider = CatalogProvider(build_catalog(DB, TARGET), anchor="torch")
    assert any(n.constraint and n.name == other for n in provider.get_dependencies(pins[name]))  # the row is there
    chosen = Chosen(extras={"one": (name,), "two": (other,)})
    markers = feature_markers(pins, provider, chosen, {})
    assert "'two' in extras" not in markers[name] and "'one' in extras" not in markers[other], markers
