"""Prebuilt extension wheels keyed on torch X.Y + CUDA major + C++ ABI + Python (``[[prebuilt]]``). Pure.

Some extensions (flash-attn) publish their CUDA wheels as release assets, not on an index: one wheel
per (torch minor, CUDA major, C++ ABI, Python), named by a URL pattern. A ``[[prebuilt]]`` row holds
one release's matrix; ``[[torch-cxx11-abi]]`` rows say which torch builds use the C++11 ABI. The two
are expanded here into ordinary package releases: one build per (torch minor, variant) whose torch
build exists and whose ABI matches a published wheel, its ``local`` the wheel's
(``+cu12torch2.8cxx11abiTRUE``), its ``requires`` the torch minor, its variant the torch build's (so
the set's one variant ties the wheel, torch and the rest), its ``url`` the wheel's URL with ``{python}``
left for the target's tag (``prebuilt_url``), its ``index_url`` the default index (where a mirror or the
sdist is looked for). The solver then treats them like any build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from cudaresolve.db.fields import local_http, parse_release_version
from cudaresolve.db.rows import Build, PackageRelease
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from packaging.version import Version

    from cudaresolve.core.archs import Arch
    from cudaresolve.db.fields import Collector
    from cudaresolve.db.rows import VariantInfo

__all__ = ["PREBUILT", "SDIST", "CxxAbiRule", "PrebuiltRow", "expand_prebuilt", "prebuilt_url", "read_abi",
           "read_prebuilt", "torch_abi"]  # fmt: skip

#: The channel of a build expanded from a ``[[prebuilt]]`` row: a wheel at a URL, not on an index.
PREBUILT: Final = "prebuilt"
#: The channel of a release's sdist on the default index, built on the target: only where no prebuilt wheel fits.
SDIST: Final = "sdist"
_ROW_KEYS: Final = {"package", "version", "url", "torch", "cuda", "cxx11-abi", "python", "platforms", "sass",
                    "requires", "sdist", "arch-env", "source", "verified", "note"}  # fmt: skip
_ABI_KEYS: Final = {"torch", "variants", "abi", "source", "verified", "note"}
_FIELDS: Final = ("{version}", "{cuda}", "{torch}", "{abi}", "{python}")
_MINOR: Final = re.compile(r"[0-9]+\.[0-9]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class CxxAbiRule:
    """One ``[[torch-cxx11-abi]]`` row: torch releases in ``torch`` (on ``variants``, every one when empty)
    use the C++11 ABI (``abi``) or not. The first matching row decides."""

    torch: SpecifierSet
    variants: tuple[str, ...]
    abi: bool
    source: str
    verified: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class PrebuiltRow:
    """One ``[[prebuilt]]`` row: one release's wheel matrix."""

    package: str
    version: Version
    url: str
    torch: tuple[str, ...]  # torch minors, "2.8"
    cuda: tuple[int, ...]  # CUDA majors
    abi: tuple[bool, ...]
    python: tuple[str, ...]
    platforms: tuple[str, ...]
    sass: tuple[Arch, ...]
    requires: tuple[Requirement, ...]
    sdist: bool  # the default index (PyPI) carries the release's sdist
    arch_env: str | None = None  # the sdist build's own arch-list variable: "FLASH_ATTN_CUDA_ARCHS={major}{minor}"
    source: str
    verified: bool = True


def read_abi(c: Collector, row: Mapping[str, Any], path: str) -> CxxAbiRule | None:
    c.keys(row, _ABI_KEYS, path)
    spec = c.get(row, "torch", str, path, required=True)
    variants = c.get(row, "variants", list, path) or []
    abi = c.get(row, "abi", bool, path, required=True)
    source = c.source(row, path)
    torch = _specifier(c, f"{path}.torch", spec)
    if torch is None or abi is None:
        return None
    return CxxAbiRule(torch=torch, variants=tuple(variants), abi=abi, source=source, verified=c.verified(row, path))


def _specifier(c: Collector, path: str, text: str | None) -> SpecifierSet | None:
    if text is None:
        return None
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        c.add(path, Text.of("db.bad-choice", expected=("'PEP 440 specifier'",), found=repr(text[:60])))
        return None


