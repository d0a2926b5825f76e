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
without reading its RECORD. Those three files are the same in every environment (``RECORD`` where no script is
written for the environment): given a ``store`` folder, each is kept there once, by its sha256, and linked, as
the wheel's files are. No byte-code is compiled (uv's default).

Spec: https://packaging.python.org/en/latest/specifications/binary-distribution-format/ and
https://packaging.python.org/en/latest/specifications/entry-points/
"""

from __future__ import annotations

import binascii
import contextlib
import csv
import io
import json
import os
import re
import stat
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from cudaresolve.core.digest import sha256_bytes
from cudaresolve.core.files import owned_by_user, walk, write_bytes_atomic
from cudaresolve.core.platforms import canonical_name
from cudaresolve.errors import InvalidBinary
from cudaresolve.install.wheel_members import (
    RESERVED,
    dist_info_project,
    identity_problem,
    member_problem,
    tag_problem,
)
from cudaresolve.text.model import Text

#: How much of a wheel's METADATA is read for its ``Name`` and ``Version`` (the header block comes first).
_METADATA_MOST: Final = 16 * 1024 * 1024  # read of a METADATA file: lazy_wheel's bound

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

__all__ = [
    "INSTALLER_NAME", "Scheme", "StaleTree", "TreePlan", "apply", "dist_info_project", "install_tree", "plan_tree",
]

#: What the installed ``INSTALLER`` file says.
INSTALLER_NAME: Final = "cudaresolve"
_KEYS: Final = ("purelib", "platlib", "scripts", "headers", "data")
_ENTRY: Final = re.compile(r"^\s*([\w.]+)\s*:\s*([\w.]+)\s*(?:\[[^\]]*\]\s*)?$")  # one blank run: linear
_SCRIPT_NAME: Final = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")
_URLSAFE: Final = bytes.maketrans(b"+/", b"-_")  # base64 to its urlsafe form (``base64`` itself costs an import)
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_MAX_SHEBANG: Final = 127  # the kernel's limit on a #! line
_MAX_LAUNCHERS: Final = 10_000  # console and GUI scripts of one wheel: real ones have a few dozen at most


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


def install_tree(
    tree: Path, scheme: Scheme, *, url: str, sha256: str, wheel: str = "", store: str | None = None
) -> str:
    """Install the unpacked wheel ``tree`` (``unpack.unpacked``) into ``scheme``: ``plan_tree``, then ``apply``."""
    return apply(plan_tree(tree, scheme, wheel=wheel), scheme, url=url, sha256=sha256, store=store)


@dataclass(frozen=True, slots=True, kw_only=True)
class TreePlan:
    """A kept wheel checked and ready to link: its ``.dist-info`` name, the folder RECORD is relative to, each of
    its folders as (kept folder, target folder, its path in the wheel, its path in the installed RECORD, scripts to
    rewrite?, file names), the wheel's RECORD rows by path, and its entry points as (script name, module,
    attribute)."""

    info: str
    root: str
    folders: tuple[tuple[str, str, str, str, bool, tuple[str, ...]], ...]
    record: Mapping[str, tuple[str, str]] = field(repr=False)
    launchers: tuple[tuple[str, str, str], ...] = ()


def plan_tree(
    tree: Path, scheme: Scheme, *, wheel: str = "", check: bool = True, project: str | None = None,
    version: str | None = None,
) -> TreePlan:
    """``tree``'s files placed by the wheel's layout (module docstring), nothing written. ``InvalidBinary`` (naming
    ``wheel``, the file's name) for a tree that is no wheel: no single ``.dist-info``, one naming another project
    than ``project`` (the locked name, when given: pip and uv refuse such a wheel too) or, by its folder or its
    METADATA, of another project or ``version`` (the locked one) than the lock's, a RECORD that does not read,
    an unknown ``.data`` folder, a script that would replace the environment's interpreter; ``StaleTree`` for a
    kept file missing or of another size than the wheel's RECORD says (changed through a hard link since), unless
    not ``check`` (a tree just unpacked: the wheel's RECORD itself is wrong, and the archive is what is installed,
    as uv and pip install it)."""
    label = wheel or tree.name
    info = _dist_info(tree, label)
    if project is not None and dist_info_project(info) != canonical_name(project):
        raise _bad(label, f"its metadata ({info}) is of another project than {project}")
    if project is not None:
        _check_identity(tree / info, label, project, version)
    record = _wheel_record(tree / info, label)
    root = scheme.purelib if _root_is_purelib(tree / info / "WHEEL") else scheme.platlib
    data = info[: -len(".dist-info")] + ".data"
    # headers go to a folder named by the normalized project name (``my-pkg``, as uv and pip name it)
    homes = {**{k: getattr(scheme, k) for k in _KEYS}, "headers": os.path.join(scheme.headers, dist_info_project(info))}
    skipped = {f"{info}/RECORD", f"{info}/INSTALLER", f"{info}/direct_url.json"}
    top = str(tree)
    folders: list[tuple[str, str, str, str, bool, tuple[str, ...]]] = []
    seen = 0
    for folder, _, names in walk(top):
        rel_dir = folder[len(top) + 1:].replace(os.sep, "/") if folder != top else ""
        parts = rel_dir.split("/", 2) if rel_dir else []
        if parts and parts[0] == data:
            if len(parts) < 2 or parts[1] not in homes:
                if names:
                    raise _bad(label, f"{rel_dir}/{names[0]}: not in a known .data folder")
                continue
            target = os.path.join(homes[parts[1]], *parts[2:])
        else:
            target = os.path.join(root, rel_dir) if rel_dir else root
        script = bool(parts) and parts[0] == data and parts[1] == "scripts"
        prefix = f"{rel_dir}/" if rel_dir else ""
        kept = tuple(n for n in names if prefix + n not in skipped)
        for name in kept:
            known = record.get(prefix + name)
            if known is not None:
                seen += 1
                if check and not script and str(os.stat(f"{folder}/{name}").st_size) != known[1]:
                    raise StaleTree(prefix + name)
            if (problem := member_problem(info, prefix + name)) is not None:  # another distribution, a script ...
                raise _bad(label, problem)
        placed = _relative(target, root)
        folders.append((folder, target, prefix, "" if placed == "." else placed + "/", script, kept))
    if check and seen != sum(1 for path in record if path not in skipped):
        raise StaleTree("a file its RECORD lists is missing")
    launchers = tuple(_entry_points(tree / info / "entry_points.txt"))
    if len(launchers) > _MAX_LAUNCHERS:  # each is a file written into the environment
        raise _bad(label, f"its entry_points.txt names more than {_MAX_LAUNCHERS:,} scripts")
    for name, _, _ in launchers:
        if _reserved(name):
            raise _bad(label, f"the entry point {name} would replace the environment's interpreter")
    return TreePlan(info=info, root=root, folders=tuple(folders), record=record, launchers=launchers)


def apply(plan: TreePlan, scheme: Scheme, *, url: str, sha256: str, store: str | None = None) -> str:
    """Write ``plan`` into the environment (module docstring); the ``.dist-info`` folder written. An ``OSError``
    removes what this call wrote before it is raised again. ``store``: a cache folder of this wheel's own where
    the metadata files this writes (``INSTALLER``, ``direct_url.json``, and ``RECORD`` when no file of the wheel
    is written for this environment alone: no script, no launcher) are kept by their sha256, so that a later
    install links them as it links the wheel's files (making a file costs the file system several times what
    linking one does)."""
    rows: list[tuple[str, str, str]] = []
    written: list[str] = []
    made: set[str] = set()
    shared = store if not plan.launchers and not any(f[4] for f in plan.folders) else None
    try:
        for source, target, inside, prefix, script, names in plan.folders:
            os.makedirs(target, exist_ok=True)
            made.add(target)
            for name in names:
                path = f"{target}/{name}"
                written.append(path)
                if script:
                    rows.append((prefix + name, *_write(path, _shebang(f"{source}/{name}", scheme.python),
                                                        executable=True)))
                    continue
                _link(f"{source}/{name}", path)
                rows.append((prefix + name, *(plan.record.get(inside + name) or _hashed(path))))
        for name, module, attribute in plan.launchers:
            os.makedirs(scheme.scripts, exist_ok=True)
            path = os.path.join(scheme.scripts, name)
            written.append(path)
            rows.append((_relative(path, plan.root), *_write(path, _launcher(scheme.python, module, attribute),
                                                              executable=True)))
        meta = os.path.join(plan.root, plan.info)
        if meta not in made:
            os.makedirs(meta, exist_ok=True)
        direct = json.dumps({"url": url, "archive_info": {"hashes": {"sha256": sha256}}}, sort_keys=True).encode()
        for name, body in (("INSTALLER", f"{INSTALLER_NAME}\n".encode()), ("direct_url.json", direct)):
            written.append(os.path.join(meta, name))
            rows.append((f"{plan.info}/{name}", *_put(os.path.join(meta, name), body, store)))
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerows(rows)
        writer.writerow((f"{plan.info}/RECORD", "", ""))
        written.append(os.path.join(meta, "RECORD"))
        _put(os.path.join(meta, "RECORD"), out.getvalue().encode(), shared)
    except OSError:
        for path in written:
            with contextlib.suppress(OSError):
                os.unlink(path)
        raise
    return meta


class StaleTree(Exception):  # not an error the user sees: the caller unpacks the wheel again
    """A kept, unpacked file differs from its wheel's RECORD (its path is the argument)."""


