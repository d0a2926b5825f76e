"""Targets off Linux x86_64: Arm servers (SBSA) and macOS lock from the builds PyPI really carries.

Every run is ``--offline`` on a declared target, from the shipped data. The expectations are read
from the database (the rows' ``channel = "pypi"`` builds for the platform), never written here,
so a new release row changes what is expected without editing the test.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from packaging.version import Version

from cudaresolve.cli import main
from cudaresolve.core.archs import Coverage, coverage, parse_cc
from cudaresolve.db.database import load_compat

DB = load_compat()

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(tmp_path / "cache"))


def lock(capsys: pytest.CaptureFixture[str], platform: str, *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["lock", *argv, "--offline", "--python-version", "3.12", "--platform", platform, "--json"])
    return code, json.loads(capsys.readouterr().out)


def pypi_builds(kind: str, platform: str) -> dict[Version, Any]:
    """Each release's PyPI build for ``platform``, from the shipped database."""
    found = {}
    for row in load_compat().packages(kind):
        for build in row.builds:
            if build.channel == "pypi" and platform in build.platforms:
                found[row.version] = build
    return found


def torch_of(result: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in result["packages"] if p["name"] == "torch")


@pytest.mark.parametrize(("gpu", "driver"), [("GH200", "595.45.04"), ("GB200", "595.45.04"), ("GB10", "595.45.04")])
def test_arm_server_gpu_locks_the_newest_pypi_cuda_build_that_covers_it(
    capsys: pytest.CaptureFixture[str], gpu: str, driver: str
) -> None:
    code, result = lock(capsys, "linux_aarch64", "torch", "--gpu", gpu, "--driver", driver)
    assert code == 0, result
    cc = parse_cc(result["target"]["gpus"][0]["cc"])
    covering = {
        v: b for v, b in pypi_builds("torch", "linux_aarch64").items()
        if b.variant != "cpu" and coverage(b.archs, cc) is not Coverage.NONE
    }
    newest = max(covering)
    assert torch_of(result)["version"] == str(newest)  # PyPI's file has no local tag
    assert result["variant"] == covering[newest].variant
    assert torch_of(result)["index"] == "https://pypi.org/simple"


def test_arm_server_builds_are_not_the_x86_list(capsys: pytest.CaptureFixture[str]) -> None:
    """The aarch64 wheels carry no sm_75 code: a T4 on an Arm host has no CUDA torch on PyPI."""
    code, result = lock(capsys, "linux_aarch64", "torch", "--gpu", "T4", "--driver", "595.45.04")
    assert code == 1
    codes = {f["code"] for f in result["error"]["findings"]}
    assert "sm-not-covered" in codes
    x86 = main(["lock", "torch", "--gpu", "T4", "--driver", "595.45.04", "--offline", "--python-version", "3.12",
                "--platform", "linux_x86_64", "--json"])
    capsys.readouterr()
    assert x86 == 0


