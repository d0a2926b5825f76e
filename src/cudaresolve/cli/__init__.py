"""The command line: argparse -> settings -> one library call -> render -> exit code. Shell.

Each subcommand lives in its own module here with ``register(subparsers)``; the handler it
sets as ``func`` takes the parsed namespace and returns an exit code. Heavy libraries
(rich, httpx, resolvelib) are imported inside handlers so that ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, NoReturn

from cudaresolve import __version__
from cudaresolve.errors import CudaResolveError, InvalidInput

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]

_COMMANDS = ("detect", "arch_list", "db", "lock", "install", "why_not", "doctor", "inspect", "explain_error")


class _Parser(argparse.ArgumentParser):
    """argparse that raises ``InvalidInput`` (exit 1, one line) instead of exiting with 2."""

    def error(self, message: str) -> NoReturn:
        raise InvalidInput(f"{self.prog}: {message}", hint=f"run '{self.prog} --help'")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="cudaresolve", description="Resolve a GPU Python stack that runs on this machine.")
    parser.add_argument("--version", action="version", version=f"cudaresolve {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of unexpected errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    import importlib

    for name in _COMMANDS:
        try:
            module = importlib.import_module(f"cudaresolve.cli.{name}")
        except ModuleNotFoundError as exc:  # a command not built yet
            if exc.name != f"cudaresolve.cli.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    wants_json = "--json" in args_list
    args = None
    try:
        parser = build_parser()
        args = parser.parse_args(args_list)
        if not getattr(args, "func", None):
            parser.print_help(sys.stderr)
            return 1
        return int(args.func(args))
    except CudaResolveError as err:
        from cudaresolve import render

        lang = _language(args)
        if wants_json:
            render.emit_json({"error": err.to_dict()}, lang=lang)
        else:
            render.render_error(err, render.make_console(), lang=lang)
        return err.exit_code
    except KeyboardInterrupt:
        return 130


def _language(args: argparse.Namespace | None) -> str:
    """``--lang``, else the language of the environment's locale."""
    import os

    from cudaresolve.text.catalogue import pick_lang

    return pick_lang(getattr(args, "lang", None), os.environ)
