"""installer: exact pip command lines, the run loop and its exit codes (no real pip here)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import pytest

from cudaresolve.errors import InvalidInput
from cudaresolve.install.pip import (
    PipCommand,
    format_command,
    install_commands,
    pip_commands,
    run_pip,
    uninstall_command,
)
from cudaresolve.install.sync import sync_environment
from cudaresolve.lock.model import Lock
from cudaresolve.resolve.model import FileKind, LockedPackage

if TYPE_CHECKING:
    from pathlib import Path

CU118 = "https://download.pytorch.org/whl/cu118"
PYPI = "https://pypi.org/simple"
H1, H2, H3 = "1" * 64, "2" * 64, "3" * 64
PY = "/env/bin/python"
W = "/tmp/work"
HEAD = (PY, "-m", "pip", "install")
DOWNLOAD = (PY, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:")
FROM_FILES = (
    *HEAD,
    "--no-deps",
    "--only-binary",
    ":all:",
    "--force-reinstall",
    "--no-index",
    "--find-links",
    f"{W}/wheels",
)
ENV_FILES = (("PIP_FIND_LINKS", f"{W}/wheels"),)
ENV_CU118 = (("PIP_EXTRA_INDEX_URL", CU118), ("PIP_FIND_LINKS", W))
ENV_PYPI = (("PIP_EXTRA_INDEX_URL", PYPI), ("PIP_FIND_LINKS", W))


def _lock(torch: str | None = H1, fbgemm: str | None = H2, flash: str | None = H3) -> Lock:
    return Lock(
        packages=(
            LockedPackage(name="fbgemm-gpu", version="1.2.0+cu118", index=CU118, sha256=fbgemm),
            LockedPackage(name="flashinfer-python", version="0.2.5", index=PYPI, sha256=flash),
            LockedPackage(name="torch", version="2.7.1+cu118", index=CU118, sha256=torch),
        ),
        variant="cu118",
        index_url=CU118,
    )


def _download(index: str, *tail: str) -> tuple[str, ...]:
    return (*DOWNLOAD, "--index-url", index, "-d", f"{W}/wheels", *tail)


def test_all_hashed_two_indexes() -> None:
    assert pip_commands(_lock(), python=PY, workdir=W) == [
        PipCommand(
            argv=_download(CU118, "--require-hashes", "-r", f"{W}/index-1-hashed.txt"),
            index=CU118,
            env=ENV_CU118,
            files=(
                (
                    f"{W}/index-1-hashed.txt",
                    f"fbgemm-gpu==1.2.0+cu118 --hash=sha256:{H2}\ntorch==2.7.1+cu118 --hash=sha256:{H1}\n",
                ),
            ),
        ),
        PipCommand(
            argv=_download(PYPI, "--require-hashes", "-r", f"{W}/index-2-hashed.txt"),
            index=PYPI,
            env=ENV_PYPI,
            files=((f"{W}/index-2-hashed.txt", f"flashinfer-python==0.2.5 --hash=sha256:{H3}\n"),),
        ),
        PipCommand(
            argv=(*FROM_FILES, "--require-hashes", "-r", f"{W}/install.txt"),
            index="",
            env=ENV_FILES,
            files=(
                (
                    f"{W}/install.txt",
                    f"fbgemm-gpu==1.2.0+cu118 --hash=sha256:{H2}\nflashinfer-python==0.2.5 --hash=sha256:{H3}\n"
                    f"torch==2.7.1+cu118 --hash=sha256:{H1}\n",
                ),
            ),
        ),
    ]


def test_no_hashes_pins_go_on_the_command_line() -> None:
    assert pip_commands(_lock(None, None, None), python=PY, workdir=W) == [
        PipCommand(
            argv=_download(CU118, "fbgemm-gpu==1.2.0+cu118", "torch==2.7.1+cu118"),
            index=CU118,
            env=ENV_CU118,
        ),
        PipCommand(argv=_download(PYPI, "flashinfer-python==0.2.5"), index=PYPI, env=ENV_PYPI),
        PipCommand(
            argv=(*FROM_FILES, "fbgemm-gpu==1.2.0+cu118", "flashinfer-python==0.2.5", "torch==2.7.1+cu118"),
            index="",
            env=ENV_FILES,
        ),
    ]


def test_partly_hashed_index_splits_into_a_hashed_and_a_plain_run() -> None:
    commands = pip_commands(_lock(torch=None), python=PY, workdir=W)
    assert [c.argv for c in commands[:5]] == [
        _download(CU118, "--require-hashes", "-r", f"{W}/index-1-hashed.txt"),
        _download(CU118, "torch==2.7.1+cu118"),
        _download(PYPI, "--require-hashes", "-r", f"{W}/index-2-hashed.txt"),
        (*FROM_FILES, "--require-hashes", "-r", f"{W}/install.txt"),
        (*FROM_FILES, "torch==2.7.1+cu118"),
    ]
    assert commands[0].files == ((f"{W}/index-1-hashed.txt", f"fbgemm-gpu==1.2.0+cu118 --hash=sha256:{H2}\n"),)
    assert len(commands) == 5


def test_install_commands_only_the_named_packages_and_none_for_none() -> None:
    (command,) = install_commands(_lock(), python=PY, workdir=W, only={"torch"})
    assert command.files == ((f"{W}/install.txt", f"torch==2.7.1+cu118 --hash=sha256:{H1}\n"),)
    assert install_commands(_lock(), python=PY, workdir=W, only=()) == []


def test_uninstall_command() -> None:
    assert uninstall_command(["einops", "numpy"], python=PY) == PipCommand(
        argv=(PY, "-m", "pip", "uninstall", "-y", "einops", "numpy"), index=""
    )


def test_never_an_extra_index_and_always_one_index_per_run() -> None:
    for lock in (_lock(), _lock(None, None, None), _lock(torch=None)):
        for command in pip_commands(lock, python=PY, workdir=W):
            assert "--extra-index-url" not in command.argv
            if not command.index:  # installs from the verified downloads only
                assert "--no-index" in command.argv
                assert "--index-url" not in command.argv
                assert dict(command.env)["PIP_FIND_LINKS"] == f"{W}/wheels"
                continue
            assert command.argv.count("--index-url") == 1
            assert command.argv[command.argv.index("--index-url") + 1] == command.index
            assert dict(command.env)["PIP_EXTRA_INDEX_URL"] == command.index


def test_empty_lock_has_no_commands() -> None:
    assert pip_commands(Lock(packages=()), python=PY, workdir=W) == []


def test_format_command() -> None:
    command = pip_commands(_lock(), python="/my env/python", workdir=W)[1]
    assert format_command(command) == (
        f"PIP_EXTRA_INDEX_URL={PYPI} PIP_FIND_LINKS={W} '/my env/python' -m pip download --no-deps --only-binary "
        f":all: --index-url {PYPI} -d {W}/wheels --require-hashes -r {W}/index-2-hashed.txt\n"
        f"# {W}/index-2-hashed.txt:\n"
        f"#   flashinfer-python==0.2.5 --hash=sha256:{H3}"
    )
    assert format_command(command, env=False).startswith("'/my env/python' -m pip download")


def _script(code: str) -> tuple[str, ...]:
    return (sys.executable, "-c", code)


def test_run_pip_writes_files_sets_env_and_stops_at_the_first_failure(tmp_path: Path) -> None:
    log = tmp_path / "log"
    seen: list[PipCommand] = []
    record = (
        "import os, pathlib, sys; p = pathlib.Path(sys.argv[1]); "
        "env = os.environ['PIP_EXTRA_INDEX_URL'] + ' ' + os.environ['KEEP']; "
        "open(sys.argv[2], 'a').write(p.read_text() + env + '\\n')"
    )
    commands = [
        PipCommand(
            argv=(*_script(record), str(tmp_path / "sub" / "r.txt"), str(log)),
            index="A",
            env=(("PIP_EXTRA_INDEX_URL", "A"),),
            files=((str(tmp_path / "sub" / "r.txt"), "torch==1\n"),),
        ),
        PipCommand(argv=_script("import sys; sys.exit(3)"), index="B"),
        PipCommand(argv=_script(f"open({str(log)!r}, 'a').write('never\\n')"), index="C"),
    ]
    assert run_pip(commands, env={"KEEP": "kept", "PIP_EXTRA_INDEX_URL": "evil"}, echo=seen.append) == 3
    assert log.read_text() == "torch==1\nA kept\n"
    assert seen == commands[:2]


def test_run_pip_returns_zero_when_all_succeed() -> None:
    assert run_pip([PipCommand(argv=_script("pass"), index="A")] * 2) == 0


def test_run_pip_with_a_missing_interpreter(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope" / "python")
    with pytest.raises(InvalidInput) as info:
        run_pip([PipCommand(argv=(missing, "-m", "pip"), index="A")])
    assert info.value.message == f"cannot run {missing}: No such file or directory"


def test_sync_dry_run_echoes_and_runs_nothing(tmp_path: Path) -> None:
    seen: list[PipCommand] = []
    pip = {"CUDARESOLVE_INSTALLER": "pip"}
    result = sync_environment(_lock(), python=str(tmp_path / "no-python"), dry_run=True, echo=seen.append, env=pip)
    assert result.returncode == 0
    assert [c.argv[3] for c in seen] == ["download", "download", "install"]
    assert all(c.argv[0] == str(tmp_path / "no-python") for c in seen)  # never started: it does not exist
    assert "--no-deps" in seen[-1].argv and "--no-index" in seen[-1].argv


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for the interpreter")
def test_sync_reads_the_environment_then_passes_pip_exit_code_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "argv.log"
    fake = tmp_path / "python"
    site = tmp_path / "site-packages"
    (site / "pip-24.0.dist-info").mkdir(parents=True)
    (site / "pip-24.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: pip\nVersion: 24.0\n")
    answer = {"version": "3.11", "platform": "linux-x86_64", "libc": ["glibc", "2.35"], "gil_disabled": False,
              "markers": {"implementation_name": "cpython"}, "sys_path": [str(site)], "site": [str(site)]}
    # '-c SCRIPT': the one probe of the environment (pip is installed there); pip fails with 23
    fake.write_text(
        f'#!/bin/sh\necho "$1 $3" >> {log}\nif [ "$1" = -c ]; then echo "$PROBE"; exit 0; fi\nexit 23\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PROBE", json.dumps(answer))
    from cudaresolve.install import probecache

    monkeypatch.setattr(probecache, "_is_script", lambda path: False)  # the script stands for a binary: kept
    env = {"CUDARESOLVE_INSTALLER": "pip"}
    assert sync_environment(_lock(None, None, None), python=str(fake), markers={}, env=env).returncode == 23
    assert log.read_text().splitlines() == ["-c ", "-m download"]
    # a second sync asks the cache, not the interpreter: only pip runs
    assert sync_environment(_lock(None, None, None), python=str(fake), markers={}, env=env).returncode == 23
    assert log.read_text().splitlines() == ["-c ", "-m download", "-m download"]


def test_choosing_the_installer_asks_the_import_system_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Looking ``pip`` up through the import system holds the global import lock while the meta-path hooks run;
    setuptools' ``_distutils_hack`` imports a module there for ``pip``, which deadlocked against the thread that
    loads the database for the doctor pass. pip is looked for on disk instead."""
    from cudaresolve.install.installer import choose_installer

    asked: list[str] = []

    class Recorder:
        def find_spec(self, name: str, path: object = None, target: object = None) -> None:
            asked.append(name)

    monkeypatch.setattr(sys, "meta_path", [Recorder(), *sys.meta_path])
    monkeypatch.setenv("CUDARESOLVE_INSTALLER", "pip")
    chosen = choose_installer(sys.executable, has_pip=False)
    assert "pip" not in asked
    assert chosen.kind == "pip" and chosen.head == (sys.executable, "-m", "pip", "--python", sys.executable)


