"""The [index] and [packages] tables and the forward-compat name pattern: read, validated, exposed as queries."""

from __future__ import annotations

from typing import Any

import pytest

from cudaresolve.core.archs import ComputeCapability
from cudaresolve.core.versions import CudaVersion
from cudaresolve.db.database import CompatDB
from cudaresolve.errors import InvalidCompatData
from cudaresolve.text.catalogue import format_text


def problems(data: dict[str, Any], lang: str = "en") -> list[tuple[str, str]]:
    with pytest.raises(InvalidCompatData) as info:
        CompatDB.from_dict(data)
    return [(path, format_text(problem, lang)) for path, problem in info.value.problems]


def test_facts_are_queries(tiny_db_dict: dict[str, Any]) -> None:
    db = CompatDB.from_dict(tiny_db_dict)
    assert db.default_index == "https://pypi.org/simple"
    assert db.pytorch_index_root == "https://download.pytorch.org/whl"
    assert db.allowed_hosts == ("download.pytorch.org", "pypi.org", "flashinfer.ai")
    assert db.anchor == "torch"
    assert db.package_kinds[0] == "torch" and len(db.package_kinds) == 10
    assert db.package_names == ("torch", "fbgemm-gpu")  # tables with rows, in the listed order


def test_the_default_index_is_where_pypi_builds_come_from(tiny_db_dict: dict[str, Any]) -> None:
    tiny_db_dict["index"]["default"] = "https://pypi.org/simple/"
    tiny_db_dict["torch"][0]["build"][1]["channel"] = "pypi"
    db = CompatDB.from_dict(tiny_db_dict)
    (torch,) = db.packages("torch")
    assert (torch.builds[1].index_url, torch.builds[1].local) == ("https://pypi.org/simple", "")


def test_the_package_tables_decide_which_top_level_keys_exist(tiny_db_dict: dict[str, Any]) -> None:
    tiny_db_dict["packages"]["tables"] = ["torch"]
    assert problems(tiny_db_dict) == [("fbgemm-gpu", "unrecognized field")]


def test_missing_tables_are_reported(tiny_db_dict: dict[str, Any]) -> None:
    del tiny_db_dict["index"]
    tiny_db_dict["packages"] = ["torch"]
    found = problems(tiny_db_dict)
    assert found[:2] == [("index", "required field is missing"), ("packages", "expected a table")]


def test_bad_index_and_package_facts(tiny_db_dict: dict[str, Any]) -> None:
    tiny_db_dict["index"] = {
        "default": "http://pypi.org/simple",
        "pytorch-root": "https://mirror.example.org/whl",
        "allowed-hosts": ["download.pytorch.org", "pypi.org"],
        "colour": "blue",
    }
    tiny_db_dict["packages"] = {
        "tables": ["torch", "fbgemm-gpu", "torch", "cuda"],
        "anchor": "numpy",
        "source": "s",
    }
    assert problems(tiny_db_dict) == [
        ("index.colour", "unrecognized field"),
        ("index.default", "must be an https URL: 'http://pypi.org/simple'"),
        ("index.pytorch-root", "host 'mirror.example.org' is not one of download.pytorch.org, pypi.org"),
        ("index.source", "required field is missing"),
        ("packages.tables[2]", "'torch' cannot be a package table (listed twice, or a fixed key)"),
        ("packages.tables[3]", "'cuda' cannot be a package table (listed twice, or a fixed key)"),
        ("packages.anchor", "the anchor 'numpy' is not one of packages.tables"),
        (
            "variant[0].index-url",
            "must be https://mirror.example.org/whl/cu121 (index.pytorch-root followed by the variant name)",
        ),
        (
            "variant[1].index-url",
            "must be https://mirror.example.org/whl/cu118 (index.pytorch-root followed by the variant name)",
        ),
    ]


def test_problems_read_in_chinese(tiny_db_dict: dict[str, Any]) -> None:
    tiny_db_dict["packages"]["anchor"] = "numpy"
    tiny_db_dict["schema-version"] = 2
    assert problems(tiny_db_dict, "zh") == [
        ("packages.anchor", "锚定软件包 'numpy' 不在 packages.tables 之中"),
        ("schema-version", "不支持的架构版本 2（此版本的 cudaresolve 读取版本 1）"),  # noqa: RUF001
    ]


def test_forward_compat_package_pattern(tiny_db_dict: dict[str, Any]) -> None:
    row = {"cuda-major": 12, "package": "cuda-compat-12-{minor}", "min-driver-branch": 470, "source": "s"}
    tiny_db_dict["forward-compat"] = [row, {**row, "cuda-major": 11, "package": "cuda-compat-{patch}"}]
    assert problems(tiny_db_dict) == [
        ("forward-compat[1].package", "'cuda-compat-{patch}' may use only the fields {major} and {minor}")
    ]
    del tiny_db_dict["forward-compat"][1]
    forward = CompatDB.from_dict(tiny_db_dict).forward_compat_for(12)
    assert forward is not None and forward.package_for(CudaVersion(12, 8)) == "cuda-compat-12-8"


def test_variant_names_are_parsed(tiny_db_dict: dict[str, Any]) -> None:
    tiny_db_dict["variant"][1]["name"] = "xpu"
    tiny_db_dict["variant"][0]["cuda"] = "11.8"
    found = problems(tiny_db_dict)
    assert found[:2] == [
        ("variant[0].cuda", "variant 'cu121' needs cuda = the version its tag names"),
        ("variant[1].name", "not a variant name: 'xpu'"),
    ]


def test_min_sm_of_a_package(tiny_db_dict: dict[str, Any]) -> None:
    assert CompatDB.from_dict(tiny_db_dict).min_sm("torch") is None  # no release states one
    tiny_db_dict["torch"][0]["min-sm"] = "7.5"
    db = CompatDB.from_dict(tiny_db_dict)
    assert db.min_sm("torch") == ComputeCapability(7, 5)
    assert db.min_sm("xformers") is None  # no rows at all
