"""Several packages that have source builds (flash-attn's sdist, the PyG and mmcv pages' sdists) asked for
together: ``resolve.pairing`` takes a source build only where no wheel of that package can stand beside the
rest of the set, never turns an answer into a failure, and stays bounded."""

from __future__ import annotations

import itertools
import time
from dataclasses import replace

import pytest

from cudaresolve.core.versions import parse_driver
from cudaresolve.db.prebuilt import SDIST
from cudaresolve.errors import NoSolution
from cudaresolve.resolve.catalog import build_catalog
from cudaresolve.resolve.solve import solve
from cudaresolve.target.model import Target
from test_pairing import DB, gpu, without_pairing

TARGETS = {
    "h100-py310": Target(gpus=(gpu("NVIDIA H100"),), driver=parse_driver("580.65.06"), python="3.10",
                         platform="linux_x86_64"),
    "rtx3090-py312": Target(gpus=(gpu("NVIDIA GeForce RTX 3090"),), driver=parse_driver("580.65.06"),
                            python="3.12", platform="linux_x86_64"),
}  # fmt: skip


def _extensions() -> tuple[list[str], list[str]]:
    """The database packages that have a source build beside their wheels, and those whose wheels come from
    the same channels (a find-links page without an sdist: pyg-lib)."""
    catalog = build_catalog(DB, TARGETS["h100-py310"])
    channels = {n: {c.build.channel for c in catalog.for_name(n) if c.build} for n in DB.package_names}
    sources = [n for n in DB.package_names if SDIST in channels[n]]
    shared = {ch for n in sources for ch in channels[n]} - {SDIST}
    return sources, [n for n in DB.package_names if channels[n] and channels[n] <= shared]


SOURCES, PAGE_ONLY = _extensions()
CASES = [(key, [*combo, extra]) for key in TARGETS for combo in itertools.combinations(SOURCES, 2)
         for extra in PAGE_ONLY]  # fmt: skip


def test_the_database_has_packages_with_source_builds_and_one_without() -> None:
    assert len(SOURCES) >= 2 and PAGE_ONLY, (SOURCES, PAGE_ONLY)


def _sources_in(pins: dict) -> list[str]:  # type: ignore[type-arg]
    return [n for n, c in pins.items() if c.build is not None and c.build.channel == SDIST]


@pytest.mark.parametrize(("key", "requests"), CASES, ids=[f"{k}-{'+'.join(r)}" for k, r in CASES])
def test_a_source_build_only_where_no_wheel_of_it_fits_the_set(key: str, requests: list[str]) -> None:
    target = TARGETS[key]
    started = time.monotonic()
    try:
        pins = dict(solve(requests, DB, target).pins)
    except NoSolution:
        pins = None
    assert time.monotonic() - started < 30  # bounded: the pairings are memoised per package, never recursive
    with without_pairing():
        try:
            plain = dict(solve(requests, DB, target).pins)
        except NoSolution:
            plain = None
    assert (pins is None) == (plain is None)  # the pairings never turn an answer into a failure, nor back
    if pins is None or plain is None:
        return
    assert len(_sources_in(pins)) <= len(_sources_in(plain))
    catalog = build_catalog(DB, target)
    for name in _sources_in(pins):  # with that package's source build taken away: no set builds fewer
        wheels_only = {**catalog.candidates, name: tuple(c for c in catalog.for_name(name)
                                                         if c.build is None or c.build.channel != SDIST)}
        try:
            other = dict(solve(requests, DB, target, catalog=replace(catalog, candidates=wheels_only)).pins)
        except NoSolution:
            continue
        assert len(_sources_in(other)) >= len(_sources_in(pins)), f"{name} built where {other[name]} fits"
