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
    from cudaresolve.installer import format_command, install_lock
    from cudaresolve.lockfile import lock_from_solution, read_lock
    from cudaresolve.locking import request_from_args, resolve_request

    if args.lockfile:
        lock = read_lock(args.lockfile)
    else:
        lock = lock_from_solution(resolve_request(request_from_args(args)))
    console = render.make_console()
    out = render.make_console(stderr=False)

    def echo(command: Any) -> None:
        (out if args.dry_run else console).print(format_command(command), markup=False, highlight=False)

    return install_lock(lock, python=args.python, dry_run=args.dry_run, echo=echo)
