"""install.environment: one probe of the target interpreter, kept while the environment is unchanged."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

import pytest

from cudaresolve.errors import InvalidInput
from cudaresolve.install.environment import read_target
from cudaresolve.install.installed import read_installed

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for the interpreter")


def _fake(tmp_path: Path, site: Path, *, version: str = "3.11") -> tuple[Path, Path]:
    """An interpreter that answers the probe with ``site`` on its sys.path and logs each run."""
    log = tmp_path / "runs.log"
    answer = {"version": version, "platform": "linux-x86_64", "libc": ["glibc", "2.35"], "gil_disabled": False,
              "markers": {"implementation_name": "cpython", "python_full_version": f"{version}.4"},
              "sys_path": [str(site), str(tmp_path / "gone")], "site": [str(site)]}
    (tmp_path / "answer.json").write_text(json.dumps(answer))
    fake = tmp_path / "bin" / "python"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(f"#!/bin/sh\necho run >> {log}\ncat {tmp_path / 'answer.json'}\n")
    fake.chmod(0o755)
    return fake, log


@pytest.fixture(autouse=True)
def _binary_fakes(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shell scripts here stand for interpreter binaries (a real script, a shim, is never kept: its own test)."""
    if "script" not in request.node.name:
        from cudaresolve.install import probecache

        monkeypatch.setattr(probecache, "_is_script", lambda path: False)


def _runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


