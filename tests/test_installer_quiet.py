"""``install -q``: a successful installer run prints nothing; a failed one still says why (``install.pip``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from cudaresolve.install.pip import PipCommand, installer_output, run_pip

if TYPE_CHECKING:
    import pytest


def _command(code: int, noise: int = 1) -> PipCommand:
    script = (f"import sys\nfor i in range({noise}): print('step', i); print('warn', i, file=sys.stderr)\n"
              f"print('the cause', file=sys.stderr); sys.exit({code})")
    return PipCommand(argv=(sys.executable, "-c", script), index="")


def test_a_quiet_run_that_succeeds_prints_nothing(capfd: pytest.CaptureFixture[str]) -> None:
    with installer_output(quiet=True):
        assert run_pip([_command(0)]) == 0
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


def test_a_quiet_run_that_fails_shows_what_the_installer_said(capfd: pytest.CaptureFixture[str]) -> None:
    with installer_output(quiet=True):
        assert run_pip([_command(3), _command(0)]) == 3  # the first failure stops the run
    out, err = capfd.readouterr()
    assert out == "" and "step 0" in err and err.rstrip().endswith("the cause")


def test_a_long_failure_shows_its_end(capfd: pytest.CaptureFixture[str]) -> None:
    with installer_output(quiet=True):
        assert run_pip([_command(1, noise=20_000)]) == 1
    err = capfd.readouterr().err
    assert err.rstrip().endswith("the cause") and "warn 19999" in err
    assert "step 0\n" not in err and len(err.encode()) <= 64 * 1024  # bounded: the end, not everything


def test_without_quiet_the_installer_speaks(capfd: pytest.CaptureFixture[str]) -> None:
    assert run_pip([_command(0)]) == 0
    out, err = capfd.readouterr()
    assert "step 0" in out and "warn 0" in err
    with installer_output(quiet=True):
        pass
    assert run_pip([_command(0)]) == 0  # the setting ends with its block
    assert "step 0" in capfd.readouterr().out