def test_an_unknown_installer_choice_is_one_coded_error() -> None:
    from cudaresolve.install.installer import choose_installer

    with pytest.raises(InvalidInput) as info:
        choose_installer(sys.executable, has_pip=True, env={"CUDARESOLVE_INSTALLER": "pipx"})
    assert "CUDARESOLVE_INSTALLER=pipx" in info.value.message
    for value in ("", "uv", "PIP", " pip "):  # the known choices, as spelled by hand
        choose_installer(sys.executable, has_pip=True, env={"CUDARESOLVE_INSTALLER": value, "PATH": ""})


def test_a_failed_install_names_the_installer_that_ran() -> None:
    from cudaresolve.cli.install import _runs_uv
    from cudaresolve.errors import PipFailed

    assert _runs_uv(["/opt/bin/uv", "pip", "install"]) and not _runs_uv([sys.executable, "-m", "pip", "install"])
    failed = PipFailed(2, tool="uv")
    assert (failed.code, failed.exit_code, failed.message) == ("pip-failed", 2, "uv exited with code 2")
    assert PipFailed(1, index="https://pypi.org/simple").message.startswith("pip exited with code 1 while using")


def test_a_local_folder_is_built_from_the_index_its_lock_takes_packages_from() -> None:
    """``lock -r req.txt`` of ``-e ./pkg`` and ``rich`` on a GPU box wrote ``index-url = .../whl/cpu``, the variant
    of a set with no GPU build; ``install --from`` built pkg with ``--index-url https://download.pytorch.org/whl/cpu``
    (unreachable here, and no build backend there). A variant index that serves the lock's GPU builds is no
    place for hatchling either: the index the rest of the lock comes from is."""
    from cudaresolve.install.installer import folder_index

    pypi, cpu, cu128 = "https://pypi.org/simple", "https://download.pytorch.org/whl/cpu", "https://m.example/cu128"
    folder = LockedPackage(name="pkg", version="", index="", url="file:///w/pkg", kind=FileKind.DIRECTORY)
    rich = LockedPackage(name="rich", version="15.0.0", index=pypi)
    assert folder_index(Lock(packages=(folder, rich), variant="cpu", index_url=cpu)) == pypi  # none from it
    stack = tuple(LockedPackage(name=n, version=v, index=cu128) for n, v in (("torch", "2.7.1+cu128"), ("sympy", "1")))
    assert folder_index(Lock(packages=(folder, *stack, rich), variant="cu128", index_url=cu128)) == pypi
    assert folder_index(Lock(packages=(folder, *stack), variant="cu128", index_url=cu128)) == cu128  # all it has
    torch = LockedPackage(name="torch", version="2.10.0", index=pypi)  # PyPI's builds: its index is the default
    extra = LockedPackage(name="private", version="1.0", index="https://private.example/simple")
    assert folder_index(Lock(packages=(folder, torch, extra), variant="cu128", index_url=pypi)) == pypi
    assert folder_index(Lock(packages=(folder,))) is None  # the installer's own default