def _reserved(name: str) -> bool:
    """A script name that is the environment's own (its interpreter, its activation scripts)."""
    return RESERVED.match(name) is not None


def _check_identity(info: Path, label: str, project: str, version: str | None) -> None:
    """The wheel's ``.dist-info`` folder and its METADATA name the locked ``project`` and ``version``
    (``wheel_members.identity_problem``), and its ``WHEEL`` file is of version 1 with its file name's tags
    (``tag_problem``): a wheel whose hash matches but which installs another distribution is refused."""
    try:
        with open(info / "METADATA", "rb") as f:
            metadata = f.read(_METADATA_MOST).decode("utf-8", errors="replace")
    except OSError:
        raise _bad(label, f"{info.name}/METADATA cannot be read") from None
    if (problem := identity_problem(info.name, metadata, project, version)) is not None:
        raise _bad(label, problem)
    if (problem := tag_problem(info / "WHEEL", label)) is not None:  # the name the interpreter was checked by
        raise _bad(label, problem)


def _bad(label: str, reason: str) -> InvalidBinary:
    """The wheel ``label`` (its file's name) is no wheel."""
    return InvalidBinary(Text.of("lock.install.bad-wheel", file=label, reason=reason),
                         hint=Text("lock.install.bad-wheel.hint"))


