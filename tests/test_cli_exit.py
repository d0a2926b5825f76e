"""The process entry point (``cli.run``) ends the process at once after ``main``, losing nothing an exit must do."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

from cudaresolve import __version__

if TYPE_CHECKING:
    from pathlib import Path


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip


def test_the_exit_status_output_and_atexit_handlers_are_those_of_main_and_no_teardown_follows(tmp_path: Path) -> None:
    done = _python(
        """
        import atexit, sys
        class Kept:  # freed only by the interpreter's teardown, which the entry point skips
            def __del__(self):
                open("torn-down", "w").close()
        kept = Kept()
        atexit.register(lambda: open("handler-ran", "w").close())
        print("buffered, not yet flushed", end="")
        sys.argv = ["cudaresolve", "-V"]
        from cudaresolve.cli import run
        run()
        """,
        tmp_path,
    )
    assert done.returncode == 0
    assert done.stdout.startswith("buffered, not yet flushed") and __version__ in done.stdout
    assert (tmp_path / "handler-ran").exists()
    assert not (tmp_path / "torn-down").exists()
    usage = subprocess.run([sys.executable, "-m", "cudaresolve", "--no-such-option"], capture_output=True, text=True,
                           timeout=120, check=False)  # fmt: skip
    assert usage.returncode == 2 and "--no-such-option" in usage.stderr


def test_a_thread_still_running_is_waited_for(tmp_path: Path) -> None:
    done = _python(
        """
        import sys, threading, time
        def late():
            time.sleep(0.5)
            open("thread-done", "w").close()
        threading.Thread(target=late).start()
        sys.argv = ["cudaresolve", "-V"]
        from cudaresolve.cli import run
        run()
        """,
        tmp_path,
    )
    assert done.returncode == 0
    assert (tmp_path / "thread-done").exists()
