"""The verified wheel of each locked package that is to be installed, as a local file. Does I/O: HTTP, pip.

A package whose lock gives a file URL and a sha256 (every pylock.toml, a direct reference) is
fetched from that URL into the shared cache (``wheelcache.fetch_files``): from the cache when it
holds the file, so a second environment downloads nothing. A locked sdist is fetched the same way
and then built into a wheel by pip (``pip wheel --no-deps`` of that one file; its build
requirements come from the package's own index, into pip's isolated build environment, never the
target). A package the lock pins without a URL (a requirements lock: ``name==version --hash``)
is downloaded by pip from its own index (``pip.download_commands``: ``--no-deps``, exact pin,
``--require-hashes``). Nothing is resolved on any path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cudaresolve.core.platforms import canonical_name
from cudaresolve.errors import InvalidBinary, InvalidInput
from cudaresolve.install.pip import PipCommand, download_commands, run_pip, wheel_dir
from cudaresolve.install.wheelcache import cached_file, fetch_files, split_direct
from cudaresolve.lock.model import Lock
from cudaresolve.resolve.model import FileKind
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from cudaresolve.install.installer import Installer
    from cudaresolve.resolve.model import LockedPackage

__all__ = ["Workdir", "gather", "version_key"]


def gather(
    lock: Lock,
    packages: Sequence[LockedPackage],
    *,
    installer: Installer,
    workdir: Callable[[], str],
    cache: Path,
    offline: bool = False,
    env: Mapping[str, str] | None = None,
    echo: Callable[[PipCommand], None] | None = None,
) -> tuple[int, dict[str, Path]]:
    """pip's exit code (0 when no pip run failed) and name -> the verified wheel of each of ``packages``
    (module docstring); a package whose wheel could not be had is left out. ``workdir`` gives the private folder
    pip's downloads and builds go to, asked for only when there are some."""
    direct, rest = split_direct(packages, cache)
    files: dict[str, Path] = {}
    hits = {p.name: cached_file(cache, p) for p in direct}
    if direct and all(hits.values()):  # all in the cache: no HTTP client is made (or imported)
        files.update({name: path for name, path in hits.items() if path is not None})
    elif direct:
        from cudaresolve.index.client import IndexClient
        from cudaresolve.index.policy import IndexPolicy
        from cudaresolve.index.transport import LazyClient

        with LazyClient() as http:
            files.update(fetch_files(direct, cache, IndexClient(http, IndexPolicy(offline=offline))))
    sdists = [p for p in direct if p.kind is FileKind.SDIST]
    if sdists or rest:
        pip, folder = _pip(installer), workdir()
        commands = [_build(p, files.pop(p.name), pip, folder) for p in sdists]
        if rest:
            commands += download_commands(Lock(packages=tuple(rest)), python=installer.python, workdir=folder,
                                          pip=pip)
        code = run_pip(commands, env=env, echo=echo)
        if code != 0:
            return code, files
        built = _downloaded(folder)
        for package in (*sdists, *rest):
            found = built.get(_matched(package.name, package.version))
            if found is None:  # a build of another project or version; a pin 1.0.0 is the file 1.0 (PEP 440)
                made = ", ".join(sorted(p.name for p in built.values()))[:300] or "none"
                raise InvalidBinary(Text.of("lock.install.wheel-not-made", package=package.name,
                                            version=package.version, made=made),
                                    hint=Text("lock.install.wheel-not-made.hint"))  # fmt: skip
            files[package.name] = found
    return 0, files


def _build(package: LockedPackage, sdist: Path, pip: tuple[str, ...], workdir: str) -> PipCommand:
    """``pip wheel`` of the verified sdist file alone, its build requirements from its own index."""
    argv = (*pip, "wheel", "--no-deps", "--index-url", package.index, "-w", wheel_dir(workdir), str(sdist))
    env = (("PIP_EXTRA_INDEX_URL", package.index), ("PIP_FIND_LINKS", workdir))
    return PipCommand(argv=argv, index=package.index, env=env)


def _pip(installer: Installer) -> tuple[str, ...]:
    if not installer.pip:
        raise InvalidInput(
            Text.of("lock.install.no-installer", python=installer.python, wanted="pip"),
            hint=Text("lock.install.no-installer.hint"),
        )
    return installer.pip


def version_key(package: LockedPackage) -> tuple[str, str]:
    """(normalized name, normalized version): how a wheel's file name is matched to its locked package."""
    from packaging.version import InvalidVersion, Version

    try:
        return canonical_name(package.name), str(Version(package.version))
    except InvalidVersion:
        return canonical_name(package.name), package.version


def _matched(name: str, version: str) -> tuple[str, object]:
    """(normalized name, version as PEP 440 compares it): ``1.0.0`` and ``1.0`` are one key."""
    from packaging.version import InvalidVersion, Version

    try:
        return canonical_name(name), Version(version)
    except InvalidVersion:
        return canonical_name(name), version


def _downloaded(workdir: str) -> dict[tuple[str, object], Path]:
    """(name, version: ``_matched``) -> the wheel pip left in ``pip.wheel_dir``."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    found: dict[tuple[str, object], Path] = {}
    folder = Path(wheel_dir(workdir))
    for path in sorted(folder.glob("*.whl")) if folder.is_dir() else ():
        try:
            name, version, _build, _tags = parse_wheel_filename(path.name)
        except InvalidWheelFilename:
            continue
        if os.path.isfile(path):
            found[_matched(name, str(version))] = path
    return found


class Workdir:
    """A private temporary folder for pip's downloads and builds, made when first asked for (a warm install of
    verified wheels needs none, nor the ``tempfile`` module) and removed at the end."""

    def __init__(self) -> None:
        self._held: Any = None

    def __call__(self) -> str:
        if self._held is None:
            import tempfile

            self._held = tempfile.TemporaryDirectory(prefix="cudaresolve-")
        return str(self._held.name)

    def __enter__(self) -> Workdir:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._held is not None:
            self._held.cleanup()
