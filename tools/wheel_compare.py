"""Compare what PyPI wheels hold (scan records) with the compatibility database. Pure.

Shared by ``tools/scan_wheels.py`` (live scans), ``tools/propose_rows.py`` and
``tests/test_wheel_scan_fixture.py`` (the committed fixture), so the rule that decides a
disagreement lives in one place. Input: :class:`WheelFacts` per scanned wheel and
:class:`MissingWheel` per build the database places on PyPI that PyPI does not have; the
database through the project's loader (a ``CompatDB``). Output: :class:`Comparison`.

Which database build a PyPI wheel is (the mapping every check depends on):

* a ``channel = "pypi"`` build whose ``platforms`` hold the wheel's platform (xformers,
  fbgemm-gpu, torch 2.13.0's PTX-less cu130 wheel);
* else, for a release with ``pypi-variant`` (torch, torchvision, torchaudio, xformers): on
  linux_x86_64 the build of that variant; on other platforms the build of the variant the
  wheel itself shows (PyPI's win_amd64 torch wheels are CPU builds), if it lists the platform;
* otherwise the database places no build on PyPI.

Facts compared per wheel: the variant (exact where the wheel names its CUDA minor, else its
major), SASS (the base list: targets in at least half of the containers of the wheel's main
CUDA library, which is what TORCH_CUDA_ARCH_LIST-style lists describe; see the audit, section
C), PTX (same rule), whether the variant's nvcc can emit every SASS target found, and, on
linux_x86_64, the CPython tags against ``python`` and tracked ``Requires-Dist`` pins against
``metadata-requires``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from cudaresolve.db.database import Build, CompatDB, PackageRelease

PYPI_KINDS: Final = (
    "torchvision",
    "torchaudio",
    "xformers",
    "fbgemm-gpu",
    "torch",
    "flashinfer-python",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
    "vllm",
    "sglang",
    "sgl-kernel",
    "sglang-kernel",
    "fbgemm-gpu-genai",
)
# Requires-Dist names whose pins the database records (tools/check_pypi.py uses this list too).
TRACKED: Final = frozenset(
    {
        "torch",
        "triton",
        "pytorch-triton",
        "fbgemm-gpu",
        "fbgemm-gpu-genai",
        "cuda-toolkit",
        "nvidia-cuda-runtime-cu11",
        "nvidia-cuda-runtime-cu12",
        "nvidia-cuda-runtime",
        "flashinfer-python",
        "flashinfer-cubin",
        "flashinfer-jit-cache",
        "sgl-kernel",
        "sglang-kernel",
    }
)
PRIMARY_PLATFORM: Final = "linux_x86_64"


@dataclass(frozen=True, slots=True, kw_only=True)
class WheelFacts:
    """What one PyPI wheel holds; one entry of the fixture."""

    package: str
    version: str
    platform: str  # linux_x86_64, linux_aarch64, win_amd64, any
    file: str
    variant: str | None = None  # "cu128"/"cpu" when the wheel names its CUDA minor (or has no CUDA)
    cuda_major: int | None = None
    sass: tuple[str, ...] = ()  # base list of the main CUDA library
    ptx: tuple[str, ...] = ()
    sass_all: tuple[str, ...] = ()  # every SASS target in any CUDA library of the wheel
    ptx_all: tuple[str, ...] = ()
    python: tuple[str, ...] = ()  # interpreter tags of every PyPI wheel of this release and platform
    platforms: tuple[str, ...] = ()  # every platform PyPI has a wheel of this release for (primary wheel only)
    requires_python: str | None = None
    requires: tuple[str, ...] = ()  # tracked Requires-Dist lines
    binaries_scanned: bool = True

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WheelFacts:
        tuples = ("sass", "ptx", "sass_all", "ptx_all", "python", "platforms", "requires")
        values: dict[str, Any] = {k: (tuple(v) if k in tuples else v) for k, v in data.items()}
        variant = values.get("variant") or ""
        if "cuda_major" not in values and re.match(r"^cu\d{3}$", variant):
            values["cuda_major"] = int(variant[2:-1])  # left out of the fixture when the variant names it
        values.setdefault("sass_all", values.get("sass", ()))
        values.setdefault("ptx_all", values.get("ptx", ()))
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """Compact: ``*_all`` only where they differ from the base list, empty values left out."""
        data: dict[str, Any] = {"package": self.package, "version": self.version, "platform": self.platform}
        data["file"] = self.file
        for key in ("variant", "cuda_major", "requires_python"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        if self.variant and self.variant[2:-1] == str(self.cuda_major):
            del data["cuda_major"]
        for key in ("sass", "ptx", "python", "platforms", "requires"):
            if getattr(self, key):
                data[key] = list(getattr(self, key))
        if self.sass_all != self.sass:
            data["sass_all"] = list(self.sass_all)
        if self.ptx_all != self.ptx:
            data["ptx_all"] = list(self.ptx_all)
        if not self.binaries_scanned:
            data["binaries_scanned"] = False
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class MissingWheel:
    """A build the database places on PyPI for which PyPI has no wheel."""

    package: str
    version: str
    platform: str
    variant: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MissingWheel:
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        return {"package": self.package, "version": self.version, "platform": self.platform, "variant": self.variant}


@dataclass(frozen=True, slots=True, kw_only=True)
class Disagreement:
    kind: str  # sass, ptx, variant, cuda-major, nvcc, python, platforms, requires, no-wheel, no-build, no-release
    package: str
    version: str
    variant: str  # the database build's variant ("" when there is none)
    platform: str
    db: str
    wheel: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        """(package, version, variant, platform): how the test's xfail table names a build."""
        return (self.package, self.version, self.variant, self.platform)

    def to_dict(self) -> dict[str, str]:
        return {
            "kind": self.kind, "package": self.package, "version": self.version, "variant": self.variant,
            "platform": self.platform, "db": self.db, "wheel": self.wheel,
        }

    def line(self) -> str:
        where = f"{self.package} {self.version} {self.variant or '-'} {self.platform}"
        return f"{self.kind:10} {where}: db {self.db}; wheel {self.wheel}"


