"""``cudaresolve gpus [PATTERN] [--json]``: the GPUs the database knows, and the names ``--gpu`` takes. Shell."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any, Final

__all__ = ["HELP", "NAME", "register"]


#: The command's name and its line in the top-level help (``cli.build_parser(summary=True)`` reads them alone).
NAME: Final = "gpus"
HELP: Final = "list the GPUs the database knows (the names --gpu takes)"


def register(sub: Any) -> None:
    parser = sub.add_parser(
        NAME,
        help=HELP,
        description="List the GPUs of the compatibility database with their compute capability, architecture "
        "and the other names --gpu accepts. PATTERN keeps those whose name or alias holds it (case, spaces and "
        "hyphens ignored: 'rtx40', 'A100'), or whose architecture or compute capability it is ('Hopper', '8.9').",
    )
    parser.add_argument("pattern", nargs="?", metavar="PATTERN", help="keep only the GPUs that match")
    parser.add_argument("--compat", metavar="PATH", help="use this compat.toml instead of the shipped one")
    parser.add_argument("--json", action="store_true", help="print the list as JSON")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from cudaresolve import render
    from cudaresolve.cli._common import language, load_db
    from cudaresolve.render import gpus as render_gpus

    listing = load_db(args).list_gpus(args.pattern)
    if args.json:
        render.emit_json(listing.to_dict(), lang=language(args))
    else:
        render_gpus.render_gpus(listing, render.make_console(stderr=False), lang=language(args))
    return 0