def _dist_info(tree: Path, label: str) -> str:
    found = [n for n in os.listdir(tree) if n.endswith(".dist-info") and (tree / n).is_dir()]
    if len(found) != 1:
        raise _bad(label, f"{len(found)} .dist-info folders")
    return found[0]


def _wheel_record(info: Path, label: str) -> dict[str, tuple[str, str]]:
    """The wheel's RECORD: path -> (hash, size) of each row that has both. Read a row at a time; refused over
    ``MAX_RECORD_BYTES`` or past more rows than an archive may hold (millions of short rows took gigabytes)."""
    from cudaresolve.core.archive import MAX_ARCHIVE_MEMBERS
    from cudaresolve.install.record import MAX_RECORD_BYTES

    found: dict[str, tuple[str, str]] = {}
    try:
        with open(info / "RECORD", encoding="utf-8", newline="") as handle:
            if os.fstat(handle.fileno()).st_size > MAX_RECORD_BYTES:
                raise _bad(label, f"its RECORD is over {MAX_RECORD_BYTES // 1024**2} MiB")
            for count, row in enumerate(csv.reader(handle)):
                if count > MAX_ARCHIVE_MEMBERS:
                    raise _bad(label, f"its RECORD lists more than {MAX_ARCHIVE_MEMBERS:,} files, more than a wheel "
                                      "may hold")
                if len(row) >= 3 and row[1] and row[2]:
                    found[row[0]] = (row[1], row[2])
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise _bad(label, f"RECORD: {exc}") from exc
    return found


def _root_is_purelib(wheel: Path) -> bool:
    try:
        text = wheel.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    found = re.search(r"(?im)^Root-Is-Purelib:\s*(\S+)", text)
    return found is None or found.group(1).lower() == "true"