@pytest.fixture
def faked(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A fake interpreter with one site-packages folder: (the interpreter, its run log, an empty cache folder)."""
    site = tmp_path / "site-packages"
    site.mkdir()
    fake, log = _fake(tmp_path, site)
    return fake, log, tmp_path / "cache"


def test_one_probe_then_the_cache_until_a_folder_on_sys_path_changes(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    site.mkdir()
    fake, log = _fake(tmp_path, site)
    cache = tmp_path / "cache"

    first = read_target(str(fake), cache=cache, environ={})
    assert (first.interpreter.python, first.interpreter.glibc) == ("3.11", "2.35")
    assert first.sys_path == (str(site),) and first.site_packages == (str(site),)  # a missing folder is left out
    assert first.interpreter.markers["python_full_version"] == "3.11.4"
    assert read_target(str(fake), cache=cache, environ={}) == first
    assert _runs(log) == 1

    (site / "extra.pth").write_text(str(tmp_path) + "\n")  # a .pth file may change sys.path: probed again
    os.utime(site, ns=(1, 1))
    read_target(str(fake), cache=cache, environ={})
    assert _runs(log) == 2
    read_target(str(fake), cache=cache, environ={"PYTHONPATH": str(tmp_path)})  # another sys.path: probed again
    assert _runs(log) == 3


def test_a_changed_interpreter_is_probed_again(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    site.mkdir()
    fake, log = _fake(tmp_path, site)
    cache = tmp_path / "cache"
    read_target(str(fake), cache=cache, environ={})
    _fake(tmp_path, site, version="3.12")  # the file rewritten: another size and time
    os.utime(fake, ns=(2, 2))
    assert read_target(str(fake), cache=cache, environ={}).interpreter.python == "3.12"
    assert _runs(log) == 2


def test_a_broken_cache_entry_is_probed_again_and_no_error(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    site.mkdir()
    fake, log = _fake(tmp_path, site)
    cache = tmp_path / "cache"
    read_target(str(fake), cache=cache, environ={})
    for entry in cache.iterdir():
        entry.write_text("{not json")
    assert read_target(str(fake), cache=cache, environ={}).interpreter.python == "3.11"
    assert _runs(log) == 2


def test_an_interpreter_that_answers_nonsense_or_cannot_run(tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho hello\n")
    fake.chmod(0o755)
    with pytest.raises(InvalidInput) as info:
        read_target(str(fake), cache=tmp_path / "cache", environ={})
    assert "not the probe's JSON" in str(info.value)
    with pytest.raises(InvalidInput):
        read_target(str(tmp_path / "missing"), cache=tmp_path / "cache", environ={})


def test_the_real_interpreter_and_what_it_has_installed() -> None:
    found = read_target(sys.executable)
    assert found.interpreter.python == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert any(p.endswith("site-packages") for p in found.site_packages)
    dists = read_installed(sys.executable, records=["pytest"], paths=found.sys_path)
    assert dists["pytest"].record is not None and dists["pytest"].damaged == ()
    assert dists["pytest"].version == pytest.__version__


def test_start_target_answers_later_and_raises_there(tmp_path: Path) -> None:
    from cudaresolve.install.environment import start_target

    site = tmp_path / "site-packages"
    site.mkdir()
    fake, log = _fake(tmp_path, site)
    pending = start_target(str(fake), cache=tmp_path / "cache", environ={})
    assert pending().interpreter.python == "3.11" and _runs(log) == 1
    failing = start_target(str(tmp_path / "missing"), cache=tmp_path / "cache", environ={})
    with pytest.raises(InvalidInput):
        failing()


def test_metadata_headers_are_read_once_as_the_email_parser_reads_them() -> None:
    from email.parser import HeaderParser

    from cudaresolve.install.installed import _headers

    text = ("Metadata-Version: 2.1\nName: Demo_Pkg\nVersion: 1.0\nRequires-Dist: a>=1;\n python_version < '3.12'\n"
            "Requires-Dist: b\nSummary: s\n\nRequires-Dist: not-a-header\nName: body\n")
    parsed = HeaderParser().parsestr(text)
    expected = (parsed["Name"], parsed["Version"], tuple(" ".join(v.split()) for v in parsed.get_all("Requires-Dist")))
    assert _headers(text) == expected == ("Demo_Pkg", "1.0", ("a>=1; python_version < '3.12'", "b"))
    assert _headers(None) is None


def _venv(path: Path, *flags: str) -> str:
    import subprocess

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", *flags, str(path)], check=True)
    return str(path / "bin" / "python")


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from cudaresolve.install import environment

    probed: list[str] = []
    real = environment._probe

    def probe(python: str) -> str:
        probed.append(python)
        return real(python)

    monkeypatch.setattr(environment, "_probe", probe)
    return probed


def test_a_new_venv_of_an_interpreter_probed_before_is_not_probed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probed = _counting(monkeypatch)
    (tmp_path / "extra").mkdir()
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "extra"))  # the probe runs with it
    cache, environ = tmp_path / "cache", dict(os.environ)
    read_target(_venv(tmp_path / "a"), cache=cache, environ=environ)
    second = _venv(tmp_path / "b")
    kept = read_target(second, cache=cache, environ=environ)
    assert len(probed) == 1
    fresh = read_target(second, cache=tmp_path / "empty", environ=environ)  # what a probe of it says
    assert kept == fresh and len(probed) == 2
    assert str(tmp_path / "b" / "lib") in kept.site_packages[0] and str(tmp_path / "extra") in kept.sys_path


def test_a_venv_whose_site_packages_can_change_sys_path_is_probed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    probed = _counting(monkeypatch)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    cache = tmp_path / "cache"
    read_target(_venv(tmp_path / "a"), cache=cache, environ={})
    python = _venv(tmp_path / "b")
    site = next((tmp_path / "b" / "lib").glob("python*/site-packages"))
    (tmp_path / "elsewhere").mkdir()
    (site / "extra.pth").write_text(str(tmp_path / "elsewhere") + "\n")
    found = read_target(python, cache=cache, environ={})
    assert len(probed) == 2 and str(tmp_path / "elsewhere") in found.sys_path
    read_target(_venv(tmp_path / "c", "--system-site-packages"), cache=cache, environ={})  # sees more than its own
    read_target(_venv(tmp_path / "d", "--system-site-packages"), cache=cache, environ={})
    assert len(probed) == 4
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    read_target(_venv(tmp_path / "e"), cache=cache, environ=dict(os.environ))  # another sys.path
    assert len(probed) == 5
    monkeypatch.delenv("PYTHONPATH")
    read_target(_venv(tmp_path / "f"), cache=cache, environ={})  # as the first: not probed
    assert len(probed) == 5


def test_a_script_is_probed_on_every_run(faked: tuple[Path, Path, Path]) -> None:
    """A pyenv shim or a wrapper may start another interpreter each time: its answer is never kept."""
    fake, log, cache = faked
    read_target(str(fake), cache=cache, environ={})
    read_target(str(fake), cache=cache, environ={})
    assert _runs(log) == 2 and not list(cache.glob("*.json"))


def test_a_kept_answer_that_is_no_probe_answer_is_probed_again(faked: tuple[Path, Path, Path]) -> None:
    fake, log, cache = faked
    read_target(str(fake), cache=cache, environ={})
    for entry in cache.glob("*.json"):
        stored = json.loads(entry.read_text())
        entry.write_text(json.dumps({**stored, "answer": "{}"}))
    assert read_target(str(fake), cache=cache, environ={}).interpreter.python == "3.11"
    assert _runs(log) == 2


def test_an_edited_pth_file_or_a_new_user_site_or_another_home_is_probed_again(tmp_path: Path) -> None:
    site, user = tmp_path / "site-packages", tmp_path / "home" / "user-site"
    site.mkdir()
    fake, log = _fake(tmp_path, site)
    answer = json.loads((tmp_path / "answer.json").read_text())
    (tmp_path / "answer.json").write_text(json.dumps({**answer, "site": [str(site), str(user)]}))
    (site / "a.pth").write_text("x\n")
    cache, environ = tmp_path / "cache", {"HOME": str(tmp_path / "home")}
    read_target(str(fake), cache=cache, environ=environ)
    mtime = site.stat().st_mtime_ns
    (site / "a.pth").write_text("longer\n")  # edited in place: the folder's time kept
    os.utime(site, ns=(mtime, mtime))
    read_target(str(fake), cache=cache, environ=environ)
    assert _runs(log) == 2
    read_target(str(fake), cache=cache, environ=environ)
    assert _runs(log) == 2
    user.mkdir(parents=True)  # the user site made after the probe (a first pip install --user)
    read_target(str(fake), cache=cache, environ=environ)
    assert _runs(log) == 3
    read_target(str(fake), cache=cache, environ={"HOME": str(tmp_path)})
    assert _runs(log) == 4


def test_the_probe_reads_no_module_of_the_current_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "platform.py").write_text("def python_version():\n    return '3.99.0'\n")
    monkeypatch.chdir(tmp_path)
    found = read_target(sys.executable, cache=tmp_path / "cache", environ={})
    assert found.interpreter.markers["python_full_version"] == ".".join(map(str, sys.version_info[:3]))


@pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")
def test_an_install_holds_the_environments_lock_as_uv_does(tmp_path: Path) -> None:
    """Two installs into one environment at once had each exited 0 and left it matching neither lock: an install
    holds a lock file of the venv exclusively, so a second one waits; a folder that is no venv gets no file."""
    import fcntl
    import os

    from cudaresolve.install.install import _LOCK_FILE, environment_lock

    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    with environment_lock(str(venv)):
        other = os.open(venv / _LOCK_FILE, os.O_RDWR)
        with pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released with the block
    os.close(other)
    with environment_lock(str(tmp_path)):
        assert not (tmp_path / _LOCK_FILE).exists()
