"""Make an environment equal to a lock: keep what is installed as locked, replace the rest. Does I/O: runs the
installer.

``sync_environment`` reads what the target interpreter has installed (``installed.read_installed``),
has the verified wheel of each locked package (``fetch.gather``: from the lock's own URLs into the
shared, sha256-keyed cache), and decides per package (``compare``): a package is kept when the
installed version (local label included) is the locked one, its files are the locked wheel's by
RECORD (``record.same_files``) and none of them is missing or of another size on disk; anything
else (not installed, another version, another build of the same version, changed files) is
installed from the verified file, replacing what is there: a wheel in this process (``inprocess``),
else by one run of the installer (``installer.choose_installer``: uv when present, else pip). pip
alone would keep an installed distribution of the same version without looking at it.

Nothing is resolved: a lock is the whole environment, and the installer follows no dependency.
Before anything is installed, the ``Requires-Dist`` of every locked file (read from the
hash-checked wheel itself, or from the installed copy of a package kept as locked) is evaluated for
the target interpreter (``verdicts.check_closure``); a requirement the lock does not meet is
``IncompleteLock`` and nothing changes. Everything else installed (but pip, setuptools and wheel)
is reported, and removed with ``exact`` (``uv pip sync``'s behaviour).

The RECORD of each downloaded, hash-checked wheel is kept in the user cache under the wheel's
sha256 (``record.store_record``), so a package installed as locked is recognised without
downloading its wheel again: a second run over the same lock downloads and installs nothing.
"""

from __future__ import annotations

import enum
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from cudaresolve.core.paths import default_cache_dir
from cudaresolve.core.platforms import canonical_name
from cudaresolve.install.fetch import Workdir
from cudaresolve.install.inprocess import (
    hand_to_uv,
    link_locked,
    link_plan,
    link_scheme,
    linkable,
    prune_unpacked,
    remove_dists,
    remove_plan,
)
from cudaresolve.install.installed import check_built, read_installed, running_tool
from cudaresolve.install.installer import Installer, choose_installer, folder_index
from cudaresolve.install.pip import download_commands, run_pip, wheel_dir
from cudaresolve.install.record import cached_record, parse_record, read_wheel_record, same_files, store_record
from cudaresolve.install.verdicts import check_closure
from cudaresolve.install.wheelcache import FILES, cache_path, split_direct, trim
from cudaresolve.lock.model import Lock
from cudaresolve.resolve.model import FileKind
from cudaresolve.text.model import Text, literal

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from cudaresolve.install.installed import InstalledDist
    from cudaresolve.install.link import Scheme
    from cudaresolve.install.pip import PipCommand
    from cudaresolve.resolve.model import LockedPackage
    from cudaresolve.text.findings import Notice

__all__ = ["KEEP", "RECORD_CACHE", "Change", "SyncResult", "compare", "foreign", "sync_environment"]

#: Never reported or removed as foreign: the installer and the build tools every venv has.
KEEP: Final = frozenset({"pip", "setuptools", "wheel"})
#: The folder under the user cache that keeps verified wheels' RECORDs (``record.store_record``).
RECORD_CACHE: Final = "wheel-records"
_NAMED: Final = 30  # foreign packages named in the warning; the rest are counted


class Change(enum.Enum):
    """Why a locked package is (re)installed."""

    MISSING = "missing"
    VERSION = "version"
    FILES = "files"
    DAMAGED = "damaged"
    UNREADABLE = "unreadable"
    FOLDER = "folder"  # a local project folder not installed in place: the installer builds it again

    @property
    def text(self) -> Text:
        """Why, in words (``lock.sync.why.*``)."""
        return _WHY[self]