def _link(source: str, target: str, *, copy: bool = True) -> None:
    """``target`` made a hard link to ``source``, replacing a file there; a copy where linking fails (unless not
    ``copy``: the ``OSError`` is raised)."""
    for _ in range(2):
        try:
            os.link(source, target)
            return
        except FileExistsError:
            if os.path.isdir(target) and not os.path.islink(target):
                raise
            os.unlink(target)
        except OSError:
            if not copy:
                raise
            break
    with contextlib.suppress(FileNotFoundError):
        os.unlink(target)
    import shutil  # here: most installs link every file

    shutil.copyfile(source, target)
    shutil.copymode(source, target)


def _put(path: str, data: bytes, store: str | None) -> tuple[str, str]:
    """``data`` at ``path`` as ``_write`` puts it, but a hard link to ``store``'s copy of it (named by its
    sha256) where there is a ``store``. The kept copy is read first: one missing, or changed in place through a
    link (any byte), is made again, through a temporary name; one that is not a regular file of this user's, in
    a real folder of this user's, is not used (the file is written)."""
    digest = _record_hash(data)
    if store is not None:
        kept = os.path.join(store, digest[len("sha256="):])
        try:
            if _kept_bytes(kept, len(data)) != data:
                _keep(kept, data)
            _link(kept, path, copy=False)
            return digest, str(len(data))
        except OSError:  # another file system, a store that cannot be written or trusted: the file is written
            pass
    _write(path, data)
    return digest, str(len(data))


def _kept_bytes(kept: str, size: int) -> bytes | None:
    """Up to ``size + 1`` bytes of the store's file ``kept``; None when there is none. ``OSError`` for one that is
    a link, not a regular file, or not this user's."""
    try:
        fd = os.open(kept, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not owned_by_user(st):
            raise OSError(f"{kept}: not a file of the store")
        return os.read(fd, size + 1)
    finally:
        os.close(fd)


def _keep(kept: str, data: bytes) -> None:
    """``data`` made the store's file ``kept``, 0644 whatever the umask (as the unpacked files are), its folder
    made when missing; a reader sees all of it or none. ``OSError`` where the folder is a link or not this
    user's."""
    folder = os.path.dirname(kept)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        st = os.lstat(folder)
        if not stat.S_ISDIR(st.st_mode) or not owned_by_user(st):
            raise OSError(f"{folder}: not a folder of the store") from None
    write_bytes_atomic(kept, data, mode=0o644, durable=False)


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
    return _record_form(digest.digest()), str(size)


def _record_hash(data: bytes) -> str:
    return _record_form(sha256_bytes(data))


def _record_form(digest: bytes) -> str:
    """A sha256 as RECORD writes it: ``sha256=`` and the urlsafe base64 of the digest, unpadded."""
    return "sha256=" + binascii.b2a_base64(digest, newline=False).translate(_URLSAFE).rstrip(b"=").decode()


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


def _launcher(python: str, module: str, attribute: str) -> bytes:
    """A launcher script running ``module:attribute`` with ``python``."""
    head = attribute.split(".")[0]
    body = (f"import sys\nfrom {module} import {head}\n"
            f"if __name__ == \"__main__\":\n"
            f"    if sys.argv[0].endswith(\".exe\"):\n        sys.argv[0] = sys.argv[0][:-4]\n"
            f"    sys.exit({attribute}())\n")
    return _interpreter_line(python) + body.encode()


def _entry_points(path: Path) -> list[tuple[str, str, str]]:
    """The console and GUI entry points of ``entry_points.txt`` (an INI file; missing: none) as (script name,
    module, attribute); one whose name or value is not of the entry-point form is left out."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    found: list[tuple[str, str, str]] = []
    group = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")) or len(found) > _MAX_LAUNCHERS:
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
        elif group in ("console_scripts", "gui_scripts") and "=" in line:
            name, _, value = line.partition("=")
            name, matched = name.strip(), _ENTRY.match(value.strip())
            if matched is not None and _SCRIPT_NAME.match(name) and name not in (".", ".."):
                found.append((name, matched.group(1), matched.group(2)))
    return found
