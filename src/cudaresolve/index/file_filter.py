"""Cheap tests on an index page's file names, ahead of parsing them: ``version_filter`` keeps one project's files
of a few versions (a lock being checked needs only its pins), ``drop_other_lines`` drops an HTML page's lines that
name none of them. Pure."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

__all__ = ["Keep", "drop_other_lines", "version_filter"]

Keep = Callable[[str], bool]


def version_filter(project: str, versions: Iterable[str], *, within: Keep | None = None) -> Keep:
    """A cheap test on wheel file names: only ``project``'s files of exactly these versions.

    Used to skip parsing (Version, tags) the hundreds of other files on a page when a lock only
    needs the pinned ones. ``within``: a broader filter (``fitting.tag_filter``) the files must pass too;
    a page's parsed form stored for it then serves this one as well (``parsed_cache``), so that checking
    a lock reads what its solve stored rather than parsing the page again.
    """
    dist = re.sub(r"[-_.]+", "_", project).lower()
    wanted = {v.lower() for v in versions}

    def keep(filename: str) -> bool:
        return _names_version(filename, dist, wanted) and (within is None or within(filename))

    # Substrings one of which a kept file's line must hold ("+" is "%2B" in the PyTorch index's hrefs; a file's
    # name may spell the project another way, so its line is found by its version alone).
    keep.needles = tuple(  # type: ignore[attr-defined]
        needle
        for v in wanted
        for form in {v, v.replace("+", "%2b")}
        for needle in (f"-{form}-", f"-{form}.tar.gz", f"-{form}.zip")
    )
    key = f"{dist}=={','.join(sorted(wanted))}"
    broader = getattr(within, "key", None) if within is not None else None
    keep.key = key if broader is None else f"{broader}|{key}"  # type: ignore[attr-defined]  # what it keeps
    keep.within = broader  # type: ignore[attr-defined]  # a form stored for it holds all this one keeps
    return keep


def _names_version(filename: str, dist: str, wanted: set[str]) -> bool:
    """Whether ``filename`` is a file of project ``dist`` (normalized with ``_``) at one of the ``wanted`` versions:
    a wheel (``name-version-...whl``) or an sdist (``name-version.tar.gz``, ``.zip``; an older sdist may spell the
    name with ``-`` or ``.``)."""
    lower = filename.lower()
    for suffix in (".tar.gz", ".zip"):
        if lower.endswith(suffix):
            name, _, version = lower[: -len(suffix)].rpartition("-")
            return re.sub(r"[-_.]+", "_", name) == dist and version in wanted
    parts = lower.split("-", 2)  # a wheel's name has no "-"; an older one may keep a "." (ruamel.yaml)
    return len(parts) == 3 and re.sub(r"[-_.]+", "_", parts[0]) == dist and parts[1] in wanted


def drop_other_lines(text: str, keep: Keep) -> str:
    """Lines with an anchor that names none of ``keep``'s files are dropped before HTML parsing.

    Index pages put one anchor per line; a page that does not is parsed whole, so the filter only
    saves time and never changes the answer (``keep`` is applied to every parsed file as well).
    """
    needles = getattr(keep, "needles", ())
    if not needles or text.count("\n") < 8:
        return text
    kept = []
    for line in text.splitlines():
        low = line.lower()
        if "<a " not in low or any(n in low for n in needles):
            kept.append(line)
    return "\n".join(kept)
