"""``cudaresolve why-not SPEC [REQ ...] [TARGET] [--json]``. Shell."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any, Final

__all__ = ["HELP", "NAME", "register"]


#: The command's name and its line in the top-level help (``cli.build_parser(summary=True)`` reads them alone).
NAME: Final = "why-not"
HELP: Final = "say why a variant, build or requirement cannot be used here, and what works instead"


def register(sub: Any) -> None:
    from cudaresolve.cli._target import add_target_arguments

    parser = sub.add_parser(
        NAME,
        help=HELP,
        description="SPEC is a variant (cu121), a pinned build (torch==2.5.1+cu121) or a requirement (xformers).",
    )
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("requirements", nargs="*", metavar="REQ", help="context set (default: torch)")
    from cudaresolve.cli.lock import add_file_arguments

    add_file_arguments(parser)
    add_target_arguments(parser)
    parser.add_argument("--offline", action="store_true", help="use only the embedded data (always true today)")
    from cudaresolve.cli._common import add_lang_argument

    add_lang_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from cudaresolve import render
    from cudaresolve.cli._common import language, load_db
    from cudaresolve.cli._target import target_from_args
    from cudaresolve.cli.lock import requirements_from_args
    from cudaresolve.render.explain_findings import render_why_not
    from cudaresolve.resolve.whynot import why_not

    db = load_db(args)
    lang = language(args)
    context, constraints = requirements_from_args(args)
    answer = why_not(args.spec, context, db, target_from_args(args, db), constraints=constraints)
    if args.json:
        render.emit_json(answer.to_dict(), lang=lang)
    else:
        render_why_not(answer, render.make_console(stderr=False), lang=lang)
    return 0 if answer.possible else 1