_WHY: Final = {
    Change.MISSING: Text("lock.sync.why.missing"),
    Change.VERSION: Text("lock.sync.why.version"),
    Change.FILES: Text("lock.sync.why.files"),
    Change.DAMAGED: Text("lock.sync.why.damaged"),
    Change.UNREADABLE: Text("lock.sync.why.unreadable"),
    Change.FOLDER: Text("lock.sync.why.folder"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncResult:
    """pip's exit code (the first that failed, else 0); the packages installed and why, those kept
    as they were, the foreign ones found (installed, not locked, not needed) and those removed."""

    returncode: int
    installed: tuple[tuple[str, Change], ...] = ()
    kept: tuple[str, ...] = ()
    foreign: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    notices: tuple[Notice, ...] = ()


def sync_environment(
    lock: Lock,
    *,
    python: str | None = None,
    markers: Mapping[str, str] | None = None,
    exact: bool = False,
    dry_run: bool = False,
    echo: Callable[[PipCommand], None] | None = None,
    env: Mapping[str, str] | None = None,
    record_cache: Path | None = None,
    file_cache: Path | None = None,
    offline: bool = False,
    paths: Sequence[str] | None = None,
    prefix: str | None = None,
    scheme: Sequence[tuple[str, str]] = (),
) -> SyncResult:
    """Make ``python``'s environment (None: this interpreter's) equal to ``lock`` (module docstring).

    ``markers`` is the target's PEP 508 environment (None: asked of the interpreter). Each installer
    command goes to ``echo`` before it runs; with ``dry_run`` the commands of a full install go to
    ``echo`` and nothing is run or written (nor read, but with ``exact`` what is installed: what it would remove is
    planned too). ``env`` replaces ``os.environ`` for the installer.
    ``record_cache`` holds the RECORDs of verified wheels (None: ``RECORD_CACHE`` in the user cache),
    ``file_cache`` the verified files (None: ``wheelcache.FILES`` there); ``offline``: files only
    from that cache; ``paths``: the target's ``sys.path`` when known (``environment.read_target``); ``prefix``:
    its ``sys.prefix`` when known, the environment whose own packages are reported (and with ``exact`` removed)
    when the lock does not pin them: never one found through ``PYTHONPATH``, the user site or, from a venv, the
    system site-packages it sees; ``scheme``: its folders (``environment.TargetEnvironment.scheme``), without
    which the wheels go to uv or pip instead of the in-process installer (``inprocess``)."""
    interpreter = python or sys.executable
    root = default_cache_dir() / FILES if file_cache is None else file_cache
    linking = link_scheme(scheme, interpreter, env)
    with Workdir() as workdir:
        if dry_run:
            planned = choose_installer(interpreter, has_pip=True, env=env, needed=linking is None)
            commands = _plan(lock, planned, root, workdir(), linking)
            extra: tuple[str, ...] = ()
            if exact:  # what the real run would remove is part of the plan
                extra = foreign(lock, read_installed(python, records=(), paths=paths), prefix=prefix)
                commands += [remove_plan(extra) if linking else planned.uninstall(extra)] if extra else []
            for command in commands:
                if echo is not None:
                    echo(command)
            return SyncResult(returncode=0, foreign=extra)
        before = read_installed(python, records=(p.name for p in lock.packages), paths=paths)
        simple = linking is not None and all(p.url and linkable(p, Path(p.filename or p.url)) for p in lock.packages)
        installer = choose_installer(interpreter, has_pip="pip" in before, env=env, needed=linking is None,
                                     look=not simple)  # every file a verified wheel to link: no tool looked for
        cache = default_cache_dir() / RECORD_CACHE if record_cache is None else record_cache
        fetched = _Fetch(installer=installer, workdir=workdir, root=root, offline=offline, env=env, echo=echo)
        grown = _mtime(root)
        code, changes, files = _compare_all(lock, before, cache, fetched)
        grown = _mtime(root) != grown  # an entry was added: the cache may have to be trimmed
        if code != 0:
            return SyncResult(returncode=code)
        todo = {name: change for name, change in changes.items() if change is not None}
        if linking is not None and hand_to_uv((p for p in lock.packages if p.name in todo),
                                              lambda sha: cached_record(cache, sha), env):
            linking, installer = None, choose_installer(interpreter, has_pip="pip" in before, env=env)
        if linking is None:  # wheels for uv or pip (chosen, or handed over): what this process's linker refuses
            from cudaresolve.install.wheel_members import check_wheel_files

            check_wheel_files((files[p.name], p.name, p.version or None) for p in lock.packages
                              if p.name in todo and linkable(p, files.get(p.name)))  # fmt: skip
        replaced = [p for p in lock.packages if todo.get(p.name, Change.MISSING) not in (Change.MISSING, Change.FOLDER)]
        result = SyncResult(
            returncode=0,
            installed=tuple(todo.items()),
            kept=tuple(name for name, change in changes.items() if change is None),
            notices=tuple(_differs(p, before[canonical_name(p.name)], todo[p.name]) for p in replaced),
        )
        if markers is None:
            from cudaresolve.install.verify import interpreter_environment

            markers = interpreter_environment(python)
        kept = {p.name: before[canonical_name(p.name)].requires for p in lock.packages if p.name not in todo}
        check_closure(lock, kept, files, markers, cache.parent)
        extra = foreign(lock, before, prefix=prefix)  # installing follows no dependency: nothing else is added
        early = False
        if exact and extra and linking is not None:  # removed before the wheels are linked: a file both hold stays
            _remove(python, paths, extra, linking, echo)  # the lock's
            early = True
        if todo:
            # the installer's commands first (none at hand is an error before anything changes), then the wheels
            # in this process, then what needs a build by the installer
            commands = _installs(lock, todo, files, installer, replaced, linked=linking is not None)
            if linking is not None:
                link_locked([p for p in lock.packages if p.name in todo], files, linking, before, root,
                            echo=echo, fresh=Change.DAMAGED in todo.values())
            code = run_pip(commands, env=env, echo=echo)
            if grown:
                trim(root, keep=files.values())
                if linking is not None:
                    prune_unpacked(root)
            if code != 0:
                return replace(result, returncode=code)
            built = [p for p in lock.packages if p.name in todo and p.kind is FileKind.DIRECTORY]
            after = read_installed(python, paths=paths) if built else {}
            if built and (refused := check_built(built, after, before, (p.name for p in lock.packages))):
                if refused[1]:  # a build that made another project: what it installed goes again
                    run_pip([installer.uninstall(refused[1])], env=env, echo=echo)
                raise refused[0]
        if not extra:
            return result
        if not exact:
            return replace(result, foreign=extra, notices=(*result.notices, _foreign(extra)))
        from cudaresolve.text.findings import Notice  # here: an install that removes nothing says nothing

        removing = Notice(
            code="removed-not-in-lock", text=Text.of("lock.sync.removing", count=len(extra), names=_names(extra))
        )
        code = 0 if early else run_pip([installer.uninstall(extra)], env=env, echo=echo)
        return replace(
            result,
            returncode=code,
            foreign=extra,
            removed=extra if code == 0 else (),
            notices=(*result.notices, removing),
        )


def _remove(
    python: str | None, paths: Sequence[str] | None, names: tuple[str, ...], scheme: Scheme,
    echo: Callable[[PipCommand], None] | None,
) -> None:
    """``--exact`` in this process: the distributions ``names`` removed, their RECORDs read now."""
    if echo is not None:
        echo(remove_plan(names))
    remove_dists(read_installed(python, records=names, paths=paths), names, scheme)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Fetch:
    """How the wheels to compare and install are had (``fetch.gather``'s settings)."""

    installer: Installer
    workdir: Callable[[], str]
    root: Path
    offline: bool
    env: Mapping[str, str] | None
    echo: Callable[[PipCommand], None] | None


def _installs(
    lock: Lock, todo: Mapping[str, Change], files: Mapping[str, Path], installer: Installer,
    replaced: Sequence[LockedPackage], *, linked: bool = False,
) -> list[PipCommand]:
    """One installer run for every locked file to install (those in ``todo``; with ``linked``, only those the
    in-process installer does not take: ``inprocess.linkable``), then one for the local project folders to install
    (built by the installer, in place when locked ``editable``)."""
    commands: list[PipCommand] = []
    wheels = [files[p.name] for p in lock.packages if p.name in todo and p.kind is not FileKind.DIRECTORY
              and not (linked and linkable(p, files.get(p.name)))]
    if wheels:
        fresh = Change.DAMAGED in todo.values()
        names = [p.name for p in replaced if p.kind is not FileKind.DIRECTORY]
        commands.append(installer.install(wheels, fresh=fresh, replacing=names))
    folders = [p for p in lock.packages if p.name in todo and p.kind is FileKind.DIRECTORY]
    if folders:
        commands.append(installer.install_folders(folders, index=folder_index(lock)))
    return commands


def _plan(
    lock: Lock, installer: Installer, root: Path, workdir: str, linking: Scheme | None = None
) -> list[PipCommand]:
    """``--dry-run``: the pip downloads of packages the lock gives no URL for, then one install of every
    file from the cache (where a file with a URL and a sha256 is fetched to)."""
    from cudaresolve.install.fetch import version_key

    folders = [p for p in lock.packages if p.kind is FileKind.DIRECTORY]
    packages = [p for p in lock.packages if p.kind is not FileKind.DIRECTORY]
    direct, rest = split_direct(packages, root)
    commands = download_commands(Lock(packages=tuple(rest)), python=installer.python, workdir=workdir,
                                 pip=installer.pip) if rest else []
    paths = {p.name: cache_path(root, p) for p in direct if p.kind is not FileKind.SDIST}
    files = [paths.get(p.name) or Path(wheel_dir(workdir), "-".join(version_key(p))) for p in packages]
    if linking is not None:
        linked = [f for p, f in zip(packages, files, strict=True) if linkable(p, f)]
        kept = set(linked)  # a set: a list's test made 50,000 packages a quadratic wait
        files = [f for f in files if f not in kept]
        commands += [link_plan(linked, linking)] if linked else []
    if files:
        commands.append(installer.install([f for f in files if f is not None]))
    if folders:
        commands.append(installer.install_folders(folders, index=folder_index(lock)))
    return commands


def _compare_all(
    lock: Lock, before: Mapping[str, InstalledDist], cache: Path, how: _Fetch
) -> tuple[int, dict[str, Change | None], dict[str, Path]]:
    """pip's exit code, in lock order each package's ``compare`` verdict, and the verified wheel of each
    package fetched. A package installed at its locked version from the locked file in the cache (its
    ``direct_url.json`` names that file, under the locked sha256) with no file missing or resized is kept
    as it is, RECORDs unread, as ``uv pip sync`` keeps it; one installed otherwise is compared with the
    cached RECORD of its locked wheel; the others, and those that differ, are fetched (``fetch.gather``)
    and compared."""
    from cudaresolve.install.fetch import gather

    verdicts: dict[str, Change | None] = {}
    fetch: list[LockedPackage] = []
    for package in lock.packages:
        dist = before.get(canonical_name(package.name))
        if package.kind is FileKind.DIRECTORY:  # built by the installer from the folder, never fetched
            verdicts[package.name] = _compare_folder(package, dist)
            continue
        if dist is not None and _installed_from_cache(package, dist, how.root):
            verdicts[package.name] = None
            continue
        known = cached_record(cache, package.sha256) if package.sha256 else None
        if dist is not None and known is not None and compare(package, dist, known) is None:
            verdicts[package.name] = None
        else:
            fetch.append(package)
    files: dict[str, Path] = {}
    if fetch:
        code, files = gather(lock, fetch, installer=how.installer, workdir=how.workdir, cache=how.root,
                             offline=how.offline, env=how.env, echo=how.echo)
        if code != 0:
            return code, {}, {}
        for package in fetch:
            path = files.get(package.name)
            dist = before.get(canonical_name(package.name))
            checked = package.sha256 if package.kind is not FileKind.SDIST else None  # the hash was checked
            if dist is None and checked and cached_record(cache, checked) is not None:
                verdicts[package.name] = Change.MISSING  # nothing to compare, its RECORD already kept
                continue
            text = read_wheel_record(path) if path is not None else None
            if text is not None and checked and cached_record(cache, checked) != text:
                store_record(cache, checked, text)
            verdicts[package.name] = compare(package, dist, text)
    return 0, {p.name: verdicts[p.name] for p in lock.packages}, files


def compare(package: LockedPackage, dist: InstalledDist | None, wheel_record: str | None) -> Change | None:
    """None when ``dist`` is ``package`` as locked: the same version (local label included), the
    files of the locked wheel (``wheel_record``: its RECORD) and none changed on disk; else why not."""
    if dist is None:
        return Change.MISSING
    if not _same_version(dist.version, package.version):
        return Change.VERSION
    if dist.record is None or wheel_record is None:
        return Change.UNREADABLE
    if dist.damaged:
        return Change.DAMAGED
    if not same_files(parse_record(wheel_record), parse_record(dist.record)):
        return Change.FILES
    return None


def _installed_from_cache(package: LockedPackage, dist: InstalledDist, root: Path) -> bool:
    """Whether ``dist`` is ``package`` installed from its verified file in the cache: the locked version,
    ``direct_url.json`` naming that file, and every RECORD file there with its recorded size."""
    if not dist.url or dist.record is None or dist.damaged or not _same_version(dist.version, package.version):
        return False
    from urllib.parse import unquote, urlsplit

    path = cache_path(root, package) if package.kind is not FileKind.SDIST else None
    parts = urlsplit(dist.url)
    return path is not None and parts.scheme == "file" and unquote(parts.path) == str(path)  # pip quotes a '+'


def _compare_folder(package: LockedPackage, dist: InstalledDist | None) -> Change | None:
    """A local project folder is kept when it is installed in place from the same folder and locked so; one
    not locked editable is built again (as uv and pip do for a folder), one installed otherwise is replaced."""
    if dist is None:
        return Change.MISSING
    same = (dist.url or "").rstrip("/") == (package.url or "").rstrip("/")
    if package.editable and dist.editable and same:
        return None
    return Change.FOLDER if same else Change.FILES


def foreign(lock: Lock, dists: Mapping[str, InstalledDist], *, prefix: str | None = None) -> tuple[str, ...]:
    """Installed names that are not locked, nor in ``KEEP``, nor cudaresolve running from there (``running_tool``);
    sorted (the lock is the whole environment). With ``prefix``, only those installed under it (its own)."""
    locked = {canonical_name(p.name) for p in lock.packages}
    own = set(dists) if prefix is None else {name for name, dist in dists.items() if _inside(dist.path, prefix)}
    return tuple(sorted(own - locked - KEEP - running_tool(dists, prefix)))


def _inside(path: str | None, prefix: str) -> bool:
    """Whether ``path`` lies under the folder ``prefix`` (as given, or both with their links resolved)."""
    if path is None:
        return False
    for there, root in ((path, prefix), (os.path.realpath(path), os.path.realpath(prefix))):
        if there.startswith(root.rstrip(os.sep) + os.sep):
            return True
    return False


def _mtime(folder: Path) -> int | None:
    try:
        return folder.stat().st_mtime_ns
    except OSError:
        return None


def _same_version(installed: str, locked: str) -> bool:
    if installed == locked:  # the usual case, without loading packaging's version module
        return True
    from packaging.version import InvalidVersion, Version

    try:
        return Version(installed) == Version(locked) and Version(installed).local == Version(locked).local
    except InvalidVersion:
        return installed == locked


def _differs(package: LockedPackage, dist: InstalledDist, change: Change) -> Notice:
    from cudaresolve.text.findings import Notice

    return Notice(
        code="installed-differs",
        text=Text.of(
            "lock.sync.differs",
            name=package.name,
            found=dist.version,
            version=package.version,
            why=change.text,
        ),
    )


def _foreign(names: tuple[str, ...]) -> Notice:
    from cudaresolve.text.findings import Notice

    return Notice(code="not-in-lock", text=Text.of("lock.sync.foreign", count=len(names), names=_names(names)))


def _names(names: tuple[str, ...]) -> tuple[str | Text, ...]:
    shown: tuple[str | Text, ...] = names[:_NAMED]
    if len(names) > _NAMED:
        shown = (*shown, literal(f"... (+{len(names) - _NAMED})"))
    return shown
