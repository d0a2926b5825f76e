"""``core.memory``: glibc takes the heap settings (elsewhere nothing is done); the command line collects less often."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cudaresolve.core import memory

ROOT = Path(__file__).resolve().parents[1]


def _glibc() -> bool:
    try:
        return bool(os.confstr("CS_GNU_LIBC_VERSION"))
    except (ValueError, OSError, AttributeError):
        return False


@pytest.mark.skipif(not _glibc(), reason="glibc only")
def test_glibc_takes_the_settings_in_a_fresh_process() -> None:
    code = "from cudaresolve.core.memory import compact_heap; print(compact_heap())"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")} | {"PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


def test_a_c_library_that_is_not_glibc_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_glibc(name: str) -> str:
        raise ValueError(name)

    monkeypatch.setattr(os, "confstr", not_glibc)
    assert memory.compact_heap() is False


@pytest.mark.skipif(not _glibc(), reason="glibc only")
def test_a_setting_the_user_made_is_not_overridden(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []
    import ctypes

    monkeypatch.setattr(ctypes, "CDLL", lambda _name: type("L", (), {"mallopt": FakeMallopt(calls)})())
    monkeypatch.setenv("MALLOC_ARENA_MAX", "8")
    assert memory.compact_heap() is True
    assert [p for p, _ in calls] == [-3, -1]  # the arena count is the user's


class FakeMallopt:
    def __init__(self, calls: list[tuple[int, int]]) -> None:
        self.calls = calls
        self.argtypes: object = None
        self.restype: object = None

    def __call__(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return 1


def test_the_command_line_process_collects_less_often_and_a_library_caller_is_left_alone() -> None:
    """``cli.run`` (the process's entry) raises the collector's thresholds; importing cudaresolve or calling
    ``cli.main`` (as tests and embedding programs do) leaves the caller's alone."""
    import gc

    code = ("import gc, cudaresolve.cli as cli; from cudaresolve.cli import main\n"
            "print(gc.get_threshold()); main(['arch-list', '--gpu', 'H100']); print(gc.get_threshold())\n"
            "cli.main = lambda: print(gc.get_threshold()) or 0\ncli.run()")  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert lines[0] == str(gc.get_threshold()) and lines[-1] == str(memory._GC_THRESHOLDS)
    assert str(memory._GC_THRESHOLDS) not in lines[:-1]  # main alone changed nothing
