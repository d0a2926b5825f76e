"""An sdist's real core metadata, prepared by its own build backend. Does I/O: unpacks the archive into a
temporary folder and runs a child process.

When an sdist's PKG-INFO does not promise its dependencies (PEP 643: Metadata-Version below 2.2, or
``Requires-Dist`` listed as ``Dynamic``), pip and uv ask the project's build backend. So does this module,
through PyPA's ``build`` (its isolated environment and ``pyproject-hooks``): the backend's
``prepare_metadata_for_build_wheel`` hook, else a built wheel's ``METADATA``. The build requirements come
from the run's default index (a mirror applied), told to the child as ``PIP_INDEX_URL`` and, when uv makes the
environment, ``UV_DEFAULT_INDEX``; no other index is named.

Bounds: the archive is unpacked under the same member and size limits as a PKG-INFO read (tar's ``data``
filter: no links out, no device files, no absolute paths), the child is one process group that is killed
when it outlives ``BuildPolicy.timeout`` (or at once when it ends, with whatever it left running), and of what it
prints only the last ``_TAIL_BYTES`` are kept, and shown cut to ``_OUTPUT_CHARS``. The
result is cached by the sdist's URL (its sha256 was checked when it was downloaded).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Final

from cudaresolve.core.processes import drain, kill_group
from cudaresolve.errors import DynamicMetadata
from cudaresolve.index.limits import MAX_SDIST_MEMBERS, MAX_SDIST_UNPACKED
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping

    from cudaresolve.index.simple import IndexFile

__all__ = [
    "BUILD_TIMEOUT", "BUILD_TIMEOUT_ENV", "BuildPolicy", "build_policy", "build_timeout_from_env", "prepare_metadata",
    "prepare_tree_metadata",
]

#: Seconds one sdist's metadata may take to prepare, its build environment included (pip allows no bound at
#: all; a backend that needs a compiler or a GPU toolkit to say its dependencies fails well before this).
BUILD_TIMEOUT: Final = 300.0
#: The environment variable that sets ``BUILD_TIMEOUT``, in seconds.
BUILD_TIMEOUT_ENV: Final = "CUDARESOLVE_BUILD_TIMEOUT"
_OUTPUT_CHARS: Final = 2000
#: What is kept of a backend's output (its last line names the METADATA; a failure shows its tail), and how long
#: its pipe is drained once the backend has ended (a process it left behind may hold the pipe open).
_TAIL_BYTES: Final = 64 * 1024
_DRAIN_SECONDS: Final = 2.0
_METADATA_BYTES: Final = 16 * 1024 * 1024

#: The child: the backend's metadata through ``build``, in an isolated environment (uv's when uv is there).
_CHILD: Final = """
import shutil, sys
from pathlib import Path
from build import ProjectBuilder
from build.env import DefaultIsolatedEnv
source, out = sys.argv[1], sys.argv[2]
installer = "uv" if shutil.which("uv") else "pip"
with DefaultIsolatedEnv(installer=installer) as env:
    builder = ProjectBuilder.from_isolated_env(env, source)
    env.install(builder.build_system_requires)
    env.install(builder.get_requires_for_build("wheel"))
    found = builder.metadata_path(out)
print(str(Path(found) / "METADATA"))
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildPolicy:
    """Whether sdists may be built for their metadata (``--no-build`` says no), from which index their build
    requirements come, and how long one may take."""

    allowed: bool = True
    index_url: str | None = None
    timeout: float = BUILD_TIMEOUT


def build_policy(default_index: str, mirrors: Mapping[str, str], *, no_build: bool) -> BuildPolicy:
    """The run's policy: no builds under ``--no-build``; build requirements from the default index (mirrors
    applied); the timeout from ``CUDARESOLVE_BUILD_TIMEOUT``."""
    from cudaresolve.index.mirrors import apply_mirror

    index = apply_mirror(default_index.rstrip("/"), mirrors)
    return BuildPolicy(allowed=not no_build, index_url=index, timeout=build_timeout_from_env(os.environ))


def build_timeout_from_env(environ: Mapping[str, str]) -> float:
    """``CUDARESOLVE_BUILD_TIMEOUT`` when it is a positive number of seconds, else ``BUILD_TIMEOUT``."""
    raw = environ.get(BUILD_TIMEOUT_ENV, "").strip()
    try:
        value = float(raw)
    except ValueError:
        return BUILD_TIMEOUT
    return value if 0 < value < float("inf") else BUILD_TIMEOUT


def prepare_metadata(archive: IO[bytes], file: IndexFile, policy: BuildPolicy) -> str:
    """The METADATA text the sdist ``archive`` (``file``, already hash-checked) builds, as the module docstring
    says; ``DynamicMetadata`` naming the sdist and the reason when it cannot be had."""
    import tempfile  # this module's heavier imports wait for a build: a lock imports it for ``build_policy``

    with tempfile.TemporaryDirectory(prefix="cudaresolve-sdist-") as scratch:
        root = Path(scratch)
        source = _unpack(archive, file, root / "src")
        return _prepare(source, root, file.filename, str(file.project), policy)


