"""The PyTorch index's own wheels' glibc floors honoured offline, and PyPI's non-Linux wheels modelled.

Class 1 of issue 25 on Linux: a target with an old glibc (``--platform manylinux_2_17_x86_64``) must not
get a PyTorch-index build whose wheel needs manylinux 2.28, offline as online. Class 4: a platform PyPI
has a wheel for (a release's ``platforms``) has a PyPI build of the release, so "has no wheel for P on
PyPI" is never said of it (``lock torch --cpu --platform win_amd64 --gpu-source pypi``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from packaging.version import Version

from cudaresolve.cli import main
from cudaresolve.db.database import CompatDB, load_compat, shipped_path
from cudaresolve.db.index_floors import index_floor
from cudaresolve.errors import InvalidCompatData
from cudaresolve.resolve.catalog import build_catalog
from cudaresolve.resolve.sources import sourced_builds
from cudaresolve.target.build import TargetOptions, build_target

if TYPE_CHECKING:
    from pathlib import Path

DB = load_compat()
TORCH_FAMILY = ("torch", "torchvision", "torchaudio")


def _v(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def test_the_index_floor_rows_are_read() -> None:
    rows = DB.package_facts.index_floors
    assert index_floor(rows, "torch", Version("2.14.1"), "cu126", "linux_x86_64") == "2.28"
    assert index_floor(rows, "torch", Version("2.6.0"), "cu126", "linux_x86_64") == "2.28"
    assert index_floor(rows, "torch", Version("2.6.0"), "cu124", "linux_x86_64") is None
    assert index_floor(rows, "torch", Version("2.6.0"), "cpu", "linux_aarch64") == "2.28"
    assert index_floor(rows, "torch", Version("2.5.1"), "cu124", "linux_x86_64") is None
    assert index_floor(rows, "torch", Version("2.14.1"), "cu126", "win_amd64") is None


@pytest.mark.parametrize(
    ("bad", "path"),
    [
        ({"torch": [{"versions": ">=2.7", "platforms": ["win_amd64"], "glibc": "2.28"}]}, "[0].platforms"),
        ({"torch": [{"versions": "2.7", "platforms": ["linux_x86_64"], "glibc": "2.28"}]}, "[0].versions"),
        ({"torch": [{"versions": ">=2.7", "platforms": ["linux_x86_64"], "glibc": "new"}]}, "[0].glibc"),
        ({"torch": [{"versions": ">=2.7", "glibc": "2.28"}]}, "[0]"),
        ({"numpy": [{"versions": ">=1", "platforms": ["linux_x86_64"], "glibc": "2.28"}]}, ""),
    ],
)
def test_bad_index_floor_rows_are_coded_problems(tiny_db_dict: dict[str, Any], bad: dict[str, Any],
                                                 path: str) -> None:
    tiny_db_dict["packages"] = {"tables": ["torch"], "anchor": "torch", "source": "s", "index-floors": bad,
                                "index-floors-source": "s"}
    with pytest.raises(InvalidCompatData) as info:
        CompatDB.from_dict(tiny_db_dict)
    paths = [p for p, _ in info.value.problems]
    assert f"packages.index-floors.{next(iter(bad))}{path}" in paths, paths


@pytest.mark.parametrize("glibc", ["2.17", "2.27", "2.28"])
@pytest.mark.parametrize("platform", ["linux_x86_64", "linux_aarch64"])
@pytest.mark.parametrize("source", ["auto", "pytorch"])
def test_index_candidates_are_exactly_the_builds_whose_floor_the_target_meets(
    glibc: str, platform: str, source: str
) -> None:
    options = TargetOptions(python="3.12", platform=platform, gpus=("8.6",), driver="580.65.06", glibc=glibc)
    target = build_target(options, DB)
    assert target.glibc == glibc
    catalog = build_catalog(DB, target, gpu_source=source)
    seen = 0
    for name in TORCH_FAMILY:
        for candidate in catalog.for_name(name):
            if candidate.channel != "index" or candidate.build is None or candidate.release is None:
                continue
            seen += 1
            floor = index_floor(DB.package_facts.index_floors, name, candidate.release.version,
                                candidate.build.variant, platform)
            assert floor is None or _v(floor) <= _v(glibc), (name, str(candidate.version), floor)
        for rejection in catalog.rejected(name):  # every index build refused for its floor really is above it
            if rejection.finding.code == "platform-too-old":
                assert rejection.finding.found == f"glibc {glibc}"
                assert _v((rejection.finding.required or "").split()[-1]) > _v(glibc)
    if platform == "linux_x86_64":
        assert seen, "the index builds that meet the floor stay candidates"


@pytest.mark.parametrize(
    ("platform", "below"),
    [("manylinux_2_17_x86_64", "2.7"), ("manylinux_2_27_x86_64", "2.7"), ("manylinux_2_28_x86_64", None)],
)
def test_an_offline_lock_for_an_old_glibc_takes_no_manylinux_2_28_index_wheel(
    platform: str, below: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["lock", "torch", "torchvision", "--gpu", "RTX 3090", "--driver", "550.54.14", "--platform",
                 platform, "--python-version", "3.11", "--gpu-source", "pytorch", "--offline", "--no-cache",
                 "--format", "requirements", "-o", "-"])
    out = capsys.readouterr().out
    assert code == 0, out
    pins = dict(line.split("==") for line in out.splitlines() if line.startswith("torch"))
    torch = Version(pins["torch"])
    if below is None:
        assert torch.release >= (2, 7), out  # glibc 2.28 takes the newest index build
    else:
        assert torch.release < Version(below).release, out
        assert not (torch.release[:2] == (2, 6) and torch.local == "cu126"), out


def test_every_platform_pypi_has_a_wheel_for_has_a_pypi_build() -> None:
    for name in TORCH_FAMILY:
        for release in DB.packages(name):
            for platform in release.platforms:
                kept = sourced_builds(DB, release, "pypi", platform)
                assert any(platform in b.platforms for b in kept), (name, str(release.version), platform)


@pytest.mark.parametrize("platform", ["win_amd64", "macosx_arm64"])
@pytest.mark.parametrize("source", ["pypi", "auto"])
def test_a_cpu_lock_from_pypi_finds_pypis_cpu_wheels(platform: str, source: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["lock", "torch", "torchvision", "torchaudio", "--cpu", "--platform", platform, "--python-version",
                 "3.12", "--gpu-source", source, "--offline", "--no-cache", "--format", "requirements", "-o", "-"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "no-wheel-for-platform" not in captured.err
    assert f"--index-url {DB.default_index}" in captured.out
    assert all("+" not in line for line in captured.out.splitlines() if line.startswith("torch"))


def _without_vllms_aarch64_build(folder: Path) -> Path:
    """The shipped database less vllm 0.25.1's linux_aarch64 build: a release whose `platforms` names a platform PyPI
    has a wheel for, with no build that describes it. Every shipped row describes its wheels now (the last aarch64
    gaps, vllm 0.10.2-0.25.1 and the SGLang kernels, were filled from their wheels), so the case is made here."""
    text = shipped_path().read_text(encoding="utf-8")
    start = text.index('[[vllm]]\nversion = "0.25.1"\n')
    end = text.index("\n]\n", start)
    block = text[start:end]
    (line,) = [ln for ln in block.splitlines(keepends=True) if 'platforms = ["linux_aarch64"]' in ln]
    path = folder / "compat.toml"
    path.write_text(text[:start] + block.replace(line, "") + text[end:], encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def undescribed_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _without_vllms_aarch64_build(tmp_path_factory.mktemp("compat"))


def _undescribed(db: CompatDB, options: TargetOptions, platform: str) -> int:
    """How many releases are rejected for a wheel on PyPI no build describes, asserting that exactly those (and no
    release without a wheel there) are said to be so."""
    catalog = build_catalog(db, build_target(options, db))
    undescribed = 0
    for name in db.package_names:
        releases = {str(r.version): r for r in db.packages(name)}
        for rejection in catalog.rejected(name):
            if rejection.finding.code != "no-wheel-for-platform":
                continue
            release = releases[str(rejection.version).split("+")[0]]
            builds = (*release.builds, *release.withdrawn)
            on_pypi = platform in release.platforms and not any(platform in b.platforms for b in builds)
            key = rejection.finding.text.key
            assert (key == "resolve.wheel-not-described") == on_pypi, (name, str(rejection.version), key)
            undescribed += on_pypi
    return undescribed


@pytest.mark.parametrize(("platform", "cpu"), [("linux_aarch64", False), ("win_amd64", False), ("win_amd64", True),
                                               ("linux_aarch64", True)])
def test_a_pypi_wheel_no_build_describes_is_never_said_to_be_absent(platform: str, cpu: bool,
                                                                    undescribed_path: Path) -> None:
    options = TargetOptions(cpu=cpu, python="3.12", platform=platform,
                            gpus=() if cpu else ("9.0",), driver=None if cpu else "580.65.06")
    _undescribed(DB, options, platform)
    undescribed = _undescribed(load_compat(undescribed_path), options, platform)
    if (platform, cpu) == ("linux_aarch64", False):
        assert undescribed, "vllm 0.25.1's aarch64 wheel is on PyPI but not described there: the case must be met"


def test_the_cli_says_the_aarch64_wheel_is_not_described(capsys: pytest.CaptureFixture[str],
                                                          undescribed_path: Path) -> None:
    # vllm 0.25.1's aarch64 wheel is one that database lists no build for (the shipped one does: it locks)
    args = ["lock", "vllm==0.25.1", "--gpu", "GH200", "--driver", "580.65.06", "--platform", "linux_aarch64",
            "--offline", "--no-cache", "--format", "requirements", "-o", "-"]
    code = main([*args, "--compat", str(undescribed_path)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1
    assert "has no wheel for linux_aarch64" not in err
    assert f"has a wheel for linux_aarch64 on {DB.default_index}, but the database does not describe it" in err
    assert main(args) == 0
    assert "vllm==0.25.1" in capsys.readouterr().out
