"""``cudaresolve install [REQ ...] [TARGET] [--from LOCKFILE] [--exact] [--dry-run] [--python PATH|--system]``.
Shell."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    import argparse
    from typing import Any, Final

__all__ = ["HELP", "NAME", "register"]


#: The command's name and its line in the top-level help (``cli.build_parser(summary=True)`` reads them alone).
NAME: Final = "install"
HELP: Final = "install a resolved set (or a lock file) with pip, one index per package"


def register(sub: Any) -> None:
    from cudaresolve.cli.lock import add_feature_arguments, add_request_arguments

    parser = sub.add_parser(NAME, help=HELP)
    add_request_arguments(parser)
    add_feature_arguments(parser, installing=True)
    parser.add_argument(
        "--from", dest="lockfile", metavar="LOCKFILE", help="install this pylock.toml or requirements file"
    )
    parser.add_argument(
        "--exact", action="store_true", help="also uninstall packages the lock does not pin (uv pip sync)"
    )
    parser.add_argument("--dry-run", action="store_true", help="print the pip commands and change nothing")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--python", metavar="PATH", help="the interpreter (or the folder) of the environment to "
                       "install into (default: the active VIRTUAL_ENV, else ./.venv); the target's Python version, "
                       "platform and glibc are its own")
    where.add_argument("--system", action="store_true", help="install into the first python3 on PATH")
    parser.add_argument("--json", action="store_true", help="print the result as JSON (pip's output goes to stderr)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from cudaresolve import render
    from cudaresolve.cli._common import language
    from cudaresolve.cli.lock import request_from_args
    from cudaresolve.install.install import InstallRequest, install
    from cudaresolve.install.pip import installer_output
    from cudaresolve.render.output import current

    if args.lockfile and (args.requirement_files or args.constraint_files):
        from cudaresolve.errors import UsageError
        from cudaresolve.text.model import Text

        hint = Text("lock.reqfile.constraints-with-lock.hint")
        raise UsageError(Text("lock.reqfile.constraints-with-lock"), hint=hint)
    if args.lockfile and args.requirements:  # never silently left out: the lock is installed as it is
        from cudaresolve.errors import UsageError
        from cudaresolve.text.model import Text

        raise UsageError(Text.of("lock.requirements-with-lock", requirements=tuple(args.requirements[:5])),
                         hint=Text("lock.requirements-with-lock.hint"))
    lang = language(args)

    def show(lock: Any, solution: Any) -> None:
        from cudaresolve.lock.model import read_notices

        if solution is None and not current().shows_info and not read_notices(lock):  # -q and a lock file: no
            return  # table (render_plan's rule), and the rendering modules are not loaded
        from cudaresolve.render.install import render_plan

        render_plan(lock, solution, console, lang=lang)

    console: Any = _Later(render.make_console)  # a quiet install that goes well prints nothing: rich is not loaded
    out = console if not args.dry_run or args.json else _Later(lambda: render.make_console(stderr=False))
    order = InstallRequest(
        request=request_from_args(args),
        lockfile=args.lockfile,
        python=args.python,
        system=args.system,
        dry_run=args.dry_run,
        exact=args.exact,
    )
    # --json: stdout holds the one JSON object; -q: the installer's output only when it fails
    with installer_output(2 if args.json else None, quiet=current().verbosity < 0):
        result = install(order, echo=lambda c: _echo(out, c, args.dry_run),
                         show=None if args.json else show, warm_up=_doctor_modules)
    report = None
    if result.check is not None:  # a doctor pass on what pip installed, against the lock's target
        report = _doctor(result.check)
    if result.returncode != 0:  # pip said why above; one coded line naming its index, and pip's exit code
        from cudaresolve.errors import PipFailed

        failed = result.failed
        tool = "uv" if failed is not None and _runs_uv(failed.argv) else "pip"
        raise PipFailed(result.returncode, index=failed.index if failed is not None else "", tool=tool)
    if args.json:
        from cudaresolve.render.install import install_json

        render.emit_json(install_json(result, report), lang=lang)
        return 0
    _render_after(result, report, console, lang)
    return 0


def _runs_uv(argv: Any) -> bool:
    """Whether the failed command ran uv (``uv pip ...``), not pip."""
    import os

    return bool(argv) and os.path.basename(str(argv[0])).lower() in ("uv", "uv.exe")


class _Later:
    """A console made when first used."""

    def __init__(self, make: Any) -> None:
        self._make, self._made = make, None

    def __getattr__(self, name: str) -> Any:
        if self._made is None:
            self._made = self._make()
        return getattr(self._made, name)


def _echo(out: Any, command: Any, dry_run: bool) -> None:
    """An installer command: the result of ``--dry-run``; else shown as it runs, not under ``-q``."""
    from cudaresolve.render.output import current

    if dry_run or current().shows_info:
        from cudaresolve.install.pip import format_command

        out.print(format_command(command), markup=False, highlight=False)


def _doctor_modules() -> None:
    """The doctor pass's modules, imported in ``install``'s background thread while the installer runs."""
    import cudaresolve.doctor.check
    import cudaresolve.doctor.environment  # noqa: F401


def _doctor(check: Any) -> Any:
    """The doctor pass over the site-packages the install's one probe found (no second probe)."""
    import os

    from cudaresolve.doctor.check import diagnose
    from cudaresolve.doctor.environment import check_environment, read_environment

    if not check.site_packages:
        return check_environment(check.db, check.target, python=check.python)
    found = read_environment(check.site_packages, check.db.package_kinds, python=check.version)
    return diagnose(found, check.target, check.db, environ=os.environ, pt2=[])


def _render_after(result: Any, report: Any, console: Any, lang: str) -> None:
    """What changed, then the doctor's verdict (under ``-q``: only when something is wrong)."""
    from cudaresolve.render.output import current

    if result.sync is not None and (result.sync.notices or current().shows_info):  # else it would say nothing
        from cudaresolve.render.install import render_sync

        render_sync(result.sync, console, lang=lang)
    if report is not None and (current().shows_info or not report.ok):
        from cudaresolve.render.doctor import render_doctor

        render_doctor(report, console, lang=lang, verbose=current().verbosity > 0)
