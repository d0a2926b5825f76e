"""Run one snippet in a child process of another interpreter, under bounds. Does I/O: a subprocess, /proc.

``run_child(python, name, code, env=..., limits=..., deadline=...)`` starts ``python -c HARNESS``
in its own process group and an empty working folder (so nothing there shadows an import), hands
it the snippet on stdin, and returns a ``ChildOutcome``:

* ``ok`` / ``error``: the snippet returned, or raised (the traceback is the error text);
* ``timeout``: it ran past ``limits.timeout_s`` or the whole run's ``deadline``;
* ``memory``: its resident memory passed ``limits.memory_mib``;
* ``crash``: it ended without a result (``os._exit``, a signal such as SIGSEGV);
* ``not-started``: the interpreter could not be run.

The memory bound is watched from here (``/proc/PID/statm``, every ``_POLL_S``), not set with
``RLIMIT_AS``: CUDA reserves virtual address space far beyond what it uses (unified addressing
maps the GPUs' memory and more), so an address-space limit makes ``cuInit`` fail with "out of
memory" on the very GPUs being tested. On a bound, the whole process group is killed. Output is
read by two threads that keep only the last ``limits.output_chars`` characters of each stream.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.decode import loads_json
from cudaresolve.core.processes import kill_group
from cudaresolve.doctor.limits import ChildLimits

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["HARNESS", "RESULT_MARK", "ChildLimits", "ChildOutcome", "run_child"]

#: The line the harness prints last, before its JSON result.
RESULT_MARK: Final = "@@cudaresolve-doctor-run@@ "
_POLL_S: Final = 0.05
_PAGE: Final = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

#: Runs in the child: read the snippet from stdin, run it, print the marker and a JSON result.
HARNESS: Final = f"""
import json, sys, traceback, warnings
spec = json.loads(sys.stdin.read())
fields, seen = {{}}, []
def report(**values):
    fields.update(values)
def check(condition, what):
    if not condition:
        raise AssertionError("wrong result: " + what)
def show(message, category, filename, lineno, file=None, line=None):
    seen.append("%s: %s" % (category.__name__, message))
warnings.simplefilter("always")
warnings.showwarning = show
error = None
try:
    code = compile(spec["code"], "<doctor --run: %s>" % spec["name"], "exec")
    names = dict(spec["names"], __name__="__doctor_run__", device=spec["device"], report=report, check=check)
    exec(code, names)
except BaseException:
    error = traceback.format_exc()
sys.stdout.flush()
result = {{"ok": error is None, "error": error, "warnings": seen, "fields": fields}}
sys.stdout.write("\\n{RESULT_MARK}" + json.dumps(result, default=str) + "\\n")
sys.stdout.flush()
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ChildOutcome:
    status: str  # "ok", "error", "timeout", "memory", "crash" (no result), "not-started"
    error: str | None = None  # the child's traceback (or why it could not start), or None
    output: str = ""  # the tail of its stderr and stdout, for the error matcher
    returncode: int | None = None
    warnings: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=dict)
    seconds: float = 0.0


class _Tail(threading.Thread):
    """Read a pipe to its end, keeping the last ``limit`` bytes."""

    def __init__(self, stream: Any, limit: int) -> None:
        super().__init__(daemon=True)
        self.stream, self.limit, self.data = stream, limit, bytearray()

    def run(self) -> None:
        while chunk := self.stream.read1(65536) if hasattr(self.stream, "read1") else self.stream.read(65536):
            self.data += chunk
            if len(self.data) > 2 * self.limit:
                del self.data[: len(self.data) - self.limit]

    def text(self) -> str:
        return bytes(self.data[-self.limit :]).decode("utf-8", errors="replace")


def _resident_mib(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * _PAGE / (1024 * 1024)
    except (OSError, ValueError, IndexError):
        return None


def run_child(
    python: str, name: str, code: str, *, env: Mapping[str, str], limits: ChildLimits, deadline: float,
    device: str = "cuda:0", names: Mapping[str, str] | None = None,
) -> ChildOutcome:
    """Run ``code`` once in ``python`` (see the module docstring); ``deadline`` is a ``time.monotonic()``;
    ``names`` are more globals for the code (strings)."""
    import json

    start = time.monotonic()
    stop = min(start + limits.timeout_s, deadline)
    with tempfile.TemporaryDirectory(prefix="cudaresolve-run-") as cwd:
        try:
            proc = subprocess.Popen([python, "-c", HARNESS], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, cwd=cwd, env=dict(env), start_new_session=True)
        except OSError as exc:
            return ChildOutcome(status="not-started", error=str(exc.strerror or exc))
        out, err = _Tail(proc.stdout, limits.output_chars), _Tail(proc.stderr, limits.output_chars)
        out.start()
        err.start()
        status = None
        try:
            assert proc.stdin is not None
            spec = {"name": name, "code": code, "device": device, "names": dict(names or {})}
            proc.stdin.write(json.dumps(spec).encode())
            proc.stdin.close()
        except OSError:
            pass  # it died before reading: the outcome says how
        while proc.poll() is None:
            if time.monotonic() >= stop:
                status = "timeout"
            elif (rss := _resident_mib(proc.pid)) is not None and rss > limits.memory_mib:
                status = "memory"
            if status:
                kill_group(proc)
                break
            time.sleep(_POLL_S)
        proc.wait()
        kill_group(proc)  # anything it left behind in its group
        out.join(5)
        err.join(5)
    seconds = time.monotonic() - start
    stdout, stderr = out.text(), err.text()
    output = (stderr + "\n" + stdout.split(RESULT_MARK)[0]).strip()
    if status is not None:
        return ChildOutcome(status=status, output=output, returncode=proc.returncode, seconds=seconds)
    result = _result(stdout)
    if result is None:
        return ChildOutcome(status="crash", output=output, returncode=proc.returncode, seconds=seconds)
    error = result.get("error")
    warnings = tuple(str(w) for w in result.get("warnings") or ())
    fields = result.get("fields") if isinstance(result.get("fields"), dict) else {}
    return ChildOutcome(status="ok" if result.get("ok") and error is None else "error",
                        error=str(error) if error else None, output=output, returncode=proc.returncode,
                        warnings=warnings, fields=fields or {}, seconds=seconds)


def _result(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARK):
            try:
                data = loads_json(line[len(RESULT_MARK):])
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None

