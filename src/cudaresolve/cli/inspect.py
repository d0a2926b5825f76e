"""``cudaresolve inspect PATH ... [--json]``: list the GPU code that binaries on disk carry. Shell."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any, Final

__all__ = ["HELP", "NAME", "register"]


#: The command's name and its line in the top-level help (``cli.build_parser(summary=True)`` reads them alone).
NAME: Final = "inspect"
HELP: Final = "list the SASS, PTX and LTO targets inside GPU binaries"


def register(sub: Any) -> None:
    parser = sub.add_parser(
        NAME,
        help=HELP,
        description="Read CUDA fat binaries from .so/.o/.a/.cubin/.fatbin (and Windows .pyd/.dll) files, wheels "
        "(read in place), directories, AOTInductor .pt2 packages, or installed distributions given by name; "
        "only headers are read, nothing is loaded or decompressed. Extension modules in the wheels and .so files named "
        "are also checked against torch's libraries (a torch wheel named too, else --site-packages' torch): "
        "torch symbols they need that torch does not export, CUDA libraries nothing provides.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="a file, wheel, .pt2, directory or distribution name")
    parser.add_argument("--site-packages", action="append", metavar="DIR",
                        help="look distribution names up here (repeatable; default: this Python's path)")
    parser.add_argument("--all", action="store_true", help="also list files without GPU code")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from cudaresolve import render
    from cudaresolve.binaries.inspect import inspect_paths
    from cudaresolve.binaries.linkage import check_paths
    from cudaresolve.cli._common import language

    lang = language(args)
    reports = inspect_paths(args.paths, site_packages=args.site_packages, include_empty=args.all)
    abi = check_paths(args.paths, site_packages=args.site_packages)
    if args.json:
        render.emit_json({"files": [report.to_dict() for report in reports], **abi.to_dict()}, lang=lang)
    else:
        from cudaresolve.render.inspect import render_inspect

        render_inspect(reports, render.make_console(stderr=False), lang=lang, abi=abi)
    return 1 if any(report.error for report in reports) or abi.findings else 0
