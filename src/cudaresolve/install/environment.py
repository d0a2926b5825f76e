"""The environment ``install`` fills, read once: the target interpreter and where its packages live. Does I/O:
runs that interpreter at most once, reads and writes one small cache file.

``install`` needs three things of the target interpreter: what it is as a target (Python version,
platform, glibc, PEP 508 markers: ``target.interpreter.parse_probe``), the ``sys.path`` it imports
from (what is installed is read from there, in this process: ``installed.read_installed``), and its
site-packages folders (the doctor pass after the install). One short run of ``PYTHON -c <probe>``
answers all three; nothing but the standard library is imported there.

The answer is kept in the user cache (``install.probecache``: by the interpreter's path, and for a venv by its
base interpreter, so that a new venv of an interpreter probed before is not probed); an entry is used only while
the folders of its ``sys.path`` are unchanged.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.errors import InvalidInput
from cudaresolve.install.probecache import INTERPRETERS, from_venv, path_key, read_entry, store, venv_key
from cudaresolve.target.interpreter import cannot_run, run_python

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from cudaresolve.target.interpreter import Interpreter

__all__ = ["INTERPRETERS", "TargetEnvironment", "read_target", "start_target"]

_MAX_OUTPUT: Final = 256 * 1024
# target.interpreter's probe, plus sys.path (without the current folder), site-packages (doctor's view), the
# prefixes (whether it is a venv: probecache) and the folders installing writes to (``link.Scheme``).
_PROBE: Final = r"""
import json, os, platform, site, sys, sysconfig
v = sys.version_info
here = os.getcwd()
paths = sysconfig.get_paths()
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
  'sys_path': [p for p in sys.path if p and p != here], 'site': sites,
  'prefix': sys.prefix, 'base_prefix': sys.base_prefix,
  'scheme': dict([(k, paths[k]) for k in ('purelib', 'platlib', 'scripts', 'data')], headers=os.path.join(
    sys.prefix, 'include', 'site', 'python%d.%d' % v[:2]) if sys.prefix != sys.base_prefix else paths['include'])}))
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class TargetEnvironment:
    """The interpreter as a target, the ``sys.path`` folders it imports from (those that exist, in order) and
    its site-packages folders (``site.getsitepackages()``, plus the user site where it is used)."""

    interpreter: Interpreter
    sys_path: tuple[str, ...]
    site_packages: tuple[str, ...]
    prefix: str | None = None  # its sys.prefix: the environment itself (a venv's folder)
    scheme: tuple[tuple[str, str], ...] = ()  # where installing puts files: ``link.Scheme``'s folders, by name


def read_target(
    python: str, *, cache: Path | None = None, environ: Mapping[str, str] | None = None
) -> TargetEnvironment:
    """``python``'s environment, from the cache when its entry still holds (module docstring), else probed
    once and kept. ``cache`` is the folder of entries (None: ``INTERPRETERS`` in the user cache). An
    interpreter that cannot run or answer is ``InvalidInput``, as ``target.interpreter.probe_interpreter``."""
    environ = os.environ if environ is None else environ
    if cache is None:
        from cudaresolve.core.paths import default_cache_dir

        cache = default_cache_dir() / INTERPRETERS
    by_path = path_key(python, environ)
    found = _taken(python, _by_path(cache, by_path))
    if found is not None:
        return found
    by_venv = venv_key(python, environ)  # asked only when no entry by path holds
    found = _taken(python, _by_venv(cache, by_venv, python))
    if found is not None:
        return found
    text = _probe(python)
    data = _decode(python, text)
    found = _environment(python, text, data)
    store(cache, (by_path, by_venv), python, text, data, environ)
    return found


def _environment(python: str, text: str, data: Mapping[str, Any]) -> TargetEnvironment:
    """The probe's answer ``text`` (decoded: ``data``) read; ``InvalidInput`` when it is not one."""
    from cudaresolve.target.interpreter import parse_probe

    interpreter = parse_probe(python, text)
    sys_path = tuple(str(p) for p in data.get("sys_path") or () if os.path.isdir(str(p)))
    sites = tuple(dict.fromkeys(str(p) for p in data.get("site") or () if os.path.isdir(str(p))))
    prefix = data.get("prefix")
    given = data.get("scheme")
    scheme = tuple((str(k), v) for k, v in given.items() if isinstance(v, str)) if isinstance(given, dict) else ()
    return TargetEnvironment(interpreter=interpreter, sys_path=sys_path, site_packages=sites,
                             prefix=prefix if isinstance(prefix, str) and prefix else None, scheme=scheme)


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
    except (ValueError, RecursionError) as exc:  # a JSON nested past the recursion limit too
        raise cannot_run(python, "its answer is not the probe's JSON") from exc
    if not isinstance(data, dict) or not isinstance(data.get("sys_path", []), list):
        raise cannot_run(python, "its answer is not the probe's JSON")
    return data


def _by_path(cache: Path, key: str | None) -> str | None:
    """The answer kept for the interpreter's path, while it holds."""
    stored = read_entry(cache / f"{key}.json") if key is not None else None
    return str(stored["answer"]) if stored is not None and isinstance(stored.get("answer"), str) else None


def _by_venv(cache: Path, key: str | None, python: str) -> str | None:
    """The answer kept for a venv's base interpreter, made the venv's of ``python``, while it holds."""
    stored = read_entry(cache / f"{key}.json") if key is not None else None
    return from_venv(stored, python) if stored is not None else None


def _taken(python: str, kept: str | None) -> TargetEnvironment | None:
    """A kept answer read; None when there is none or it does not read as a probe's (then it is probed again,
    never an error)."""
    if kept is None:
        return None
    try:
        return _environment(python, kept, _decode(python, kept))
    except InvalidInput:
        return None
