"""The ``[[cuda-major]]`` and ``[[cudnn-major]]`` rows: which distributions carry CUDA (or cuDNN) libraries of one
major. Pure.

A row names distributions by pattern (``nvidia-*-cu{major}``: the major is in the name) or by
name with a fixed ``major`` or the release's own major version (``nvidia-cuda-runtime`` 13.0.96),
optionally only for releases in ``versions``. ``major_of`` answers for one release; the solver
ties such a release to the variants of that CUDA major (one major per environment). A
``[[cudnn-major]]`` row has the same keys and ties a release to a cuDNN major (``library = "cudnn"``):
``nvidia-cudnn-cu12`` 9.1.0.70 is cuDNN 9, onnxruntime-gpu 1.18.1 was linked against ``libcudnn.so.8``.
A row marked ``runtime`` names the CUDA runtime's own distributions, whose version is the toolkit release whose
runtime they ship (``nvidia-cuda-runtime-cu12`` 12.9.79 is CUDA 12.9's ``libcudart``): ``runtime_of``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from cudaresolve.db.fields import Collector

__all__ = ["LIBRARIES", "CudaMajorRule", "major_of", "read_cuda_major", "read_cudnn_major", "runtime_of", "tie_counts"]

_KEYS: Final = {"names", "major", "versions", "unbound", "runtime", "source", "verified", "note"}
#: The libraries a row may tie a release to: its table's name without ``-major``.
LIBRARIES: Final = ("cuda", "cudnn")
_PATTERN: Final = re.compile(r"[a-z0-9*][a-z0-9*.-]*(\{major\})?[a-z0-9*.-]*")


@dataclass(frozen=True, slots=True, kw_only=True)
class CudaMajorRule:
    """One ``[[cuda-major]]`` row, its patterns compiled."""

    names: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]
    major: int | None  # None: the pattern's ``{major}``, else the release's major version
    versions: SpecifierSet | None
    source: str
    verified: bool = True
    library: str = "cuda"  # one of LIBRARIES: the table the row came from
    unbound: bool = False  # the names it matches tie no major, whatever a later row says (``major_of``)
    runtime: bool = False  # a release's major.minor is the CUDA release whose runtime it ships (``runtime_of``)

    def match(self, name: str, version: Version) -> re.Match[str] | None:
        """The pattern's match of ``name`` when this row speaks of ``name`` ``version``, else None."""
        if self.versions is not None and not self.versions.contains(version, prereleases=True):
            return None
        return next((m for pattern in self.patterns if (m := pattern.fullmatch(name)) is not None), None)

    def major_for(self, name: str, version: Version) -> int | None:
        """The CUDA major of ``name`` ``version`` by this row, None when the row does not tie it."""
        found = None if self.unbound else self.match(name, version)
        if found is None:
            return None
        if "major" in found.re.groupindex:
            return int(found["major"])
        return self.major if self.major is not None else version.major


def _compile(pattern: str) -> re.Pattern[str]:
    parts = [r"(?P<major>[0-9]{1,2})" if p == "{major}" else _glob(p) for p in re.split(r"(\{major\})", pattern)]
    return re.compile("".join(parts))


def _glob(text: str) -> str:
    return "[a-z0-9-]+".join(re.escape(p) for p in text.split("*"))


def read_cudnn_major(c: Collector, row: Mapping[str, Any], path: str) -> CudaMajorRule | None:
    """One ``[[cudnn-major]]`` row, its problems added to ``c``."""
    return read_cuda_major(c, row, path, library="cudnn")


def read_cuda_major(c: Collector, row: Mapping[str, Any], path: str, *, library: str = "cuda") -> CudaMajorRule | None:
    """One ``[[cuda-major]]`` row (or of ``library``'s table), its problems added to ``c``."""
    c.keys(row, _KEYS, path)
    names = c.get(row, "names", list, path, required=True)
    major = c.get(row, "major", int, path)
    spec = c.get(row, "versions", str, path)
    unbound = c.get(row, "unbound", bool, path) or False
    runtime = c.get(row, "runtime", bool, path) or False
    source = c.source(row, path)
    if names is None:
        return None
    bad = [n for n in names if not isinstance(n, str) or _PATTERN.fullmatch(n) is None]
    if bad or not names:
        c.add(f"{path}.names", Text.of("db.package-pattern", package=repr(bad[:1] or names)[:80]))
        return None
    versions = None
    if spec is not None:
        try:
            versions = SpecifierSet(spec)
        except InvalidSpecifier:
            c.add(f"{path}.versions", Text.of("db.package-pattern", package=repr(spec[:80])))
            return None
    return CudaMajorRule(
        names=tuple(names),
        patterns=tuple(_compile(n) for n in names),
        major=major,
        versions=versions,
        source=source,
        verified=c.verified(row, path),
        library=library,
        unbound=unbound,
        runtime=runtime,
    )


def major_of(rules: Iterable[CudaMajorRule], name: str, version: Version | str, *, library: str = "cuda") -> int | None:
    """The CUDA (or ``library``'s) major the first matching row ties ``name`` ``version`` to; None when no row does,
    or the first that matches is ``unbound``."""
    try:
        parsed = version if isinstance(version, Version) else Version(version)
    except InvalidVersion:
        return None
    for rule in rules:
        if rule.library != library:
            continue
        if rule.unbound and rule.match(name, parsed) is not None:
            return None
        found = rule.major_for(name, parsed)
        if found is not None:
            return found
    return None


def runtime_of(rules: Iterable[CudaMajorRule], name: str, version: Version | str) -> tuple[int, int] | None:
    """(major, minor) of the CUDA release whose runtime ``name`` ``version`` ships, when the first ``[[cuda-major]]``
    row that ties it is a ``runtime`` row; else None (a library versioned otherwise, or no row)."""
    try:
        parsed = version if isinstance(version, Version) else Version(version)
    except InvalidVersion:
        return None
    for rule in rules:
        if rule.library != "cuda" or rule.match(name, parsed) is None:
            continue
        return (parsed.major, parsed.minor) if rule.runtime and not rule.unbound else None
    return None


def tie_counts(rules: Iterable[CudaMajorRule]) -> tuple[tuple[str, str, int, int], ...]:
    """``(name, library, rows, unverified)`` per name pattern and library, in the rows' order (``db show``):
    ``("onnxruntime-gpu", "cudnn", 2, 0)``."""
    counts: dict[tuple[str, str], list[int]] = {}
    for rule in rules:
        for name in rule.names:
            row = counts.setdefault((name, rule.library), [0, 0])
            row[0] += 1
            row[1] += not rule.verified
    return tuple((name, library, n, bad) for (name, library), (n, bad) in counts.items())
