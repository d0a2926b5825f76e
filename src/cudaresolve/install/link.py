"""Install an unpacked, verified wheel into an environment by hard-linking its files, and remove an installed
distribution by its RECORD. Does I/O: writes and removes files in the target environment.

This is what ``uv pip install`` does from its cache, done in this process: no second program starts and asks
the interpreter again what it is (the probe's answer, kept in the user cache, gives the folders). It follows
the wheel format (binary-distribution-format): the members at the top go to ``purelib`` when the wheel's
``WHEEL`` says ``Root-Is-Purelib: true``, else to ``platlib``; ``<name>.data/<key>/`` to that key's folder
(``purelib``, ``platlib``, ``scripts``, ``headers``, ``data``); a script whose first line is ``#!python`` gets
the target interpreter in its place, and each ``console_scripts``/``gui_scripts`` entry point a launcher in
``scripts``. Every other file is a hard link to the cached copy (a copy where the cache is on another file
system). The installed ``RECORD`` lists every file written with its sha256 and size (the wheel's RECORD gives
those of the linked files), and ``INSTALLER`` says ``cudaresolve``; ``direct_url.json`` names the cached wheel
(as uv's own install from that file wrote it), which is how a later sync knows the package for the locked file
without reading its RECORD. No byte-code is compiled (uv's default).

``remove`` deletes what an installed distribution's RECORD lists, only inside ``inside`` (the environment's
folders), and the folders left empty; the byte-code of each ``.py`` removed goes with it.

Spec: https://packaging.python.org/en/latest/specifications/binary-distribution-format/ and
https://packaging.python.org/en/latest/specifications/entry-points/
"""

from __future__ import annotations

import base64
import contextlib
import csv
import io
import json
import os
import re
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from cudaresolve.core.digest import sha256_bytes
from cudaresolve.errors import InvalidBinary
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

__all__ = ["INSTALLER_NAME", "Scheme", "StaleTree", "install_tree", "remove"]

#: What the installed ``INSTALLER`` file says.
INSTALLER_NAME: Final = "cudaresolve"
_KEYS: Final = ("purelib", "platlib", "scripts", "headers", "data")
_ENTRY: Final = re.compile(r"^\s*([\w.]+)\s*:\s*([\w.]+)\s*(?:\[[^\]]*\])?\s*$")
_SCRIPT_NAME: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
_MAX_SHEBANG: Final = 127  # the kernel's limit on a #! line


@dataclass(frozen=True, slots=True, kw_only=True)
class Scheme:
    """Where an environment's files go (``sysconfig.get_paths()`` of its interpreter) and the interpreter
    its scripts run with. ``headers``: the folder of every distribution's header folders."""

    purelib: str
    platlib: str
    scripts: str
    data: str
    headers: str
    python: str

    @property
    def folders(self) -> tuple[str, ...]:
        """The folders installing writes into (and removing removes from)."""
        return (self.purelib, self.platlib, self.scripts, self.data, self.headers)


def install_tree(tree: Path, scheme: Scheme, *, url: str, sha256: str) -> str:
    """Install the unpacked wheel ``tree`` (``unpack.unpacked``) into ``scheme``; the ``.dist-info`` folder
    written. ``url``: the wheel file's URL for ``direct_url.json``, ``sha256`` its hash. A tree that is no
    wheel (no single ``.dist-info``, a RECORD that does not read) is ``InvalidBinary``; a kept file whose size
    is not the wheel's RECORD's (changed through a hard link since) is ``StaleTree``, before anything is
    written."""
    info = _dist_info(tree)
    wheel_record = _wheel_record(tree / info)
    root = scheme.purelib if _root_is_purelib(tree / info / "WHEEL") else scheme.platlib
    placed = _placed(tree, info, scheme, root)
    for source, _, rel, script in placed:
        known = wheel_record.get(rel)
        if not script and known is not None and str(os.stat(source).st_size) != known[1]:
            raise StaleTree(rel)
    rows: list[tuple[str, str, str]] = []
    made: set[str] = set()
    for source, target, rel, script in placed:
        _folder(os.path.dirname(target), made)
        if script:
            digest, size = _write(target, _shebang(source, scheme.python), executable=True)
        else:
            _link(source, target)
            digest, size = wheel_record.get(rel) or _hashed(target)
        rows.append((_relative(target, root), digest, size))
    rows += _launchers(tree / info / "entry_points.txt", scheme, root, made)
    meta = os.path.join(root, info)
    _folder(meta, made)
    rows.append((f"{info}/INSTALLER", *_write(os.path.join(meta, "INSTALLER"), f"{INSTALLER_NAME}\n".encode())))
    direct = json.dumps({"url": url, "archive_info": {"hashes": {"sha256": sha256}}}, sort_keys=True).encode()
    rows.append((f"{info}/direct_url.json", *_write(os.path.join(meta, "direct_url.json"), direct)))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows(rows)
    writer.writerow((f"{info}/RECORD", "", ""))
    _write(os.path.join(meta, "RECORD"), out.getvalue().encode())
    return meta


