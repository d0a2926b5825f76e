"""The target interpreter's probe answers, kept in the user cache. Does I/O: stats files, reads and writes small
JSON entries under ``INTERPRETERS``.

Two kinds of entry, both a JSON object ``{"answer": ..., "folders": {folder: mtime}, "files": {file: stamp}}``:

* **by path** (``path_key``): the path given, the interpreter file (``lstat`` of the path and ``stat`` of what it
  points to), the ``pyvenv.cfg`` files ``site`` reads (time and size), the variables that change ``sys.path``
  (``PYTHONPATH``, with the current folder when it names a relative one, ``PYTHONHOME``, ``PYTHONUSERBASE``,
  ``PYTHONNOUSERSITE``, ``PYTHONSAFEPATH``, ``HOME``) and the kernel (``uname``: the ``platform_release`` and
  ``platform_version`` markers). Used while every folder of the answer's ``sys.path`` and site-packages (one that
  did not exist too) has the modification time it had when probed (a ``.pth`` file added or removed changes its
  folder) and every ``.pth`` file and ``sitecustomize``/``usercustomize`` there its time and size (an edit in
  place does not change the folder). uv keeps its interpreter answers much the same way.
* **by venv** (``venv_key``): a virtual environment is its base interpreter plus its own site-packages, so a new
  venv of an interpreter probed before needs no probe of its own. The key is the file the venv's ``python`` runs
  (``stat``: device, inode, size, time), where that link sits in the venv, the ``pyvenv.cfg`` lines with the venv's
  own folder written as ``{prefix}`` (``command`` and ``prompt`` left out: they name nothing the interpreter
  reads), the same variables and the kernel. Kept only for a venv that does not see the system site-packages,
  whose ``sys.path`` is the base interpreter's folders (and ``PYTHONPATH``'s) plus site-packages folders inside the
  venv holding no ``.pth`` file and no ``sitecustomize``/``usercustomize`` (nothing there that could add to
  ``sys.path``). Used for another venv only while that holds too for its own site-packages and the base folders
  and files are unchanged (as above); the answer's folders inside the venv are then the new venv's.

Never kept: the answer of an interpreter that is a script (``#!``: a pyenv shim or a wrapper may start another
interpreter on every run), and a by-venv answer for a venv with a ``pyvenv.cfg`` beside its ``python``.
An entry that cannot be read or written is no error: the probe runs. The newest ``KEEP`` entries are kept.
"""

from __future__ import annotations

import json
import os
import re
import stat
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.digest import sha256_hex
from cudaresolve.core.files import read_regular_bounded, read_text_or_none

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = ["INTERPRETERS", "KEEP", "from_venv", "path_key", "read_entry", "store", "venv_key"]

#: The folder under the user cache that keeps the probes' answers.
INTERPRETERS: Final = "interpreters-v3"
#: How many entries are kept (the newest).
KEEP: Final = 512
_NAMES: Final = re.compile(r"[0-9a-f]{64}\.json")
_PATH_VARIABLES: Final = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONNOUSERSITE", "PYTHONSAFEPATH", "HOME")
_UNREAD_CFG: Final = frozenset({"command", "prompt"})
_MAX_CFG: Final = 64 * 1024
_MAX_ENTRY: Final = 16 * 1024 * 1024  # a probe cache entry: a bound, not a fact
_ADDS_TO_PATH: Final = ("sitecustomize.py", "usercustomize.py")
_MAX_WATCHED: Final = 256  # .pth files watched per folder


def path_key(python: str, environ: Mapping[str, str]) -> str | None:
    """The by-path key of ``python`` as it is now; None when it cannot be looked at (then it is probed)."""
    path = os.path.abspath(python)
    try:
        link, real = os.lstat(path), os.stat(path)
    except OSError:
        return None
    if _is_script(path):
        return None
    cfgs: list[list[int] | None] = []
    for folder in (os.path.dirname(path), _prefix(path)):  # where site.py looks for pyvenv.cfg
        try:
            cfg_stat = os.stat(os.path.join(folder, "pyvenv.cfg"))
            cfgs.append([cfg_stat.st_mtime_ns, cfg_stat.st_size])
        except OSError:
            cfgs.append(None)
    return _digest(["path", path, [link.st_mtime_ns, link.st_ino, link.st_size], _file(real), cfgs,
                    _variables(environ), _kernel()])


