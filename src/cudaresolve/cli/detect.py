"""``cudaresolve detect [TARGET] [--json]``: show the target this machine (or the flags) describe. Shell."""

from __future__ import annotations

from cudaresolve.cli._target import add_target_arguments, compat_from_args, target_from_args

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any, Final

__all__ = ["HELP", "NAME", "register"]


#: The command's name and its line in the top-level help (``cli.build_parser(summary=True)`` reads them alone).
NAME: Final = "detect"
HELP: Final = "show the GPUs, driver and highest CUDA of this machine"


def register(sub: Any) -> None:
    parser = sub.add_parser(
        NAME,
        help=HELP,
        description="Show the target: GPUs with their compute capability, the driver, the highest CUDA it "
        "runs, platform and Python. Detected through NVML (then nvidia-smi, then /proc) unless flags, "
        "CUDARESOLVE_GPUS/CUDARESOLVE_DRIVER or --host say otherwise.",
    )
    add_target_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the target as JSON")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from cudaresolve import render

    target = target_from_args(args, compat_from_args(args))
    if args.json:
        render.emit_json({"target": target.to_dict()})  # no sentences: the same in every language
    else:
        import sys

        from cudaresolve.cli._common import language
        from cudaresolve.render.detect import format_detect

        sys.stdout.write(format_detect(target, language(args)))
    return 0