@dataclass(slots=True)
class Comparison:
    disagreements: list[Disagreement] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    facts: int = 0  # facts compared

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for d in self.disagreements:
            out[d.kind] = out.get(d.kind, 0) + 1
        return dict(sorted(out.items()))


# --------------------------------------------------------------------------- the mapping


def find_release(db: CompatDB, package: str, version: str) -> PackageRelease | None:
    wanted = Version(version)
    return next((r for r in db.packages(package) if r.version == wanted), None)


def pypi_platforms(release: PackageRelease) -> dict[str, str]:
    """{platform: variant} of the builds the database places on PyPI (what must have a wheel)."""
    out: dict[str, str] = {}
    for build in release.builds:
        if build.channel == "pypi":
            for platform in build.platforms:
                out.setdefault(platform, build.variant)
    if not out and release.pypi_variant and any(b.variant == release.pypi_variant for b in release.builds):
        out[PRIMARY_PLATFORM] = release.pypi_variant
    return out


def pypi_build(release: PackageRelease, platform: str, wheel_variant: str | None) -> Build | None:
    """The database build a PyPI wheel of ``release`` for ``platform`` is (module docstring)."""
    broken = [b for b in release.withdrawn if b.withdrawn == "broken"]  # on PyPI, but never a candidate
    pypi = [b for b in (*release.builds, *broken) if b.channel == "pypi" and platform in b.platforms]
    if pypi:
        same = [b for b in pypi if b.variant == wheel_variant]
        return (same or pypi)[0]
    if release.pypi_variant and platform == PRIMARY_PLATFORM:
        return next((b for b in release.builds if b.variant == release.pypi_variant), None)
    if release.pypi_variant and wheel_variant:
        return next((b for b in release.builds if b.variant == wheel_variant and platform in b.platforms), None)
    return None


# --------------------------------------------------------------------------- comparison


