"""The builds the walk ahead reads for a database package (resolve.ahead): the solver's own order, filtered as
the solver filters, on tests/fixtures/compat-mini.toml."""

from __future__ import annotations

from pathlib import Path

from packaging.requirements import Requirement

from cudaresolve.core.archs import parse_cc
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import load_compat
from cudaresolve.resolve.ahead import build_chain
from cudaresolve.resolve.catalog import Catalog, Need, build_catalog
from cudaresolve.resolve.pairing import Companions
from cudaresolve.target.model import Gpu, Target

MINI = Path(__file__).parent / "fixtures" / "compat-mini.toml"


def _catalog(driver: str = "535.104.05") -> Catalog:
    db = load_compat(MINI)
    target = Target(gpus=(Gpu(name="GPU", cc=parse_cc("8.0")),), driver=parse_driver(driver), python="3.11",
                    platform="linux_x86_64")  # fmt: skip
    return build_catalog(db, target, lazy=True)


def test_the_chain_is_the_solvers_order_of_runnable_builds_that_meet_the_requirement() -> None:
    catalog = _catalog()
    every = [(c.name, str(c.version), c.index_url) for c in catalog.for_name("torch")
             if c.variant in catalog.runnable and c.build]  # fmt: skip
    chain = build_chain(catalog, None, Requirement("torch"))
    assert chain and list(chain) == every[: len(chain)]  # best first, as the solver tries them
    older = build_chain(catalog, None, Requirement("torch<2.8"))
    assert older and {v for _, v, _ in older} <= {"2.7.1", "2.7.1+cpu", "2.7.1+cu121", "2.7.1+cu118"}
    assert all(v.startswith("2.7.1") for _, v, _ in older)
    assert build_chain(catalog, None, Requirement("torch>=9")) == ()


def test_a_driver_too_old_for_a_variant_leaves_its_builds_out() -> None:
    new, old = _catalog(), _catalog("450.51.06")  # 450 runs neither CUDA 11.8 nor 12.1: only the cpu build
    assert any("cu121" in i for _, _, i in build_chain(new, None, Requirement("torch")))
    assert all(not ("cu118" in i or "cu121" in i) for _, _, i in build_chain(old, None, Requirement("torch")))


def test_other_requested_packages_narrow_the_chain_and_others_have_none() -> None:
    catalog = _catalog()
    companions = Companions(catalog, [Need(name="torch"), Need(name="fbgemm-gpu")])  # fbgemm-gpu 1.2 needs torch 2.7
    chain = build_chain(catalog, companions, Requirement("torch"))
    assert chain and all(v.startswith("2.7") for _, v, _ in chain)
    assert build_chain(catalog, None, Requirement("numpy")) == ()  # not the database's: its listing is walked
    assert build_chain(catalog, None, Requirement("torch @ https://example.org/torch-2.7.1-py3-none-any.whl")) == ()
