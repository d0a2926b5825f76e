"""``cudaresolve lock [REQ ...] [TARGET] [-o PATH] [--format pylock|requirements] [--offline] [--json]``. Shell."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any, Final

    from cudaresolve.lock.reqfiles import RequirementFiles
    from cudaresolve.lock.request import LockRequest

__all__ = [
    "HELP",
    "NAME",
    "add_feature_arguments", "add_file_arguments", "add_request_arguments", "register", "request_from_args",
    "requirements_from_args",
]

#: ``--prerelease`` as uv spells its modes.
PRERELEASE_MODES = ("explicit", "allow", "disallow", "if-necessary", "if-necessary-or-explicit")


def add_request_arguments(parser: argparse.ArgumentParser) -> None:
    """REQ arguments plus the index options shared by lock and install."""
    from cudaresolve.cli._target import add_target_arguments

    parser.add_argument("requirements", nargs="*", metavar="REQ", help="PEP 508 requirements (default: pyproject.toml)")
    add_file_arguments(parser)
    add_target_arguments(parser)
    parser.add_argument("--offline", action="store_true", help="use only the embedded data and the cache")
    from cudaresolve.cli._common import add_lang_argument

    add_lang_argument(parser)
    parser.add_argument(
        "--index-mirror",
        action="append",
        default=[],
        metavar="ORIG=MIRROR",
        help="fetch ORIG's pages from MIRROR (e.g. https://download.pytorch.org/whl=https://mirror.example/whl)",
    )
    parser.add_argument(
        "-i",
        "--index-url",
        "--default-index",
        dest="index_url",
        default=None,
        metavar="URL",
        help="the default index (a PyPI mirror) instead of PyPI; without it, PIP_INDEX_URL, pip's configuration "
        "files, UV_DEFAULT_INDEX, uv.toml and [tool.cudaresolve] index-url are read as pip and uv read them",
    )
    parser.add_argument(
        "--extra-index-url", dest="extra_index_urls", action="append", default=[], metavar="URL",
        help="another index; each package comes from the first index that has it (uv's first-index rule), these "
        "before the default index [env: PIP_EXTRA_INDEX_URL, UV_EXTRA_INDEX_URL]",
    )
    parser.add_argument(
        "-f", "--find-links", dest="find_links", action="append", default=[], metavar="URL",
        help="a page of links to wheel and sdist files, searched like an index after the --extra-index-url ones",
    )
    parser.add_argument(
        "--no-build",
        action="store_true",
        help="never run a build backend: a release that has only an sdist with dynamic metadata is passed over "
        "for one whose metadata can be read (uv's --no-build)",
    )
    parser.add_argument(
        "--gpu-source",
        choices=("auto", "pytorch", "pypi"),
        default=None,
        help="where GPU builds come from: auto (default: PyPI when it carries the chosen build, else the "
        "PyTorch index), pytorch (the PyTorch index), pypi (never the PyTorch index)",
    )


def add_feature_arguments(parser: argparse.ArgumentParser, *, installing: bool = False) -> None:
    """The project's extras and dependency groups, with uv sync's flags: for ``lock``, the ones the lock holds
    (``lock.features``); for ``install --from``, the ones installed from the lock (``install.select``)."""
    verb, what = ("install", "the lock's") if installing else ("lock", "the project's")
    parser.add_argument("--extra", dest="extras", action="append", default=[], metavar="NAME",
                        help=f"also {verb} this extra of {what} (repeatable)")
    parser.add_argument("--all-extras", action="store_true", help=f"also {verb} every extra of {what}")
    parser.add_argument("--group", dest="groups", action="append", default=[], metavar="NAME",
                        help=f"also {verb} this dependency group of {what} (PEP 735; repeatable)")
    parser.add_argument("--all-groups", action="store_true", help=f"also {verb} every dependency group of {what}")
    parser.add_argument("--no-group", dest="no_groups", action="append", default=[], metavar="NAME",
                        help=f"do not {verb} this dependency group, even with --all-groups (repeatable)")
    parser.add_argument("--no-dev", action="store_true", help=f"do not {verb} the dev group (a default group, as uv)")
    parser.add_argument("--no-default-groups", action="store_true",
                        help=f"do not {verb} the default groups (dev) unless named with --group")


def add_file_arguments(parser: argparse.ArgumentParser, *, constraints: bool = True) -> None:
    """``-r FILE`` and ``-c FILE``: pip's requirement and constraint files (``lock.reqfiles``)."""
    parser.add_argument("-r", "--requirement", dest="requirement_files", action="append", default=[],
                        metavar="FILE", help="read requirements from this file (pip's format; repeatable)")
    if constraints:
        parser.add_argument("-c", "--constraint", dest="constraint_files", action="append", default=[],
                            metavar="FILE", help="narrow versions with this constraints file (adds no package)")