def compare(db: CompatDB, wheels: Iterable[WheelFacts], missing: Iterable[MissingWheel] = ()) -> Comparison:
    result = Comparison()
    for facts in wheels:
        compare_wheel(db, facts, result)
    for gone in missing:
        result.facts += 1
        result.disagreements.append(Disagreement(
            kind="no-wheel", package=gone.package, version=gone.version, variant=gone.variant,
            platform=gone.platform, db=f"{gone.variant} build on PyPI", wheel="no such wheel on PyPI",
        ))
    return result


def compare_wheel(db: CompatDB, facts: WheelFacts, result: Comparison) -> None:
    release = find_release(db, facts.package, facts.version)

    def disagree(kind: str, variant: str, db_value: str, wheel_value: str) -> None:
        result.disagreements.append(Disagreement(
            kind=kind, package=facts.package, version=facts.version, variant=variant,
            platform=facts.platform, db=db_value, wheel=wheel_value,
        ))

    result.facts += 1
    if release is None:
        disagree("no-release", "", "no row", f"{facts.file} on PyPI")
        return
    if facts.platform == PRIMARY_PLATFORM or facts.platform == "any":
        _compare_release(release, facts, result, disagree)
    if release.pure:
        return
    build = pypi_build(release, facts.platform, facts.variant)
    result.facts += 1
    if build is None:
        if facts.platform == "linux_aarch64" and facts.variant not in (None, "cpu"):
            result.notes.append(f"{facts.package} {facts.version} {facts.platform}: {facts.variant} wheel "
                                "(aarch64 CUDA builds are not modelled)")
            return
        if release.pypi_variant or any(b.channel == "pypi" for b in release.builds):
            disagree("no-build", "", "no build for this PyPI wheel", f"{facts.variant or '?'} wheel {facts.file}")
        return
    _compare_build(db, build, facts, result, disagree)


def _compare_build(db: CompatDB, build: Build, facts: WheelFacts, result: Comparison, disagree: Any) -> None:
    v = build.variant
    info = db.variant(v)
    if facts.variant is not None:
        result.facts += 1
        if facts.variant != v:
            disagree("variant", v, v, facts.variant)
    elif facts.cuda_major is not None and info is not None and info.cuda is not None:
        result.facts += 1
        if info.cuda.major != facts.cuda_major:
            disagree("cuda-major", v, f"CUDA {info.cuda.major} ({v})", f"CUDA {facts.cuda_major}")
    if not facts.binaries_scanned:
        return
    db_sass = tuple(a.name for a in build.sass)
    db_ptx = tuple(a.name for a in build.ptx)
    result.facts += 2
    if set(db_sass) != set(facts.sass):
        disagree("sass", v, _fmt(db_sass), _fmt(facts.sass) + _extra(facts.sass_all, facts.sass))
    if set(db_ptx) != set(facts.ptx):
        disagree("ptx", v, _fmt(db_ptx), _fmt(facts.ptx) + _extra(facts.ptx_all, facts.ptx))
    release = info.cuda if info is not None else None
    cuda = db.cuda_release(release) if release is not None else None
    if cuda is not None and cuda.nvcc_sm and facts.sass_all:
        result.facts += 1
        emits = {(a.cc.major, a.cc.minor) for a in cuda.nvcc_sm}
        beyond = [s for s in facts.sass_all if _cc(s) not in emits]
        if beyond:
            top = "sm_{}{}".format(*max(emits))
            disagree("nvcc", v, f"{v}: nvcc {cuda.version} emits up to {top}", f"has {_fmt(tuple(beyond))}")


