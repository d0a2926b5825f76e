"""Lock and install as a user runs them: gather the request, solve, add hashes online, write. Does I/O.

The pure parts live elsewhere (``solve``, ``wheels``, ``lockfile``); this module reads
``pyproject.toml``, asks the indexes through httpx (with the on-disk cache) and writes the lock
atomically.  Network failure never fails a lock: it falls back to the embedded data with a
warning, and pylock then falls back to requirements because PEP 751 needs hashes.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cudaresolve.errors import InvalidInput
from cudaresolve.text.findings import Notice

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from cudaresolve.db.database import CompatDB
    from cudaresolve.resolve.model import Solution
    from cudaresolve.target.model import Target

__all__ = ["LockResult", "Request", "lock_request", "request_from_args", "resolve_request"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    requirements: tuple[str, ...]
    target: Target
    db: CompatDB = field(repr=False)
    offline: bool = False
    mirrors: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class LockResult:
    solution: Solution
    path: str | None
    format: str

    def to_dict(self) -> dict[str, Any]:
        return {**self.solution.to_dict(), "output": self.path, "format": self.format}


def request_from_args(args: argparse.Namespace) -> Request:
    """Requirements from the arguments, else ``pyproject.toml``; target and mirrors from flags."""
    from cudaresolve.cli._common import load_db
    from cudaresolve.cli._target import target_from_args
    from cudaresolve.index.client import parse_mirrors
    from cudaresolve.lock.project import load_project

    db = load_db(args)
    project = load_project(Path("pyproject.toml"), pytorch_root=db.pytorch_index_root)
    requirements = tuple(args.requirements) or project.requirements
    if not requirements:
        raise InvalidInput(
            "no requirements given and none in ./pyproject.toml",
            hint="name them (cudaresolve lock torch torchrec) or set [tool.cudaresolve] requirements",
        )
    mirrors = {**project.mirrors, **parse_mirrors(getattr(args, "index_mirror", []))}
    return Request(
        requirements=requirements,
        target=target_from_args(args, db),
        db=db,
        offline=bool(getattr(args, "offline", False)),
        mirrors=mirrors,
    )


def resolve_request(request: Request) -> Solution:
    """Solve from the embedded data, then add file names and hashes from the indexes (or the cache)."""
    from cudaresolve.resolve.solve import solve

    solution = solve(request.requirements, request.db, request.target).solution
    return _add_hashes(solution, request)


def _add_hashes(solution: Solution, request: Request) -> Solution:
    from cudaresolve.index.client import fetch_listings
    from cudaresolve.index.http_cache import HttpCache, default_cache_dir
    from cudaresolve.lock.wheels import attach_files

    wanted = [(p.index, p.name) for p in solution.packages]
    versions = {p.name: [p.version] for p in solution.packages}  # parse only the pinned files of each page
    cache = HttpCache(default_cache_dir())
    if request.offline:  # the cache only: no HTTP client (and no httpx import) at all
        listings = fetch_listings(None, wanted, offline=True, cache=cache, mirrors=request.mirrors, versions=versions)
    else:
        from cudaresolve.index.client import make_http_client

        with make_http_client() as client:
            listings = fetch_listings(
                client, wanted, offline=False, cache=cache, mirrors=request.mirrors, versions=versions
            )
    solution, notices = attach_files(solution, listings)
    return _with_notices(solution, notices)


def _with_notices(solution: Solution, notices: list[Notice]) -> Solution:
    extra = tuple(n for n in notices if n not in solution.warnings)
    return replace(solution, warnings=solution.warnings + extra) if extra else solution


def lock_request(request: Request, *, output: str | None, fmt: str) -> LockResult:
    """Resolve and write the lock; pylock without hashes falls back to requirements and says why."""
    from cudaresolve.lock.lockfile import lock_from_solution, pylock_problem, write_lock

    solution = resolve_request(request)
    lock = lock_from_solution(solution)
    if fmt == "pylock":
        problem = pylock_problem(lock)
        if problem is not None:
            fmt = "requirements"
            solution = _with_notices(solution, [Notice(code="pylock-needs-hashes", text=problem)])
            lock = lock_from_solution(solution)
            if output is not None and output.endswith(".toml"):
                output = str(Path(output).with_name("requirements.txt"))
    path = output or ("pylock.toml" if fmt == "pylock" else "requirements.txt")
    write_lock(path, lock, fmt="pylock" if fmt == "pylock" else "requirements")
    return LockResult(solution=solution, path=path, format=fmt)
