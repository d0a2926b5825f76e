"""The command line: argparse -> settings -> one library call -> render -> exit code. Shell.

May import every folder; nothing outside cli imports it.

Each subcommand lives in its own module here with ``register(subparsers)``; the handler it
sets as ``func`` takes the parsed namespace and returns an exit code. Heavy libraries
(rich, httpx, resolvelib) are imported inside handlers so that ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import sys

from cudaresolve import __version__
from cudaresolve.render.color import COLOR_CHOICES
from cudaresolve.text.langs import LANGS

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any, Final, NoReturn

    from cudaresolve.errors import CudaResolveError
    from cudaresolve.render.output import Output

__all__ = ["main", "run"]

_COMMANDS = (
    "detect", "arch_list", "gpus", "db", "lock", "install", "plan", "why_not", "doctor", "inspect", "explain_error",
)


class _Parser(argparse.ArgumentParser):
    """argparse that raises ``UsageError`` (one coded line, or the JSON error object; exit 2), refuses an option
    given an empty value (``--driver ""``: it is never taken to mean "the default"), and takes options only as
    spelled (no abbreviations, as uv: ``--python`` is no prefix of ``--python-version``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        # argparse marks a ``*`` positional without a default as required, and then names it among the
        # missing ones ("the following arguments are required: SPEC, REQ"): it never is
        if kwargs.get("nargs") == "*" and "default" not in kwargs and args and not str(args[0]).startswith("-"):
            kwargs["default"] = []
        return super().add_argument(*args, **kwargs)

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        if arg_string == "" and action.option_strings:
            self.error(f"argument {'/'.join(action.option_strings)}: an empty value")
        return super()._get_value(action, arg_string)

    def error(self, message: str) -> NoReturn:
        from cudaresolve.errors import UsageError
        from cudaresolve.text.model import Text, literal

        raise UsageError(Text.of("cli.usage", prog=self.prog, message=literal(message)),
                           hint=Text.of("cli.usage.hint", prog=self.prog))


class _Formatter(argparse.HelpFormatter):
    """argparse's help layout, told the terminal's width as ``shutil.get_terminal_size`` finds it (``COLUMNS``, else
    the terminal of stdout, else 80) without importing shutil, which with its archive modules costs ``--help`` more
    import time than anything but argparse itself."""

    def __init__(self, prog: str, **kwargs: Any) -> None:
        kwargs.setdefault("width", _columns() - 2)  # argparse's own margin
        super().__init__(prog, **kwargs)


def _columns() -> int:
    import os

    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ is not None else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns if columns > 0 else 80


class _Version(argparse.Action):
    """``--version``: ``cudaresolve X.Y``, or with ``--json`` anywhere on the line (``const``) one JSON object."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=kwargs.get("help"),
                         const=bool(kwargs.get("const")))

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> NoReturn:
        if self.const:  # the whole line, not just what was parsed before -V
            from cudaresolve.render import emit_json

            emit_json({"name": "cudaresolve", "version": __version__})
        else:
            sys.stdout.write(f"cudaresolve {__version__}\n")
        parser.exit()


def build_parser(*, only: str | None = None, summary: bool = False, json: bool = False) -> argparse.ArgumentParser:
    """The whole command line; with ``only`` (a module of ``_COMMANDS``) just that command's parser, which parses
    a line naming that command the same (a run imports and builds only the command it runs). With ``summary``
    each command is only its name and help line (each module's ``NAME`` and ``HELP``): the top-level help and
    a line naming no command need no command's own options. ``json``: the line holds ``--json`` (``-V`` answers
    in JSON)."""
    parser = _Parser(prog="cudaresolve", description="Resolve a GPU Python stack that runs on this machine.")
    _add_global_options(parser, default=False, json=json)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    import importlib

    for name in _COMMANDS if only is None else (only,):
        module = importlib.import_module(f"cudaresolve.cli.{name}")
        if summary:
            sub.add_parser(module.NAME, help=module.HELP)
        else:
            module.register(sub)
    for command in _subcommands(parser) if not summary else ():  # a summary parses no command's line
        _add_global_options(command, default=argparse.SUPPRESS, json=json)
    return parser


#: Each command as typed -> its module in ``_COMMANDS``.
_MODULES: Final = {name.replace("_", "-"): name for name in _COMMANDS}
#: The global options that take a value (so the word after them is not the command).
_VALUED: Final = frozenset({"--lang", "--color", "--cache-dir"})


def _named_command(argv: Sequence[str]) -> str | None:
    """The module of the command ``argv`` names (its first word that is no option nor a global option's value),
    None when that word is no command (argparse then says so, listing them all)."""
    words = iter(argv)
    for word in words:
        if word in _VALUED:
            next(words, None)
        elif word == "--" or not word.startswith("-"):
            return _MODULES.get(word)
    return None


def _subcommands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every parser below ``parser`` (``db check`` too), depth first."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found += [child, *_subcommands(child)]
    return found


def _add_global_options(parser: argparse.ArgumentParser, *, default: object, json: bool) -> None:
    """The global options, accepted before the command and after it (a command's own wins)."""
    known = parser._option_string_actions
    if "--lang" in known and default is argparse.SUPPRESS:
        known["--lang"].default = argparse.SUPPRESS  # so that a --lang before the command is kept
    if "--json" in known and default is argparse.SUPPRESS:
        known["--json"].default = argparse.SUPPRESS  # so that a --json before the command is kept
    if "--json" not in known:
        parser.add_argument("--json", action="store_true", default=default, help="one JSON object on stdout")
    if "--lang" not in known:
        parser.add_argument("--lang", choices=LANGS, default=None if default is False else default,
                            help="message language (default: from LC_ALL/LC_MESSAGES/LANG)")
    unset = None if default is False else default
    if "-V" not in known:  # pip and uv take --version after the command too
        parser.add_argument("-V", "--version", action=_Version, const=json,
                            help="show the version (as JSON with --json) and exit")
    parser.add_argument("-q", "--quiet", action="count", default=0 if default is False else default,
                        help="say less: -q no progress or summaries, -qq errors only (stderr)")
    parser.add_argument("-v", "--verbose", action="count", default=0 if default is False else default,
                        help="say more: each page, metadata file and pip run on its own line")
    parser.add_argument("--color", choices=COLOR_CHOICES, default=unset,
                        help="colour: auto (default; NO_COLOR and FORCE_COLOR are honoured), always, never")
    parser.add_argument("--cache-dir", metavar="DIR", default=unset,
                        help="keep the cache here for this run [env: CUDARESOLVE_CACHE_DIR]")
    parser.add_argument("--no-cache", action="store_true", default=default,
                        help="use a temporary cache, removed when the run ends")
    if "--debug" not in known:
        parser.add_argument("--debug", action="store_true", default=default,
                            help="show the traceback of an unexpected error")


def _output(args: argparse.Namespace) -> Output:
    """The run's ``render.output.Output`` from ``-q``/``-v``, ``--color`` and ``--json``."""
    from cudaresolve.render.output import Output

    verbosity = getattr(args, "verbose", 0) - getattr(args, "quiet", 0)
    return Output(verbosity=verbosity, color=getattr(args, "color", None) or "auto",
                  json=bool(getattr(args, "json", False)))


def main(argv: Sequence[str] | None = None) -> int:
    """The command line's exit code. A line asking only for help or the version imports no dataclass (nor
    ``inspect``, which ``dataclasses`` loads): the output settings are set once the line has parsed."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    for name in ("stdout", "stderr"):  # a stream closed by the caller (>&-): what would go there goes nowhere
        if getattr(sys, name) is None:
            import os

            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # kept open for the process
        elif "utf" not in (getattr(getattr(sys, name), "encoding", None) or "utf").lower():  # ascii, latin-1: a
            try:  # character they cannot encode is written as its escape, not an error
                getattr(sys, name).reconfigure(errors="backslashreplace")
            except (AttributeError, ValueError, OSError):
                pass
    wants_json = "--json" in args_list
    args = None
    configured = False
    try:
        only = _named_command(args_list)
        if only is not None:
            parser = build_parser(only=only, json=wants_json)
        else:  # no command named: the summary, unless a command's name is there (after ``--``, say)
            parser = build_parser(summary=not _MODULES.keys() & set(args_list), json=wants_json)
        args = parser.parse_args(args_list)
        from cudaresolve.core.compiled_code import compiled_once
        from cudaresolve.render.output import configure

        with compiled_once(_compiled_cache(args)):  # before the first dataclass and pattern: their code kept
            configure(_output(args))
            configured = True
            if not getattr(args, "func", None):
                parser.print_help(sys.stderr)
                return 2
            return _run(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a coded error: its line; an unexpected one: a coded line, the traceback with --debug
        from cudaresolve.errors import CudaResolveError, InternalError

        if isinstance(exc, CudaResolveError):
            return _report(exc, args, args_list, wants_json=wants_json)
        if isinstance(exc, ValueError) and "integer string conversion" in str(exc):  # a number of 4,301+ digits
            from cudaresolve.errors import InvalidInput
            from cudaresolve.text.model import Text

            return _report(InvalidInput(Text("cli.too-many-digits"), hint=Text("cli.too-many-digits.hint")), args,
                           args_list, wants_json=wants_json)  # fmt: skip
        if getattr(args, "debug", False) or "--debug" in args_list:
            raise
        return _report(InternalError(exc), args, args_list, wants_json=wants_json)
    finally:
        if configured:
            from cudaresolve.render.output import Output, configure

            configure(Output())


def run() -> NoReturn:
    """The process's entry point (``python -m cudaresolve``, the ``cudaresolve`` script): ``main``, then the
    process ends without the interpreter's teardown, which frees every object one by one (a lock's pages,
    metadata and solver state: 0.1-0.3 s of CPU for the 189-package project; uv's process just ends). What
    that teardown does that counts is done first: the ``atexit`` handlers run, stdout and stderr are flushed.
    While a thread other than a daemon one still runs (a walk abandoned on Ctrl-C), the ordinary exit waits
    for it, as before. The cyclic garbage collector runs less often in the process (``fewer_collections``)."""
    from cudaresolve.core.memory import fewer_collections

    fewer_collections()
    code = main()
    import atexit
    import os
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.current_thread()):
        raise SystemExit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed or broken pipe: what the ordinary exit would also lose
            pass
    os._exit(code)


def _named_cache(args: argparse.Namespace) -> Path | None:
    """The folder ``--cache-dir`` names (``~`` expanded); None when the line names none."""
    from pathlib import Path

    named = getattr(args, "cache_dir", None)
    return Path(named).expanduser() if named else None


def _compiled_cache(args: argparse.Namespace) -> Path | None:
    """The cache ``core.compiled_code`` keeps the dataclasses' methods and the patterns compiled in: the command's,
    none under ``--no-cache``."""
    from cudaresolve.core.paths import default_cache_dir

    if getattr(args, "no_cache", False):
        return None
    return _named_cache(args) or default_cache_dir()


def _run(args: argparse.Namespace) -> int:
    """The command, with the cache where ``--cache-dir`` says (or in a temporary one, ``--no-cache``)
    and a progress display on stderr where one is wanted (``render.progress``)."""
    from contextlib import ExitStack
    from pathlib import Path

    from cudaresolve.core.paths import use_cache_dir
    from cudaresolve.core.progress import listening
    from cudaresolve.render.output import current

    with ExitStack() as stack:
        if getattr(args, "no_cache", False):
            import tempfile

            scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="cudaresolve-cache-"))
            stack.enter_context(use_cache_dir(Path(scratch)))
        elif (named := _named_cache(args)) is not None:
            stack.enter_context(use_cache_dir(named))
        if not getattr(args, "no_cache", False):
            from cudaresolve.core.paths import check_cache_dir, default_cache_dir

            check_cache_dir(default_cache_dir())
        listener = None
        if current().shows_progress:
            from cudaresolve.cli._common import language
            from cudaresolve.render.progress import listener_for

            listener = listener_for(current(), sys.stderr, language(args))
        if listener is not None:  # none: events go wherever a caller (a test) listens
            stack.callback(listener.close)
            stack.enter_context(listening(listener))
        return int(args.func(args))


def _report(err: CudaResolveError, args: argparse.Namespace | None, argv: list[str], *, wants_json: bool) -> int:
    """The error as one line (and its findings) or as the JSON error object; its exit code."""
    from cudaresolve import render

    lang = _language(args, argv)
    if wants_json:
        render.emit_json({"error": err.to_dict()}, lang=lang)
    else:
        render.render_error(err, render.make_console(errors=True), lang=lang)
    return err.exit_code


def _language(args: argparse.Namespace | None, argv: list[str]) -> str:
    """``--lang``, else the language of the environment's locale (also when the flags did not parse)."""
    import os

    from cudaresolve.text.langs import pick_lang

    flag = getattr(args, "lang", None)
    if args is None and "--lang" in argv[:-1]:
        flag = argv[argv.index("--lang") + 1]
    return pick_lang(flag if flag in LANGS else None, os.environ)
