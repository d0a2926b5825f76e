"""Install as a user runs it: a lock (read, or resolved now), its indexes through the mirrors, pip. Does I/O.

The environment is made equal to the lock (``sync.sync_environment``): what is installed as
locked is kept, anything else under a locked name is replaced, and packages the lock neither
pins nor needs are reported (removed with ``exact``).

``install`` returns an ``InstallResult``; after a real install that pip finished, ``check`` holds
what the doctor pass needs (the database, the target and the interpreter). The doctor itself sits
above this package (``doctor.environment.check_environment``), so the caller runs it. A lock read
from a file needs only a few facts of the shipped database (``facts``); the database itself is
loaded (in a thread, while the installer runs) only when the environment holds something the
doctor pass checks: a package of one of its tables or a CUDA package. Otherwise ``check`` is None
and no doctor pass runs: its one finding would be that there is nothing to check.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    from cudaresolve.db.database import CompatDB
    from cudaresolve.install.facts import InstallFacts
    from cudaresolve.install.pip import PipCommand
    from cudaresolve.install.sync import SyncResult
    from cudaresolve.lock.model import Lock
    from cudaresolve.lock.request import LockRequest
    from cudaresolve.resolve.model import LockedPackage, Solution
    from cudaresolve.target.interpreter import Interpreter
    from cudaresolve.target.model import Target
    from cudaresolve.target.options import TargetOptions

__all__ = [
    "InstallCheck",
    "InstallRequest",
    "InstallResult",
    "doctor_has_work",
    "find_environment",
    "for_interpreter",
    "install",
    "lock_target",
    "mirrored",
    "rooted",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallRequest:
    """``install``'s flags: the lock request (used when no ``lockfile`` is named), the interpreter
    to install into (None: ``find_environment``'s, with ``system`` the one on PATH), ``--dry-run``
    and ``--exact`` (remove what the lock does not pin)."""

    request: LockRequest
    lockfile: str | None = None
    python: str | None = None
    system: bool = False
    dry_run: bool = False
    exact: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallCheck:
    """What the doctor pass after an install needs: the database, the target, the interpreter, and its
    site-packages folders and ``X.Y`` as the one probe of it found them (so the doctor need not run it again)."""

    db: CompatDB = field(repr=False)
    target: Target
    python: str | None
    site_packages: tuple[str, ...] = ()
    version: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallResult:
    """pip's exit code, the lock as installed (mirrors applied), what changed in the environment
    (``sync``: None for a dry run) and, after a real install that succeeded, what to check it against
    (None when the environment holds nothing the doctor pass checks: module docstring)."""

    returncode: int
    lock: Lock
    sync: SyncResult | None = None
    check: InstallCheck | None = None
    failed: PipCommand | None = None  # the pip run that failed, when one did (its index names the culprit)


def mirrored(lock: Lock, mirrors: Mapping[str, str]) -> Lock:
    """The lock with each URL under a configured mirror's original fetched through the mirror: each
    package's index and file URL (its hash is checked wherever the file comes from). Mirrors only map
    URLs the lock names; they never add a source."""
    if not mirrors:
        return lock
    from cudaresolve.core.urls import strip_credentials
    from cudaresolve.index.mirrors import apply_mirror

    # a lock names the mirror that served it without its credentials; the same mirror configured with them
    # (PIP_INDEX_URL=https://user:token@mirror/simple) gives them back, as pip and uv match them by URL
    mirrors = {**{strip_credentials(m): m for m in mirrors.values() if strip_credentials(m) != m}, **mirrors}
    packages = tuple(
        replace(p, url=apply_mirror(p.url, mirrors) if p.url else p.url,
                index=apply_mirror(p.index, mirrors) if p.index else p.index)
        for p in lock.packages
    )
    index_url = apply_mirror(lock.index_url, mirrors) if lock.index_url else None
    return replace(lock, packages=packages, index_url=index_url)


def rooted(lock: Lock, folder: str) -> Lock:
    """The lock with each local project folder (``[packages.directory]``, its path relative to the lock file's
    ``folder`` or absolute) named by its ``file://`` URL, as uv reads such a path."""
    import os
    from pathlib import Path

    from cudaresolve.resolve.model import FileKind

    def located(url: str) -> str:
        if url.startswith("file:"):
            return url
        return Path(os.path.normpath(os.path.join(folder, os.path.expanduser(url)))).as_uri()

    packages = tuple(
        replace(p, url=located(p.url or ".")) if p.kind is FileKind.DIRECTORY else p for p in lock.packages
    )
    return replace(lock, packages=packages, root=folder)


def install(
    order: InstallRequest,
    *,
    echo: Callable[[PipCommand], None] | None = None,
    show: Callable[[Lock, Solution | None], None] | None = None,
    warm_up: Callable[[], object] | None = None,
) -> InstallResult:
    """Read (or resolve) the lock, apply the mirrors once, make the environment equal to it.

    With ``python``, the target's Python version, platform and glibc are that interpreter's
    (``target.interpreter``), not this one's. ``show`` gets the lock (and the solution with its
    warnings, when resolved now) before pip runs; each pip command goes to ``echo``. The doctor
    pass afterwards (``check``) uses the lock's own target when the lock records one; ``warm_up``
    (the caller's preparation for that pass, such as importing its modules) runs in the database's
    thread while the installer runs, only when a doctor pass is likely."""
    started: list[Callable[[], object]] = []  # the database's thread, when one is started: joined on every path
    try:
        return _install(order, echo=echo, show=show, started=started, warm_up=warm_up)
    finally:  # its error was raised where the database was needed, or it never was
        import contextlib

        for database in started:
            with contextlib.suppress(Exception):
                database()


def _install(
    order: InstallRequest,
    *,
    echo: Callable[[PipCommand], None] | None,
    show: Callable[[Lock, Solution | None], None] | None,
    started: list[Callable[[], object]],
    warm_up: Callable[[], object] | None,
) -> InstallResult:
    from cudaresolve.install.environment import start_target

    request = order.request
    python = _interpreter_of(order.python) if order.python else find_environment(system=order.system)
    order = replace(order, python=python)
    probed = start_target(python)  # the one probe of the target interpreter (kept in the user cache), begun first
    from cudaresolve.install.sync import sync_environment  # its imports while the probe runs
    solution = None
    target = None
    database: Callable[[], CompatDB] | None = None
    facts: InstallFacts | None = None  # a lock read from a file: the database's few facts it needs
    if order.lockfile:
        import os

        from cudaresolve.install.facts import facts_of, install_facts
        from cudaresolve.install.verify import check_installable
        from cudaresolve.install.wheelchoice import wheel_choice
        from cudaresolve.lock.lockfile import read_lock
        from cudaresolve.lock.project import load_project
        from cudaresolve.lock.request import all_mirrors

        choose = wheel_choice(lambda: probed().interpreter)  # a package of several wheels: the interpreter's
        lock = rooted(read_lock(order.lockfile, choose=choose), os.path.dirname(os.path.abspath(order.lockfile)))
        if request.compat is not None:  # a --compat file: loaded and validated before anything is installed
            from cudaresolve.db.database import load_compat

            loaded = load_compat(request.compat)
            database = lambda: loaded  # noqa: E731
            facts = facts_of(loaded)
        else:  # the shipped database: its few facts, the database itself only for a doctor pass
            facts = install_facts()
        project = load_project(request.project, pytorch_root=facts.pytorch_index_root)
        mirrors = all_mirrors(request, project, cast("CompatDB", facts))  # duck-typed: its default_index is read
        lock = mirrored(lock, mirrors)
        found = probed()
        request = replace(request, target=for_interpreter(request.target, found.interpreter))
        environment: dict[str, str] = dict(found.interpreter.markers)
        from cudaresolve.install.select import select_packages  # the chosen extras and groups (PEP 751 markers)

        lock = select_packages(lock, request.features, environment, source=order.lockfile)
        check_installable(
            lock, source=order.lockfile, requirements=not order.lockfile.endswith(".toml"), mirrors=mirrors,
            environment=None,
        )
        _check_environment(lock, order.lockfile, environment)
        _check_wheels(lock, order.lockfile, found.interpreter)
    else:
        from cudaresolve.lock.flow import prepare, resolve_inputs
        from cudaresolve.lock.model import lock_from_solution

        found = probed()
        request = replace(request, target=for_interpreter(request.target, found.interpreter))
        environment = dict(found.interpreter.markers)
        inputs = prepare(request)
        solution = resolve_inputs(inputs)
        if order.exact and not solution.packages:  # uv pip sync refuses an empty set too: it would clear the venv
            from cudaresolve.errors import InvalidInput
            from cudaresolve.text.model import Text

            raise InvalidInput(Text("lock.install.empty-exact"), hint=Text("lock.install.empty-exact.hint"))
        lock, target = mirrored(lock_from_solution(solution), inputs.mirrors), inputs.target
    if show is not None:
        show(lock, solution)
    if not order.dry_run and (facts is None or doctor_has_work(lock.packages, (), facts)):
        if database is None:  # loaded while the installer runs, after the caller's warm-up
            database = _database(request.compat, warm_up)
            started.append(database)
        elif warm_up is not None:
            from cudaresolve.install.background import begin

            started.append(begin(warm_up, name="warm-up"))
    ran: list[PipCommand] = []

    def seen(command: PipCommand) -> None:
        ran.append(command)
        if echo is not None:
            echo(command)

    with environment_lock(found.prefix, held=not order.dry_run):  # a second install waits, as uv's does
        synced = sync_environment(
            lock, python=order.python, markers=environment, exact=order.exact, dry_run=order.dry_run, echo=seen,
            offline=request.offline, paths=found.sys_path, prefix=found.prefix, scheme=found.scheme,
        )
    if order.dry_run:
        return InstallResult(returncode=synced.returncode, lock=lock)
    if synced.returncode != 0:
        return InstallResult(returncode=synced.returncode, lock=lock, sync=synced, failed=ran[-1] if ran else None)
    if facts is not None and not doctor_has_work(lock.packages, _remaining(synced), facts):
        return InstallResult(returncode=0, lock=lock, sync=synced)  # nothing the doctor pass checks is installed
    db = (database or _database(request.compat))()
    check = InstallCheck(db=db, target=target or _checked_target(lock, request, db, order.lockfile or ""),
                         python=order.python, site_packages=found.site_packages, version=found.interpreter.python)
    return InstallResult(returncode=0, lock=lock, sync=synced, check=check)


def _check_environment(lock: Lock, source: str, environment: Mapping[str, str]) -> None:
    """``verify.check_environment``, unless the same lock's Python range and environments passed on the same
    interpreter before (``verdicts``: then not even ``packaging``'s marker modules are loaded)."""
    from cudaresolve.install.verdicts import environment_key
    from cudaresolve.install.verify import check_environment

    _once(lambda: environment_key(lock, environment), lambda: check_environment(lock, source, environment))


def _once(key: Callable[[], str], check: Callable[[], None]) -> None:
    """``check``, unless it passed before for ``key()`` (``verdicts.check_once``); every time when there is no user
    cache to keep the verdict in."""
    from cudaresolve.core.paths import default_cache_dir
    from cudaresolve.install.verdicts import check_once

    try:
        root = default_cache_dir()
    except (OSError, RuntimeError, KeyError):  # no user cache to be found: checked every time
        check()
        return
    check_once(root, key(), check)


def _check_wheels(lock: Lock, source: str, interpreter: Interpreter) -> None:
    """Every locked wheel to be installed fits ``interpreter`` (its file name's tags, as pip and uv judge it), else
    ``InvalidLockfile``: a lock of one wheel per package (ours, an ``archive``) is no other interpreter's. Checked
    once per set of file names and interpreter (``verdicts``)."""
    from cudaresolve.install.verdicts import wheels_key

    names = sorted({p.filename for p in lock.packages if p.filename and p.filename.endswith(".whl")})

    def check() -> None:
        from cudaresolve.errors import InvalidLockfile
        from cudaresolve.install.wheelchoice import best_wheel
        from cudaresolve.text.model import Text

        for package in lock.packages:
            name = package.filename or ""
            if name.endswith(".whl") and best_wheel([name], interpreter) is None:
                raise InvalidLockfile(Text.of("lock.no-wheel-fits", path=f"{source}: {name}", name=package.name,
                                              count=1), hint=Text("lock.no-wheel-fits.hint"))  # fmt: skip

    _once(lambda: wheels_key(names, interpreter.platform, interpreter.glibc, interpreter.markers), check)


def _database(compat: str | None, warm_up: Callable[[], object] | None = None) -> Callable[[], CompatDB]:
    """The database begun loading in a thread (``background.begin``), waited for where the doctor pass needs it;
    ``warm_up`` first, in that thread, and the module that builds the lock's target."""
    from cudaresolve.install.background import begin

    def load() -> CompatDB:
        if warm_up is not None:
            warm_up()
        import cudaresolve.target.build  # noqa: F401 (lock_target's, imported while the installer runs)
        from cudaresolve.db.database import load_compat

        return load_compat(compat)

    return begin(load, name="database")


def doctor_has_work(packages: Iterable[LockedPackage], others: Iterable[str], facts: InstallFacts) -> bool:
    """Whether the doctor pass has anything to check among the locked ``packages`` and the ``others`` installed:
    a package of one of the database's tables, or a CUDA package (``nvidia-*``, as ``doctor.environment``
    reads them). Without one, its only findings would be that there is none."""
    from cudaresolve.core.platforms import canonical_name

    kinds = set(facts.package_kinds)
    names = {canonical_name(n) for n in (*(p.name for p in packages), *others)}
    return any(n in kinds or n.startswith("nvidia-") for n in names)


_LOCK_FILE = ".cudaresolve-install.lock"


@contextlib.contextmanager
def environment_lock(prefix: str | None, *, held: bool = True) -> Iterator[None]:
    """An exclusive lock on the virtual environment at ``prefix`` for the block (``_LOCK_FILE`` there), so two
    installs into one environment run one after the other, never interleaved (each had exited 0 and left it
    matching neither lock). Not uv's ``.lock``: the uv this install runs into the same environment (a folder's
    build) takes that one, and would wait for us. Not a venv, not POSIX, or a file that cannot be made (a
    read-only environment): no lock, as before."""
    fd = None
    if prefix is not None and held and os.name == "posix" and os.path.isfile(os.path.join(prefix, "pyvenv.cfg")):
        with contextlib.suppress(OSError):
            fd = os.open(os.path.join(prefix, _LOCK_FILE), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        if fd is not None:
            import fcntl  # POSIX only (os.name above)

            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        if fd is not None:
            os.close(fd)  # closing releases the lock


def _remaining(synced: SyncResult) -> tuple[str, ...]:
    """The installed packages the lock does not name that are still there after the sync."""
    return tuple(n for n in synced.foreign if n not in synced.removed)


def find_environment(*, system: bool = False, environ: Mapping[str, str] | None = None,
                     cwd: str | None = None) -> str:
    """The interpreter ``install`` fills when no ``--python`` is given, as uv chooses it: with ``system``
    the first ``python3`` (else ``python``) on PATH; else the active virtual environment
    (``VIRTUAL_ENV``), else ``./.venv``; else ``NoEnvironment``. Never the interpreter running
    cudaresolve (installed as a tool, that is the tool's own private environment)."""
    import os
    import shutil

    from cudaresolve.errors import NoEnvironment
    from cudaresolve.text.model import Text

    environ = os.environ if environ is None else environ
    if system:
        found = shutil.which("python3", path=environ.get("PATH")) or shutil.which("python", path=environ.get("PATH"))
        if found is None:
            raise NoEnvironment(Text("lock.install.no-system-python"), hint=Text("lock.install.no-environment.hint"))
        return found
    active = environ.get("VIRTUAL_ENV", "")
    folder = active or os.path.join(cwd or os.getcwd(), ".venv")
    python = os.path.join(folder, "Scripts", "python.exe") if os.name == "nt" else os.path.join(folder, "bin", "python")
    if os.path.isfile(python):
        return python
    if active:
        raise NoEnvironment(Text.of("lock.install.no-venv-python", folder=active, python=python),
                            hint=Text("lock.install.no-environment.hint"))
    if os.path.lexists(folder):  # a file, an empty folder or a broken link named .venv: there, but no interpreter
        raise NoEnvironment(Text.of("lock.install.no-dotvenv-python", folder=folder, python=python),
                            hint=Text("lock.install.no-environment.hint"))
    raise NoEnvironment(Text.of("lock.install.no-environment", folder=folder),
                        hint=Text("lock.install.no-environment.hint"))


def _interpreter_of(given: str) -> str:
    """``--python``: an interpreter, or (as uv takes it) the folder of an environment, for its ``bin/python``."""
    import os

    if not os.path.isdir(given):
        return given
    inside = os.path.join(given, "Scripts", "python.exe") if os.name == "nt" else os.path.join(given, "bin", "python")
    return inside if os.path.isfile(inside) else given


def for_interpreter(options: TargetOptions, interpreter: Interpreter) -> TargetOptions:
    """The target options with the interpreter's Python, platform and glibc; a flag that says
    otherwise (``--python-version 3.12`` for a 3.8 interpreter) is ``InvalidInput``."""
    from cudaresolve.core.platforms import normalize_platform
    from cudaresolve.errors import InvalidInput
    from cudaresolve.text.model import Text

    def other_python(given: str) -> bool:
        from cudaresolve.core.versions import parse_python_version  # only when --python-version was given

        return parse_python_version(given) != interpreter.python

    said = {
        "--python-version": bool(options.python) and other_python(options.python or ""),
        "--platform": options.platform and normalize_platform(options.platform) != interpreter.platform,
        "--python-platform": bool(options.python_platform),
    }
    for flag, differs in said.items():
        if differs:
            raise InvalidInput(
                Text.of("lock.install.interpreter-conflict", flag=flag, python=interpreter.path,
                        version=interpreter.python, platform=interpreter.platform),
                hint=Text("lock.install.interpreter-conflict.hint"),
            )
    return replace(options, python=interpreter.python, platform=interpreter.platform, glibc=interpreter.glibc,
                   python_platform=None)


def _checked_target(lock: Lock, request: LockRequest, db: CompatDB, source: str) -> Target:
    """``lock_target``; one the lock records that does not read is said as the lock's, after its install."""
    from cudaresolve.errors import CudaResolveError, InvalidLockfile
    from cudaresolve.text.model import Text

    try:
        return lock_target(lock, request, db)
    except CudaResolveError as exc:
        raise InvalidLockfile(Text.of("lock.install.bad-target", source=source, reason=exc.text),
                              hint=Text("lock.install.bad-target.hint")) from exc


def lock_target(lock: Lock, request: LockRequest, db: CompatDB) -> Target:
    """The target a lock was made for (``[tool.cudaresolve] target``), else the one the flags describe."""
    from cudaresolve.target.build import build_target, target_from_dict

    if isinstance(lock.target.get("gpus"), list):
        return target_from_dict({"driver": None, **lock.target}, db)
    return build_target(request.target, db)
