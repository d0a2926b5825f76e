"""The environment ``install`` fills, read once: the target interpreter and where its packages live. Does I/O:
runs that interpreter at most once, reads and writes one small cache file.

``install`` needs three things of the target interpreter: what it is as a target (Python version,
platform, glibc, PEP 508 markers: ``target.interpreter.parse_probe``), the ``sys.path`` it imports
from (what is installed is read from there, in this process: ``installed.read_installed``), and its
site-packages folders (the doctor pass after the install). One short run of ``PYTHON -c <probe>``
answers all three; nothing but the standard library is imported there.

The answer is kept in the user cache (``interpreters-v1/<key>.json``), the key made of the path
given, the interpreter file (``lstat`` of the path and ``stat`` of what it points to: size, inode,
modification time), its ``pyvenv.cfg`` and the variables that change ``sys.path`` (``PYTHONPATH``,
``PYTHONHOME``, ``PYTHONUSERBASE``, ``PYTHONNOUSERSITE``, ``PYTHONSAFEPATH``). An entry is used only
while every folder of the answer's ``sys.path`` has the modification time it had when probed: a
``.pth`` file added or removed (which changes ``sys.path``) changes its folder, so a changed
environment is probed again. An entry that cannot be read or written is no error: the probe runs.
uv keeps its interpreter answers the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.target.interpreter import cannot_run, run_python

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from cudaresolve.target.interpreter import Interpreter

__all__ = ["INTERPRETERS", "TargetEnvironment", "read_target", "start_target"]

#: The folder under the user cache that keeps the probes' answers.
INTERPRETERS: Final = "interpreters-v1"
_PATH_VARIABLES: Final = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONNOUSERSITE", "PYTHONSAFEPATH")
_MAX_OUTPUT: Final = 256 * 1024
# target.interpreter's probe, plus sys.path (without the current folder) and site-packages (doctor's view).
_PROBE: Final = r"""
import json, os, platform, site, sys, sysconfig
v = sys.version_info
here = os.getcwd()
sites = list(site.getsitepackages()) if hasattr(site, 'getsitepackages') else []
if site.ENABLE_USER_SITE:
    sites.append(site.getusersitepackages())
print(json.dumps({'version': '%d.%d' % (v[0], v[1]), 'platform': sysconfig.get_platform(),
  'libc': list(platform.libc_ver()), 'gil_disabled': bool(sysconfig.get_config_var('Py_GIL_DISABLED')),
  'markers': {'python_version': '%d.%d' % (v[0], v[1]), 'python_full_version': platform.python_version(),
    'sys_platform': sys.platform, 'platform_machine': platform.machine(), 'platform_system': platform.system(),
    'os_name': os.name, 'implementation_name': sys.implementation.name,
    'platform_python_implementation': platform.python_implementation(), 'platform_release': platform.release(),
    'platform_version': platform.version(), 'implementation_version': platform.python_version()},
  'sys_path': [p for p in sys.path if p and p != here], 'site': sites}))
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetEnvironment:
    """The interpreter as a target, the ``sys.path`` folders it imports from (those that exist, in order) and
    its site-packages folders (``site.getsitepackages()``, plus the user site where it is used)."""

    interpreter: Interpreter
    sys_path: tuple[str, ...]
    site_packages: tuple[str, ...]


def read_target(
    python: str, *, cache: Path | None = None, environ: Mapping[str, str] | None = None
) -> TargetEnvironment:
    """``python``'s environment, from the cache when its entry still holds (module docstring), else probed
    once and kept. ``cache`` is the folder of entries (None: ``INTERPRETERS`` in the user cache). An
    interpreter that cannot run or answer is ``InvalidInput``, as ``target.interpreter.probe_interpreter``."""
    from cudaresolve.target.interpreter import parse_probe

    environ = os.environ if environ is None else environ
    if cache is None:
        from cudaresolve.core.paths import default_cache_dir

        cache = default_cache_dir() / INTERPRETERS
    key = _key(python, environ)
    entry = cache / f"{key}.json" if key is not None else None
    text = _cached(entry) if entry is not None else None
    if text is None:
        text = _probe(python)
        data = _decode(python, text)
        if entry is not None:
            _store(entry, text, data)
    else:
        data = _decode(python, text)
    interpreter = parse_probe(python, text)
    sys_path = tuple(str(p) for p in data.get("sys_path") or () if os.path.isdir(str(p)))
    sites = tuple(dict.fromkeys(str(p) for p in data.get("site") or () if os.path.isdir(str(p))))
    return TargetEnvironment(interpreter=interpreter, sys_path=sys_path, site_packages=sites)


def start_target(python: str, **options: Any) -> Callable[[], TargetEnvironment]:
    """``read_target`` begun in a thread (the probe is another process: the caller reads the lock and loads the
    database meanwhile); the function returned waits for it and gives its answer or raises its error."""
    from cudaresolve.install.background import begin

    return begin(lambda: read_target(python, **options), name="probe")


def _probe(python: str) -> str:
    return run_python(python, _PROBE, max_output=_MAX_OUTPUT)


def _decode(python: str, text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise cannot_run(python, "its answer is not the probe's JSON") from exc
    if not isinstance(data, dict) or not isinstance(data.get("sys_path", []), list):
        raise cannot_run(python, "its answer is not the probe's JSON")
    return data


def _key(python: str, environ: Mapping[str, str]) -> str | None:
    """The cache key of ``python`` as it is now; None when it cannot be looked at (then it is probed)."""
    path = os.path.abspath(python)
    try:
        link, real = os.lstat(path), os.stat(path)
    except OSError:
        return None
    venv = Path(path).parent.parent / "pyvenv.cfg"
    try:
        cfg: list[int] | None = [os.stat(venv).st_mtime_ns, os.stat(venv).st_size]
    except OSError:
        cfg = None
    parts = [path, [link.st_mtime_ns, link.st_ino, link.st_size], [real.st_mtime_ns, real.st_ino, real.st_size], cfg,
             [environ.get(name) for name in _PATH_VARIABLES]]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _cached(entry: Path) -> str | None:
    """The probe's answer kept in ``entry`` when every folder on its ``sys.path`` is unchanged, else None."""
    try:
        stored = json.loads(entry.read_text(encoding="utf-8"))
        text, folders = stored["answer"], stored["folders"]
        if not isinstance(text, str) or not isinstance(folders, dict):
            return None
        for folder, mtime in folders.items():
            if _mtime(folder) != mtime:
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return text


def _store(entry: Path, text: str, data: Mapping[str, Any]) -> None:
    from cudaresolve.core.files import write_private_atomic

    folders = {str(p): _mtime(str(p)) for p in data.get("sys_path") or ()}
    try:
        write_private_atomic(entry, json.dumps({"answer": text, "folders": folders}).encode())
    except OSError:
        return


def _mtime(folder: str) -> int | None:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None
