"""The installer that runs in this process (the default): each verified wheel unpacked once into the user cache
(``unpack``) and linked into the environment (``link``), the distributions it replaces removed first. Does I/O.

Chosen unless ``CUDARESOLVE_INSTALLER`` names uv or pip, and only where the probe of the target gave its
folders (``environment.TargetEnvironment.scheme``). Why not uv: a second program that starts, asks the
interpreter again what it is and reads its own cache costs a warm install more than the linking itself (measured
in ``bench/bench_install.py``); local project folders and sdists, which need a build, still go to uv or pip. But
wheels of many files (``hand_to_uv``) go to uv when it is at hand: per file it links in half the time this
process takes, which outweighs its start from about 3,000 files on.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

from cudaresolve.install.link import Scheme

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from pathlib import Path

    from cudaresolve.install.installed import InstalledDist
    from cudaresolve.install.pip import PipCommand
    from cudaresolve.resolve.model import LockedPackage

__all__ = [
    "hand_to_uv", "link_locked", "link_plan", "link_scheme", "link_wheels", "linkable", "prune_unpacked",
    "remove_dists", "remove_plan",
]

_FIELDS: Final = ("purelib", "platlib", "scripts", "data", "headers")
_WORKERS: Final = 4  # threads unpacking a cold install's wheels, linking many files
_MANY_FILES: Final = 1000  # fewer files are linked in one thread: the others cost more than they save
#: From this many files to link, uv (when at hand) installs the wheels: measured on this machine's ext4, this process
#: links a file in about 45 us and uv in about 20 us after its own start and probe (about 80 ms).
_UV_FILES: Final = 3000


def link_scheme(scheme: Iterable[tuple[str, str]], python: str, env: Mapping[str, str] | None) -> Scheme | None:
    """The in-process installer's folders for ``python``; None when another installer is asked for
    (``CUDARESOLVE_INSTALLER``) or the probe gave no folders."""
    from cudaresolve.install.installer import OWN, wanted_installer

    given = dict(scheme)
    if wanted_installer(env) not in ("", OWN) or not all(isinstance(given.get(k), str) and given[k] for k in _FIELDS):
        return None
    return Scheme(**{k: given[k] for k in _FIELDS}, python=python)


def hand_to_uv(
    packages: Iterable[LockedPackage], records: Callable[[str], str | None], env: Mapping[str, str] | None
) -> bool:
    """Whether the wheels of ``packages`` hold so many files (their kept RECORDs' rows, ``records`` by sha256)
    that uv, when at hand, links them sooner than this process does, its start included (``_UV_FILES``);
    never when ``CUDARESOLVE_INSTALLER=cudaresolve`` asks for this installer."""
    from cudaresolve.install.installer import OWN, find_uv, wanted_installer

    if wanted_installer(env) == OWN:
        return False
    files = 0
    for package in packages:
        text = records(package.sha256) if package.sha256 else None
        files += text.count("\n") if text else 0
    return files >= _UV_FILES and find_uv(env) is not None


def linkable(package: LockedPackage, path: Path | None) -> bool:
    """Whether this installer takes ``package`` from the file at ``path``: a verified wheel (an sdist or a folder
    needs a build)."""
    from cudaresolve.resolve.model import FileKind

    return (package.kind in (FileKind.WHEEL, FileKind.ARCHIVE) and bool(package.sha256) and path is not None
            and path.name.endswith(".whl"))


def link_locked(
    packages: Sequence[LockedPackage], files: Mapping[str, Path], scheme: Scheme,
    before: Mapping[str, InstalledDist], root: Path, *, echo: Callable[[PipCommand], None] | None, fresh: bool,
) -> None:
    """The ``linkable`` of ``packages`` (their verified files in ``files``, under the file cache ``root``)
    installed by ``link_wheels``, the step shown to ``echo`` first."""
    from cudaresolve.install.unpack import UNPACKED

    pairs = [(p, files[p.name]) for p in packages if linkable(p, files.get(p.name))]
    if not pairs:
        return
    from cudaresolve.core.progress import Event, report

    if echo is not None:
        echo(link_plan([f for _, f in pairs], scheme))
    report(Event(kind="pip-start", label="install", step=1, steps=1))  # as an installer run reports it
    link_wheels(pairs, scheme, before, root.parent / UNPACKED, fresh=fresh)
    report(Event(kind="pip-end", label="install", amount=0))


def prune_unpacked(root: Path) -> None:
    """The unpacked wheels whose file the cache under ``root`` no longer holds removed (``unpack.prune``)."""
    from cudaresolve.install.unpack import UNPACKED, prune

    try:
        wanted = {entry.name for entry in os.scandir(root)}
    except OSError:
        return
    prune(root.parent / UNPACKED, wanted)


def link_plan(files: Sequence[Path], scheme: Scheme) -> PipCommand:
    """What ``link_wheels`` does, for ``--dry-run`` and the echo of a run: a command in words."""
    from cudaresolve.install.pip import PipCommand

    said = f"# link {len(files)} verified wheel(s) into {scheme.purelib} (cudaresolve, in this process):"
    return PipCommand(argv=(), index="", said="\n".join([said, *(f"#   {f}" for f in files)]))


def remove_plan(names: Sequence[str]) -> PipCommand:
    """What ``remove_dists`` does for ``--exact``, in words (as ``link_plan``)."""
    from cudaresolve.install.pip import PipCommand

    return PipCommand(argv=(), index="", said=f"# uninstall {len(names)} distribution(s) the lock does not pin "
                      f"(cudaresolve, in this process): {' '.join(names)}")


def link_wheels(
    packages: Sequence[tuple[LockedPackage, Path]],
    scheme: Scheme,
    before: Mapping[str, InstalledDist],
    unpacked_root: Path,
    *,
    fresh: bool = False,
) -> None:
    """Install each (package, verified wheel) pair: the installed distribution of its name inside the
    environment removed, the wheel unpacked (again when ``fresh``: an installed file was changed through a hard
    link) and linked. ``InvalidBinary`` for a wheel that is not one; ``InvalidInput`` for a file that cannot be
    written (naming it)."""
    from cudaresolve.core.parallel import each
    from cudaresolve.core.platforms import canonical_name
    from cudaresolve.errors import InvalidBinary
    from cudaresolve.install.link import StaleTree, TreePlan, apply, plan_tree
    from cudaresolve.install.unpack import META, forget, is_kept, unpacked

    if fresh:
        for package, _ in packages:
            forget(unpacked_root, package.sha256 or "")
    missing = [(p, w) for p, w in packages if not is_kept(unpacked_root, p.sha256 or "")]
    each(lambda pair: _unpack(pair, unpacked_root), sorted(missing, key=lambda pair: -_size(pair[1])),
         workers=_WORKERS, name="unpack")  # side by side, the biggest first: a cold install's big wheel waits less
    plans: dict[str, tuple[LockedPackage, Path, TreePlan]] = {}

    def plan(pair: tuple[LockedPackage, Path]) -> None:  # every wheel checked before anything is removed or written
        package, wheel = pair
        sha256 = package.sha256 or ""
        try:
            try:
                made = plan_tree(unpacked(unpacked_root, sha256, wheel), scheme, wheel=wheel.name,
                                 project=package.name, version=package.version or None)
            except (StaleTree, InvalidBinary):  # a kept file changed through a hard link, or the kept folder
                forget(unpacked_root, sha256)  # damaged since (a .dist-info gone): unpacked again from the wheel
                made = plan_tree(unpacked(unpacked_root, sha256, wheel), scheme, wheel=wheel.name, check=False,
                                 project=package.name, version=package.version or None)
        except OSError as exc:
            raise _cannot_write(exc, package) from exc
        plans[package.name] = (package, wheel, made)

    for pair in packages:  # in this thread: checking is Python's work, threads only add the GIL's hand-offs
        plan(pair)
    # what they replace removed first: a file that moves from one package to another is not removed after it
    remove_dists(before, [canonical_name(p.name) for p, _ in packages], scheme)

    failed: list[tuple[LockedPackage, OSError]] = []

    def one(planned: tuple[LockedPackage, Path, TreePlan]) -> None:  # one that fails leaves the others to be linked
        package, wheel, made = planned
        try:
            apply(made, scheme, url=wheel.absolute().as_uri(), sha256=package.sha256 or "",
                  store=str(unpacked_root / f"{package.sha256}{META}"))
        except OSError as exc:  # ``apply`` removed what it wrote
            failed.append((package, exc))

    ordered = [plans[p.name] for p, _ in packages]
    files = sum(len(names) for _, _, made in ordered for *_, names in made.folders)
    each(one, sorted(ordered, key=lambda p: -sum(len(f[-1]) for f in p[2].folders)),
         workers=_linkers() if files >= _MANY_FILES else 1, name="link")  # many files: their folders side by side
    if failed:
        raise _partly(failed, len(packages))


def _linkers() -> int:
    """Threads linking many files: one a CPU, at most ``_WORKERS`` (each holds the GIL between system calls; on
    this project's 2-core machine four threads linked a 7,900-file lock in 408 ms, two in 334 ms)."""
    return max(1, min(_WORKERS, os.cpu_count() or 1))


def _unpack(pair: tuple[LockedPackage, Path], root: Path) -> None:
    from cudaresolve.install.unpack import unpacked

    package, wheel = pair
    try:
        unpacked(root, package.sha256 or "", wheel)
    except OSError as exc:
        raise _cannot_write(exc, package) from exc


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def remove_dists(installed: Mapping[str, InstalledDist], names: Iterable[str], scheme: Scheme) -> None:
    """Remove each distribution of ``names`` (normalized) among ``installed`` that lives in the environment's own
    folders, and any other copy of the same project there (two ``.dist-info`` folders of one name: pip and uv
    remove both); one found elsewhere on ``sys.path`` is left (installing shadows it, as pip and uv do)."""
    from cudaresolve.install.uninstall import remove

    found = [installed[n] for n in names if n in installed]
    if not found:
        return
    homes = tuple(os.path.join(os.path.realpath(f), "") for f in (scheme.purelib, scheme.platlib))
    others = _copies(scheme)
    for dist in found:
        if dist.path and os.path.join(os.path.realpath(os.path.dirname(dist.path)), "").startswith(homes):
            remove(dist.path, dist.record, scheme.folders)
        for copy in others.get(dist.name, ()):
            if os.path.realpath(copy) != os.path.realpath(dist.path or ""):
                remove(copy, _record(copy), scheme.folders)


def _copies(scheme: Scheme) -> dict[str, list[str]]:
    """Every ``.dist-info`` folder in the environment's site folders, by normalized project name."""
    from cudaresolve.install.link import dist_info_project

    copies: dict[str, list[str]] = {}
    for site in dict.fromkeys((scheme.purelib, scheme.platlib)):
        try:
            names = os.listdir(site)
        except OSError:
            continue
        for entry in names:
            if entry.endswith(".dist-info"):
                copies.setdefault(dist_info_project(entry), []).append(os.path.join(site, entry))
    return copies


def _record(dist_info: str) -> str | None:
    from cudaresolve.install.record import MAX_RECORD_BYTES

    try:
        with open(os.path.join(dist_info, "RECORD"), encoding="utf-8") as handle:
            return handle.read(MAX_RECORD_BYTES)
    except (OSError, UnicodeDecodeError):
        return None


def _partly(failed: Sequence[tuple[LockedPackage, OSError]], total: int) -> Exception:
    """The first of ``failed`` (package, its error) as ``_cannot_write`` says it, and that the environment is
    changed in part: the others were linked, and these are not there (what they replace was removed first)."""
    from cudaresolve.errors import InvalidInput
    from cudaresolve.text.model import Text

    package, exc = failed[0]
    where = exc.filename2 or exc.filename or package.name
    missing = ", ".join(sorted(p.name for p, _ in failed)[:5]) + (", ..." if len(failed) > 5 else "")
    return InvalidInput(Text.of("lock.install.link-failed-partly", name=package.name, path=str(where),
                                reason=str(exc.strerror or exc), done=total - len(failed), total=total,
                                missing=missing), hint=Text("lock.install.link-failed-partly.hint"))


def _cannot_write(exc: OSError, package: LockedPackage) -> Exception:
    from cudaresolve.errors import InvalidInput
    from cudaresolve.text.model import Text

    where = exc.filename2 or exc.filename or package.name  # a link's target, where the two are named
    return InvalidInput(Text.of("lock.install.link-failed", name=package.name, path=str(where),
                                reason=str(exc.strerror or exc)), hint=Text("lock.install.link-failed.hint"))