class StaleTree(Exception):  # not an error the user sees: the caller unpacks the wheel again
    """A kept, unpacked file differs from its wheel's RECORD (its path is the argument)."""


def _placed(tree: Path, info: str, scheme: Scheme, root: str) -> list[tuple[str, str, str, bool]]:
    """Each file of ``tree`` to install: (its kept path, where it goes, its RECORD path, whether it is a script
    to rewrite), by the wheel's ``.data`` layout."""
    data = info[: -len(".dist-info")] + ".data"
    homes = {**{k: getattr(scheme, k) for k in _KEYS}, "headers": os.path.join(scheme.headers, info.split("-")[0])}
    skipped = (f"{info}/RECORD", f"{info}/INSTALLER", f"{info}/direct_url.json")
    placed: list[tuple[str, str, str, bool]] = []
    for folder, _, names in os.walk(tree):
        rel_folder = os.path.relpath(folder, tree)
        for name in names:
            rel = name if rel_folder == "." else f"{rel_folder}/{name}".replace(os.sep, "/")
            if rel in skipped:
                continue
            parts = rel.split("/", 2)
            if parts[0] == data and len(parts) == 3 and parts[1] in homes:
                target, script = os.path.join(homes[parts[1]], parts[2]), parts[1] == "scripts"
            elif parts[0] == data:
                raise _bad(tree.name, f"{rel}: unknown .data folder")
            else:
                target, script = os.path.join(root, rel), False
            placed.append((os.path.join(folder, name), target, rel, script))
    return placed


def remove(dist_info: str, record: str | None, inside: Sequence[str]) -> None:
    """Remove the distribution whose ``.dist-info`` folder is ``dist_info`` (``record``: its RECORD's text,
    None when it has none: the folder alone goes): each listed file inside one of the ``inside`` folders, the
    byte-code of each ``.py`` among them, the folders left empty (up to those), then the ``.dist-info``."""
    site = os.path.dirname(dist_info)
    homes = tuple(os.path.join(os.path.realpath(f), "") for f in inside)
    emptied: set[str] = set()
    for row in csv.reader((record or "").splitlines()):
        if not row or not row[0]:
            continue
        path = os.path.normpath(os.path.join(site, row[0]))
        if not os.path.realpath(path).startswith(homes):
            continue
        for gone in (path, *_bytecode(path)):
            try:
                os.unlink(gone)
            except FileNotFoundError:
                continue
            except IsADirectoryError:
                break
            emptied.add(os.path.dirname(gone))
    shutil.rmtree(dist_info, ignore_errors=True)
    tops = {h.rstrip(os.sep) for h in homes}
    for folder in sorted(emptied, key=len, reverse=True):
        while os.path.realpath(folder) not in tops and os.path.realpath(folder).startswith(homes):
            try:
                os.rmdir(folder)
            except OSError:
                break
            folder = os.path.dirname(folder)


def _bad(tree: str, reason: str) -> InvalidBinary:
    """A kept wheel (its folder named by its sha256) that is no wheel."""
    return InvalidBinary(Text.of("lock.install.bad-wheel", file=tree, reason=reason),
                         hint=Text("lock.install.bad-wheel.hint"))


def _bytecode(path: str) -> list[str]:
    if not path.endswith(".py"):
        return []
    cache = os.path.join(os.path.dirname(path), "__pycache__")
    stem = os.path.basename(path)[:-3] + "."
    try:
        return [os.path.join(cache, n) for n in os.listdir(cache) if n.startswith(stem) and n.endswith(".pyc")]
    except OSError:
        return []


def _dist_info(tree: Path) -> str:
    found = [n for n in os.listdir(tree) if n.endswith(".dist-info") and (tree / n).is_dir()]
    if len(found) != 1:
        raise _bad(tree.name, f"{len(found)} .dist-info folders")
    return found[0]


