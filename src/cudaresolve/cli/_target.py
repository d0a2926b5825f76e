"""The target flags every resolving command shares, and the Target they give. Shell.

``add_target_arguments(parser)`` adds ``--gpu``, ``--driver``, ``--cpu``, ``--python-version``,
``--platform``, ``--host`` and ``--compat``; ``target_from_args(args, db)`` turns them (with
``CUDARESOLVE_GPUS``/``CUDARESOLVE_DRIVER`` and detection) into a Target, per ``target/build.py``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    import argparse

    from cudaresolve.db.database import CompatDB
    from cudaresolve.target.model import Target
    from cudaresolve.target.options import TargetOptions

__all__ = ["add_target_arguments", "compat_from_args", "options_from_args", "target_from_args"]


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """The TARGET flags (README, "Commands"), in their own help group."""
    group = parser.add_argument_group(
        "target", "the machine to resolve for; by default this one, detected (flags > environment > detection)"
    )
    group.add_argument(
        "--gpu",
        action="append",
        default=[],
        metavar="NAME|CC",
        help="a GPU by name ('A800', 'RTX 3090', '1080 Ti') or compute capability ('8.6', 'sm_86'); repeat for "
        "each GPU (or separate with ',' or ';'); 'cudaresolve gpus' lists the names [env: CUDARESOLVE_GPUS]",
    )
    group.add_argument(
        "--driver",
        metavar="VERSION",
        help="NVIDIA driver version, e.g. 535.104.05; GPUs given without it leave the driver unconstrained "
        "[env: CUDARESOLVE_DRIVER]",
    )
    group.add_argument("--cpu", action="store_true", help="resolve for a machine without a GPU")
    group.add_argument("--python-version", metavar="X.Y", help="target Python (default: this interpreter)")
    group.add_argument("--platform", metavar="TAG", help="target platform, e.g. linux_x86_64 (default: this machine)")
    group.add_argument(
        "--python-platform",
        metavar="NAME",
        help="target platform as uv names it: x86_64-unknown-linux-gnu (= x86_64-manylinux_2_28), "
        "aarch64-manylinux_2_31, aarch64-apple-darwin, x86_64-pc-windows-msvc, linux, macos, windows",
    )
    group.add_argument(
        "--host",
        metavar="FILE",
        help="a target saved with 'cudaresolve detect --json > FILE' (a regular file of at most 1 MiB)",
    )
    group.add_argument("--compat", metavar="PATH", help="use this compat.toml instead of the shipped one")


def options_from_args(args: argparse.Namespace) -> TargetOptions:
    """The declared part of the target; ``--gpu 'RTX 2080,RTX 3090'`` counts as two GPUs."""
    from cudaresolve.target.options import TargetOptions, split_gpu_list  # not at import: --help stays light

    if any(not split_gpu_list(value) for value in args.gpu):
        from cudaresolve.errors import InvalidInput
        from cudaresolve.text.model import Text

        raise InvalidInput(Text("target.gpu-flag-empty"), hint=Text("target.gpu-flag-empty.hint"))
    gpus = tuple(name for value in args.gpu for name in split_gpu_list(value))
    return TargetOptions(
        gpus=gpus,
        driver=args.driver,
        cpu=args.cpu,
        python=args.python_version,
        platform=args.platform,
        host_file=args.host,
        python_platform=args.python_platform,
    )


def compat_from_args(args: argparse.Namespace) -> CompatDB:
    """The database: ``--compat PATH`` or the shipped one (``_common.load_db``, the one rule)."""
    from cudaresolve.cli._common import load_db

    return load_db(args)


def target_from_args(args: argparse.Namespace, db: CompatDB) -> Target:
    """The Target these flags, the environment and (if needed) detection describe."""
    from cudaresolve.target.build import build_target

    return build_target(options_from_args(args), db)