def prepare_tree_metadata(source: Path, policy: BuildPolicy) -> str:
    """The METADATA text a local project folder (a directory reference, ``-e PATH``) builds, the same way; its
    backend runs in the folder itself, as pip's and uv's do."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="cudaresolve-tree-") as scratch:
        return _prepare(source, Path(scratch), str(source), source.name, policy)


def _prepare(source: Path, scratch: Path, label: str, package: str, policy: BuildPolicy) -> str:
    out = scratch / "out"
    out.mkdir()
    printed = _run_child(source, out, label, package, policy)
    lines = [line for line in printed.splitlines() if line.strip()]
    found = Path(lines[-1]) if lines else None
    if found is None or out not in found.parents or not _is_file(found):
        raise _failed(label, package, "the build backend wrote no METADATA")
    with open(found, "rb") as handle:
        data = handle.read(_METADATA_BYTES + 1)
    if len(data) > _METADATA_BYTES:
        raise _failed(label, package, f"a METADATA of more than {_METADATA_BYTES} bytes")
    return data.decode("utf-8", errors="replace")


def _unpack(archive: IO[bytes], file: IndexFile, into: Path) -> Path:
    """The sdist's one top folder, unpacked under the member and size bounds."""
    import tarfile
    import zipfile

    into.mkdir()
    archive.seek(0)
    try:
        if file.filename.endswith(".zip"):
            _unzip(archive, into)
        else:
            _untar(archive, into)
    except DynamicMetadata:
        raise
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
        raise _failed(file.filename, str(file.project), f"its archive cannot be unpacked ({type(e).__name__})") from e
    tops = [p for p in into.iterdir() if p.is_dir()]
    if len(tops) != 1 or not ((tops[0] / "pyproject.toml").is_file() or (tops[0] / "setup.py").is_file()):
        raise _failed(file.filename, str(file.project), "no project folder with pyproject.toml or setup.py at its top")
    return tops[0]


def _untar(archive: IO[bytes], into: Path) -> None:
    """One pass over the stream, each member extracted as it comes (a compressed archive read out of order
    decompresses from its start again for every member)."""
    import tarfile

    total = 0
    with tarfile.open(fileobj=archive, mode="r|*") as tar:
        for count, member in enumerate(tar, 1):
            total += max(member.size, 0)
            if count > MAX_SDIST_MEMBERS or total > MAX_SDIST_UNPACKED:
                raise ValueError("over the unpacking bounds")
            tar.extract(member, into, filter="data")  # no links out, no devices, no absolute paths


def _unzip(archive: IO[bytes], into: Path) -> None:
    import zipfile

    with zipfile.ZipFile(archive) as sdist:
        infos = sdist.infolist()
        if len(infos) > MAX_SDIST_MEMBERS or sum(i.file_size for i in infos) > MAX_SDIST_UNPACKED:
            raise ValueError("over the unpacking bounds")
        base = into.resolve()
        for info in infos:
            target = (into / info.filename).resolve()
            if base not in target.parents and target != base:
                raise ValueError("a member outside the folder")
        sdist.extractall(into)


def _run_child(source: Path, out: Path, label: str, package: str, policy: BuildPolicy) -> str:
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_NO_INPUT="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONDONTWRITEBYTECODE="1")
    if policy.index_url:
        env.update(PIP_INDEX_URL=policy.index_url, UV_DEFAULT_INDEX=policy.index_url, UV_INDEX_URL=policy.index_url)
    uv = _uv_folder()
    if uv is not None:
        env["PATH"] = f"{uv}{os.pathsep}{env.get('PATH', '')}"
    command = [sys.executable, "-c", _CHILD, str(source), str(out)]
    try:
        child = subprocess.Popen(
            command, cwd=source, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    except OSError as e:
        raise _failed(label, package, f"the build could not start ({e.strerror or type(e).__name__})") from e
    printed = bytearray()  # the last _TAIL_BYTES printed: a backend that floods its output costs no memory
    assert child.stdout is not None
    reader = drain(child.stdout, printed, keep=_TAIL_BYTES, last=True)
    try:
        child.wait(timeout=policy.timeout)  # the backend's own end: a process it left holding the pipe waits not
    except subprocess.TimeoutExpired:
        _kill(child)
        raise _failed(label, package, f"its build backend ran past {policy.timeout:g} s") from None
    except BaseException:
        _kill(child)
        raise
    reader.join(_DRAIN_SECONDS)
    kill_group(child)  # whatever the backend left running in its session ends with it
    text = bytes(printed).decode("utf-8", errors="replace")
    if child.returncode != 0:
        tail = " ".join(text.split())[-_OUTPUT_CHARS:]
        raise _failed(label, package, f"its build backend failed (exit {child.returncode}): {tail}")
    return text


def _uv_folder() -> str | None:
    """The folder of a uv executable, when there is one (uv makes the isolated environment faster than pip)."""
    import shutil

    found = shutil.which("uv")
    if found is not None:
        return str(Path(found).parent)
    try:
        from uv import find_uv_bin  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        return str(Path(find_uv_bin()).parent)
    except (FileNotFoundError, OSError):
        return None


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; False for a name the system refuses (too long, a NUL in it)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _kill(child: subprocess.Popen[bytes]) -> None:
    kill_group(child)
    child.wait()


def _failed(label: str, package: str, why: str) -> DynamicMetadata:
    return DynamicMetadata(
        Text.of("index.sdist-build-failed", file=label, reason=why),
        hint=Text.of("index.sdist-build-failed.hint", package=package),
    )
