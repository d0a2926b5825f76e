"""The pip runs that make an environment equal to a lock, each package only from its own index. Does I/O: runs pip.

The builders here are pure; they turn a lock into pip runs of the target interpreter
(``PYTHON -m pip ...``), grouped by index (``model.index_groups``: the variant's index first), and
``install.sync`` decides which of them run:

1. ``download_commands``: per index, the locked wheels into ``WORKDIR/wheels``:
   ``pip download --no-deps --only-binary :all: --index-url INDEX -d DIR``, with ``--require-hashes
   -r FILE`` for the packages whose sha256 is known (pip reads ``--hash`` only from a requirements
   file, and hash checking is all-or-nothing per run, so the packages without a hash get a second
   run with their pins on the command line). Nothing is resolved: ``--no-deps``, exact pins.
   A package locked as an sdist is built there instead, hash-checked, with the build tools its
   ``pyproject.toml`` asks for from the same index: ``pip wheel --no-deps --no-binary NAME
   --index-url INDEX -w DIR --require-hashes -r FILE``. Direct references are fetched from their
   URLs with no index at all: ``pip download --no-deps --only-binary :all: --no-index -d DIR
   --require-hashes -r FILE`` (lines ``name @ URL --hash=...``).
2. ``install_commands``: the packages that are not installed as locked, from those verified
   files only, in one run (no index): ``pip install --no-deps --force-reinstall --no-index --find-links DIR``
   (with ``--require-hashes -r FILE`` again; a wheel built from an sdist has no locked hash, its sdist
   was checked in step 1). ``--force-reinstall`` because pip keeps an installed
   distribution of the same version ("Requirement already satisfied") without looking at its files.
3. ``uninstall_command``: ``pip uninstall -y`` for ``install --exact``.

Nothing else: a lock is the whole environment, so no run follows a dependency (``--no-deps``
everywhere, exact pins, hashes checked) and no package is looked up beyond the locked files.

Never ``--extra-index-url``: with two indexes pip takes the highest version from either, which is
how torchtriton was hijacked (https://pytorch.org/blog/compromised-nightly-dependency/). pip
configuration can add extra indexes and find-links behind our back (``extra-index-url`` and
``find-links`` in pip.conf, ``PIP_*`` variables), and an empty variable does not clear them (pip
drops empty values), so each run sets ``PIP_EXTRA_INDEX_URL`` to its own index (pip deduplicates
index URLs) and ``PIP_FIND_LINKS`` to a private directory: the work directory (no wheels) or, for
step 2, the directory of the verified downloads. Other settings (certificates, proxies, cache) are
left as the user has them.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final

from cudaresolve.core.progress import Event, report
from cudaresolve.errors import InvalidInput
from cudaresolve.resolve.model import FileKind
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

    from cudaresolve.lock.model import Lock
    from cudaresolve.resolve.model import LockedPackage

__all__ = [
    "PipCommand",
    "download_commands",
    "format_command",
    "install_commands",
    "installer_output",
    "pip_commands",
    "run_pip",
    "uninstall_command",
    "wheel_dir",
]

@dataclass(frozen=True, slots=True, kw_only=True)
class PipCommand:
    """One pip run: its argv, the index it may use ("" for none), the environment it overrides
    and the files (path, text) that must exist before it starts. ``said``: a step done in this process
    instead (``inprocess.link_plan``), in words, shown in place of a command line; its argv is empty."""

    argv: tuple[str, ...]
    index: str
    env: tuple[tuple[str, str], ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    said: str = ""


def pip_commands(lock: Lock, *, python: str, workdir: str, pip: Sequence[str] = ()) -> list[PipCommand]:
    """Every pip run that would install ``lock`` into ``python``'s environment from nothing with pip
    alone, each file from its index: the downloads, then the install of every locked file (no
    dependency is followed). ``install`` itself fetches files from the lock's URLs
    (``wheelcache``) and uses only ``download_commands`` here, for pins the lock gives no URL.

    ``workdir`` is a private, empty directory for the requirements files the runs read and the
    wheels they download; nothing is written here (``run_pip`` writes ``PipCommand.files``)."""
    return [
        *download_commands(lock, python=python, workdir=workdir, pip=pip),
        *install_commands(lock, python=python, workdir=workdir, pip=pip),
    ]


def wheel_dir(workdir: str) -> str:
    """Where step 1 downloads the locked wheels (one folder: a lock names each package once)."""
    return os.path.join(workdir, "wheels")


def download_commands(lock: Lock, *, python: str, workdir: str, pip: Sequence[str] = ()) -> list[PipCommand]:
    """Step 1: every locked wheel, per index, into ``wheel_dir``: exact pins, no dependencies, hashes checked;
    an sdist built into a wheel there; the direct references from their URLs."""
    from cudaresolve.lock.model import archives, index_groups

    commands: list[PipCommand] = []
    for number, (index, members) in enumerate(index_groups(lock), 1):
        env = (("PIP_EXTRA_INDEX_URL", index), ("PIP_FIND_LINKS", workdir))
        wheels = [p for p in members if p.kind is not FileKind.SDIST]
        sdists = [p for p in members if p.kind is FileKind.SDIST]
        head: tuple[str, ...] = (*_head(python, pip), "download", *_EXACT, "--index-url", index)
        head = (*head, "-d", wheel_dir(workdir))
        commands += _hashed_and_plain(wheels, head, env, index, os.path.join(workdir, f"index-{number}-hashed.txt"))
        if sdists:
            names = ",".join(p.name for p in sdists)
            head = (*_head(python, pip), "wheel", "--no-deps", "--no-binary", names, "--index-url", index)
            head = (*head, "-w", wheel_dir(workdir))
            commands += _hashed_and_plain(sdists, head, env, index, os.path.join(workdir, f"index-{number}-sdists.txt"))
    direct = archives(lock)
    if direct:
        head = (*_head(python, pip), "download", *_EXACT, "--no-index", "-d", wheel_dir(workdir))
        local = (("PIP_FIND_LINKS", workdir),)
        commands += _hashed_and_plain(direct, head, local, "", os.path.join(workdir, "direct-hashed.txt"))
    return commands


def install_commands(
    lock: Lock, *, python: str, workdir: str, only: Collection[str] | None = None, pip: Sequence[str] = ()
) -> list[PipCommand]:
    """Step 2: the locked packages (those named in ``only``, if given) from the files step 1
    downloaded and nowhere else (no index), replacing whatever is installed under their names."""
    chosen = [p for p in lock.packages if only is None or p.name in only]
    if not chosen:
        return []
    files = wheel_dir(workdir)
    head = (*_head(python, pip), "install", *_EXACT, "--force-reinstall", "--no-index", "--find-links", files)
    # a wheel built from an sdist is not the locked file, so it has no locked hash (the sdist's was checked)
    chosen = [replace(p, sha256=None) if p.kind is FileKind.SDIST else _by_pin(p) for p in chosen]
    return _hashed_and_plain(chosen, head, (("PIP_FIND_LINKS", files),), "", os.path.join(workdir, "install.txt"))


def uninstall_command(names: Sequence[str], *, python: str, pip: Sequence[str] = ()) -> PipCommand:
    """``install --exact``: remove ``names`` (no index is used)."""
    return PipCommand(argv=(*_head(python, pip), "uninstall", "-y", *names), index="")


def _head(python: str, pip: Sequence[str]) -> tuple[str, ...]:
    """How pip is run: ``pip`` when given (``installer.Installer.pip``), else ``PYTHON -m pip``."""
    return tuple(pip) or (python, "-m", "pip")


_EXACT: Final = ("--no-deps", "--only-binary", ":all:")


def _hashed_and_plain(
    members: Sequence[LockedPackage],
    head: tuple[str, ...],
    env: tuple[tuple[str, str], ...],
    index: str,
    path: str,
) -> list[PipCommand]:
    """One run over the packages with a sha256 (``--require-hashes -r path``), one over the rest."""
    commands: list[PipCommand] = []
    hashed = [p for p in members if p.sha256]
    plain = [p for p in members if not p.sha256]
    if hashed:
        text = "".join(f"{_requirement(p)} --hash=sha256:{p.sha256}\n" for p in hashed)
        argv = (*head, "--require-hashes", "-r", path)
        commands.append(PipCommand(argv=argv, index=index, env=env, files=((path, text),)))
    if plain:
        commands.append(PipCommand(argv=(*head, *(_requirement(p) for p in plain)), index=index, env=env))
    return commands


def format_command(command: PipCommand, *, env: bool = True) -> str:
    """A shell line for ``command`` (``VAR=value ... python -m pip ...``), then each file it reads
    as ``#`` comment lines; a step done in this process, its words."""
    if command.said:
        return command.said
    words = [f"{key}={value}" for key, value in command.env] if env else []
    import shlex

    from cudaresolve.text.redact import redact_text

    lines = [redact_text(shlex.join([*words, *command.argv]))]  # a mirror's credentials are never shown
    for path, text in command.files:
        lines.append(f"# {path}:")
        lines += [f"#   {line}" for line in text.splitlines()]
    return "\n".join(lines)