def read_prebuilt(c: Collector, row: Mapping[str, Any], path: str) -> PrebuiltRow | None:
    c.keys(row, _ROW_KEYS, path)
    package = c.get(row, "package", str, path, required=True)
    version_text = c.get(row, "version", str, path, required=True)
    url = c.get(row, "url", str, path, required=True)
    torch = c.get(row, "torch", list, path, required=True) or []
    cuda = c.get(row, "cuda", list, path, required=True) or []
    abi = c.get(row, "cxx11-abi", list, path, required=True) or []
    python = c.python_list(row, path, required=True)
    platforms = c.platform_list(row, path, ("linux_x86_64",))
    sass = c.arch_list(row, "sass", path, ptx=False)
    requires = c.requirement_list(row, "requires", path)
    sdist = c.get(row, "sdist", bool, path) is True
    arch_env = c.get(row, "arch-env", str, path)
    source = c.source(row, path)
    if package is None or version_text is None or url is None:
        return None
    version = c.parse(f"{path}.version", parse_release_version, version_text)
    if version is None:
        return None
    problems = [t for t in torch if not _MINOR.fullmatch(t)]
    problems += [m for m in cuda if not m.isdigit()] + [a for a in abi if a not in ("TRUE", "FALSE")]
    local = local_http(url)  # a test's copy, as direct references allow
    if problems or not (url.startswith("https://") or local) or any(f not in url for f in _FIELDS) or not sass:
        c.add(path, Text.of("db.bad-choice", expected=("'torch X.Y, cuda majors, ABI flags, https URL pattern'",),
                            found=repr(problems[:1] or url[:80])))  # fmt: skip
        return None
    return PrebuiltRow(
        package=package, version=version, url=url, torch=tuple(torch), cuda=tuple(int(m) for m in cuda),
        abi=tuple(a == "TRUE" for a in abi),
        python=python, platforms=platforms, sass=sass, requires=requires, sdist=sdist, arch_env=arch_env, source=source,
        verified=c.verified(row, path),
    )  # fmt: skip


def torch_abi(rules: Sequence[CxxAbiRule], version: Version, variant: str) -> bool | None:
    """Whether torch ``version`` on ``variant`` uses the C++11 ABI; None when no row says."""
    for rule in rules:
        if rule.torch.contains(version, prereleases=True) and (not rule.variants or variant in rule.variants):
            return rule.abi
    return None


def prebuilt_url(build: Build, python: str) -> str | None:
    """The wheel URL of a prebuilt build for CPython ``python`` ("3.11" -> ``cp311``); None for another build."""
    return build.url.replace("{python}", "cp" + python.replace(".", "")) if build.url else None


def _builds(row: PrebuiltRow, rules: Sequence[CxxAbiRule], variants: Iterable[VariantInfo],
            torch: Sequence[PackageRelease], index: str) -> list[Build]:  # fmt: skip
    out: list[Build] = []
    for minor in row.torch:
        releases = [r for r in torch if f"{r.version.major}.{r.version.minor}" == minor]
        for info in variants:
            if info.cuda is None or info.cuda.major not in row.cuda:
                continue
            built = [r for r in releases if info.name in (r.pypi_variant, *(b.variant for b in r.builds))]
            abi = torch_abi(rules, built[0].version, info.name) if built else None
            if abi is None or abi not in row.abi:
                continue
            local = f"+cu{info.cuda.major}torch{minor}cxx11abi{str(abi).upper()}"
            url = row.url.format(version=row.version, cuda=info.cuda.major, torch=minor, abi=str(abi).upper(),
                                 python="{python}")  # fmt: skip
            out.append(Build(
                variant=info.name, channel=PREBUILT, index_url=index, url=url, local=local, sass=row.sass, ptx=(),
                requires=(Requirement(f"torch=={minor}.*"),), platforms=row.platforms, source=row.source,
                verified=row.verified, checked="build-script",
            ))  # fmt: skip
    if row.sdist:
        out += _sdist_builds(row, variants, out, index)
    return out


def _sdist_builds(
    row: PrebuiltRow, variants: Iterable[VariantInfo], wheels: Sequence[Build], index: str
) -> list[Build]:
    """The release's sdist as one build per CUDA variant, for every torch but the minors a prebuilt wheel of that
    variant serves: a source build is a candidate only where no wheel is (``resolve.pairing`` keeps it out of a
    set a wheel can serve)."""
    out: list[Build] = []
    for info in variants:
        if info.cuda is None:
            continue
        served = sorted({b.requires[0].specifier for b in wheels if b.variant == info.name}, key=str)
        spec = ",".join(str(s).replace("==", "!=") for s in served)
        out.append(Build(
            variant=info.name, channel=SDIST, index_url=index, local="", sass=row.sass, ptx=(),
            requires=(Requirement(f"torch{spec}"),), platforms=row.platforms, source=row.source,
            verified=row.verified, checked="build-script", build_env=row.arch_env,
        ))  # fmt: skip
    return out


def expand_prebuilt(
    rows: Sequence[PrebuiltRow],
    rules: Sequence[CxxAbiRule],
    variants: Sequence[VariantInfo],
    torch: Sequence[PackageRelease],
    default_index: str,
) -> dict[str, tuple[PackageRelease, ...]]:
    """Package name -> its releases (newest first), each with the builds its matrix and the torch builds allow."""
    out: dict[str, list[PackageRelease]] = {}
    for row in rows:
        builds = tuple(_builds(row, rules, variants, torch, default_index))
        if not builds:
            continue  # no torch build it fits: left out (a release without builds would read as a pure wheel)
        release = PackageRelease(
            name=row.package, version=row.version, python=row.python, platforms=row.platforms,
            requires=row.requires, constrains=(), metadata_requires=(), min_sm=None, pypi_variant=None,
            builds=builds, source=row.source, verified=row.verified,
        )  # fmt: skip
        out.setdefault(row.package, []).append(release)
    return {name: tuple(sorted(found, key=lambda r: r.version, reverse=True)) for name, found in out.items()}
