"""A package's CPU-only build (``[packages.cpu-package]``: fbgemm-gpu-cpu) as a database fact and a way out."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import pytest

from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.errors import InvalidCompatData
from cudaresolve.resolve.whynot import why_not
from cudaresolve.target.build import resolve_gpu
from cudaresolve.target.model import Target
from cudaresolve.text.catalogue import format_text

if TYPE_CHECKING:
    from cudaresolve.resolve.whynot import WhyNot

DB = load_compat()


def _why_not(spec: str, gpu: str, driver: str) -> WhyNot:
    target = Target(gpus=(resolve_gpu(gpu, DB),), driver=parse_driver(driver), platform="linux_x86_64",
                    python="3.11")
    return why_not(spec, [], DB, target)


def test_the_shipped_database_names_fbgemm_gpu_cpu_and_nothing_for_torch() -> None:
    assert DB.cpu_package("fbgemm-gpu") == "fbgemm-gpu-cpu"
    assert DB.cpu_package("torch") is None and DB.cpu_package("xformers") is None


@pytest.mark.parametrize(
    ("spec", "gpu", "driver"),
    [
        ("torchrec", "GTX 1080 Ti", "535.104.05"),  # the example
        ("torchrec", "Tesla K80", "470.82.01"),  # a GPU older than every build
        ("fbgemm-gpu", "Tesla P100", "580.65.06"),
    ],
)
def test_no_code_for_the_gpu_offers_the_cpu_package(spec: str, gpu: str, driver: str) -> None:
    answer = _why_not(spec, gpu, driver)
    assert not answer.possible
    (way,) = [a for a in answer.alternatives if a.code == "cpu-package"]
    assert way.spec == "fbgemm-gpu-cpu"
    assert "fbgemm-gpu-cpu, the CPU-only build of fbgemm-gpu" in format_text(way.text)
    assert any(r.package == "fbgemm-gpu" for r in answer.reasons)  # said only where fbgemm-gpu is the cause


@pytest.mark.parametrize(("spec", "gpu", "driver"), [("xformers", "Tesla K80", "470.82.01"),
                                                     ("flashinfer-python", "GTX 1080 Ti", "580.65.06")])
def test_no_cpu_package_where_the_database_knows_none(spec: str, gpu: str, driver: str) -> None:
    answer = _why_not(spec, gpu, driver)
    assert not answer.possible
    assert not [a for a in answer.alternatives if a.code == "cpu-package"]


def _with_cpu_package(tiny: dict[str, Any], table: object, source: bool = True) -> dict[str, Any]:
    data = copy.deepcopy(tiny)
    data["packages"]["cpu-package"] = table
    if source:
        data["packages"]["cpu-package-source"] = "https://example.org/cpu"
    return data


def test_the_fact_is_read_and_validated(tiny_db_dict: dict[str, Any]) -> None:
    db = CompatDB.from_dict(_with_cpu_package(tiny_db_dict, {"torch": "torch-cpu"}))
    assert db.cpu_package("torch") == "torch-cpu"
    for table, source, path in (({"nope": "x-cpu"}, True, "packages.cpu-package.nope"),
                                ({"torch": "Not A Name!"}, True, "packages.cpu-package.torch"),
                                ({"torch": "torch-cpu"}, False, "packages.cpu-package-source"),
                                ("fbgemm-gpu-cpu", True, "packages.cpu-package")):
        with pytest.raises(InvalidCompatData) as info:
            CompatDB.from_dict(_with_cpu_package(tiny_db_dict, table, source))
        assert path in [p for p, _ in info.value.problems], info.value.problems
