"""The resolvelib provider on tests/fixtures/compat-mini.toml: preferences, matches, satisfaction, dependencies."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from cudaresolve.core.archs import parse_cc
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.resolve.catalog import CUDA, Candidate, Catalog, Need, build_catalog
from cudaresolve.resolve.provider import CatalogProvider
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

    assert pref(CUDA) == (False, True, True, True, CUDA)
    assert pref("xformers") == (True, False, True, False, "xformers")
    assert pref("torch") == (True, True, False, False, "torch")
    assert pref("torchrec") == (True, True, True, False, "torchrec")
    assert pref("fbgemm-gpu") == (True, True, True, True, "fbgemm-gpu")
    names = ["fbgemm-gpu", "torchrec", "torch", CUDA, "xformers"]
    assert sorted(names, key=pref) == [CUDA, "xformers", "torch", "torchrec", "fbgemm-gpu"]


def test_preference_without_user_sets_falls_back_to_anchor_then_name(catalog: Catalog) -> None:
    provider = CatalogProvider(catalog, anchor="torch")
    assert provider.get_preference("torch", {}, {}, {}, []) == (True, True, False, True, "torch")
    assert provider.get_preference("a-package", {}, {}, {}, []) == (True, True, True, True, "a-package")


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
