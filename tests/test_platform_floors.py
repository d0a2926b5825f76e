"""Platform floors (the macOS or glibc a PyPI wheel needs) honoured offline, and "has no wheel for" said truly."""

from __future__ import annotations

import json
from typing import Any

import pytest
from packaging.version import Version

from cudaresolve.cli import main
from cudaresolve.db.database import load_compat
from cudaresolve.resolve.catalog import build_catalog
from cudaresolve.target.build import TargetOptions, build_target
from cudaresolve.target.model import Target

DB = load_compat()
GPU_PACKAGES = ("torch", "torchvision", "torchaudio", "xformers", "fbgemm-gpu")


def _v(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def test_floors_are_read_for_every_pypi_release_and_per_python_where_they_differ() -> None:
    torch = {str(r.version): r for r in DB.packages("torch")}
    assert torch["2.15.0"].floor("macosx_arm64", "3.12") == "14.0"
    assert torch["2.11.0"].floor("macosx_arm64", "3.12") == "11.0"
    assert torch["2.10.0"].floor("macosx_arm64", "3.12") == "11.0"
    assert torch["2.10.0"].floor("macosx_arm64", "3.14") == "14.0"  # its cp314 wheel alone needs macOS 14
    assert torch["2.15.0"].floor("linux_aarch64", "3.12") == "2.28"
    assert torch["2.15.0"].floor("win_amd64", "3.12") is None
    for name in GPU_PACKAGES:
        assert all(r.floors for r in DB.packages(name)), name


@pytest.mark.parametrize("python", ["3.10", "3.12", "3.14"])
@pytest.mark.parametrize(
    ("platform", "version"),
    [
        ("macosx_arm64", "11.0"),
        ("macosx_arm64", "12.0"),
        ("macosx_arm64", "13.0"),
        ("macosx_arm64", "14.0"),
        ("macosx_x86_64", "10.12"),
        ("macosx_x86_64", "10.15"),
        ("linux_aarch64", "2.17"),
        ("linux_aarch64", "2.28"),
        ("linux_x86_64", "2.17"),
    ],
)
def test_pypi_candidates_are_exactly_the_builds_whose_floor_the_target_meets(
    platform: str, version: str, python: str
) -> None:
    mac = platform.startswith("macosx")
    target = Target(platform=platform, python=python, source="flags", macos=version if mac else None,
                    glibc=None if mac else version)
    catalog = build_catalog(DB, target)
    for name in ("torch", "torchvision", "torchaudio"):
        got = {str(c.release.version) for c in catalog.for_name(name) if c.channel == "pypi" and c.release}
        brute = set()
        for release in DB.packages(name):
            floor = release.floor(platform, python)
            pypi = [
                b for b in release.builds
                if b.channel == "pypi" and platform in b.platforms and b.variant == "cpu"
            ]
            if pypi and python in release.python and (floor is None or _v(floor) <= _v(version)):
                brute.add(str(release.version))
        assert got == brute, (name, sorted(got ^ brute))
        for rejection in catalog.rejected(name):
            if rejection.finding.code == "platform-too-old":
                assert rejection.finding.found is not None and rejection.finding.found.endswith(version)


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        ("macosx_13_0_arm64", {"torch": "2.11.0"}),  # torch 2.12+ wheels need macOS 14
        ("macosx_14_0_arm64", {"torch": "2.15.0"}),
        ("macosx_10_12_x86_64", {"torch": "2.0.1", "torchvision": "0.15.2"}),  # torchvision 0.16+: macOS 10.13
        ("macosx_10_15_x86_64", {"torch": "2.2.2", "torchvision": "0.17.2"}),
    ],
)
def test_an_offline_lock_honours_the_macos_the_target_names(
    platform: str, expected: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["lock", *expected, "--cpu", "--platform", platform, "--python-version", "3.11", "--offline",
                 "--format", "requirements", "-o", "-", "--no-cache"])
    out = capsys.readouterr().out
    assert code == 0, out
    for name, version in expected.items():
        assert f"{name}=={version}" in out, out


@pytest.mark.parametrize(
    ("platform", "cpu"),
    [("macosx_arm64", True), ("macosx_x86_64", True), ("win_amd64", False), ("linux_aarch64", False),
     ("linux_x86_64", False), ("linux_aarch64", True), ("win_amd64", True)],
)
def test_every_no_wheel_for_platform_statement_is_true_of_the_release(platform: str, cpu: bool) -> None:
    options = TargetOptions(cpu=cpu, python="3.12", platform=platform,
                            gpus=() if cpu else ("8.6",), driver=None if cpu else "580.65.06")
    target = build_target(options, DB)
    catalog = build_catalog(DB, target)
    for name in DB.package_names:
        releases = {str(r.version): r for r in DB.packages(name)}
        for rejection in catalog.rejected(name):
            finding = rejection.finding
            if finding.code != "no-wheel-for-platform":
                continue
            release = releases[str(rejection.version).split("+")[0]]
            kind = [b for b in release.builds if (b.variant == "cpu") == cpu]
            served = {p for b in kind for p in b.platforms} or set(release.platforms)
            assert platform not in served and "any" not in served, (name, str(rejection.version))
            assert set((finding.required or "").split(", ")) <= served


