"""GPUs older than every build (Kepler, Fermi): known by name, and the answer says why nothing runs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from packaging.specifiers import SpecifierSet

from cudaresolve.cli import main
from cudaresolve.core.archs import Coverage, coverage
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.resolve.catalog import Need
from cudaresolve.resolve.oldgpu import too_old
from cudaresolve.target.build import resolve_gpu
from cudaresolve.target.model import Target

if TYPE_CHECKING:
    from pathlib import Path

    from cudaresolve.text.findings import Finding

DB = load_compat()


def _target(gpu: str, driver: str | None = None, platform: str = "linux_x86_64") -> Target:
    return Target(
        gpus=(resolve_gpu(gpu, DB),),
        driver=parse_driver(driver) if driver else None,
        python="3.11",
        platform=platform,
    )


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--offline", "--json"])
    return code, json.loads(capsys.readouterr().out)


def _runs(db: CompatDB, name: str, version: str, cc: Any) -> bool:
    return any(
        coverage(b.archs, cc) is not Coverage.NONE
        for r in db.packages(name)
        if str(r.version) == version
        for b in r.builds
        if b.variant != "cpu"
    )


def _brute_force(db: CompatDB, need: Need, target: Target, finding: Finding) -> None:
    """What the finding says holds over every build: none that fits the request runs on the GPU,
    each carries only newer code, the release it names is the newest whose builds do run there."""
    gpu = target.gpus[0]
    fitting = [
        b
        for r in db.packages(need.name)
        if need.specifier.contains(r.version, prereleases=True)
        for b in r.builds
        if b.variant != "cpu"
    ]
    assert fitting
    assert all(coverage(b.archs, gpu.cc) is Coverage.NONE for b in fitting)
    assert all(a.cc > gpu.cc for b in fitting for a in b.archs)
    assert finding.required == min(a.cc for b in fitting for a in b.archs).sm
    carrying = [str(r.version) for r in db.packages(need.name) if _runs(db, need.name, str(r.version), gpu.cc)]
    words = finding.message
    if carrying:
        assert f"the last {need.name} release with code for {gpu.cc.sm} is {carrying[0]} " in words
    else:
        assert f"no {need.name} release in the database has code for {gpu.cc.sm}" in words


@pytest.mark.parametrize(
    ("gpu", "package", "spec"),
    [
        ("Quadro K6000", "torch", ""),  # sm_35: no build in the database carries it
        ("GeForce GTX 680", "torch", ""),  # sm_30
        ("Tesla K20Xm", "torchvision", ">=0.16"),  # 0.15.x's cu117 PyPI builds still carry sm_35
        ("GTX 480", "fbgemm-gpu", ""),  # Fermi
        ("Tesla K80", "torch", "==2.8.0"),  # sm_37: carried up to torch 2.7.1 (cu118), not by 2.8.0
        ("Tesla K80", "xformers", ""),
        ("K40", "torch", ""),
        ("GTX 780", "torch", ">=2.5"),
    ],
)
def test_the_finding_agrees_with_every_build(gpu: str, package: str, spec: str) -> None:
    target = _target(gpu, "470.82.01")
    need = Need(name=package, specifier=SpecifierSet(spec))
    finding = too_old(DB, target, need)
    assert finding is not None and finding.code == "gpu-too-old"
    _brute_force(DB, need, target, finding)
    branch = 390 if target.gpus[0].cc.major == 2 else 470  # Fermi's and Kepler's [[driver-gpu]] rows
    assert f"the R{branch} driver branch is the last that drives this GPU" in finding.message


@pytest.mark.parametrize(
    ("gpu", "package", "spec"),
    [
        ("Tesla K80", "torch", ""),  # torch 2.7.1 cu118 still carries sm_37: a lock, not a finding
        ("Tesla K80", "torch", "<2.8"),
        ("Tesla K20Xm", "torchvision", ""),  # torchvision 0.15.2 (cu117) carries sm_35
        ("GTX 1080 Ti", "torch", ""),
        ("RTX 5090", "torch", "==2.5.1"),  # too new for 2.5.1, not too old
        ("Jetson Nano", "torch", ""),
    ],
)
def test_no_finding_when_a_build_runs_or_the_gpu_is_newer(gpu: str, package: str, spec: str) -> None:
    assert too_old(DB, _target(gpu), Need(name=package, specifier=SpecifierSet(spec))) is None


def test_cpu_targets_and_cpu_only_packages_get_none() -> None:
    assert too_old(DB, Target(python="3.11", platform="linux_x86_64"), Need(name="torch")) is None
    assert too_old(DB, _target("GTX 680"), Need(name="numpy")) is None


def test_lock_names_the_age_first_and_nothing_else_about_that_package(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = str(tmp_path / "pylock.toml")
    code, data = _json(capsys, "lock", "torch", "--gpu", "Quadro K5200", "--driver", "470.82.01", "-o", out)
    assert code == 1
    findings = data["error"]["findings"]
    assert [f["code"] for f in findings] == ["gpu-too-old"]
    assert findings[0]["message"].startswith("Quadro K5200 (sm_35, compute capability 3.5) is older than every torch")
    assert data["error"]["message"].endswith(findings[0]["message"])


def test_a_driver_past_the_gpus_last_branch_is_said_after_the_age(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = str(tmp_path / "pylock.toml")
    code, data = _json(capsys, "lock", "torch", "--gpu", "GTX 770", "--driver", "550.54.15", "-o", out)
    assert code == 1
    assert [f["code"] for f in data["error"]["findings"]] == ["gpu-too-old", "driver-unsupported-gpu"]


def test_why_not_on_an_old_gpu_offers_the_last_release_not_a_build_its_cuda_cannot_make(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, data = _json(capsys, "why-not", "torch==2.6.0", "--gpu", "Tesla K80", "--driver", "470.82.01")
    assert code == 0 and data["possible"] is True  # 2.6.0 cu118 carries sm_37
    code, data = _json(capsys, "why-not", "torch==2.8.0", "--gpu", "Tesla K80", "--driver", "470.82.01")
    assert data["possible"] is False
    codes = [r["code"] for r in data["reasons"]]  # the GPU's age first; then the pin's other reasons (why-not's
    assert codes[0] == "gpu-too-old" and set(codes[1:]) == {"driver-too-old"}, codes  # every reason): R470 < CUDA 12
    specs = [a["spec"] for a in data["alternatives"]]
    assert any(s.startswith("torch") and "2.7.1" in s for s in specs), specs
    # 2.8.0 is built with CUDA 12.6 and newer, whose nvcc has no sm_37 ([[cuda]] nvcc-sm): no source build either
    assert not any(s.startswith("TORCH_CUDA_ARCH_LIST") for s in specs), specs


def test_the_k80_locks_the_last_release_that_carries_sm_37(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["lock", "torch", "--gpu", "Tesla K80", "--driver", "470.82.01", "--offline",
                 "--format", "requirements", "-o", "-"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "torch==2.7.1+cu118" in out


@pytest.mark.parametrize("platform", ["linux_x86_64", "win_amd64"])
def test_the_age_finding_names_the_last_branch_on_windows_too(
    capsys: pytest.CaptureFixture[str], platform: str
) -> None:
    """Found in review: after a058ad4 refused a K80 on a Windows driver past R470, the gpu-too-old finding still said
    "current drivers still drive this GPU" there, because it read the last branch on Linux alone."""
    _, data = _json(capsys, "why-not", "torch>=2.8", "--gpu", "Tesla K80", "--driver", "472.50",
                       "--platform", platform, "--python-version", "3.11")  # fmt: skip
    (age,) = [r for r in data["reasons"] if r["code"] == "gpu-too-old"]
    assert "the R470 driver branch is the last that drives this GPU" in age["message"], age["message"]
