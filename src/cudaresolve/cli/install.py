"""``cudaresolve install [REQ ...] [TARGET] [--from LOCKFILE] [--dry-run] [--python PATH]``. Shell."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

__all__ = ["register"]


def register(sub: Any) -> None:
    from cudaresolve.cli.lock import add_request_arguments

    parser = sub.add_parser("install", help="install a resolved set (or a lock file) with pip, one index per package")
    add_request_arguments(parser)
    parser.add_argument(
        "--from", dest="lockfile", metavar="LOCKFILE", help="install this pylock.toml or requirements file"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the pip commands and change nothing")
    parser.add_argument("--python", metavar="PATH", help="the interpreter of the environment to install into")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from cudaresolve import render
    from cudaresolve.lock.flow import request_from_args, resolve_request
    from cudaresolve.lock.lockfile import lock_from_solution, read_lock
    from cudaresolve.lock.pip import format_command, install_lock

    if args.lockfile:
        lock = _mirrored(read_lock(args.lockfile), args)
    else:
        lock = _mirrored(lock_from_solution(resolve_request(request_from_args(args))), args)
    console = render.make_console()
    out = render.make_console(stderr=False)

    def echo(command: Any) -> None:
        (out if args.dry_run else console).print(format_command(command), markup=False, highlight=False)

    code = install_lock(lock, python=args.python, dry_run=args.dry_run, echo=echo)
    if code == 0 and not args.dry_run:
        _doctor_pass(args, console)
    return code


def _mirrored(lock: Any, args: argparse.Namespace) -> Any:
    """The lock with each package's index fetched through the configured mirror, if any."""
    from dataclasses import replace
    from pathlib import Path

    from cudaresolve.cli._common import load_db
    from cudaresolve.index.client import apply_mirror, parse_mirrors
    from cudaresolve.lock.project import load_project

    root = load_db(args).pytorch_index_root
    mirrors = {**load_project(Path("pyproject.toml"), pytorch_root=root).mirrors, **parse_mirrors(args.index_mirror)}
    if not mirrors:
        return lock
    packages = tuple(replace(p, index=apply_mirror(p.index, mirrors)) for p in lock.packages)
    index_url = apply_mirror(lock.index_url, mirrors) if lock.index_url else None
    return replace(lock, packages=packages, index_url=index_url)


def _doctor_pass(args: argparse.Namespace, console: Any) -> None:
    """Check what pip installed against the target (design section 5); it reports, pip's code stands."""
    from cudaresolve.cli._common import language, load_db
    from cudaresolve.cli._target import target_from_args
    from cudaresolve.doctor.environment import check_environment
    from cudaresolve.render.doctor import render_doctor

    db = load_db(args)
    report = check_environment(db, target_from_args(args, db), python=args.python)
    render_doctor(report, console, lang=language(args), verbose=False)
