"""install as pip and uv users expect: the table before pip, the interpreter's own target, the lock's
target for the doctor pass, a pip failure that names its index, --json; progress events while locking.

Real pip into real venvs, from a PyTorch-like index served on 127.0.0.1 (``mirror`` below)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from cudaresolve.cli import main
from cudaresolve.core.progress import Event, listening
from cudaresolve.db.database import load_compat
from cudaresolve.errors import InvalidInput
from cudaresolve.install.install import for_interpreter, lock_target
from cudaresolve.lock.model import Lock
from cudaresolve.lock.request import LockRequest
from cudaresolve.target.build import TargetOptions
from cudaresolve.target.interpreter import parse_probe, probe_interpreter
from test_cli_lock_install_e2e import mirror  # noqa: F401 (a fixture)
from test_install_e2e import _pip_env

if TYPE_CHECKING:
    from collections.abc import Iterator

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses the POSIX venv layout (bin/python)")
PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
CPU = ["--cpu", "--python-version", PYTHON, "--platform", "linux_x86_64"]
OTHER_PYTHONS = sorted(Path("/root/.pyenv/versions").glob("3.8*/bin/python3")) if Path("/root/.pyenv").is_dir() else []


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pristine") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, env=_pip_env(os.devnull))
    return path


@pytest.fixture
def venv(pristine: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "venv"
    shutil.copytree(pristine, copy, symlinks=True, copy_function=os.link)
    return copy / "bin" / "python"


@pytest.fixture
def locked(
    mirror: tuple[str, dict[str, str], list[str]],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[tuple[list[str], dict[str, str], list[Event]]]:
    """A pylock.toml for a CPU target, locked online through the mirror; the progress events of that run."""
    base, expected, _ = mirror
    monkeypatch.chdir(tmp_path)
    flags = ["--index-mirror", f"https://download.pytorch.org/whl={base}"]
    events: list[Event] = []
    with listening(events.append):
        assert main(["lock", "torch", *CPU, *flags]) == 0
    capsys.readouterr()
    for key in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    yield flags, expected, events


def test_lock_reports_pages_and_prints_no_progress_into_a_pipe(
    locked: tuple[list[str], dict[str, str], list[Event]], capsys: pytest.CaptureFixture[str]
) -> None:
    flags, _, events = locked
    kinds = Counter(e.kind for e in events)
    assert kinds["page"] >= 1 and kinds["bytes"] >= 1
    assert all(e.label.startswith("http://127.0.0.1:") for e in events if e.kind == "page")
    assert main(["lock", "torch", *CPU, *flags, "-o", "pylock.again.toml"]) == 0  # stderr is not a terminal here
    err = capsys.readouterr().err
    assert "reading the indexes" not in err and "fetched http" not in err
    assert main(["lock", "torch", *CPU, *flags, "-o", "pylock.again2.toml", "-v"]) == 0  # -v: one line per page
    assert "fetched http://127.0.0.1:" in capsys.readouterr().err


def test_install_shows_the_table_before_pip_and_checks_the_lock_target(
    locked: tuple[list[str], dict[str, str], list[Event]], venv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags, expected, _ = locked
    events: list[Event] = []
    with listening(events.append):  # the install flags name a GPU; the lock was made for a CPU target
        code = main(["install", "--from", "pylock.toml", "--python", str(venv), "--gpu", "A100", *flags])
    err = capsys.readouterr().err
    assert code == 0, err
    table = err.index(f"torch    {expected['torch']}")
    install = err.index("# link 1 verified wheel")  # the one step, in this process, from the verified files
    assert table < install < err.index("target: no NVIDIA GPU")  # the doctor: the lock's target
    assert [(e.kind, e.label) for e in events if e.kind.startswith("pip-")] == [
        ("pip-start", "install"), ("pip-end", "install")]


def test_install_json_keeps_stdout_for_the_object(
    locked: tuple[list[str], dict[str, str], list[Event]], venv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags, expected, _ = locked
    code = main(["install", "--from", "pylock.toml", "--python", str(venv), *flags, "--json"])
    out = capsys.readouterr().out
    data = json.loads(out)  # one object: pip's own output went to stderr
    assert code == 0
    assert data["schema"] == 1 and [p["version"] for p in data["packages"]] == [expected["torch"]]
    assert data["installed"] == [{"name": "torch", "reason": "missing"}]
    assert data["doctor"]["target"]["gpus"] == []


def test_a_file_that_cannot_be_fetched_names_its_url_and_the_mirror_way_out(
    locked: tuple[list[str], dict[str, str], list[Event]],
    venv: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = locked[0][1].split("=", 1)[1]  # the mirror the lock was made through: its URLs are there
    dead = "http://127.0.0.1:9/whl"  # discard port: nothing listens
    code = main(["install", "--from", "pylock.toml", "--python", str(venv), "--index-mirror", f"{base}={dead}"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2  # the file, fetched from the lock's URL through the mirror, could not be had
    assert err[-1].startswith(f"error: index-unavailable: could not fetch {dead}/")
    assert "index-mirror" in err[-1]


def test_probe_of_a_real_venv(venv: Path) -> None:
    found = probe_interpreter(str(venv))
    machine = os.uname().machine
    assert (found.python, found.platform) == (PYTHON, f"linux_{machine}")
    assert found.markers["python_version"] == PYTHON
    assert found.glibc is not None and found.glibc.startswith("2.")


@pytest.mark.skipif(not OTHER_PYTHONS, reason="no Python 3.8 on this machine")
def test_install_resolves_for_the_interpreter_not_for_this_python(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    venv38 = tmp_path / "venv38"
    subprocess.run([str(OTHER_PYTHONS[0]), "-m", "venv", "--without-pip", str(venv38)], check=True)
    gpu = ["--gpu", "A800", "--driver", "535.104.05", "--offline", "--dry-run"]
    assert main(["install", "torch", "--python", str(venv38 / "bin" / "python"), *gpu]) == 0
    old = capsys.readouterr().err
    assert main(["install", "torch", "--python", sys.executable, *gpu]) == 0  # this interpreter
    new = capsys.readouterr().err
    last_cp38 = re.compile(r"^torch +2\.4\.1(\+cu121)? ", re.MULTILINE)  # the last torch with a cp38 wheel
    assert last_cp38.search(old) and "variant cu121" in old
    assert not last_cp38.search(new)
    assert main(["install", "torch", "--python", str(venv38 / "bin" / "python"), "--python-version", "3.11", *gpu]) == 1
    assert "--python-version does not match" in capsys.readouterr().err


def test_probe_errors() -> None:
    with pytest.raises(InvalidInput, match="cannot run /no/such/python"):
        probe_interpreter("/no/such/python")
    with pytest.raises(InvalidInput, match="not the probe's JSON"):
        parse_probe("p", "hello")
    answer = {"version": "3.13", "platform": "linux-x86_64", "libc": ["glibc", "2.36"], "gil_disabled": True,
              "markers": {"implementation_name": "cpython"}}
    with pytest.raises(InvalidInput, match="free-threaded"):
        parse_probe("p", json.dumps(answer))
    found = parse_probe("p", json.dumps({**answer, "gil_disabled": False, "platform": "macosx-11.0-arm64"}))
    assert (found.python, found.platform, found.glibc) == ("3.13", "macosx_arm64", "2.36")
    for odd in ("2.35-r1", "two.35", "2._35", "2", ""):  # a libc answer that is no version: no glibc, no crash
        assert parse_probe("p", json.dumps({**answer, "gil_disabled": False, "libc": ["glibc", odd]})).glibc is None
    assert parse_probe("p", json.dumps({**answer, "gil_disabled": False, "libc": ["glibc", "2.39.1"]})).glibc == "2.39"
    with pytest.raises(InvalidInput, match="--platform does not match"):
        for_interpreter(TargetOptions(platform="win_amd64"), found)


def test_lock_target_reads_the_lock() -> None:
    db = load_compat()
    request = LockRequest(target=TargetOptions(cpu=True, python="3.11", platform="linux_x86_64"))
    recorded = Lock(packages=(), target={"gpus": [{"name": "NVIDIA A100", "cc": "8.0"}], "python": "3.10",
                                         "platform": "linux_x86_64"})
    target = lock_target(recorded, request, db)
    assert ([g.name for g in target.gpus], target.python, target.driver) == (["NVIDIA A100"], "3.10", None)
    assert lock_target(Lock(packages=()), request, db).is_cpu  # no target recorded: the flags'


def test_a_quiet_install_that_goes_well_prints_nothing(
    locked: tuple[list[str], dict[str, str], list[Event]], venv: Path
) -> None:
    flags, expected, _ = locked
    # this interpreter's cudaresolve, with no PYTHONPATH (the target venv would inherit it and list its packages)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "cudaresolve", "install", "--from", "pylock.toml", "--python",
                           str(venv), "-q", *flags], env=env, capture_output=True, text=True, check=False)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")  # the installer's own lines too
    listed = subprocess.run([str(venv), "-c", "import importlib.metadata as m; print(m.version('torch'))"],
                            capture_output=True, text=True, check=True)  # fmt: skip
    assert listed.stdout.strip() == expected["torch"]
