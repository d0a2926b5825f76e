"""One hostile case: the command line to run, what to put on disk first, and what must hold after."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

#: A guard against hangs only; the real bound of each case is checked by its ``check``.
GUARD_SECONDS = 60


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class Case:
    """``argv`` runs as ``python -m cudaresolve *argv`` in a fresh directory ``tmp``.

    ``argv`` may use ``{tmp}``; ``setup(tmp)`` writes the hostile files first; ``codes`` are the
    acceptable exit codes; ``check(result, tmp)`` asserts the bound on work and that nothing was lost.
    """

    id: str
    argv: Sequence[str]
    setup: Callable[[Path], None] | None = None
    stdin: str | None = None
    codes: tuple[int, ...] = (0, 1, 2)
    check: Callable[[Result, Path], None] | None = None
    env: dict[str, str] = field(default_factory=dict)


def run(case: Case, tmp: Path) -> Result:
    """Run one case; a traceback on stderr or a code outside ``case.codes`` fails it."""
    if case.setup is not None:
        case.setup(tmp)
    src = str(Path(__file__).resolve().parents[2] / "src")  # this checkout, not an installed copy
    path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "CUDARESOLVE_CACHE_DIR": str(tmp / ".cache"), **case.env}
    argv = [a.replace("{tmp}", str(tmp)) for a in case.argv]
    proc = subprocess.run(
        [sys.executable, "-m", "cudaresolve", *argv], cwd=tmp, env=env, input=case.stdin or "",
        capture_output=True, text=True, timeout=GUARD_SECONDS, check=False,
    )
    result = Result(proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode in case.codes, (result.returncode, result.stderr[-2000:])
    if result.returncode != 0 and "--json" not in argv:
        assert result.stderr.startswith("error: "), result.stderr[-2000:]  # one coded line first
    if case.check is not None:
        case.check(result, tmp)
    return result
