"""``cudaresolve arch-list [TARGET] [--ptx]``: the TORCH_CUDA_ARCH_LIST for the target's GPUs. Shell."""

from __future__ import annotations

import sys

from cudaresolve.cli._common import language
from cudaresolve.cli._target import add_target_arguments, compat_from_args, target_from_args

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any, Final

__all__ = ["HELP", "NAME", "register"]


#: The command's name and its line in the top-level help (``cli.build_parser(summary=True)`` reads them alone).
NAME: Final = "arch-list"
HELP: Final = "print TORCH_CUDA_ARCH_LIST for the target's GPUs (e.g. 7.5;8.6)"


def register(sub: Any) -> None:
    parser = sub.add_parser(
        NAME,
        help=HELP,
        description="Print a TORCH_CUDA_ARCH_LIST naming every distinct compute capability of the target, "
        "for building extensions from source. A mixed-GPU machine needs all of them (xformers#1045).",
    )
    add_target_arguments(parser)
    parser.add_argument("--ptx", action="store_true", help="add +PTX to the highest, so newer GPUs can JIT it")
    parser.add_argument("--json", action="store_true", help='print {"arch_list", "ccs", "target"} as JSON')
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    target = target_from_args(args, compat_from_args(args))
    if target.is_cpu:
        from cudaresolve.errors import InvalidInput
        from cudaresolve.text.model import Text

        raise InvalidInput(Text("target.arch-list-cpu"), hint=Text("target.arch-list-cpu.hint"))
    from cudaresolve.core.archs import format_arch_list
    from cudaresolve.text.findings import warning

    arch_list = format_arch_list(target.ccs, ptx=args.ptx)
    from cudaresolve.db.toolkits import toolkit_gap

    best, left = toolkit_gap(compat_from_args(args), target.ccs)
    notices = [warning("arch-list-split", "target.arch-list-split", cuda=str(best.version) if best else "-",
                       missing=format_arch_list(left))] if left else []  # fmt: skip
    if notices and not args.json:  # no one nvcc compiles the list (sm_37 with sm_120): said on stderr, as warnings are
        from cudaresolve import render
        from cudaresolve.render.explain import render_notices

        render_notices(notices, render.make_console(), language(args))
    if args.json:
        from cudaresolve import render

        payload = {"arch_list": arch_list, "ccs": [str(cc) for cc in target.ccs], "target": target.to_dict()}
        render.emit_json({**payload, **({"warnings": [n.to_dict() for n in notices]} if notices else {})},
                         lang=language(args))  # fmt: skip
    else:
        sys.stdout.write(arch_list + "\n")
    return 0