def _compare_release(release: PackageRelease, facts: WheelFacts, result: Comparison, disagree: Any) -> None:
    """Python tags and tracked Requires-Dist pins (recorded from the Linux x86_64 or pure wheel)."""
    if facts.python:
        result.facts += 1
        problem = python_problem(release.python, facts.python, facts.requires_python)
        if problem:
            disagree("python", "", _fmt(release.python), problem)
    if facts.platforms:
        result.facts += 1
        unlisted = [p for p in facts.platforms if p not in release.platforms and p != "any"]
        if unlisted:
            disagree("platforms", "", _fmt(release.platforms), f"PyPI also has {_fmt(tuple(unlisted))}")
    result.facts += 1
    recorded = {_norm(r) for r in _parse_all(release.metadata_requires)}
    declared = {_norm(r) for r in _parse_all(facts.requires)}
    lost = sorted(r for r in recorded - declared if r[0] in TRACKED)
    unrecorded = sorted(declared - recorded)
    if lost or unrecorded:
        disagree("requires", "", _fmt(tuple(release.metadata_requires)), _fmt(tuple(facts.requires)))


def python_problem(listed: Sequence[str], tags: Sequence[str], requires_python: str | None) -> str | None:
    """Why the wheels' tags disagree with ``python`` (tools/check_pypi.py's rule), or None."""
    exact: set[str] = set()
    floors: list[str] = []
    for tag in tags:
        if re.match(r"^cp3\d+t$", tag):
            continue  # free-threaded builds are not recorded
        bare = tag.removeprefix("abi3:")
        match = re.match(r"^(cp|py)3(\d{1,2})$", bare)
        if tag.startswith(("abi3:", "py")):
            floors.append(f"3.{match.group(2)}" if match else "3.0")
        elif match:
            exact.add(f"3.{match.group(2)}")
    if exact and not floors:
        return None if exact == set(listed) else f"wheels for {_fmt(tuple(exact))}"
    if not floors or not listed:
        return None
    floor = min(floors, key=Version)
    spec = SpecifierSet(requires_python or "")
    refused = [py for py in listed if Version(py) < Version(floor) or not spec.contains(py + ".0")]
    if not refused:
        return None
    return f"wheel floor {floor}, Requires-Python {requires_python!r}, refuses {_fmt(tuple(refused))}"


# --------------------------------------------------------------------------- helpers


def tracked_requires(lines: Iterable[str]) -> tuple[str, ...]:
    """The Requires-Dist lines the database records (pins on TRACKED names), in order, as packaging writes them."""
    return tuple(str(Requirement(line)) for line in lines if _safe_name(line) in TRACKED)


def _safe_name(line: str) -> str:
    try:
        return canonicalize_name(Requirement(line).name)
    except InvalidRequirement:
        return ""


def _parse_all(lines: Iterable[str]) -> list[Requirement]:
    out = []
    for line in lines:
        try:
            out.append(Requirement(line))
        except InvalidRequirement:
            continue
    return out


def _norm(req: Requirement) -> tuple[str, str, str, frozenset[str]]:
    return (
        canonicalize_name(req.name),
        str(SpecifierSet(str(req.specifier))),
        str(req.marker) if req.marker else "",
        frozenset(req.extras),
    )


def _cc(name: str) -> tuple[int, int]:
    """``sm_90a`` -> (9, 0)."""
    match = re.match(r"^(?:sm|compute)_(\d{1,2})(\d)[af]?$", name)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def _fmt(values: Sequence[str]) -> str:
    return "[" + ", ".join(values) + "]"


def _extra(everything: Sequence[str], base: Sequence[str]) -> str:
    more = [x for x in everything if x not in base]
    return f" (+ per-kernel {', '.join(more)})" if more else ""


def format_report(result: Comparison) -> str:
    """The readable report: one line per disagreement, grouped by kind, then counts and notes."""
    lines: list[str] = []
    for kind in sorted({d.kind for d in result.disagreements}):
        group = [d for d in result.disagreements if d.kind == kind]
        lines.append(f"== {kind}: {len(group)}")
        lines += [f"  {d.line()}" for d in sorted(group, key=lambda d: (d.package, Version(d.version), d.platform))]
    lines += [f"note: {n}" for n in result.notes]
    lines.append(f"{result.facts} facts compared, {len(result.disagreements)} disagreement(s) {result.counts()}")
    return "\n".join(lines)
