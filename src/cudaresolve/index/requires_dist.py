"""A ``Requires-Dist`` line's name, extras and version specifiers read by one regular expression. Pure.

``packaging.requirements.Requirement`` reads a line token by token: about 20 us a line on a quiet machine, and a
warm 189-package lock reads some 2,200 lines, most of them ``name``, ``name>=1.0,<2`` or ``name[extra] (>=1.0)``.
``simple_requirement`` reads exactly those shapes (a name and extras that start and end with a letter or digit,
and version specifiers with no parenthesis, bracket, ``@`` or ``;`` among them) and makes the very object
``Requirement`` makes of them: the name and extras as written, ``SpecifierSet`` of the specifier text, no URL, no
marker. Any other line gives None, and the caller asks ``Requirement`` itself, which also says what is wrong with
a bad line. A line whose specifiers ``SpecifierSet`` refuses, or that has more items than commas allow, is left to
``Requirement`` too, which then answers as it does for any line.
"""

from __future__ import annotations

import re
from typing import Final

from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet

__all__ = ["simple_requirement"]

_WORD: Final = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_SIMPLE: Final = re.compile(
    rf"[ \t]*(?P<name>{_WORD})[ \t]*"
    rf"(?:\[[ \t]*(?P<extras>{_WORD}(?:[ \t]*,[ \t]*{_WORD})*)?[ \t]*\][ \t]*)?"
    r"(?:\((?P<inner>[^()\[\];@]*)\)[ \t]*|(?P<bare>[^()\[\];@]*))"
)
_SPLIT_EXTRAS: Final = re.compile(r"[ \t]*,[ \t]*")
#: The fields ``Requirement`` is made of, as packaging 26 lays it out: another layout (a field added by a later
#: packaging) turns the fast path off, and every line is packaging's to read.
_FIELDS: Final = frozenset({"name", "url", "extras", "specifier", "marker"})
_SAME_LAYOUT: Final = frozenset(getattr(Requirement, "__slots__", _FIELDS)) == _FIELDS


def simple_requirement(text: str) -> Requirement | None:
    """``Requirement(text)`` for a line of the shapes the module docstring names, made without its tokenizer;
    None for any other line (the caller parses it with ``Requirement``)."""
    found = _SIMPLE.fullmatch(text) if _SAME_LAYOUT else None
    if found is None:
        return None
    name, extras, inner, bare = found.group("name", "extras", "inner", "bare")
    spec = (inner if inner is not None else bare).strip(" \t")
    if spec[:1].isalnum():  # a version with no operator (``name 1.0``): packaging's grammar refuses it
        return None
    try:
        specifier = SpecifierSet(spec)
    except InvalidSpecifier:
        return None
    commas = spec.count(",")  # an empty item between commas is refused; one trailing comma is allowed
    if spec and len(specifier) != commas + 1 and not (len(specifier) == commas and spec.rstrip(" \t").endswith(",")):
        return None
    made = Requirement.__new__(Requirement)
    made.name = name
    made.url = None
    made.extras = set(_SPLIT_EXTRAS.split(extras.strip(" \t"))) if extras else set()
    made.specifier = specifier
    made.marker = None
    return made
