"""Which operating systems each package serves ([packages.os]), applied to every package."""

from __future__ import annotations

import copy
import json
import tomllib
from typing import Any

import pytest

from cudaresolve.cli import main
from cudaresolve.core.platforms import platform_os
from cudaresolve.db.database import CompatDB, load_compat, shipped_path
from cudaresolve.errors import InvalidCompatData
from cudaresolve.resolve.catalog import build_catalog
from cudaresolve.target.build import TargetOptions, build_target

DB = load_compat()
RAW: dict[str, Any] = tomllib.loads(shipped_path().read_text(encoding="utf-8"))


def test_every_package_table_says_which_systems_it_serves() -> None:
    for name in DB.package_kinds:
        systems = DB.operating_systems(name)
        assert systems, name
        assert set(systems) <= {"linux", "windows", "macos"}
    assert DB.operating_systems("flashinfer-python") == ("linux",)
    assert DB.operating_systems("numpy") is None  # beyond the database: not said


@pytest.mark.parametrize(
    ("key", "os"), [("linux_aarch64", "linux"), ("win_amd64", "windows"), ("macosx_arm64", "macos")]
)
def test_platform_os(key: str, os: str) -> None:
    assert platform_os(key) == os


@pytest.mark.parametrize("platform", ["win_amd64", "macosx_arm64", "macosx_x86_64", "linux_x86_64", "linux_aarch64"])
def test_no_candidate_on_a_system_its_package_does_not_serve(platform: str) -> None:
    cpu = platform.startswith("macosx")
    gpus, driver = ((), None) if cpu else (("8.6",), "580.65.06")
    target = build_target(TargetOptions(platform=platform, python="3.12", cpu=cpu, gpus=gpus, driver=driver), DB)
    catalog = build_catalog(DB, target)
    for name in DB.package_names:
        served = platform_os(platform) in (DB.operating_systems(name) or ())
        rejected = [r for r in catalog.rejected(name) if r.finding.code == "os-not-served"]
        if served:
            assert not rejected, name
            continue
        assert catalog.for_name(name) == (), name  # no release of it is a candidate there
        assert rejected, name
        assert all(r.finding.found == platform for r in rejected)


@pytest.mark.parametrize(
    ("packages", "platform", "missing"),
    [
        (["torch", "flashinfer-python"], "win_amd64", "flashinfer-python"),  # the example
        (["torch", "fbgemm-gpu"], "win_amd64", "fbgemm-gpu"),
        (["torch", "torchrec"], "win_amd64", "torchrec"),
        (["xformers"], "macosx_arm64", "xformers"),
    ],
)
def test_lock_names_the_package_and_the_system(
    packages: list[str], platform: str, missing: str, capsys: pytest.CaptureFixture[str]
) -> None:
    gpu = ["--cpu"] if platform.startswith("macosx") else ["--gpu", "8.6", "--driver", "580.65.06"]
    code = main(["lock", *packages, *gpu, "--platform", platform, "--offline", "--json", "--format", "requirements",
                 "-o", "requirements.txt"])
    error = json.loads(capsys.readouterr().out)["error"]
    assert code == 1 and error["code"] == "no-solution"
    first = error["findings"][0]
    assert (first["code"], first["package"], first["found"]) == ("os-not-served", missing, platform)


def test_a_served_system_still_locks(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["lock", "torch", "xformers", "--gpu", "8.6", "--driver", "580.65.06", "--platform", "win_amd64",
                 "--offline", "--format", "requirements", "-o", "-"])
    assert code == 0
    assert "xformers==" in capsys.readouterr().out


def _with_os(change: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(RAW)
    data["packages"]["os"] = {**data["packages"]["os"], **change}
    return data


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"torch": ["beos"]}, "packages.os.torch"),
        ({"torch": []}, "packages.os.torch"),
        ({"numpy": ["linux"]}, "packages.os.numpy"),
    ],
)
def test_db_check_refuses_a_bad_os_entry(change: dict[str, Any], path: str) -> None:
    with pytest.raises(InvalidCompatData) as info:
        CompatDB.from_dict(_with_os(change))
    assert any(p == path for p, _ in info.value.problems)


def test_db_check_wants_an_entry_for_every_table() -> None:
    data = copy.deepcopy(RAW)
    del data["packages"]["os"]["torchaudio"]
    with pytest.raises(InvalidCompatData) as info:
        CompatDB.from_dict(data)
    assert any(p == "packages.os.torchaudio" for p, _ in info.value.problems)