def _wheel_record(info: Path) -> dict[str, tuple[str, str]]:
    """The wheel's RECORD: path -> (hash, size) of each row that has both."""
    try:
        text = (info / "RECORD").read_text(encoding="utf-8")
        rows = list(csv.reader(text.splitlines()))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise _bad(info.parent.name, f"RECORD: {exc}") from exc
    return {r[0]: (r[1], r[2]) for r in rows if len(r) >= 3 and r[1] and r[2]}


def _root_is_purelib(wheel: Path) -> bool:
    try:
        text = wheel.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    found = re.search(r"(?im)^Root-Is-Purelib:\s*(\S+)", text)
    return found is None or found.group(1).lower() == "true"


def _folder(path: str, made: set[str]) -> None:
    if path not in made:
        os.makedirs(path, exist_ok=True)
        made.add(path)


def _link(source: str, target: str) -> None:
    """``target`` made a hard link to ``source``, replacing a file there; a copy where linking fails."""
    for _ in range(2):
        try:
            os.link(source, target)
            return
        except FileExistsError:
            if os.path.isdir(target) and not os.path.islink(target):
                raise
            os.unlink(target)
        except OSError:
            break
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target)
    shutil.copyfile(source, target)
    shutil.copymode(source, target)


def _write(path: str, data: bytes, *, executable: bool = False) -> tuple[str, str]:
    """``data`` written at ``path`` (a file there replaced, never written through); its RECORD hash and size."""
    if os.path.lexists(path):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o755 if executable else 0o644)
    with os.fdopen(fd, "wb") as sink:
        sink.write(data)
    return _record_hash(data), str(len(data))


def _hashed(path: str) -> tuple[str, str]:
    import hashlib  # a file: OpenSSL's speed per byte

    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as source:
        while chunk := source.read(1024 * 1024):
            digest.update(chunk)
            size += len(chunk)
    return "sha256=" + base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode(), str(size)


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(sha256_bytes(data)).rstrip(b"=").decode()


def _relative(target: str, root: str) -> str:
    inside = os.path.join(root, "")
    if target.startswith(inside) and "/." not in target[len(inside):]:  # the usual case, without relpath's work
        return target[len(inside):].replace(os.sep, "/")
    return os.path.relpath(target, root).replace(os.sep, "/")


def _interpreter_line(python: str) -> bytes:
    """The first line(s) of a script run by ``python``: ``#!python`` itself, or, for a path the kernel would
    cut or split (long, or with a space), ``/bin/sh`` starting it."""
    if len(python) + 2 <= _MAX_SHEBANG and " " not in python:
        return f"#!{python}\n".encode()
    quoted = python.replace("'", "'\"'\"'")
    return f"#!/bin/sh\n'''exec' '{quoted}' \"$0\" \"$@\"\n' '''\n".encode()


def _shebang(source: str, python: str) -> bytes:
    with open(source, "rb") as handle:
        data = handle.read()
    if data.startswith((b"#!python", b"#!pythonw")):
        rest = data.partition(b"\n")[2]
        return _interpreter_line(python) + rest
    return data


def _launchers(entry_points: Path, scheme: Scheme, root: str, made: set[str]) -> list[tuple[str, str, str]]:
    """A launcher in ``scripts`` for each console or GUI entry point; their RECORD rows."""
    groups = _entry_points(entry_points)
    rows: list[tuple[str, str, str]] = []
    for name, value in (*groups.get("console_scripts", ()), *groups.get("gui_scripts", ())):
        found = _ENTRY.match(value)
        if found is None or not _SCRIPT_NAME.match(name) or name in (".", ".."):
            continue
        module, attribute = found.groups()
        head = attribute.split(".")[0]
        body = (f"import sys\nfrom {module} import {head}\n"
                f"if __name__ == \"__main__\":\n"
                f"    if sys.argv[0].endswith(\".exe\"):\n        sys.argv[0] = sys.argv[0][:-4]\n"
                f"    sys.exit({attribute}())\n")
        _folder(scheme.scripts, made)
        target = os.path.join(scheme.scripts, name)
        rows.append((_relative(target, root), *_write(target, _interpreter_line(scheme.python) + body.encode(),
                                                      executable=True)))
    return rows


def _entry_points(path: Path) -> Mapping[str, list[tuple[str, str]]]:
    """``entry_points.txt`` read as ``{group: [(name, value), ...]}`` (an INI file; missing: none)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    groups: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = groups.setdefault(line[1:-1].strip(), [])
        elif current is not None and "=" in line:
            name, _, value = line.partition("=")
            current.append((name.strip(), value.strip()))
    return groups
