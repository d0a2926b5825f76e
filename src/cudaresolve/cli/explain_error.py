"""``cudaresolve explain-error [TEXT | -] [TARGET] [--lang en|zh] [--json]``: known CUDA errors, explained. Shell."""

from __future__ import annotations

import io
import sys

from cudaresolve.cli._common import language
from cudaresolve.cli._target import add_target_arguments, compat_from_args, target_from_args

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any, Final

    from cudaresolve.db.database import CompatDB
    from cudaresolve.target.model import Target

__all__ = ["HELP", "NAME", "register"]


#: The command's name and its line in the top-level help (``cli.build_parser(summary=True)`` reads them alone).
NAME: Final = "explain-error"
HELP: Final = "explain a CUDA error message or log: its cause and the fixes for the target"


def register(sub: Any) -> None:
    parser = sub.add_parser(
        NAME,
        help=HELP,
        description="Find known CUDA error messages in TEXT (or in a whole log read from stdin) and explain "
        "each: its cause and the fixes for the target machine (this one unless TARGET flags name another). "
        "Only the first 1 MiB (1,048,576 characters) of the text is read; a warning says when it was cut.",
    )
    parser.add_argument("text", nargs="*", metavar="TEXT", help="the error message; '-' or nothing reads stdin")
    add_target_arguments(parser)
    from cudaresolve.cli._common import add_lang_argument

    add_lang_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the explanations as JSON")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from cudaresolve import render
    from cudaresolve.errorlog.explain import explain_log
    from cudaresolve.render import explain as render_explain

    lang = language(args)
    text = _read_text(args.text)
    db = compat_from_args(args)
    result = explain_log(text, _target(args, db), db)
    if args.json:
        render.emit_json(render_explain.to_json(result.explanations, result.notices), lang=lang)
    else:
        render_explain.render_notices(result.notices, render.make_console(), lang)
        render_explain.render_explanations(result.explanations, render.make_console(stderr=False), lang)
    return 0


def _read_stdin(limit: int) -> str:
    """At most ``limit`` characters of stdin, as UTF-8 with undecodable bytes replaced."""
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is None:  # a StringIO in tests
        return sys.stdin.read(limit)
    wrapper = io.TextIOWrapper(buffer, encoding="utf-8", errors="replace")
    try:
        return wrapper.read(limit)
    finally:
        wrapper.detach()  # leave sys.stdin open


def _read_text(words: list[str]) -> str:
    """The words given, or stdin for none or '-'; an empty text is bad input.

    Only one character more than ``MAX_TEXT_CHARS`` is read from stdin, enough for
    ``explain_log`` to know the text was cut (and say so); an endless pipe cannot hang the read.
    """
    from cudaresolve.errorlog.signatures import MAX_TEXT_CHARS
    from cudaresolve.errors import InvalidInput
    from cudaresolve.text.model import Text

    if words and words != ["-"]:
        text = " ".join(words)
    elif words == ["-"] or not sys.stdin.isatty():
        text = _read_stdin(MAX_TEXT_CHARS + 1)
    else:
        text = ""
    if not text.strip():
        raise InvalidInput(Text("explain.empty-input"), hint=Text("explain.empty-input.hint"))
    return text


def _target(args: argparse.Namespace, db: CompatDB) -> Target | None:
    """The declared or detected target; None when detection fails or finds no GPU.

    A log pasted on a machine without a GPU most likely came from another one, so an empty
    detection means "target unknown" here rather than "a CPU target".
    """
    from cudaresolve.errors import DetectionError

    try:
        target = target_from_args(args, db)
    except DetectionError:
        return None
    return None if target.is_cpu and target.source == "none" else target