def venv_key(python: str, environ: Mapping[str, str]) -> str | None:
    """The by-venv key of ``python`` (module docstring); None when it is not in a venv that could share one."""
    path = os.path.abspath(python)
    prefix = _prefix(path)
    if os.path.lexists(os.path.join(os.path.dirname(path), "pyvenv.cfg")) or _is_script(path):
        return None  # site.py reads that one first; a script (a shim) may run any interpreter
    try:
        real = os.stat(path)
        text = read_regular_bounded(os.path.join(prefix, "pyvenv.cfg"), _MAX_CFG)  # a FIFO there: refused unread
    except OSError:
        return None
    if len(text) > _MAX_CFG:
        return None
    lines = []
    for line in text.decode("utf-8", "replace").splitlines():
        name, _, value = line.partition("=")
        name = name.strip().lower()
        if name == "include-system-site-packages" and value.strip().lower() != "false":
            return None
        if name and name not in _UNREAD_CFG:
            lines.append(f"{name}={value.strip()}".replace(prefix, "{prefix}"))
    if not any(line.startswith("include-system-site-packages=") for line in lines):
        return None
    return _digest(["venv", os.path.relpath(path, prefix), _file(real), sorted(lines), _variables(environ),
                    _kernel()])


def read_entry(entry: Path) -> dict[str, Any] | None:
    """The entry's stored object when every folder and file it watches is unchanged, else None."""
    try:
        stored = json.loads(read_text_or_none(entry, _MAX_ENTRY) or "null")  # a FIFO or /dev/zero: no entry
        if not isinstance(stored, dict) or not isinstance(stored.get("folders"), dict):
            return None
        if not isinstance(stored.get("files"), dict):
            return None
        for folder, mtime in stored["folders"].items():
            if _mtime(folder) != mtime:
                return None
        for file, seen in stored["files"].items():
            if _stamp(file) != seen:
                return None
    except (OSError, ValueError, TypeError):
        return None
    return stored


def from_venv(stored: Mapping[str, Any], python: str) -> str | None:
    """A by-venv entry's answer for the venv of ``python``: its folders inside the venv made the new venv's; None
    when the entry is not a venv template or the new venv's site-packages could add to ``sys.path``."""
    prefix = _prefix(os.path.abspath(python))
    data, inside = stored.get("answer"), stored.get("inside")
    if not isinstance(data, dict) or not isinstance(inside, list):
        return None
    try:
        def place(entry: Any) -> str:
            return os.path.normpath(os.path.join(prefix, entry[1])) if entry[0] else str(entry[1])

        answer = {**data, "prefix": prefix, "sys_path": [place(e) for e in data["sys_path"]],
                  "site": [place(e) for e in data["site"]]}
        if isinstance(data.get("scheme"), dict):
            answer["scheme"] = {k: place(v) for k, v in data["scheme"].items()}
        if any(_adds_to_path(os.path.join(prefix, str(rel))) for rel in inside):
            return None
    except (KeyError, TypeError, IndexError):
        return None
    return json.dumps(answer)


def store(
    cache: Path, keys: tuple[str | None, str | None], python: str, text: str, data: Mapping[str, Any],
    environ: Mapping[str, str],
) -> None:
    """Keep a fresh probe's answer under its by-path key and, where the venv qualifies, its by-venv key."""
    from cudaresolve.core.files import keep_newest, make_cache_dir, write_private_atomic

    by_path, by_venv = keys
    watched = [str(p) for p in (*(data.get("sys_path") or ()), *(data.get("site") or ()))]
    folders = {p: _mtime(p) for p in watched}  # a site folder that does not exist yet is watched too
    entries: list[tuple[str, bytes]] = []
    if by_path is not None:
        kept = {"answer": text, "folders": folders, "files": _path_files(watched)}
        entries.append((f"{by_path}.json", json.dumps(kept).encode()))
    template = _template(python, data, environ) if by_venv is not None else None
    if by_venv is not None and template is not None:
        entries.append((f"{by_venv}.json", json.dumps(template).encode()))
    try:
        make_cache_dir(cache)
        for name, body in entries:
            write_private_atomic(cache / name, body)
        if entries:
            keep_newest(cache, KEEP, _NAMES, spare=entries[0][0])
    except OSError:
        return


