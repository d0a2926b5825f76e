"""install.wheelchoice: of a package's several locked wheels (as ``uv export`` writes them), the interpreter's."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from cudaresolve.errors import InvalidLockfile
from cudaresolve.install.wheelchoice import best_wheel, wheel_choice
from cudaresolve.lock.lockfile import loads_pylock
from cudaresolve.target.interpreter import Interpreter

if TYPE_CHECKING:
    from pathlib import Path

LINUX = Interpreter(path="/venv/bin/python", python="3.11", platform="linux_x86_64", glibc="2.31")

NAMES = [
    "numpy-2.1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",  # another Python
    "numpy-2.1.0-cp311-cp311-win_amd64.whl",  # another platform
    "numpy-2.1.0-cp311-cp311-manylinux_2_34_x86_64.whl",  # a glibc newer than 2.31
    "numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",  # this one
    "numpy-2.1.0-cp311-cp311-musllinux_1_2_x86_64.whl",
    "not a wheel name",
]


def test_the_best_fitting_wheel_is_chosen_and_none_when_none_fits() -> None:
    assert best_wheel(NAMES, LINUX) == 3
    assert best_wheel([*NAMES[:3], "numpy-2.1.0-py3-none-any.whl"], LINUX) == 3  # pure Python ranks last but fits
    assert best_wheel(["x-1.0-py3-none-any.whl", NAMES[3]], LINUX) == 1  # the platform's own before pure Python
    assert best_wheel(NAMES[:3], LINUX) is None
    newer = Interpreter(path="/p", python="3.11", platform="linux_x86_64", glibc="2.35")
    assert best_wheel(NAMES, newer) == 2


def _lock(wheels: list[str]) -> str:
    rows = "".join(
        f'[[packages.wheels]]\nname = "{w}"\nurl = "https://files.example.org/{w}"\n'
        f'hashes = {{ sha256 = "{i:064x}" }}\n'
        for i, w in enumerate(wheels)
    )
    return ('lock-version = "1.0"\ncreated-by = "uv"\nrequires-python = ">=3.11"\n\n[[packages]]\nname = "numpy"\n'
            f'version = "2.1.0"\nindex = "https://pypi.org/simple"\n{rows}')


def test_a_lock_of_several_wheels_per_package_reads_with_a_choice_only() -> None:
    text = _lock(NAMES[:5])
    with pytest.raises(InvalidLockfile) as info:
        loads_pylock(text)
    assert "5 wheels" in info.value.message
    asked: list[str] = []

    def interpreter() -> Interpreter:
        asked.append("probe")
        return LINUX

    lock = loads_pylock(text, choose=wheel_choice(interpreter))
    (package,) = lock.packages
    assert package.filename == NAMES[3] and package.sha256 == f"{3:064x}" and asked == ["probe"]
    assert loads_pylock(_lock(NAMES[3:4]), choose=wheel_choice(interpreter)).packages[0].filename == NAMES[3]
    assert asked == ["probe"]  # one wheel: the interpreter is not asked
    with pytest.raises(InvalidLockfile) as info:
        loads_pylock(_lock(NAMES[:3]), choose=wheel_choice(interpreter))
    assert "none of them installs" in info.value.message


@pytest.mark.skipif(sys.platform == "win32", reason="the POSIX venv layout")
def test_install_takes_the_interpreters_wheel_of_several(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """End to end through ``install --dry-run``: the plan installs the wheel that fits this interpreter."""
    import subprocess

    from cudaresolve.cli import main

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    fits = "numpy-2.1.0-py3-none-any.whl"
    (tmp_path / "pylock.toml").write_text(_lock([NAMES[1], fits]))
    code = main(["install", "--from", str(tmp_path / "pylock.toml"), "--python", str(tmp_path / "venv"),
                 "--dry-run", "--cpu"])
    out = capsys.readouterr().out
    assert code == 0 and fits in out and NAMES[1] not in out


_OLD = ["numpy-1.16.6-cp27-cp27m-win32.whl", "numpy-1.16.6-cp27-cp27mu-manylinux1_x86_64.whl"]


def _two_entries(marker: str, other: str = "python_version >= '3'") -> str:
    """A uv export for several Pythons: numpy 1.16.6 for Python 2 under its marker, 2.1.0 pure Python for the rest."""
    old = "".join(
        f'[[packages.wheels]]\nname = "{w}"\nurl = "https://files.example.org/{w}"\n'
        f'hashes = {{ sha256 = "{i:064x}" }}\n'
        for i, w in enumerate(_OLD, start=1)
    )
    new = 'name = "numpy-2.1.0-py3-none-any.whl"\nurl = "https://files.example.org/numpy-2.1.0-py3-none-any.whl"\n'
    return ('lock-version = "1.0"\ncreated-by = "uv"\nrequires-python = ">=2.7"\n\n'
            f'[[packages]]\nname = "numpy"\nversion = "1.16.6"\nmarker = "{marker}"\n'
            f'index = "https://pypi.org/simple"\n{old}\n'
            f'[[packages]]\nname = "numpy"\nversion = "2.1.0"\nmarker = "{other}"\n'
            f'index = "https://pypi.org/simple"\n[[packages.wheels]]\n{new}hashes = {{ sha256 = "{0:064x}" }}\n')


def test_a_package_its_marker_may_leave_out_needs_no_wheel_for_this_interpreter() -> None:
    """uv's export lists contourpy 1.3.2 (Python < 3.11), 1.3.3 and 1.4.0 (>= 3.12), each with its own wheels: none of
    1.4.0's fits a 3.11 interpreter, and none has to, since its marker leaves it out there (uv installs it)."""
    lock = loads_pylock(_two_entries("python_version < '3'"), choose=wheel_choice(lambda: LINUX))
    assert [p.version for p in lock.packages] == ["1.16.6", "2.1.0"]  # the selection by markers decides, later
    with pytest.raises(InvalidLockfile) as info:  # no marker: it is always installed, and nothing fits
        loads_pylock(_lock(NAMES[:2]), choose=wheel_choice(lambda: LINUX))
    assert "none of them installs" in info.value.message


@pytest.mark.skipif(sys.platform == "win32", reason="the POSIX venv layout")
@pytest.mark.parametrize("marker", ["python_version < '3'", "python_version >= '3'"])
def test_install_leaves_out_a_package_of_another_python_whose_wheels_do_not_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], marker: str
) -> None:
    from cudaresolve.cli import main

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    other = "python_version >= '3'" if marker.endswith("< '3'") else "python_version < '3'"
    (tmp_path / "pylock.toml").write_text(_two_entries(marker, other))
    code = main(["install", "--from", str(tmp_path / "pylock.toml"), "--python", str(tmp_path / "venv"),
                 "--dry-run", "--cpu"])
    captured = capsys.readouterr()
    if marker.endswith("< '3'"):  # left out by its marker: the one that fits is installed
        assert code == 0 and "numpy-2.1.0-py3-none-any.whl" in captured.out and "1.16.6" not in captured.out
    else:  # its marker holds here too, and none of its wheels installs: refused, as any such wheel is
        assert code == 1 and "none of them installs" in captured.err