@pytest.mark.parametrize("source", ["pytorch", "pypi"])
@pytest.mark.parametrize(
    ("platform", "cpu"),
    [("macosx_arm64", True), ("macosx_x86_64", True), ("win_amd64", False), ("linux_aarch64", False),
     ("linux_x86_64", False), ("linux_aarch64", True), ("win_amd64", True)],
)
def test_under_a_gpu_source_no_wheel_for_platform_is_true_of_the_index_it_names(
    platform: str, cpu: bool, source: str
) -> None:
    from cudaresolve.resolve.sources import sourced_builds

    options = TargetOptions(cpu=cpu, python="3.12", platform=platform,
                            gpus=() if cpu else ("8.6",), driver=None if cpu else "580.65.06")
    target = build_target(options, DB)
    catalog = build_catalog(DB, target, gpu_source=source)
    named = 0
    for name in DB.package_names:
        releases = {str(r.version): r for r in DB.packages(name)}
        for rejection in catalog.rejected(name):
            finding = rejection.finding
            if finding.code != "no-wheel-for-platform":
                continue
            release = releases[str(rejection.version).split("+")[0]]

            def serves(builds: object, p: str = platform) -> bool:
                return any((b.variant == "cpu") == cpu and (p in b.platforms or "any" in b.platforms)
                           for b in builds)  # type: ignore[attr-defined]

            kept = sourced_builds(DB, release, source, platform)
            assert not serves(kept), (name, str(rejection.version))  # the index it is said of has none
            if finding.text.key.endswith("-on-index"):  # it names the index, and the other one really has one
                named += 1
                assert finding.text.get("index") == (DB.pytorch_index_root if source == "pytorch"
                                                     else DB.default_index)
                assert serves(release.builds), (name, str(rejection.version))
                for other in (finding.required or "").split(", "):
                    assert serves(sourced_builds(DB, release, source, other), other), (name, other)
            else:  # said of every index: no build of the kind anywhere serves the platform
                assert not serves(release.builds), (name, str(rejection.version), finding.message)
    if (platform, cpu, source) in {("macosx_arm64", True, "pytorch"), ("win_amd64", False, "pypi")}:
        assert named, "the cases the issue names must name the index"


def test_the_issue_example_names_the_index(capsys: pytest.CaptureFixture[str]) -> None:
    # the issue's example (macOS under --gpu-source pytorch), and another of its class: Windows under pypi
    for argv, index, other in (
        (["--cpu", "--platform", "macosx_14_0_arm64", "--gpu-source", "pytorch"], DB.pytorch_index_root,
         DB.default_index),
        (["--gpu", "RTX 4090", "--driver", "580.65.06", "--platform", "win_amd64", "--gpu-source", "pypi"],
         DB.default_index, DB.pytorch_index_root),
    ):
        code = main(["lock", "torch==2.15.0", *argv, "--offline", "--no-cache", "--format", "requirements",
                     "-o", "-"])
        err = capsys.readouterr().err
        assert code == 1
        first = " ".join(err.split())
        assert f"on {index} (--gpu-source" in first and f"{other} has one for" in first, first


def test_a_floor_refusal_names_the_platform_that_would_meet_it(capsys: pytest.CaptureFixture[str]) -> None:
    """``platform-too-old`` names a ``--platform`` with the floor the wheel needs, and that target takes it."""
    code = main(["lock", "torch==2.15.0", "--cpu", "--platform", "macosx_13_0_arm64", "--python-version", "3.11",
                 "--offline", "--json", "--no-cache"])
    findings = json.loads(capsys.readouterr().out)["error"]["findings"]
    assert code == 1
    message = next(f["message"] for f in findings if f["code"] == "platform-too-old")
    named = message.rpartition("--platform ")[2].rstrip(")")
    assert named == "macosx_14_0_arm64"
    code = main(["lock", "torch==2.15.0", "--cpu", "--platform", named, "--python-version", "3.11", "--offline",
                 "--format", "requirements", "-o", "-", "--no-cache"])
    assert code == 0 and "torch==2.15.0" in capsys.readouterr().out


def _lock_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["lock", *argv, "--python-version", "3.12", "--offline", "--json", "--no-cache"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("request_", "target"),
    [("vllm", ("--gpu", "RTX 5090", "--driver", "575.51.03")), ("torch", ("--cpu", "--platform", "macosx_arm64"))],
)
def test_newer_releases_passed_over_for_the_assumed_system_are_named(
    capsys: pytest.CaptureFixture[str], request_: str, target: tuple[str, ...]
) -> None:
    """A declared target's glibc or macOS is assumed: the newer releases that need more are named, with the
    --platform that takes them, which then picks a newer release; a --platform naming the system says nothing."""
    code, result = _lock_json(capsys, request_, *target)
    assert code == 0, result
    notices = [w["message"] for w in result["warnings"] if w["code"] == "assumed-system"]
    assert len(notices) == 1, result
    chosen = next(p["version"] for p in result["packages"] if p["name"] == request_)
    assert f"newer than the {chosen} chosen" in notices[0]
    named = notices[0].rpartition("--platform ")[2].split()[0]
    code, wider = _lock_json(capsys, request_, *[a for a in target if a not in ("--platform", "macosx_arm64")],
                             "--platform", named)
    assert code == 0, wider
    assert not [w for w in wider["warnings"] if w["code"] == "assumed-system"]
    newer = next(p["version"] for p in wider["packages"] if p["name"] == request_)
    assert Version(newer) > Version(chosen)


def test_a_python_no_release_serves_is_named_before_a_system_some_need(capsys: pytest.CaptureFixture[str]) -> None:
    """vllm on Python 3.15: its newest releases also need a newer glibc than assumed, but no --platform would make
    any of them install, so the Python finding leads."""
    code = main(["lock", "vllm", "--gpu", "H100", "--driver", "580.95.05", "--python-version", "3.15", "--offline",
                 "--json", "--no-cache"])
    result = json.loads(capsys.readouterr().out)
    assert code == 1
    codes = [f["code"] for f in result["error"]["findings"]]
    assert codes[0] in ("no-wheel-for-python", "requires-python"), codes