def test_jetson_still_gets_the_jetson_finding(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = lock(capsys, "linux_aarch64", "torch", "--gpu", "Jetson AGX Orin", "--driver", "540.4.0")
    assert code == 1
    assert result["error"]["findings"][0]["code"] == "jetson-not-served"


def test_a_jetson_that_runs_server_builds_gets_them_from_their_cuda_on(capsys: pytest.CaptureFixture[str]) -> None:
    """A Jetson row with ``sbsa-from`` (Thor) takes the Arm server builds of that CUDA and newer whose SASS covers it,
    and a release with only older ones names the CUDA it needs (``jetson-needs-cuda``), not NVIDIA's Jetson page."""
    thor = next(g for g in DB.gpus if g.tegra and g.sbsa_from is not None)
    orin = next(g for g in DB.gpus if g.tegra and g.sbsa_from is None)
    driver = ("--driver", "595.45.04")
    code, result = lock(capsys, "linux_aarch64", "torch", "--gpu", thor.name, *driver)
    assert code == 0, result
    chosen = DB.variant(result["variant"])
    assert chosen is not None and chosen.cuda is not None and chosen.cuda >= thor.sbsa_from
    builds = pypi_builds("torch", "linux_aarch64")
    def serves(variant: str) -> bool:
        cuda = (info := DB.variant(variant)) is not None and info.cuda
        return bool(cuda) and cuda >= thor.sbsa_from

    covering = [v for v, b in builds.items()
                if serves(b.variant) and coverage(b.archs, thor.cc, tegra=True) is not Coverage.NONE]
    assert torch_of(result)["version"] == str(max(covering))
    older = [f"torch=={r.version}+{b.variant}" for r in DB.packages("torch") for b in r.builds
             if "linux_aarch64" in b.platforms and b.channel == "index" and b.variant != "cpu"
             and not serves(b.variant)]
    assert older, "an Arm server build of a CUDA older than Thor's first"
    code, result = lock(capsys, "linux_aarch64", older[-1], "--gpu", thor.name, *driver)
    assert code == 1
    assert "jetson-needs-cuda" in {f["code"] for f in result["error"]["findings"]}
    code, result = lock(capsys, "linux_aarch64", "torch", "--gpu", orin.name, "--driver", "540.4.0")
    assert code == 1 and result["error"]["findings"][0]["code"] == "jetson-not-served"


def test_arm_cpu_target_gets_the_newest_cpu_build(capsys: pytest.CaptureFixture[str]) -> None:
    """PyPI's aarch64 torch is a CPU build up to 2.10 and a CUDA build after it; the PyTorch index's whl/cpu has
    aarch64 CPU wheels of its own (``+cpu``): a CPU target takes the newest CPU build of either, from its index."""
    code, result = lock(capsys, "linux_aarch64", "torch", "--cpu")
    assert code == 0, result
    cpu = {
        Version(f"{row.version}{build.local}"): build
        for row in DB.packages("torch") if "3.12" in row.python
        for build in row.builds if build.variant == "cpu" and "linux_aarch64" in build.platforms
    }
    newest = max(cpu)
    assert Version(torch_of(result)["version"]) == newest
    assert torch_of(result)["index"] == cpu[newest].index_url
    assert any(b.channel == "pypi" for b in cpu.values()), "PyPI's own aarch64 CPU builds (up to 2.10)"


@pytest.mark.parametrize("platform", ["macosx_arm64", "macosx_x86_64"])
def test_macos_locks_pypi_cpu_builds(capsys: pytest.CaptureFixture[str], platform: str) -> None:
    code, alone = lock(capsys, platform, "torch", "--cpu")
    assert code == 0, alone
    # the newest whose wheel installs on the macOS a declared Mac target is assumed to run (13.0)
    assumed = tuple(int(p) for p in (DB.assumed_macos or "0").split("."))
    fitting = [
        v for v in pypi_builds("torch", platform)
        if all(tuple(int(p) for p in (r.floor(platform, "3.12") or "0").split(".")) <= assumed
               for r in DB.packages("torch") if r.version == v)
    ]
    assert Version(torch_of(alone)["version"]) == max(fitting)
    code, trio = lock(capsys, platform, "torch", "torchvision", "torchaudio", "--cpu")
    assert code == 0, trio
    for name in ("torch", "torchvision", "torchaudio"):
        package = next(p for p in trio["packages"] if p["name"] == name)
        assert pypi_builds(name, platform)[Version(package["version"])].variant == "cpu", name
        assert package["index"] == "https://pypi.org/simple"


def test_every_release_with_a_non_x86_platform_has_a_build_for_it() -> None:
    """A row's platforms are PyPI's; each one must be served by some build, or the target fails."""
    for kind in ("torch", "torchvision", "torchaudio"):
        for row in load_compat().packages(kind):
            served = {p for b in row.builds for p in b.platforms}
            assert set(row.platforms) <= served, (kind, str(row.version), set(row.platforms) - served)


def test_arm_server_on_a_cuda12_driver_gets_an_index_sbsa_build_and_is_told_it_is_unverified(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """PyPI's aarch64 CUDA wheels need CUDA 13; a 550 driver is served by the index's SBSA builds."""
    code, result = lock(capsys, "linux_aarch64", "torch", "--gpu", "GH200", "--driver", "550.54.15")
    assert code == 0, result
    version, _, variant = torch_of(result)["version"].partition("+")
    row = next(r for r in load_compat().packages("torch") if str(r.version) == version)
    build = next(
        b for b in row.builds if b.variant == variant and b.channel == "index" and "linux_aarch64" in b.platforms
    )
    assert "linux_x86_64" not in build.platforms  # the aarch64 list, not x86_64's
    assert result["index_url"] == f"https://download.pytorch.org/whl/{variant}"
    assert "unverified-build" in {w["code"] for w in result["warnings"]}


def test_a_release_whose_wheel_there_is_of_the_other_kind_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    """A GPU target on macOS: torch's macOS wheel is a CPU build, so the release has no CUDA wheel there, not no
    wheel at all; the platforms named are those its CUDA builds serve."""
    code, result = lock(capsys, "macosx_arm64", "torch", "--gpu", "RTX 4090", "--driver", "580.65.06")
    assert code == 1
    finding = result["error"]["findings"][0]
    assert finding["code"] == "no-wheel-for-platform"
    release = next(r for r in DB.packages("torch") if f"torch {r.version} " in finding["message"])
    cuda = dict.fromkeys(p for b in release.builds if b.variant != "cpu" for p in b.platforms)
    assert any("macosx_arm64" in b.platforms for b in release.builds if b.variant == "cpu")
    said, _, listed = finding["message"].partition("; its CUDA builds are published for ")
    assert said == f"torch {release.version} has no CUDA wheel for macosx_arm64, only a CPU build"
    assert sorted(listed.split(", ")) == sorted(cuda)
