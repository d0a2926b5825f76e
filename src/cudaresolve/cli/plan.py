"""``cudaresolve plan [REQ ...] --from PATH [--from PATH ...] [-o DIR] [--json]``. Shell."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any, Final

__all__ = ["HELP", "NAME", "register"]


#: The command's name and its line in the top-level help (``cli.build_parser(summary=True)`` reads them alone).
NAME: Final = "plan"
HELP: Final = "plan the fewest locks that run on every node of a fleet"


def register(sub: Any) -> None:
    from cudaresolve.cli._common import add_lang_argument
    from cudaresolve.cli.lock import add_file_arguments

    parser = sub.add_parser(
        NAME,
        help=HELP,
        description="Read host files, 'kubectl get nodes -o json', 'scontrol show node --oneliner' or a CSV "
        "inventory, group the nodes into pools, and plan the fewest locks that run on every pool, with the "
        "driver upgrades that let the other pools join.",
    )
    parser.add_argument("requirements", nargs="*", metavar="REQ", help="PEP 508 requirements (e.g. torch xformers)")
    add_file_arguments(parser, constraints=False)
    parser.add_argument(
        "--from", dest="sources", action="append", required=True, metavar="PATH",
        help="an inventory file or a directory of them (repeatable; the format is read from the content)",
    )
    parser.add_argument(
        "--driver-map", metavar="FILE",
        help="drivers of nodes whose inventory names none (Slurm's never does): 'PATTERN DRIVER' per line, "
        "PATTERN a glob on node name or GPU (gres type, product label)",
    )
    parser.add_argument("--driver", dest="default_driver", metavar="VERSION",
                        help="the driver of nodes whose inventory names none and the map leaves out")
    parser.add_argument("--python-version", metavar="X.Y", help="the nodes' Python (default: this interpreter)")
    parser.add_argument("--platform", metavar="TAG", help="the nodes' platform where the inventory does not say")
    parser.add_argument("--offline", action="store_true", help="use only the embedded data and the cache")
    parser.add_argument("--compat", metavar="PATH", help="use this compat.toml instead of the shipped one")
    parser.add_argument("-o", "--output", metavar="DIR", help="write one lock per group into DIR")
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    add_lang_argument(parser)
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from cudaresolve import render
    from cudaresolve.cli._common import language
    from cudaresolve.cli.lock import requirements_from_args
    from cudaresolve.core.memory import compact_heap
    from cudaresolve.fleet.run import PlanRequest, run_plan
    from cudaresolve.render.plan import render_plan

    compact_heap()  # before the page-reading threads start
    requirements, _ = requirements_from_args(args)
    plan = run_plan(
        PlanRequest(
            requirements=requirements,
            sources=tuple(args.sources),
            python=args.python_version,
            platform=args.platform,
            driver_map=args.driver_map,
            default_driver=args.default_driver,
            offline=args.offline,
            compat=args.compat,
            output_dir=args.output,
        )
    )
    if args.json:
        render.emit_json(plan.to_dict(), lang=language(args))
    else:
        render_plan(plan, render.make_console(stderr=False), lang=language(args))
    return 0
