"""Whether a lock holds all that its files need on one interpreter, by the files' own METADATA. Pure, plus
reading a wheel.

Install follows no dependency: a lock is the whole environment, so the installer runs with
``--no-deps`` and nothing is looked up on an index. A lock can still be short of what its files
need on the interpreter at hand: an index whose PEP 658 ``.metadata`` file disagrees with the
wheel it describes (the lock followed the ``.metadata``), or a ``Requires-Dist`` marker on the
patch release (``python_full_version``) that the lock evaluated for another patch of the same
``X.Y``. ``unmet`` finds both before anything is installed: it reads ``Requires-Dist`` from each
locked wheel itself (hash-checked, never the index's copy), evaluates the markers for the target
interpreter (extras followed from the requirement that names them) and names each requirement
that no locked package meets (name missing, or its locked version outside the range). ``install``
refuses such a lock with a coded error and changes nothing.
"""

from __future__ import annotations

import re
import zipfile
from typing import TYPE_CHECKING, Final

from cudaresolve.core.platforms import canonical_name

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from cudaresolve.lock.model import Lock

__all__ = ["MAX_METADATA_BYTES", "closure_holds", "unmet", "wheel_requires"]

#: The largest METADATA read from a wheel (a real one is a few KB; long descriptions reach 1 MB).
MAX_METADATA_BYTES: Final = 16 * 1024 * 1024


def wheel_requires(path: Path) -> tuple[str, ...] | None:
    """The ``Requires-Dist`` lines of the wheel at ``path`` (its one ``*.dist-info/METADATA``); None
    when the file is no wheel, has no METADATA or several, or one over ``MAX_METADATA_BYTES``."""
    try:
        with zipfile.ZipFile(path) as archive:
            found = [i for i in archive.infolist() if re.fullmatch(r"[^/]+\.dist-info/METADATA", i.filename)]
            if len(found) != 1 or found[0].file_size > MAX_METADATA_BYTES:
                return None
            text = archive.read(found[0]).decode("utf-8")
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError, ValueError):
        return None
    from email.parser import HeaderParser

    return tuple(str(v).strip() for v in HeaderParser().parsestr(text).get_all("Requires-Dist") or ())


def unmet(
    lock: Lock, requires: Mapping[str, Sequence[str]], markers: Mapping[str, str]
) -> tuple[tuple[str, str], ...]:
    """(locked package, requirement) for each requirement that applies on ``markers`` and that the
    lock does not meet; ``requires`` maps each locked name to its file's ``Requires-Dist`` (a name
    left out is taken as needing nothing). In lock order, each pair once."""
    from packaging.requirements import InvalidRequirement, Requirement

    versions = {canonical_name(p.name): p.version for p in lock.packages}
    needs = {canonical_name(name): lines for name, lines in requires.items()}
    found: list[tuple[str, str]] = []
    extras_seen: dict[str, frozenset[str]] = {}
    queue = [(canonical_name(p.name), frozenset[str]()) for p in reversed(lock.packages)]
    while queue:
        name, extras = queue.pop()
        known = extras_seen.get(name)
        if known is not None and extras <= known:
            continue
        extras_seen[name] = extras | (known or frozenset())
        for line in needs.get(name, ()):
            try:
                requirement = Requirement(line)
            except InvalidRequirement:
                found.append((name, line))  # a wheel whose requirement cannot be read is not installed blind
                continue
            if not _applies(requirement.marker, extras_seen[name], markers):
                continue
            dep = canonical_name(requirement.name)
            version = versions.get(dep)
            if version is None or not _contains(requirement.specifier, version):
                found.append((name, line))
            else:
                queue.append((dep, frozenset(canonical_name(e) for e in requirement.extras)))
    return tuple(dict.fromkeys(found))


def _applies(marker: object, extras: frozenset[str], markers: Mapping[str, str]) -> bool:
    from packaging.markers import Marker, UndefinedComparison, UndefinedEnvironmentName

    if not isinstance(marker, Marker):
        return True
    try:
        return any(marker.evaluate({**markers, "extra": extra}) for extra in ("", *sorted(extras)))
    except (UndefinedComparison, UndefinedEnvironmentName, ValueError):
        return True  # a marker we cannot evaluate may apply: the requirement is checked


def _contains(specifier: object, version: str) -> bool:
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    if not isinstance(specifier, SpecifierSet):
        return False
    try:
        return specifier.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


def closure_holds(
    lock: Lock, kept: Mapping[str, tuple[str, ...]], files: Mapping[str, Path], markers: Mapping[str, str]
) -> None:
    """``verdicts.check_closure``'s check itself: the wheels to install (those not ``kept``) read for their
    requirements."""
    from cudaresolve.errors import IncompleteLock
    from cudaresolve.text.model import Text

    requires: dict[str, tuple[str, ...]] = {}
    for package in lock.packages:
        if package.name in kept:
            requires[package.name] = kept[package.name]
        else:
            path = files.get(package.name)
            lines = wheel_requires(path) if path is not None else None
            if lines is None and path is not None and path.name.lower().endswith(".whl"):  # never taken as "none"
                raise IncompleteLock(
                    Text.of("lock.install.unreadable-metadata", name=package.name, version=package.version,
                            file=path.name),
                    hint=Text("lock.install.unreadable-metadata.hint"),
                )
            requires[package.name] = lines or ()  # a local folder or sdist: built by the installer, unread here
    missing = unmet(lock, requires, markers)
    if missing:
        name, requirement = missing[0]
        version = next(p.version for p in lock.packages if canonical_name(p.name) == name)
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            Requirement(requirement)
        except InvalidRequirement:  # its metadata is broken, not the lock short of a package
            raise IncompleteLock(
                Text.of("lock.install.bad-requirement", name=name, version=version, requirement=requirement[:200]),
                hint=Text("lock.install.unreadable-metadata.hint"),
            ) from None
        raise IncompleteLock(
            Text.of("lock.install.incomplete", name=name, version=version, requirement=requirement,
                    python=markers.get("python_full_version", "?")),
            hint=Text("lock.install.incomplete.hint"),
        )
