"""``cudaresolve doctor [--python PATH] [TARGET] [--pt2 FILE ...] [--json]``: check an installed environment. Shell."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

__all__ = ["register"]


def register(sub: Any) -> None:
    from cudaresolve.cli._target import add_target_arguments

    parser = sub.add_parser(
        "doctor",
        help="check the installed GPU packages against this machine's GPUs and driver",
        description="Read torch, fbgemm-gpu, torchrec, xformers, flashinfer and the CUDA runtime packages of an "
        "environment (from files only: nothing is imported) and report each library's code for every GPU of "
        "the target, torch pairings, the runtime against the driver, and TORCH_CUDA_ARCH_LIST. Exit 0 when ok.",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--python", metavar="PATH", help="the environment of this interpreter (default: this one)")
    where.add_argument("--site-packages", action="append", metavar="DIR",
                       help="read packages from this folder instead (repeatable, in import order)")
    add_target_arguments(parser)
    parser.add_argument("--pt2", action="append", default=[], metavar="FILE",
                        help="also check an AOTInductor .pt2 package against the target (repeatable)")
    parser.add_argument("--offline", action="store_true", help="use only the embedded data (doctor never goes online)")
    from cudaresolve.cli._common import add_lang_argument

    add_lang_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from cudaresolve import render
    from cudaresolve.cli._common import language, load_db
    from cudaresolve.cli._target import target_from_args
    from cudaresolve.doctor.environment import check_environment

    db = load_db(args)
    lang = language(args)
    report = check_environment(db, target_from_args(args, db), python=args.python,
                               site_packages=args.site_packages, pt2=args.pt2)
    if args.json:
        render.emit_json(report.to_dict(), lang=lang)
    else:
        from cudaresolve.render.doctor import render_doctor

        render_doctor(report, render.make_console(stderr=False), lang=lang)
    return 0 if report.ok else 1
