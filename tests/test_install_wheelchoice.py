"""install.wheelchoice: of a package's several locked wheels (as ``uv export`` writes them), the interpreter's."""

from __future__ import annotations

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
