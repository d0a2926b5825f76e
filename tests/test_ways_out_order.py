"""Ways out by the least change: the smallest driver requirement leads, cuda-compat before a driver upgrade."""

from __future__ import annotations

import pytest

from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import load_compat
from cudaresolve.resolve.whynot import why_not
from cudaresolve.target.build import resolve_gpu
from cudaresolve.target.model import Target

DB = load_compat()


@pytest.mark.parametrize(("gpu", "driver"), [("T4", "418.87.01"), ("Tesla P4", "418.87.01"), ("V100", "440.33.01")])
def test_the_least_upgrade_leads(gpu: str, driver: str) -> None:
    target = Target(gpus=(resolve_gpu(gpu, DB),), driver=parse_driver(driver), platform="linux_x86_64",
                    python="3.11")
    answer = why_not("torch", [], DB, target)
    assert not answer.possible
    drivers = [parse_driver(r.required or "").parts for r in answer.reasons if r.code == "driver-too-old"]
    assert drivers and drivers == sorted(drivers)  # cu118's 450.80.02 before cu132's 580
    codes = [a.code for a in answer.alternatives]
    if "forward-compat-available" in codes:  # no driver change at all comes before a driver upgrade
        assert codes[0] == "forward-compat-available"


def _upgraded(target: Target, driver: str) -> Target:
    from dataclasses import replace

    return replace(target, driver=parse_driver(driver), cuda_driver_max=None,
                   gpus=tuple(replace(g, driver=None) for g in target.gpus))


@pytest.mark.parametrize(
    ("spec", "gpu", "driver", "expected"),
    [
        ("torch", "T4", "418.87.01", ("450.80.02", "cu118")),  # the example
        ("torch", "V100", "440.33.01", ("450.80.02", "cu118")),
        ("torch==2.9.0", "A100", "470.129.06", ("525.60.13", "cu128")),
        ("cu121", "A800", "470.129.06", ("525.60.13", "cu121")),
        ("torchrec", "RTX 3090", "450.51.06", None),
    ],
)
def test_the_driver_way_out_is_the_lowest_driver_that_resolves(
    spec: str, gpu: str, driver: str, expected: tuple[str, str] | None
) -> None:
    target = Target(gpus=(resolve_gpu(gpu, DB),), driver=parse_driver(driver), platform="linux_x86_64",
                    python="3.11")
    answer = why_not(spec, [], DB, target)
    (way,) = [a for a in answer.alternatives if a.spec.startswith("driver>=")]
    named = way.spec.removeprefix("driver>=")
    after = why_not(spec, [], DB, _upgraded(target, named))
    assert after.possible and after.solution is not None, way.spec  # the driver named really resolves it
    # brute force: no lower driver among every CUDA floor and minimum and every GPU minimum in the database does
    every = {d for r in DB.cuda for d in (r.minor_compat_driver("linux_x86_64"), r.min_driver("linux_x86_64"))}
    every |= {row.min_driver for row in DB.driver_gpus if row.min_driver is not None}
    lower = {d for d in every if parse_driver(driver) < d < parse_driver(named)}
    for d in sorted(lower):
        assert not why_not(spec, [], DB, _upgraded(target, str(d))).possible, str(d)
    if expected is not None:
        assert (named, after.solution.variant) == expected, way.text
        assert way.text.get("variant") == expected[1]  # the message names the CUDA the upgrade runs