def run_pip(
    commands: Sequence[PipCommand],
    *,
    env: Mapping[str, str] | None = None,
    echo: Callable[[PipCommand], None] | None = None,
) -> int:
    """Run ``commands`` in order (pip's output goes straight to the terminal); stop at the first
    that fails and return its exit code, else 0. Each command goes to ``echo`` just before it runs.
    ``env`` replaces ``os.environ`` as the base environment. A missing interpreter is
    ``InvalidInput``; a caller wanting an exception for a pip failure raises ``errors.PipFailed``."""
    if not commands:  # an install that links every wheel runs no installer
        return 0
    import subprocess
    import tempfile


    base = dict(os.environ if env is None else env)
    for step, command in enumerate(commands, 1):
        if echo is not None:
            echo(command)
        verb = _verb(command)
        report(Event(kind="pip-start", label=verb, where=command.index, step=step, steps=len(commands)))
        for path, text in command.files:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text, encoding="utf-8")
        try:
            output = _OUTPUT[0]
            with tempfile.TemporaryFile() if output.quiet else nullcontext() as held:
                result = subprocess.run(list(command.argv), env={**base, **dict(command.env)}, check=False,
                                        stdout=held if held is not None else output.stdout, stderr=held)
                if held is not None and result.returncode != 0:
                    _replay_tail(held)
        except OSError as exc:
            raise InvalidInput(
                Text.of("lock.cannot-run-python", python=command.argv[0], reason=str(exc.strerror or exc)),
                hint=Text("lock.cannot-run-python.hint"),
            ) from exc
        report(Event(kind="pip-end", label=verb, where=command.index, amount=result.returncode))
        if result.returncode != 0:
            return result.returncode
    return 0


