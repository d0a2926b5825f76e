"""What an interpreter is, as a target: Python version, platform, glibc, ABI and markers. Does I/O: runs it once.

``install --python PATH`` installs into another interpreter's environment, so the lock must be
resolved for that interpreter, not for the one running cudaresolve (a 3.8 venv needs cp38 wheels).
One short run of ``PATH -c <probe>`` answers everything, with nothing imported there but the
standard library (``packaging`` need not be installed in the target environment): the PEP 508
marker values, ``sysconfig.get_platform()`` for the platform, ``platform.libc_ver()`` for the
glibc, and whether the build is free-threaded (``Py_GIL_DISABLED``) or not CPython at all.
Bounded: ``PROBE_TIMEOUT`` seconds and ``MAX_OUTPUT`` bytes of answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from cudaresolve.core.decode import loads_json
from cudaresolve.core.platforms import normalize_platform
from cudaresolve.errors import InvalidInput
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["MAX_OUTPUT", "PROBE_TIMEOUT", "Interpreter", "cannot_run", "parse_probe", "probe_interpreter", "run_python"]

PROBE_TIMEOUT: Final = 30
# ``-c`` puts the current folder first on sys.path: a platform.py or json.py there would answer for the standard
# library (``-P`` does the same, but only from 3.11 on)
_SAFE_PATH: Final = "import sys\nif sys.path and sys.path[0] == '': del sys.path[0]\n"
MAX_OUTPUT: Final = 64 * 1024
_PROBE: Final = (
    "import json,os,platform,sys,sysconfig;"
    "v=sys.version_info;"
    "print(json.dumps({'version':'%d.%d'%(v[0],v[1]),'platform':sysconfig.get_platform(),"
    "'libc':list(platform.libc_ver()),'gil_disabled':bool(sysconfig.get_config_var('Py_GIL_DISABLED')),"
    "'markers':{'python_version':'%d.%d'%(v[0],v[1]),'python_full_version':platform.python_version(),"
    "'sys_platform':sys.platform,'platform_machine':platform.machine(),'platform_system':platform.system(),"
    "'os_name':os.name,'implementation_name':sys.implementation.name,"
    "'platform_python_implementation':platform.python_implementation(),'platform_release':platform.release(),"
    "'platform_version':platform.version(),'implementation_version':platform.python_version()}}))"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Interpreter:
    """A target interpreter: ``python`` as ``X.Y``, a platform key, its glibc (Linux) and markers."""

    path: str
    python: str
    platform: str
    glibc: str | None = None
    markers: Mapping[str, str] = field(default_factory=dict)


def probe_interpreter(path: str) -> Interpreter:
    """Run ``path`` once and read it (module docstring); ``InvalidInput`` when it cannot run or answer."""
    return parse_probe(path, run_python(path, _PROBE))


def run_python(path: str, code: str, *, max_output: int = MAX_OUTPUT) -> str:
    """``path -c code``'s stdout (its first ``max_output`` bytes), within ``PROBE_TIMEOUT`` seconds; an interpreter
    that cannot start, hangs or fails is one ``cannot_run`` error naming its last line of stderr."""
    import subprocess  # here: an install whose target's answer is kept runs nothing

    from cudaresolve.core.processes import run_capped

    try:  # each stream kept to ``max_output`` bytes: an interpreter that floods its output costs no memory
        returncode, stdout, stderr = run_capped([path, "-c", _SAFE_PATH + code], timeout=PROBE_TIMEOUT, cap=max_output)
    except subprocess.TimeoutExpired as exc:
        raise cannot_run(path, f"no answer within {PROBE_TIMEOUT} s") from exc
    except OSError as exc:
        raise cannot_run(path, str(exc.strerror or exc)) from exc
    if returncode != 0:
        last = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit code {returncode}"]
        raise cannot_run(path, last[0][:200])
    return stdout.decode("utf-8", "replace")


def parse_probe(path: str, text: str) -> Interpreter:
    """The probe's JSON as an ``Interpreter``; only CPython with the GIL is a target cudaresolve knows."""
    try:
        data = loads_json(text)
        version, platform, libc = str(data["version"]), str(data["platform"]), data["libc"]
        markers = {str(k): str(v) for k, v in dict(data["markers"]).items()}
        free_threaded = bool(data["gil_disabled"])
    except (ValueError, KeyError, TypeError) as exc:
        raise cannot_run(path, "its answer is not the probe's JSON") from exc
    kind = markers.get("implementation_name", "")
    if kind != "cpython" or free_threaded:
        shown = f"{kind} {version}" + (" (free-threaded)" if free_threaded else "")
        raise InvalidInput(
            Text.of("target.interpreter-unsupported", python=path, kind=shown),
            hint=Text("target.interpreter-unsupported.hint"),
        )
    glibc = str(libc[1]) if isinstance(libc, list) and len(libc) == 2 and libc[0] == "glibc" and libc[1] else None
    if glibc is not None:  # major.minor of digits ("2.35"); anything else says nothing we can compare
        parts = glibc.split(".")[:2]
        glibc = ".".join(parts) if len(parts) == 2 and all(p.isdigit() and len(p) < 6 for p in parts) else None
    return Interpreter(path=path, python=version, platform=normalize_platform(platform.replace("-", "_")),
                       glibc=glibc, markers=markers)


def cannot_run(path: str, reason: str) -> InvalidInput:
    """The one error of an interpreter that cannot be run or read."""
    return InvalidInput(Text.of("lock.cannot-run-python", python=path, reason=reason),
                        hint=Text("lock.cannot-run-python.hint"))
