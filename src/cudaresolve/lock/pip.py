"""Install a lock with pip, each package only from the index its lock names. Does I/O: runs pip.

``pip_commands`` (pure) turns a lock into pip runs of the target interpreter
(``PYTHON -m pip install``), grouped by index (``model.index_groups``: the variant's index first):

1. the pinned wheels, per index: ``--no-deps --only-binary :all: --index-url INDEX``, with
   ``--require-hashes -r FILE`` for the packages whose sha256 is known (pip reads ``--hash`` only
   from a requirements file, and hash checking is all-or-nothing per run, so the packages without
   a hash get a second run with their pins on the command line);
2. then their dependencies, per index: ``--index-url INDEX -c LOCKED PINS...``.

Why ``--no-deps`` first and a second pass: a lock pins the GPU stack (torch, fbgemm-gpu, torchrec,
xformers, flashinfer), not every transitive dependency (torch's filelock, sympy, nvidia-* ...).
``--no-deps`` alone would leave torch without them, and ``--require-hashes`` without ``--no-deps``
fails on every unpinned dependency. So step 1 installs exactly the locked files (hash-checked
where possible) and step 2 lets pip add what they need from the same index, as PyTorch's own
install instructions do. Step 1 runs for every index before any step 2, and ``LOCKED`` (a
constraints file of all the lock's pins) rides along in step 2: a locked package is then already
installed and can only be kept, never swapped for a build of the same name from another index; a
dependency that wants another version makes pip fail instead. Unpinned dependencies are not
hash-checked: the lock does not name them.

Never ``--extra-index-url``: with two indexes pip takes the highest version from either, which is
how torchtriton was hijacked (https://pytorch.org/blog/compromised-nightly-dependency/). pip
configuration can add extra indexes and find-links behind our back (``extra-index-url`` and
``find-links`` in pip.conf, ``PIP_*`` variables), and an empty variable does not clear them (pip
drops empty values), so each run sets ``PIP_EXTRA_INDEX_URL`` to its own index (pip deduplicates
index URLs) and ``PIP_FIND_LINKS`` to its private work directory, which holds no wheels. Other
settings (certificates, proxies, cache) are left as the user has them.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from cudaresolve.errors import InvalidInput
from cudaresolve.lock.model import index_groups
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from cudaresolve.lock.model import Lock
    from cudaresolve.resolve.model import LockedPackage

__all__ = ["CONSTRAINTS_FILE", "PipCommand", "format_command", "install_lock", "pip_commands", "run_pip"]

CONSTRAINTS_FILE: Final = "locked.txt"


@dataclass(frozen=True, slots=True, kw_only=True)
class PipCommand:
    """One pip run: its argv, the index it may use, the environment it overrides and the files
    (path, text) that must exist before it starts."""

    argv: tuple[str, ...]
    index: str
    env: tuple[tuple[str, str], ...] = ()
    files: tuple[tuple[str, str], ...] = ()


def pip_commands(lock: Lock, *, python: str, workdir: str) -> list[PipCommand]:
    """The pip runs that install ``lock`` into ``python``'s environment (see the module docstring).

    ``workdir`` is a private, empty directory for the requirements files the runs read; nothing is
    written here (``run_pip`` writes ``PipCommand.files``)."""
    constraints = os.path.join(workdir, CONSTRAINTS_FILE)
    locked = "".join(f"{_pin(p)}\n" for p in lock.packages)
    exact: list[PipCommand] = []
    dependencies: list[PipCommand] = []
    for number, (index, members) in enumerate(index_groups(lock), 1):
        env = (("PIP_EXTRA_INDEX_URL", index), ("PIP_FIND_LINKS", workdir))
        head: tuple[str, ...] = (python, "-m", "pip", "install")
        pinned: tuple[str, ...] = ("--no-deps", "--only-binary", ":all:")
        hashed = [p for p in members if p.sha256]
        plain = [p for p in members if not p.sha256]
        if hashed:
            path = os.path.join(workdir, f"index-{number}-hashed.txt")
            text = "".join(f"{_pin(p)} --hash=sha256:{p.sha256}\n" for p in hashed)
            argv: tuple[str, ...] = (*head, *pinned, "--require-hashes", "--index-url", index, "-r", path)
            exact.append(PipCommand(argv=argv, index=index, env=env, files=((path, text),)))
        if plain:
            argv = (*head, *pinned, "--index-url", index, *(_pin(p) for p in plain))
            exact.append(PipCommand(argv=argv, index=index, env=env))
        argv = (*head, "--index-url", index, "-c", constraints, *(_pin(p) for p in members))
        dependencies.append(PipCommand(argv=argv, index=index, env=env, files=((constraints, locked),)))
    return exact + dependencies


def format_command(command: PipCommand, *, env: bool = True) -> str:
    """A shell line for ``command`` (``VAR=value ... python -m pip ...``), then each file it reads
    as ``#`` comment lines."""
    words = [f"{key}={value}" for key, value in command.env] if env else []
    lines = [shlex.join([*words, *command.argv])]
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
    base = dict(os.environ if env is None else env)
    for command in commands:
        if echo is not None:
            echo(command)
        for path, text in command.files:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text, encoding="utf-8")
        try:
            result = subprocess.run(list(command.argv), env={**base, **dict(command.env)}, check=False)
        except OSError as exc:
            raise InvalidInput(
                Text.of("lock.cannot-run-python", python=command.argv[0], reason=str(exc.strerror or exc)),
                hint=Text("lock.cannot-run-python.hint"),
            ) from exc
        if result.returncode != 0:
            return result.returncode
    return 0


def install_lock(
    lock: Lock,
    *,
    python: str | None = None,
    dry_run: bool = False,
    echo: Callable[[PipCommand], None] | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Install ``lock`` into ``python`` (default: this interpreter) and return pip's exit code.

    Each command is passed to ``echo`` before it runs; with ``dry_run`` every command goes to
    ``echo``, nothing runs or is written, and the result is 0."""
    with tempfile.TemporaryDirectory(prefix="cudaresolve-") as workdir:
        commands = pip_commands(lock, python=python or sys.executable, workdir=workdir)
        if not dry_run:
            return run_pip(commands, env=env, echo=echo)
        for command in commands:
            if echo is not None:
                echo(command)
        return 0


def _pin(package: LockedPackage) -> str:
    return f"{package.name}=={package.version}"
