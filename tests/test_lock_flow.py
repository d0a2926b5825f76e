"""The lock and install flows as library calls: a ``LockRequest`` value in, results out, no argparse."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pytest

from cudaresolve.errors import IndexUnavailable, InvalidInput, NoSolution
from cudaresolve.install.install import InstallRequest, install, mirrored
from cudaresolve.lock.flow import lock, prepare
from cudaresolve.lock.model import Lock
from cudaresolve.lock.request import LockRequest, project_mirrors
from cudaresolve.resolve.model import LockedPackage
from cudaresolve.target.build import TargetOptions

if TYPE_CHECKING:
    from pathlib import Path

    from cudaresolve.install.pip import PipCommand

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


def test_offline_pylock_without_o_writes_nothing_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "requirements.txt").write_text("flask==1.0\n", encoding="utf-8")
    result = lock(request(tmp_path, "torch"), output=None, fmt="pylock")
    assert (result.path, result.complete, result.to_dict()["complete"]) == (None, False, False)
    assert "no-lock-written" in [w.code for w in result.solution.warnings]
    assert [p.name for p in result.solution.packages] == ["torch"]
    assert sorted(f.name for f in tmp_path.iterdir()) == ["requirements.txt"]
    assert (tmp_path / "requirements.txt").read_text(encoding="utf-8") == "flask==1.0\n"


@pytest.mark.parametrize("name", ["pylock.toml", "other.toml", "requirements.txt"])
def test_offline_pylock_with_o_is_an_error_and_touches_no_file(tmp_path: Path, name: str) -> None:
    (tmp_path / "requirements.txt").write_text("flask==1.0\n", encoding="utf-8")
    with pytest.raises(InvalidInput) as info:
        lock(request(tmp_path, "torch"), output=str(tmp_path / name), fmt="pylock")
    assert "--format requirements" in str(info.value.hint)
    assert sorted(f.name for f in tmp_path.iterdir()) == ["requirements.txt"]
    assert (tmp_path / "requirements.txt").read_text(encoding="utf-8") == "flask==1.0\n"


def test_an_index_that_does_not_answer_online_is_the_networks_error_not_the_users(tmp_path: Path) -> None:
    """Found comparing with uv on real PyPI: with the PyTorch index down, ``-o pylock.toml`` was refused as
    ``invalid-input`` (exit 1) though the input was fine; it is ``index-unavailable`` (exit 2), as the README says
    of the network. Offline, a cache that lacks the pages stays the input's problem (the test above)."""
    dead = "http://127.0.0.1:9"  # the discard port: nothing listens, the connection is refused at once
    down = LockRequest(requirements=("torch",), target=H100, project=tmp_path / "pyproject.toml",
                       mirrors=(f"{PYTORCH}={dead}/whl", f"https://pypi.org/simple={dead}/simple"))  # fmt: skip
    with pytest.raises(IndexUnavailable) as info:
        lock(down, output=str(tmp_path / "pylock.toml"), fmt="pylock")
    assert info.value.code == "index-unavailable" and info.value.exit_code == 2
    assert "cannot write" in info.value.message and not (tmp_path / "pylock.toml").exists()


def test_an_index_answer_that_cannot_be_used_online_is_named_as_such(tmp_path: Path) -> None:
    """Found by the hostile-index hunt: a page over the size cap, invalid JSON or a redirect loop, on an online run,
    was told as "foo is not in the compatibility database ... (hint: run once online)"."""
    from hostile.cases_index import HostileServer, answer

    server = HostileServer(answer('{"meta": {"api-version": "1.0"}, "files": [', media="application/json"),
                           lifetime=30.0)  # fmt: skip
    try:
        down = LockRequest(requirements=("leftpad",), target=H100, project=tmp_path / "pyproject.toml",
                           mirrors=(f"https://pypi.org/simple={server.base}/simple",))  # fmt: skip
        with pytest.raises(NoSolution) as info:
            lock(down, output=str(tmp_path / "pylock.toml"), fmt="pylock")
    finally:
        server.stop()
    assert "cannot be used" in info.value.message and "compatibility database" not in info.value.message
    assert "run once online" not in str(info.value.hint)


def test_requirements_format_offline_says_it_is_not_complete(tmp_path: Path) -> None:
    out = tmp_path / "pins.txt"
    result = lock(request(tmp_path, "torch"), output=str(out), fmt="requirements")
    assert (result.path, result.complete) == (str(out), False)
    assert out.read_text(encoding="utf-8").startswith("# NOT A COMPLETE LOCK: 1 of 1 pins have no hash")


def test_default_path_not_generated_by_cudaresolve_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "requirements.txt").write_text("flask==1.0\n", encoding="utf-8")
    with pytest.raises(InvalidInput) as info:
        lock(request(tmp_path, "torch"), output=None, fmt="requirements")
    assert info.value.message == "requirements.txt exists and was not generated by cudaresolve; it is left untouched"
    assert (tmp_path / "requirements.txt").read_text(encoding="utf-8") == "flask==1.0\n"
    (tmp_path / "requirements.txt").unlink()
    lock(request(tmp_path, "torch"), output=None, fmt="requirements")
    lock(request(tmp_path, "torch"), output=None, fmt="requirements")  # our own file: replaced
    assert "@generated by cudaresolve" in (tmp_path / "requirements.txt").read_text(encoding="utf-8")


def test_mirrored_rewrites_every_index_once() -> None:
    locked = Lock(
        packages=(LockedPackage(name="torch", version="2.7.1+cu126", index=f"{PYTORCH}/cu126"),),
        index_url=f"{PYTORCH}/cu126",
    )
    moved = mirrored(locked, {PYTORCH: MIRROR})
    assert [p.index for p in moved.packages] == [f"{MIRROR}/cu126"]
    assert moved.index_url == f"{MIRROR}/cu126"
    assert mirrored(locked, {}) is locked


def test_dry_run_install_echoes_pip_through_the_mirror_and_asks_for_no_doctor_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDARESOLVE_INSTALLER", "pip")
    (tmp_path / "pyproject.toml").write_text(f'[tool.cudaresolve]\nindex-mirror = "{MIRROR}"\n', encoding="utf-8")
    seen: list[PipCommand] = []
    # the interpreter is asked for its Python and platform (install --python), so it must run
    order = InstallRequest(request=request(tmp_path, "torch"), python=sys.executable, dry_run=True)
    result = install(order, echo=seen.append)
    assert (result.returncode, result.check) == (0, None)
    assert seen
    assert all(c.index.startswith(MIRROR) for c in seen if c.index)  # index '': from the downloads
    assert all(c.argv[0] == sys.executable for c in seen)
