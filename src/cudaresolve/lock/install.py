"""Install as a user runs it: a lock (read, or resolved now), its indexes through the mirrors, pip. Does I/O.

The environment is made equal to the lock (``sync.sync_environment``): what is installed as
locked is kept, anything else under a locked name is replaced, and packages the lock neither
pins nor needs are reported (removed with ``exact``).

``install`` returns an ``InstallResult``; after a real install that pip finished, ``check`` holds
what the doctor pass needs (the database, the target and the interpreter). The doctor itself sits
above this package (``doctor.environment.check_environment``), so the caller runs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from cudaresolve.lock.flow import prepare, project_mirrors, resolve_inputs

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from cudaresolve.db.database import CompatDB
    from cudaresolve.lock.flow import LockRequest
    from cudaresolve.lock.model import Lock
    from cudaresolve.lock.pip import PipCommand
    from cudaresolve.lock.sync import SyncResult
    from cudaresolve.target.model import Target

__all__ = ["InstallCheck", "InstallRequest", "InstallResult", "install", "mirrored"]


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallRequest:
    """``install``'s flags: the lock request (used when no ``lockfile`` is named), the interpreter
    to install into (None: this one), ``--dry-run`` and ``--exact`` (remove what the lock does not
    pin or need)."""

    request: LockRequest
    lockfile: str | None = None
    python: str | None = None
    dry_run: bool = False
    exact: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallCheck:
    """What the doctor pass after an install needs: the database, the target and the interpreter."""

    db: CompatDB = field(repr=False)
    target: Target
    python: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallResult:
    """pip's exit code, the lock as installed (mirrors applied), what changed in the environment
    (``sync``: None for a dry run) and, after a real install that succeeded, what to check it against."""

    returncode: int
    lock: Lock
    sync: SyncResult | None = None
    check: InstallCheck | None = None


def mirrored(lock: Lock, mirrors: Mapping[str, str]) -> Lock:
    """The lock with each package's index fetched through the configured mirror, if any."""
    from cudaresolve.index.client import apply_mirror

    if not mirrors:
        return lock
    packages = tuple(replace(p, index=apply_mirror(p.index, mirrors)) for p in lock.packages)
    index_url = apply_mirror(lock.index_url, mirrors) if lock.index_url else None
    return replace(lock, packages=packages, index_url=index_url)


def install(order: InstallRequest, *, echo: Callable[[PipCommand], None] | None = None) -> InstallResult:
    """Read (or resolve) the lock, apply the mirrors once, make the environment equal to it; each
    pip command goes to ``echo``."""
    from cudaresolve.db.database import load_compat
    from cudaresolve.lock.lockfile import read_lock
    from cudaresolve.lock.model import lock_from_solution
    from cudaresolve.lock.sync import sync_environment
    from cudaresolve.lock.verify import check_installable, interpreter_environment
    from cudaresolve.target.build import build_target

    request = order.request
    environment = None
    if order.lockfile:
        lock, mirrors = read_lock(order.lockfile), project_mirrors(request)
        lock = mirrored(lock, mirrors)
        environment = interpreter_environment(order.python)
        check_installable(
            lock,
            source=order.lockfile,
            requirements=not order.lockfile.endswith(".toml"),
            mirrors=mirrors,
            environment=environment,
        )
    else:
        inputs = prepare(request)
        lock = mirrored(lock_from_solution(resolve_inputs(inputs)), inputs.mirrors)
    synced = sync_environment(
        lock, python=order.python, markers=environment, exact=order.exact, dry_run=order.dry_run, echo=echo
    )
    if order.dry_run:
        return InstallResult(returncode=synced.returncode, lock=lock)
    if synced.returncode != 0:
        return InstallResult(returncode=synced.returncode, lock=lock, sync=synced)
    db = load_compat(request.compat)
    check = InstallCheck(db=db, target=build_target(request.target, db), python=order.python)
    return InstallResult(returncode=0, lock=lock, sync=synced, check=check)
