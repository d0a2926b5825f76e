"""The resolvelib provider on tests/fixtures/compat-mini.toml: preferences, matches, satisfaction, dependencies."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from resolvelib.structs import RequirementInformation

from cudaresolve.core.archs import parse_cc
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.resolve.catalog import CUDA, Candidate, Catalog, Need, build_catalog
from cudaresolve.resolve.provider import CatalogProvider, cause_names, cause_parents
from cudaresolve.target.model import Gpu, Target

MINI = Path(__file__).parent / "fixtures" / "compat-mini.toml"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    db: CompatDB = load_compat(MINI)
    target = Target(gpus=(Gpu(name="GPU", cc=parse_cc("8.0")),), driver=parse_driver("535.104.05"), python="3.11")
    return build_catalog(db, target)


def matches(provider: CatalogProvider, name: str, *needs: Need, bad: tuple[Candidate, ...] = ()) -> list[str]:
    found = provider.find_matches(name, {name: iter(needs)}, {name: iter(bad)})
    return [str(c.version) if c.name != CUDA else str(c) for c in found]


def test_preference_tuples_are_exact(catalog: Catalog) -> None:
    provider = CatalogProvider(
        catalog, anchor="torch", user_pinned={"xformers"}, user_requested={"xformers", "torch", "torchrec"}
    )

    def pref(name: str) -> tuple[object, ...]:
        return provider.get_preference(name, {}, {}, {}, [])

    # (not <cuda>, only constrains rows ask, not a backtrack cause, not an exact pin, not the anchor, not capped by
    #  the user, not requested, name)
    assert pref(CUDA) == (False, False, True, True, True, True, True, CUDA)
    assert pref("xformers") == (True, False, True, False, True, True, False, "xformers")
    assert pref("torch") == (True, False, True, True, False, True, False, "torch")
    assert pref("torchrec") == (True, False, True, True, True, True, False, "torchrec")
    assert pref("fbgemm-gpu") == (True, False, True, True, True, True, True, "fbgemm-gpu")
    names = ["fbgemm-gpu", "torchrec", "torch", CUDA, "xformers"]
    assert sorted(names, key=pref) == [CUDA, "xformers", "torch", "torchrec", "fbgemm-gpu"]


def test_preference_without_user_sets_falls_back_to_anchor_then_name(catalog: Catalog) -> None:
    provider = CatalogProvider(catalog, anchor="torch")
    assert provider.get_preference("torch", {}, {}, {}, []) == (True, False, True, True, False, True, True, "torch")
    other = provider.get_preference("a-package", {}, {}, {}, [])
    assert other == (True, False, True, True, True, True, True, "a-package")


def info(need: Need, parent: Candidate | None = None) -> RequirementInformation[Need, Candidate]:
    return RequirementInformation(need, parent)


def test_preference_exact_pins_and_user_caps(catalog: Catalog) -> None:
    provider = CatalogProvider(catalog, anchor="torch", user_requested={"torch", "torchrec", "xformers"})
    (torchrec,) = catalog.for_name("torchrec")
    information = {
        "torch": [info(Need(name="torch")), info(Need(name="torch", specifier=SpecifierSet("==2.7.1")), torchrec)],
        "fbgemm-gpu": [info(Need(name="fbgemm-gpu", specifier=SpecifierSet("==1.2.*")), torchrec)],
        "torchrec": [info(Need(name="torchrec", specifier=SpecifierSet("===1.2.0")))],
        "xformers": [info(Need(name="xformers", specifier=SpecifierSet(">=0.0.20,<0.0.30")))],
    }

    def pref(name: str) -> tuple[object, ...]:
        return provider.get_preference(name, {}, {}, {k: iter(v) for k, v in information.items()}, [])

    assert pref("torch") == (True, False, True, False, False, True, False, "torch")  # ==2.7.1 from torchrec 1.2.0
    # a wildcard is not a pin, and a cap from a dependency is not the user's
    assert pref("fbgemm-gpu") == (True, False, True, True, True, True, True, "fbgemm-gpu")
    assert pref("torchrec") == (True, False, True, False, True, False, False, "torchrec")  # === pins (and caps)
    assert pref("xformers") == (True, False, True, True, True, False, False, "xformers")  # the user's <0.0.30 caps
    names = ["xformers", "fbgemm-gpu", "torchrec", "torch"]
    assert sorted(names, key=pref) == ["torch", "torchrec", "xformers", "fbgemm-gpu"]


def test_preference_backtrack_causes_first(catalog: Catalog) -> None:
    provider = CatalogProvider(catalog, anchor="torch", user_pinned={"xformers"}, user_requested={"torch", "xformers"})
    (torchrec,) = catalog.for_name("torchrec")
    causes = [
        info(Need(name="fbgemm-gpu", specifier=SpecifierSet("==1.2.*"), parent="torchrec 1.2.0"), torchrec),
        info(Need(name="torch")),  # a bare requirement restricts nothing: not a cause
    ]

    def pref(name: str) -> tuple[object, ...]:
        return provider.get_preference(name, {}, {}, {}, causes)

    assert pref(CUDA) == (False, False, True, True, True, True, True, CUDA)
    assert pref("fbgemm-gpu") == (True, False, False, True, True, True, True, "fbgemm-gpu")
    assert pref("torchrec") == (True, False, False, True, True, True, True, "torchrec")
    assert pref("xformers") == (True, False, True, False, True, True, False, "xformers")
    assert pref("torch") == (True, False, True, True, False, True, False, "torch")
    names = ["torch", "xformers", "torchrec", "fbgemm-gpu", CUDA]
    assert sorted(names, key=pref) == [CUDA, "fbgemm-gpu", "torchrec", "xformers", "torch"]


def test_narrow_requirement_selection(catalog: Catalog) -> None:
    provider = CatalogProvider(catalog, anchor="torch")
    (torchrec,) = catalog.for_name("torchrec")
    causes = [info(Need(name="fbgemm-gpu", specifier=SpecifierSet("==1.2.*")), torchrec), info(Need(name="torch"))]

    def narrow(names: list[str], why: list[RequirementInformation[Need, Candidate]]) -> list[str]:
        return list(provider.narrow_requirement_selection(names, {}, {}, {}, why))

    assert narrow(["torch", CUDA, "fbgemm-gpu"], causes) == [CUDA]  # the virtual <cuda> before anything
    # the package whose requirement made the conflict, then the package it constrains
    assert narrow(["torch", "fbgemm-gpu", "torchrec"], causes) == ["torchrec"]
    assert narrow(["torch", "fbgemm-gpu"], causes) == ["fbgemm-gpu"]
    assert narrow(["torch", "xformers"], causes) == ["torch", "xformers"]  # no cause open: all of them
    assert narrow(["torch", "xformers"], []) == ["torch", "xformers"]
    assert cause_parents(causes) == {"torchrec"}
    assert cause_names(causes) == {"fbgemm-gpu", "torchrec"}


def test_find_matches_best_first_and_filtered(catalog: Catalog) -> None:
    provider = CatalogProvider(catalog, anchor="torch")
    assert matches(provider, "torch") == ["2.8.0+cu121", "2.7.1+cu121", "2.7.1+cu118"]
    assert matches(provider, "torch", Need(name="torch", specifier=SpecifierSet("==2.7.*"))) == [
        "2.7.1+cu121",
        "2.7.1+cu118",
    ]
    # every requirement must hold: a pin with a local version and a range together
    both = (Need(name="torch", specifier=SpecifierSet("==2.7.*")), Need(name="torch", specifier=SpecifierSet("<2.8")))
    assert matches(provider, "torch", *both) == ["2.7.1+cu121", "2.7.1+cu118"]
    pinned = Need(name="torch", specifier=SpecifierSet("==2.7.1+cu118"))
    assert matches(provider, "torch", pinned) == ["2.7.1+cu118"]
    assert matches(provider, CUDA, Need(name=CUDA, variant="cu118")) == ["cu118"]
    assert matches(provider, CUDA) == ["cu121", "cu118"]
    assert matches(provider, "torch", Need(name="torch", specifier=SpecifierSet(">=3"))) == []


def test_find_matches_leaves_out_incompatibilities(catalog: Catalog) -> None:
    provider = CatalogProvider(catalog, anchor="torch")
    newest = catalog.for_name("torch")[0]
    assert matches(provider, "torch", bad=(newest,)) == ["2.7.1+cu121", "2.7.1+cu118"]


def test_is_satisfied_by(catalog: Catalog) -> None:
    provider = CatalogProvider(catalog, anchor="torch")
    torch_280, torch_271_121, torch_271_118 = catalog.for_name("torch")
    assert provider.is_satisfied_by(Need(name="torch"), torch_280)
    assert provider.is_satisfied_by(Need(name="torch", specifier=SpecifierSet("==2.7.1")), torch_271_118)
    assert not provider.is_satisfied_by(Need(name="torch", specifier=SpecifierSet("==2.7.*")), torch_280)
    assert not provider.is_satisfied_by(Need(name="torch", specifier=SpecifierSet("==2.7.1+cu118")), torch_271_121)
    assert not provider.is_satisfied_by(Need(name="fbgemm-gpu"), torch_280)
    cu121, cu118 = catalog.for_name(CUDA)
    assert provider.is_satisfied_by(Need(name=CUDA, variant="cu121"), cu121)
    assert not provider.is_satisfied_by(Need(name=CUDA, variant="cu121"), cu118)


def test_get_dependencies_and_identify(catalog: Catalog) -> None:
    provider = CatalogProvider(catalog, anchor="torch")
    torch_280 = catalog.for_name("torch")[0]
    assert [str(n) for n in provider.get_dependencies(torch_280)] == ["<cuda>==cu121"]
    (torchrec,) = catalog.for_name("torchrec")
    assert [(str(n), n.parent) for n in provider.get_dependencies(torchrec)] == [
        ("fbgemm-gpu==1.2.*", "torchrec 1.2.0"),
        ("torch==2.7.*", "torchrec 1.2.0"),
    ]
    assert provider.get_dependencies(catalog.for_name(CUDA)[0]) == ()
    assert provider.identify(torchrec) == "torchrec"
    assert provider.identify(Need(name=CUDA, variant="cu118")) == CUDA


def test_matches_are_lazy_memoised_and_shared(catalog: Catalog) -> None:
    provider = CatalogProvider(catalog, anchor="torch")
    wanted = Need(name="torch", specifier=SpecifierSet("<2.8"))
    found = provider.find_matches("torch", {"torch": iter([wanted])}, {"torch": iter(())})
    assert provider.matches.checks == 0  # nothing is tested until the resolver reads
    assert found
    assert provider.matches.checks == 2  # 2.8.0 ruled out, 2.7.1+cu121 found: enough for bool()
    assert [str(c.version) for c in found] == ["2.7.1+cu121", "2.7.1+cu118"]
    assert provider.matches.checks == 3
    # the same question (an equal requirement, another object) is the same lazy list; no new checks
    again = provider.find_matches(
        "torch",
        {"torch": iter([Need(name="torch", specifier=SpecifierSet("<2.8"), parent="x 1")])},
        {"torch": iter(())},
    )
    assert again is found
    assert all(provider.is_satisfied_by(wanted, c) for c in found)
    assert provider.matches.checks == 3
    assert len(found) == 2
    assert list(found[:1]) == [catalog.for_name("torch")[1]]


def test_repeated_pin_check_is_answered_from_the_pair_memo(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """resolvelib re-checks every unchanged pin each round: the second ask of a pair computes nothing."""
    from cudaresolve.resolve.catalog import satisfies

    provider = CatalogProvider(catalog, anchor="torch")
    needs = [Need(name="torch"), Need(name="torch", specifier=SpecifierSet("==2.7.*")), Need(name="fbgemm-gpu")]
    candidates = [*catalog.for_name("torch"), *catalog.for_name(CUDA)]
    first = {(i, j): provider.is_satisfied_by(n, c) for i, n in enumerate(needs) for j, c in enumerate(candidates)}
    assert first == {(i, j): satisfies(n, c) for i, n in enumerate(needs) for j, c in enumerate(candidates)}

    def computed(need: Need, candidate: Candidate) -> bool:
        raise AssertionError(f"recomputed {need} for {candidate}")

    monkeypatch.setattr(provider.matches, "_check", computed)
    assert {
        (i, j): provider.is_satisfied_by(n, c) for i, n in enumerate(needs) for j, c in enumerate(candidates)
    } == first
    # an equal requirement that is another object is asked afresh (the memo is keyed by identity, never by a
    # reused id): it reaches the computation
    with pytest.raises(AssertionError, match="recomputed"):
        provider.is_satisfied_by(Need(name="torch"), candidates[0])