@dataclass(frozen=True, slots=True)
class _Output:
    """Where the installer's output goes for a run: ``stdout`` its standard output (None: the terminal);
    ``quiet``: all of it held back, and the end of it shown on stderr only when the run fails."""

    stdout: int | IO[str] | None = None
    quiet: bool = False


#: The output settings of the run in progress; ``installer_output`` sets them.
_OUTPUT: list[_Output] = [_Output()]
#: How much of a failed quiet run's output is shown: its end, where pip and uv say what went wrong.
_TAIL_BYTES: Final = 64 * 1024


@contextmanager
def installer_output(stdout: int | IO[str] | None = None, *, quiet: bool = False) -> Iterator[None]:
    """Within the block the installer's standard output goes to ``stdout`` (``install --json``: stderr, so that
    stdout holds only the JSON object); ``quiet`` (``install -q``: "a quiet install that goes well prints
    nothing"): a successful run prints nothing, a failed one the end of what it said, on stderr."""
    before, _OUTPUT[0] = _OUTPUT[0], _Output(stdout, quiet)
    try:
        yield
    finally:
        _OUTPUT[0] = before


def _replay_tail(held: IO[bytes]) -> None:
    size = held.seek(0, os.SEEK_END)
    held.seek(max(0, size - _TAIL_BYTES))
    sys.stderr.write(held.read().decode("utf-8", errors="replace"))
    sys.stderr.flush()


def _verb(command: PipCommand) -> str:
    """The command word (``download``, ``install``, ``uninstall``) of ``PYTHON -m pip [--python PY] VERB ...``
    or ``uv pip VERB ...``."""
    argv = list(command.argv)
    if len(argv) > 3 and argv[1:3] == ["-m", "pip"]:
        rest = argv[3:]
    elif len(argv) > 2 and argv[1] == "pip":
        rest = argv[2:]
    else:
        return " ".join(argv[:1])
    return rest[2] if rest[:1] == ["--python"] and len(rest) > 2 else rest[0]


def _pin(package: LockedPackage) -> str:
    return f"{package.name}=={package.version}"


def _requirement(package: LockedPackage) -> str:
    """What pip is given for one package: ``name @ URL`` for a direct reference, else the exact pin."""
    return f"{package.name} @ {package.url}" if package.kind is FileKind.ARCHIVE else _pin(package)


def _by_pin(package: LockedPackage) -> LockedPackage:
    """A direct reference installed from the downloaded file, found by its exact pin like any other."""
    return replace(package, kind=FileKind.WHEEL) if package.kind is FileKind.ARCHIVE else package
