"""The ``Text`` value: a catalogue key and its fields, turned into words only when rendered. Pure.

Everything cudaresolve says (findings, warnings, hints, errors, why-not answers, doctor problems,
explain-error causes and fixes) is a ``Text``. Domain code builds them; ``render`` formats them
in the language the user chose (``catalogue.format_text``).

A field is a string, a number, a ``Text`` (formatted in the same language), or a tuple of those
(joined the language's way: ``a, b`` in English, ``a、b`` in Chinese).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from cudaresolve.text.langs import LANGS

__all__ = ["LANGS", "Field", "Text", "groups", "literal", "paren", "sentences"]

Field: TypeAlias = "str | int | Text | tuple[str | int | Text, ...]"


@dataclass(frozen=True, slots=True)
class Text:
    """One sentence or phrase: ``key`` names a template in ``text/<lang>/*.toml``."""

    key: str
    fields: tuple[tuple[str, Field], ...] = ()

    @classmethod
    def of(cls, key: str, /, **fields: object) -> Text:
        """A Text for ``key``; ``None`` fields are left out, lists become tuples, other values stay as given."""
        return cls(key, tuple((k, _field(v)) for k, v in sorted(fields.items()) if v is not None))

    def get(self, name: str) -> Field | None:
        """The value of field ``name`` (``None`` when absent)."""
        return next((v for k, v in self.fields if k == name), None)


def _field(value: object) -> Field:
    if isinstance(value, str | int | Text):
        return value
    if isinstance(value, tuple | list | set | frozenset):
        return tuple(_field(v) for v in value)  # type: ignore[misc]
    return str(value)


def literal(text: str) -> Text:
    """Words that are the same in every language: a path, a name, a command, a quoted message."""
    return Text("text.literal", (("text", text),))


def groups(*items: str | Text) -> Text:
    """Items that contain commas themselves: ``a; b`` (a full-width semicolon in Chinese)."""
    return Text("text.groups", (("items", tuple(items)),))


def sentences(*parts: Text | str | None) -> Text:
    """Sentences joined by a space in English and directly in Chinese; ``None`` parts are dropped."""
    return Text("text.sentences", (("items", tuple(p for p in parts if p)),))


def paren(head: str | Text, inner: str | Text) -> Text:
    """``head (inner)`` in English; full-width parentheses without the space in Chinese."""
    return Text("text.paren", (("head", head), ("inner", inner)))
