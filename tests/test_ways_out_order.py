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