def _template(python: str, data: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, Any] | None:
    """A probed venv's answer with its own folders relative to it, or None when it cannot stand for another venv.
    Its other folders are the base interpreter's and those ``PYTHONPATH`` names (part of the key)."""
    prefix = _prefix(os.path.abspath(python))
    base = data.get("base_prefix")
    if data.get("prefix") != prefix or not isinstance(base, str) or not base:
        return None
    sys_path, sites = [str(p) for p in data.get("sys_path") or ()], [str(p) for p in data.get("site") or ()]

    def inside(path: str) -> bool:
        return path.startswith(prefix + os.sep)

    named = {os.path.abspath(p) for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p}

    def under_base(path: str) -> bool:
        return path == base or path.startswith(base.rstrip(os.sep) + os.sep) or path in named

    own = [p for p in sys_path if inside(p)]
    if any(p not in sites for p in own) or not all(inside(p) or under_base(p) for p in sys_path):
        return None
    if not all(inside(p) for p in sites) or any(_adds_to_path(p) for p in own):
        return None

    def relative(path: str) -> list[Any]:
        return [True, os.path.relpath(path, prefix)] if inside(path) else [False, path]

    answer = {**data, "sys_path": [relative(p) for p in sys_path], "site": [relative(p) for p in sites]}
    scheme = data.get("scheme")
    if isinstance(scheme, dict):
        answer["scheme"] = {k: [True, "."] if str(v) == prefix else relative(str(v)) for k, v in scheme.items()}
    outside = {p: _mtime(p) for p in sys_path if not inside(p)}
    return {"answer": answer, "folders": outside, "files": _path_files(list(outside)),
            "inside": [os.path.relpath(p, prefix) for p in own]}


def _path_files(folders: list[str]) -> dict[str, list[int] | None]:
    """The ``.pth`` files and ``sitecustomize``/``usercustomize`` modules in ``folders``, each with its time and
    size: an edit in place changes what ``sys.path`` holds but not its folder's time."""
    found: dict[str, list[int] | None] = {}
    for folder in folders:
        try:
            names = _path_adders(folder)
        except OSError:
            continue
        for name in names[:_MAX_WATCHED]:
            path = os.path.join(folder, name)
            found[path] = _stamp(path)
    return found


def _stamp(path: str) -> list[int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return [found.st_mtime_ns, found.st_size]


def _is_script(path: str) -> bool:
    """Whether the file ``path`` runs is a script (``#!``: a pyenv shim, a wrapper), which may start a different
    interpreter on each run: its answer is never kept."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the open: no script, the probe refuses it
            return False
        with open(path, "rb") as handle:
            return handle.read(2) == b"#!"
    except OSError:
        return True


def _adds_to_path(folder: str) -> bool:
    """Whether ``folder`` holds a ``.pth`` file or a ``sitecustomize``/``usercustomize`` module (or cannot be read
    as a folder that exists)."""
    try:
        return bool(_path_adders(folder))
    except FileNotFoundError:
        return False
    except OSError:
        return True


def _path_adders(folder: str) -> list[str]:
    """The names in ``folder`` that can add to ``sys.path``: ``.pth`` files, ``sitecustomize``/``usercustomize``."""
    with os.scandir(folder) as entries:
        return [e.name for e in entries if e.name.endswith(".pth") or e.name in _ADDS_TO_PATH]


def _prefix(path: str) -> str:
    return os.path.dirname(os.path.dirname(path))


def _file(found: os.stat_result) -> list[int]:
    return [found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns]


def _variables(environ: Mapping[str, str]) -> list[str | None]:
    """The variables that change ``sys.path``, and the current folder when ``PYTHONPATH`` names one relative to it."""
    values = [environ.get(name) for name in _PATH_VARIABLES]
    if any(p and not os.path.isabs(p) for p in (environ.get("PYTHONPATH") or "").split(os.pathsep)):
        values.append(os.getcwd())
    return values


def _kernel() -> list[str] | None:
    return list(os.uname()) if hasattr(os, "uname") else None


def _digest(parts: object) -> str:
    return sha256_hex(json.dumps(parts).encode())


def _mtime(folder: str) -> int | None:
    try:
        return os.stat(folder).st_mtime_ns
    except OSError:
        return None
