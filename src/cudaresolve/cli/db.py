"""``cudaresolve db check [PATH]`` and ``db show [--json]``. Shell."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any, Final

__all__ = ["HELP", "NAME", "register"]


#: The command's name and its line in the top-level help (``cli.build_parser(summary=True)`` reads them alone).
NAME: Final = "db"
HELP: Final = "check or summarise the compatibility database"


def register(sub: Any) -> None:
    parser = sub.add_parser(NAME, help=HELP)
    actions = parser.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    check = actions.add_parser("check", help="validate a compat.toml (the shipped one by default)")
    check.add_argument("path", nargs="?", help="the file to check")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    check.set_defaults(func=_check)
    show = actions.add_parser("show", help="summarise the database")
    show.add_argument("--compat", metavar="PATH", help="use this compat.toml instead of the shipped one")
    show.add_argument("--json", action="store_true", help="print the summary as JSON")
    show.set_defaults(func=_show)


def _check(args: argparse.Namespace) -> int:
    from cudaresolve import render
    from cudaresolve.cli._common import language
    from cudaresolve.db.database import SHIPPED_LABEL, load_compat
    from cudaresolve.errors import InvalidCompatData
    from cudaresolve.render import db as render_db

    lang = language(args)
    try:
        db = load_compat(args.path, validate=True)
    except InvalidCompatData as err:
        if args.json:
            render.emit_json({"ok": False, "error": err.to_dict()}, lang=lang)
        else:
            render_db.render_problems(err, render.make_console(), lang=lang)
        return 1
    if args.json:
        render.emit_json({"ok": True, "summary": db.summary().to_dict()}, lang=lang)
    else:
        render_db.render_ok(db, args.path or SHIPPED_LABEL, render.make_console(), lang=lang)
    return 0


def _show(args: argparse.Namespace) -> int:
    from cudaresolve import render
    from cudaresolve.cli._common import language
    from cudaresolve.db.database import load_compat
    from cudaresolve.render import db as render_db

    db = load_compat(args.compat)
    if args.json:
        render.emit_json({"summary": db.summary().to_dict()}, lang=language(args))
    else:
        render_db.render_summary(db, render.make_console(stderr=False), lang=language(args))
    return 0
