"""``cudaresolve doctor [--python PATH] [TARGET] [--pt2 FILE ...] [--run] [--json]``: check an installed environment.
Shell."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any, Final

    from cudaresolve.doctor.limits import ChildLimits

__all__ = ["HELP", "NAME", "register"]


#: The command's name and its line in the top-level help (``cli.build_parser(summary=True)`` reads them alone).
NAME: Final = "doctor"
HELP: Final = "check the installed GPU packages against this machine's GPUs and driver"


def register(sub: Any) -> None:
    from cudaresolve.cli._target import add_target_arguments

    parser = sub.add_parser(
        NAME,
        help=HELP,
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
    run = parser.add_argument_group("run", "--run: one small real operation per GPU package on each GPU of this "
                                    "machine, each in a child process of the environment's interpreter")
    run.add_argument("--run", action="store_true",
                     help="also run each installed GPU package's operation on each detected GPU (no GPU: static "
                     "checks only); exit 1 when any run fails")
    from cudaresolve.doctor.limits import ChildLimits

    bounds = ChildLimits()
    run.add_argument("--run-timeout", metavar="SECONDS",
                     help=f"the most one child may take (default: {bounds.timeout_s:g})")
    run.add_argument("--run-memory", metavar="MIB",
                     help=f"the most resident memory one child may use (default: {bounds.memory_mib})")
    run.add_argument("--run-budget", metavar="SECONDS",
                     help=f"the most all children together may take; runs left then fail as not run "
                     f"(default: {bounds.total_s:g})")
    parser.add_argument("--offline", action="store_true", help="use only the embedded data (doctor never goes online)")
    from cudaresolve.cli._common import add_lang_argument

    add_lang_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(func=_run)


def _limits(args: argparse.Namespace) -> ChildLimits:
    """The bounds of ``--run``; a value that is not a positive number is one ``invalid-input`` line."""
    from cudaresolve.doctor.limits import ChildLimits
    from cudaresolve.errors import InvalidInput
    from cudaresolve.text.model import Text

    bounds = ChildLimits()
    values = {"run_timeout": bounds.timeout_s, "run_memory": float(bounds.memory_mib), "run_budget": bounds.total_s}
    for flag in values:
        text = getattr(args, flag)
        if text is None:
            continue
        try:
            values[flag] = float(text)
        except ValueError:
            values[flag] = 0.0
        if not 0 < values[flag] < float("inf"):
            raise InvalidInput(Text.of("doctor.run-bad-number", flag="--" + flag.replace("_", "-"), value=text),
                               hint=Text("doctor.run-bad-number.hint"))
    return ChildLimits(timeout_s=values["run_timeout"], memory_mib=max(1, int(values["run_memory"])),
                       total_s=values["run_budget"])


def _run(args: argparse.Namespace) -> int:
    from cudaresolve import render
    from cudaresolve.cli._common import language, load_db
    from cudaresolve.cli._target import target_from_args
    from cudaresolve.doctor.environment import check_environment

    db = load_db(args)
    lang = language(args)
    report = check_environment(db, target_from_args(args, db), python=args.python, site_packages=args.site_packages,
                               pt2=args.pt2, run=_limits(args) if args.run else None)
    if args.json:
        render.emit_json(report.to_dict(), lang=lang)
    else:
        from cudaresolve.render.doctor import render_doctor

        render_doctor(report, render.make_console(stderr=False), lang=lang)
    return 0 if report.ok else 1
