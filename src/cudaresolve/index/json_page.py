"""A PEP 691 project page read one file entry at a time, keeping only the entries asked for. Pure.

``json.loads`` of a page builds every file's dictionary at once: PyPI's page of a package with many wheels is
several megabytes of JSON, tens of megabytes as Python objects, for the few dozen files that install on the
target. ``scan_page`` walks the top-level object itself and decodes each entry of ``files`` on its own
(``json.JSONDecoder.raw_decode``), so what stays in memory is the kept entries, never the whole page. Other
top-level members (``meta``, ``name``, ``versions``) are decoded whole: they are small. It accepts exactly
what ``json.loads`` accepts for such a page (a later duplicate member wins, as there) and raises ``ValueError``
where ``json.loads`` would, nesting too deep to decode included.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.decode import TooDeep, loads_json
from cudaresolve.index.limits import MAX_PAGE_FILES, TooManyFiles

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["scan_page"]

_SPACE: Final = re.compile(r"[ \t\n\r]*")
_SPACES: Final = frozenset(" \t\n\r")
_DECODER: Final = json.JSONDecoder()
#: A bound on work, not a fact: how many characters of entries ``_entries`` reads before it counts their brackets.
_RUN: Final = 4096


def scan_page(
    text: str, wanted: Callable[[str], bool] | None, *, brackets: int | None = None
) -> tuple[Any, list[Any] | None]:
    """(the page's top-level members but ``files``, the ``files`` entries kept) of the JSON object ``text``; a
    text that is JSON but no object gives (its value, None).

    An entry is kept when it is not an object with a string ``filename`` (the caller judges it) or when
    ``wanted`` accepts its file name (all when ``wanted`` is None). ``files`` is None when the page has no
    such member, and not a list when the member is not an array (the caller refuses the page).

    ``brackets``: a member or entry whose text holds that many ``[`` and ``{`` or more (its nesting can be no
    deeper) is refused as ``TooDeep``, whatever the stack would allow: how deep a parse may nest otherwise
    depends on how deep the caller's own stack is (``page_fetcher``'s child parses only what any caller could)."""
    try:
        return _scan(text, wanted, brackets)
    except RecursionError:  # an entry nested past the interpreter's limit: a decode error, as in core.decode
        raise TooDeep("JSON") from None


def _bounded(text: str, start: int, end: int, brackets: int | None) -> None:
    if brackets is not None and text.count("[", start, end) + text.count("{", start, end) >= brackets:
        raise TooDeep("JSON")


def _bounded_run(text: str, start: int, end: int, brackets: int) -> None:
    """``_bounded`` for each entry of the run of entries between ``start`` and ``end`` (with the separators between
    them): counted over the whole run first, as a run holding fewer than ``brackets`` has no entry that holds as
    many (a page's entries are a few hundred characters and a few brackets each: counted one by one, they were a
    sixth of a scan); only a run holding as many is walked entry by entry."""
    if text.count("[", start, end) + text.count("{", start, end) < brackets:
        return
    scan = _DECODER.scan_once  # type: ignore[attr-defined]
    at = start
    while True:
        at = _skip(text, at)
        if text.startswith(",", at):
            at = _skip(text, at + 1)
        if at >= end:
            return
        after = scan(text, at)[1]  # decoded before: it decodes again
        _bounded(text, at, after, brackets)
        at = after


def _scan(text: str, wanted: Callable[[str], bool] | None, brackets: int | None) -> tuple[Any, list[Any] | None]:
    members: dict[str, Any] = {}
    files: list[Any] | None = None
    at = _skip(text, 0)
    if not text.startswith("{", at):
        return loads_json(text), None
    at = _expect(text, at, "{")
    if text.startswith("}", at):
        return members, files
    while True:
        if not text.startswith('"', at):
            raise ValueError(f"expected a member name at {at}")
        key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
        at = _expect(text, _skip(text, at), ":")
        if key == "files" and text.startswith("[", at):
            files, at = _entries(text, at + 1, wanted, brackets)
            members.pop("files", None)
        else:
            start = at
            members[key], at = _DECODER.raw_decode(text, at)
            _bounded(text, start, at, brackets)
            if key == "files":  # a later non-array "files" replaces an earlier array, as json.loads would
                files = members["files"]
        at = _skip(text, at)
        if text.startswith(",", at):
            at = _skip(text, at + 1)
            continue
        at = _expect(text, at, "}")
        if _skip(text, at) != len(text):
            raise ValueError(f"extra data at {at}")
        return members, files


def _entries(
    text: str, at: int, wanted: Callable[[str], bool] | None, brackets: int | None
) -> tuple[list[Any], int]:
    """The kept entries of the array whose ``[`` ends before ``at``, and the index after its ``]``; ``TooManyFiles``
    past ``MAX_PAGE_FILES`` entries, kept or not."""
    kept: list[Any] = []
    left = MAX_PAGE_FILES
    at = _skip(text, at)
    if text.startswith("]", at):
        return kept, at + 1
    # what ``raw_decode`` calls, without its frame: this loop runs once per file of the page
    scan = _DECODER.scan_once  # type: ignore[attr-defined]
    run = at  # where the entries whose brackets are not counted yet begin (``_bounded_run``)
    while True:
        try:
            entry, at = scan(text, at)
        except StopIteration as e:
            raise json.JSONDecodeError("Expecting value", text, e.value) from None
        left -= 1
        if left < 0:
            raise TooManyFiles(MAX_PAGE_FILES)
        if brackets is not None and at - run >= _RUN:
            _bounded_run(text, run, at, brackets)
            run = at
        name = entry.get("filename") if type(entry) is dict else None
        if wanted is None or not isinstance(name, str) or wanted(name):
            kept.append(entry)
        if text[at : at + 1] != ",":  # PyPI writes no space between entries: skipped only where there is
            at = _skip(text, at)
            if not text.startswith(",", at):
                if brackets is not None:
                    _bounded_run(text, run, at, brackets)
                return kept, _expect(text, at, "]")
        at += 1
        if text[at : at + 1] == " ":  # json.dumps writes ", "
            at += 1
        if text[at : at + 1] in _SPACES:
            at = _skip(text, at)


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match is not None else at


def _expect(text: str, at: int, char: str) -> int:
    if not text.startswith(char, at):
        raise ValueError(f"expected {char!r} at {at}")
    return _skip(text, at + 1)
