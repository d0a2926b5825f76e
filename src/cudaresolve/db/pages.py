"""Extension wheels served from one find-links page per torch release and variant (``[[wheel-page]]``). Pure.

PyG's extension packages (torch-scatter, pyg-lib, ...) and mmcv publish their CUDA wheels on pages
of links, one per torch release and CUDA variant (``https://data.pyg.org/whl/torch-2.4.0+cu121.html``,
``https://download.openmmlab.com/mmcv/dist/cu121/torch2.1/index.html``); the page built for torch
X.Y.0 serves every X.Y.z. A ``[[wheel-page]]`` row holds one release's pages: the URL template, the
wheel's local version template (``+pt24cu121``; empty where the file name carries none) and the
``X.Y.Z+variant`` pages that list the release. Each page is expanded here into one build: its variant
the page's (so the set's one variant ties it to torch's build), its ``requires`` the torch minor, its
``local`` the page's local tag (the solver matches the file by it: a wheel for another torch, the
``undefined symbol`` users meet, is never taken), its ``url`` the page (``channel`` ``PAGE``; the file
is read from that page, or from the user's copy of it: ``resolve.prebuilt``). Its code targets are the
``arch-list`` of its variant (the build workflow's ``TORCH_CUDA_ARCH_LIST``), else the torch build's
own (what ``torch.utils.cpp_extension`` builds for when the list is not set). ``sdist = true``: the
default index carries the release's sdist, a build per variant for every torch minor no page serves
(``db.prebuilt.SDIST``, taken only where no wheel fits).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from packaging.requirements import Requirement

from cudaresolve.core.archs import parse_arch_list
from cudaresolve.db.fields import local_http, parse_release_version
from cudaresolve.db.prebuilt import SDIST
from cudaresolve.db.rows import Build, PackageRelease
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from packaging.version import Version

    from cudaresolve.core.archs import Arch
    from cudaresolve.db.fields import Collector
    from cudaresolve.db.rows import VariantInfo

__all__ = ["PAGE", "PageRow", "expand_pages", "page_minors", "read_page", "read_pages"]

#: The channel of a build expanded from a ``[[wheel-page]]`` row: a wheel listed on a find-links page.
PAGE: Final = "wheel-page"
_ROW_KEYS: Final = {"package", "version", "page", "local", "pages", "arch-list", "python", "platforms", "requires",
                    "sdist", "source", "verified", "note"}  # fmt: skip
_PAGE_KEY: Final = re.compile(r"([0-9]+)\.([0-9]+)\.([0-9]+)\+([a-z0-9]+)")


@dataclass(frozen=True, slots=True, kw_only=True)
class PageRow:
    """One ``[[wheel-page]]`` row: one release and the (torch release, variant) pages that list it."""

    package: str
    version: Version
    page: str  # the page URL template: {torch} "2.4.0", {minor} "2.4", {pt} "24", {variant} "cu121"
    local: str  # the wheel's local version template, "+pt{pt}{variant}"; "" where the file name has none
    pages: tuple[tuple[str, str], ...]  # (torch release "2.4.0", variant)
    archs: tuple[tuple[str, tuple[Arch, ...]], ...]  # variant -> the workflow's TORCH_CUDA_ARCH_LIST
    python: tuple[str, ...]
    platforms: tuple[str, ...]
    requires: tuple[Requirement, ...]
    sdist: bool
    source: str
    verified: bool = True


def _fill(template: str, torch: str, variant: str) -> str:
    minor = ".".join(torch.split(".")[:2])
    return template.format(torch=torch, minor=minor, pt=minor.replace(".", ""), variant=variant)


def _local_ok(version: str, local: str) -> bool:
    """Whether ``local``, filled, makes ``version`` a valid PEP 440 version (``+pt24cu121``); "" is."""
    from packaging.version import InvalidVersion, Version

    if not local:
        return True
    try:
        Version(version + _fill(local, "2.4.0", "cu121"))
    except (InvalidVersion, KeyError, IndexError, ValueError):
        return False
    return local.startswith("+")


def _fills(template: str) -> bool:
    """Whether ``template`` names only the known fields (a stray brace or field would fail at expansion)."""
    try:
        return "{" not in _fill(template, "1.0.0", "cpu")
    except (KeyError, IndexError, ValueError):
        return False


def read_page(c: Collector, row: Mapping[str, Any], path: str) -> PageRow | None:
    c.keys(row, _ROW_KEYS, path)
    package = c.get(row, "package", str, path, required=True)
    version_text = c.get(row, "version", str, path, required=True)
    page = c.get(row, "page", str, path, required=True)
    local = c.get(row, "local", str, path) or ""
    pages = c.get(row, "pages", list, path, required=True) or []
    lists = c.get(row, "arch-list", dict, path) or {}
    python = c.python_list(row, path, required=True)
    platforms = c.platform_list(row, path, ("linux_x86_64",))
    requires = c.requirement_list(row, "requires", path)
    sdist = c.get(row, "sdist", bool, path) is True
    source = c.source(row, path)
    archs = tuple((str(v), c.parse(f"{path}.arch-list.{v}", parse_arch_list, str(t))) for v, t in lists.items())
    if package is None or version_text is None or page is None:
        return None
    version = c.parse(f"{path}.version", parse_release_version, version_text)
    if version is None:
        return None
    keys = [_PAGE_KEY.fullmatch(p) if isinstance(p, str) else None for p in pages]
    test_copy = local_http(page)  # a test's copy, as [[prebuilt]] allows
    bad = [repr(p) for p, k in zip(pages, keys, strict=True) if k is None]
    bad = bad or ([repr(local[:80])] if not _local_ok(version_text, local) else [])
    if bad or not (page.startswith("https://") or test_copy) or "{variant}" not in page or not _fills(page + local):
        c.add(path, Text.of("db.bad-choice", expected=("'X.Y.Z+variant pages, https page URL with {variant}'",),
                            found=(bad or [repr(page[:80])])[0]))  # fmt: skip
        return None
    return PageRow(
        package=package, version=version, page=page, local=local,
        pages=tuple((f"{k[1]}.{k[2]}.{k[3]}", k[4]) for k in keys if k is not None),
        archs=tuple((v, a) for v, a in archs if a is not None), python=python, platforms=platforms,
        requires=requires, sdist=sdist, source=source, verified=c.verified(row, path),
    )  # fmt: skip


def page_minors(release: PackageRelease, variants: Sequence[str]) -> list[str]:
    """The torch minors ("2.8") a page of ``release`` serves on one of ``variants``, newest first."""
    found = {str(b.requires[0].specifier)[2:-2] for b in release.builds if b.channel == PAGE and b.variant in variants}
    return sorted(found, key=lambda m: tuple(int(p) for p in m.split(".")), reverse=True)


def _torch_build(torch: Sequence[PackageRelease], minor: str, variant: str) -> Build | PackageRelease | None:
    """The build of a torch ``minor`` release on ``variant`` (the release itself where PyPI's wheel is it)."""
    for release in torch:
        if f"{release.version.major}.{release.version.minor}" != minor:
            continue
        build = next((b for b in release.builds if b.variant == variant), None)
        if build is not None or release.pypi_variant == variant:
            return build or release
    return None


def _builds(row: PageRow, variants: Mapping[str, VariantInfo], torch: Sequence[PackageRelease],
            index: str) -> list[Build]:  # fmt: skip
    out: list[Build] = []
    archs = dict(row.archs)
    for release, variant in row.pages:
        minor = ".".join(release.split(".")[:2])
        built = _torch_build(torch, minor, variant)
        if variant not in variants or built is None:
            continue  # a page for a torch build the database does not hold: nothing could pair with it
        code = archs.get(variant)
        if code is None and isinstance(built, Build):
            code = built.archs  # the torch build's own list: cpp_extension's default
        out.append(Build(
            variant=variant, channel=PAGE, index_url=index, url=_fill(row.page, release, variant),
            local=_fill(row.local, release, variant), sass=tuple(a for a in code or () if not a.ptx),
            ptx=tuple(a for a in code or () if a.ptx), requires=(Requirement(f"torch=={minor}.*"),),
            platforms=row.platforms, source=row.source, verified=row.verified, checked="build-script",
        ))  # fmt: skip
    if row.sdist:  # a source build's code is what the builder asks for: the lists its wheels carry
        every = tuple(sorted({a for _, code in row.archs for a in code} | {a for b in out for a in b.archs}))
        for info in variants.values():
            served = sorted({str(b.requires[0].specifier) for b in out if b.variant == info.name})
            if info.cuda is None:
                continue
            out.append(Build(
                variant=info.name, channel=SDIST, index_url=index, local="", sass=tuple(a for a in every if not a.ptx),
                ptx=tuple(a for a in every if a.ptx), platforms=row.platforms, source=row.source,
                requires=(Requirement("torch" + ",".join(s.replace("==", "!=") for s in served)),),
                verified=row.verified, checked="build-script",
            ))  # fmt: skip
    return out


def expand_pages(
    rows: Sequence[PageRow],
    variants: Sequence[VariantInfo],
    torch: Sequence[PackageRelease],
    default_index: str,
) -> dict[str, tuple[PackageRelease, ...]]:
    """Package name -> its releases (newest first), each with a build per page whose torch build exists."""
    by_name = {v.name: v for v in variants}
    out: dict[str, list[PackageRelease]] = {}
    for row in rows:
        builds = tuple(_builds(row, by_name, torch, default_index))
        if not builds:
            continue  # no torch build it fits: left out (a release without builds would read as a pure wheel)
        out.setdefault(row.package, []).append(PackageRelease(
            name=row.package, version=row.version, python=row.python, platforms=row.platforms,
            requires=row.requires, constrains=(), metadata_requires=(), min_sm=None, pypi_variant=None,
            builds=builds, source=row.source, verified=row.verified,
        ))  # fmt: skip
    return {name: tuple(sorted(found, key=lambda r: r.version, reverse=True)) for name, found in out.items()}


def read_pages(
    c: Collector, data: Mapping[str, Any], variants: Sequence[VariantInfo], torch: Sequence[PackageRelease], index: str
) -> dict[str, tuple[PackageRelease, ...]]:
    """Every ``[[wheel-page]]`` row of ``data``, expanded (``expand_pages``)."""
    read = (read_page(c, row, f"wheel-page[{i}]") for i, row in enumerate(c.table_list(data, "wheel-page")))
    return expand_pages([r for r in read if r is not None], variants, torch, index)