def requirements_from_args(
    args: argparse.Namespace, files: RequirementFiles | None = None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(requirements, constraints): the REQ arguments and what ``-r``/``-c`` files say (``files``: read already,
    their lines checked by the solve, ``lock.flow.resolve_inputs``; else read and checked here)."""
    if files is None:
        files = _read_files(args)
        if files is not None:
            from cudaresolve.lock.reqfiles import check_lines

            check_lines(files.lines)
    given = tuple(_folder_or_text(r) for r in args.requirements)  # ``.`` or ``./pkg``: a local project
    requirements = (*given, *getattr(files, "requirements", ()))
    if args.requirement_files and not requirements:  # never the project's list instead of an empty file
        from cudaresolve.errors import InvalidInput
        from cudaresolve.text.model import Text

        raise InvalidInput(Text("lock.reqfile.empty"), hint=Text("lock.reqfile.empty.hint"))
    return requirements, getattr(files, "constraints", ())


def _read_files(args: argparse.Namespace) -> RequirementFiles | None:
    """The ``-r`` and ``-c`` files read; None when the line names none (``lock.reqfiles`` is not loaded)."""
    named = (args.requirement_files, getattr(args, "constraint_files", []))
    if not any(named):
        return None
    from cudaresolve.lock.reqfiles import read_requirement_files

    return read_requirement_files(*named)


def _folder_or_text(text: str) -> str:
    """A REQ that is a path to a local project folder (``.``, ``./pkg``, ``/abs``, ``~/x``) as ``NAME @ file://``."""
    from cudaresolve.lock.reqfiles import directory_requirement

    if text.startswith((".", "/", "~")):
        found = directory_requirement(text)
        if found is not None:
            return found
    return text


#: The command's name and its line in the top-level help (``cli.build_parser(summary=True)`` reads them alone).
NAME: Final = "lock"
HELP: Final = "resolve a consistent GPU stack for the target and write a lock file"


def register(sub: Any) -> None:
    from cudaresolve.resolve import DEFAULT_PRERELEASE  # the package's __init__ alone: no solver loaded

    parser = sub.add_parser(NAME, help=HELP)
    add_request_arguments(parser)
    parser.add_argument(
        "-o", "--output", metavar="PATH", help="where to write (default: pylock.toml or requirements.txt)"
    )
    parser.add_argument("--format", choices=("pylock", "requirements"), default="pylock", help="lock format")
    add_feature_arguments(parser)
    parser.add_argument("--exclude-newer", metavar="DATE",
                        help="leave out files uploaded after DATE (2025-06-01, or 2025-06-01T12:00:00Z), as uv does")
    parser.add_argument("--prerelease", choices=PRERELEASE_MODES, default=DEFAULT_PRERELEASE,
                        help="pre-releases: where a requirement names one or no final release fits "
                        "(if-necessary-or-explicit, the default, as uv and pip), only where one is named (explicit), "
                        "allow, disallow, or if-necessary (when no final release fits)")
    parser.add_argument("-U", "--upgrade", action="store_true",
                        help="do not keep the versions the existing lock at the output path holds (uv's -U)")
    parser.add_argument("-P", "--upgrade-package", dest="upgrade_packages", action="append", default=[],
                        metavar="NAME", help="let this package move from the version the existing lock holds")
    parser.add_argument("--python", dest="lock_python", metavar="PATH",
                        help="lock for this interpreter: its Python version, platform and glibc (as install --python)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(func=_run)


def request_from_args(args: argparse.Namespace) -> LockRequest:
    """The lock request these flags describe (lock and install share it)."""
    from cudaresolve.cli._target import options_from_args
    from cudaresolve.lock.features import Selection
    from cudaresolve.lock.request import LockRequest
    from cudaresolve.resolve import DEFAULT_PRERELEASE

    files = _read_files(args)  # None: the line names no file, and each of its values below is empty
    requirements, constraints = requirements_from_args(args, files)
    return LockRequest(
        requirements=requirements,
        constraints=constraints,
        target=options_from_args(args),
        compat=args.compat,
        offline=args.offline,
        mirrors=tuple(args.index_mirror),
        gpu_source=args.gpu_source,
        index_url=args.index_url or getattr(files, "index_url", None),
        extra_index_urls=(*getattr(args, "extra_index_urls", ()), *getattr(files, "extra_index_urls", ())),
        find_links=(*getattr(args, "find_links", ()), *getattr(files, "find_links", ())),
        trusted_hosts=getattr(files, "trusted_hosts", ()),
        editables=getattr(files, "editables", ()),
        requirement_lines=getattr(files, "lines", ()),
        read_files=(*getattr(files, "files", ()), *((args.host,) if getattr(args, "host", None) else ())),
        no_build=args.no_build,
        upgrade=getattr(args, "upgrade", False),
        upgrade_packages=_project_names(getattr(args, "upgrade_packages", ()), "-P/--upgrade-package"),
        exclude_newer=_cutoff(args.exclude_newer) if getattr(args, "exclude_newer", None) else None,
        prerelease=getattr(args, "prerelease", DEFAULT_PRERELEASE),
        features=Selection(
            extras=tuple(getattr(args, "extras", ())), all_extras=getattr(args, "all_extras", False),
            groups=tuple(getattr(args, "groups", ())), all_groups=getattr(args, "all_groups", False),
            no_dev=getattr(args, "no_dev", False), no_groups=tuple(getattr(args, "no_groups", ())),
            no_default_groups=getattr(args, "no_default_groups", False),
        ),
    )


def _project_names(values: Any, flag: str) -> tuple[str, ...]:
    """``values`` when each is a project name (PEP 508's rule, as uv reads ``-P``); else ``UsageError``: a path or a
    wildcard (``-P ../x``, ``-P '*'``) had moved nothing without a word."""
    from cudaresolve.core.platforms import is_project_name
    from cudaresolve.errors import UsageError
    from cudaresolve.text.model import Text, literal

    for value in values:
        if not is_project_name(value):
            raise UsageError(Text.of("cli.not-a-project-name", flag=flag, value=literal(repr(value)[:200])),
                             hint=Text("cli.not-a-project-name.hint"))  # fmt: skip
    return tuple(values)


def _cutoff(text: str) -> Any:
    from cudaresolve.core.versions import parse_cutoff  # here: most runs give no --exclude-newer

    return parse_cutoff(text)


def _run(args: argparse.Namespace) -> int:
    from cudaresolve import render
    from cudaresolve.cli._common import language
    from cudaresolve.core.memory import compact_heap
    from cudaresolve.lock.flow import lock
    from cudaresolve.render.report import report_lock

    compact_heap()  # before the page-reading threads start
    if args.json and args.output is not None:
        _refuse_stdout(args.output)
    request = request_from_args(args)
    if args.lock_python:  # the target's Python, platform and glibc from that interpreter
        from dataclasses import replace

        from cudaresolve.install.install import for_interpreter
        from cudaresolve.target.interpreter import probe_interpreter

        request = replace(request, target=for_interpreter(request.target, probe_interpreter(args.lock_python)))
    result = lock(request, output=args.output, fmt=args.format, lang=language(args))
    if args.json:
        render.emit_json(result.to_dict(), lang=language(args))
    else:
        report_lock(result, lang=language(args))  # plain text where rich would print no more
    return 0


def _refuse_stdout(output: str) -> None:
    """``--json`` promises exactly one JSON object on stdout (README), so the lock cannot go there too."""
    from cudaresolve.errors import UsageError
    from cudaresolve.lock.output import is_stdout
    from cudaresolve.text.model import Text

    if is_stdout(output):
        raise UsageError(Text.of("lock.output.stdout-with-json", path=output[:200]),
                         hint=Text("lock.output.stdout-with-json.hint"))
