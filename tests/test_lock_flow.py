"""The lock and install flows as library calls: a ``LockRequest`` value in, results out, no argparse."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from cudaresolve.errors import InvalidInput
from cudaresolve.lock.flow import LockRequest, lock, prepare, project_mirrors
from cudaresolve.lock.install import InstallRequest, install, mirrored
from cudaresolve.lock.model import Lock
from cudaresolve.resolve.model import LockedPackage
from cudaresolve.target.build import TargetOptions

if TYPE_CHECKING:
    from pathlib import Path

    from cudaresolve.lock.pip import PipCommand

H100 = TargetOptions(gpus=("H100",), driver="550.54.15", python="3.11", platform="linux_x86_64")
PYTORCH = "https://download.pytorch.org/whl"
MIRROR = "https://mirror.example.org/pytorch/whl"


def request(tmp_path: Path, *requirements: str, mirrors: tuple[str, ...] = ()) -> LockRequest:
    return LockRequest(
        requirements=requirements, target=H100, offline=True, mirrors=mirrors, project=tmp_path / "pyproject.toml"
    )


def test_no_requirements_anywhere_is_invalid_input_before_the_target_is_built(tmp_path: Path) -> None:
    bad_target = LockRequest(target=TargetOptions(gpus=("no such gpu",)), project=tmp_path / "pyproject.toml")
    with pytest.raises(InvalidInput) as info:
        prepare(bad_target)
    assert info.value.message == "no requirements given and none in ./pyproject.toml"


def test_requirements_and_mirrors_come_from_the_project_when_not_given(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.cudaresolve]\nrequirements = ["torch"]\nindex-mirror = "{MIRROR}"\n', encoding="utf-8"
    )
    inputs = prepare(request(tmp_path))
    assert inputs.requirements == ("torch",)
    assert dict(inputs.mirrors) == {PYTORCH: MIRROR}
    assert [str(g.cc) for g in inputs.target.gpus] == ["9.0"]
    assert str(inputs.target.driver) == "550.54.15"


def test_mirror_flags_win_over_the_project(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[tool.cudaresolve]\nindex-mirror = "{MIRROR}"\n', encoding="utf-8")
    flags = request(tmp_path, "torch", mirrors=(f"{PYTORCH}=https://other.example.org/whl",))
    assert project_mirrors(flags) == {PYTORCH: "https://other.example.org/whl"}


def test_offline_lock_without_hashes_falls_back_to_requirements(tmp_path: Path) -> None:
    result = lock(request(tmp_path, "torch"), output=str(tmp_path / "pylock.toml"), fmt="pylock")
    assert (result.format, result.path) == ("requirements", str(tmp_path / "requirements.txt"))
    assert "pylock-needs-hashes" in [w.code for w in result.solution.warnings]
    assert (tmp_path / "requirements.txt").is_file()
    assert not (tmp_path / "pylock.toml").exists()


def test_mirrored_rewrites_every_index_once() -> None:
    locked = Lock(
        packages=(LockedPackage(name="torch", version="2.7.1+cu126", index=f"{PYTORCH}/cu126"),),
        index_url=f"{PYTORCH}/cu126",
    )
    moved = mirrored(locked, {PYTORCH: MIRROR})
    assert [p.index for p in moved.packages] == [f"{MIRROR}/cu126"]
    assert moved.index_url == f"{MIRROR}/cu126"
    assert mirrored(locked, {}) is locked


def test_dry_run_install_echoes_pip_through_the_mirror_and_asks_for_no_doctor_pass(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(f'[tool.cudaresolve]\nindex-mirror = "{MIRROR}"\n', encoding="utf-8")
    seen: list[PipCommand] = []
    order = InstallRequest(request=request(tmp_path, "torch"), python="/venv/bin/python", dry_run=True)
    result = install(order, echo=seen.append)
    assert (result.returncode, result.check) == (0, None)
    assert seen
    assert all(c.index.startswith(MIRROR) for c in seen)
    assert all(c.argv[0] == "/venv/bin/python" for c in seen)
