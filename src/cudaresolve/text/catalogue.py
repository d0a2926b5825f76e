"""The message catalogue, read from data files, and the one formatter of ``Text``. Does I/O: reads the catalogue.

The catalogue is data: ``text/en/*.toml`` and ``text/zh/*.toml``, each key a ``str.format``
template with named fields. A key's first part names its file (``doctor.python.hint`` lives in
``doctor.toml``), so formatting a sentence reads only that one file, once. Both languages hold
the same keys with the same fields (``tests/test_messages.py``).
"""

from __future__ import annotations

import os
import re
import string
from functools import cache
from typing import TYPE_CHECKING, Final

from cudaresolve.text.langs import check_lang
from cudaresolve.text.model import LANGS, Text
from cudaresolve.text.redact import redact_text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

    from cudaresolve.text.model import Field

__all__ = [
    "LANGS",
    "catalogue",
    "format_text",
    "join_groups",
    "join_items",
    "join_sentences",
    "message",
    "parenthesize",
    "placeholders",
    "shown",
    "templates",
]


_HERE: Final = os.path.dirname(__file__)  # os.path, not pathlib: nothing more to import at start-up
_FORMATTER: Final = string.Formatter()
_ITEM_SEP: Final[Mapping[str, str]] = {"en": ", ", "zh": "、"}
_GROUP_SEP: Final[Mapping[str, str]] = {"en": "; ", "zh": "；"}  # noqa: RUF001
_SENTENCE_SEP: Final[Mapping[str, str]] = {"en": " ", "zh": ""}
_PARENS: Final[Mapping[str, tuple[str, str]]] = {"en": (" (", ")"), "zh": ("（", "）")}  # noqa: RUF001


@cache
def templates(lang: str, prefix: str) -> Mapping[str, str]:
    """The templates of one file, ``text/<lang>/<prefix>.toml``: the keys ``<prefix>.*``.

    Read on first use, so a command loads only the files of the sentences it says.
    """
    import tomllib  # only when a sentence is said, not at start-up

    path = os.path.join(_HERE, check_lang(lang), f"{prefix}.toml")
    if not os.path.isfile(path):
        return {}
    with open(path, "rb") as f:
        data = tomllib.load(f)
    if stray := [k for k in data if k.split(".", 1)[0] != prefix]:
        raise ValueError(f"{prefix}.toml holds keys of another file: {', '.join(stray)}")
    return data


def catalogue(lang: str) -> Mapping[str, str]:
    """Every template of ``lang``: all of ``text/<lang>/*.toml`` (for checks; formatting reads one file)."""
    merged: dict[str, str] = {}
    for name in sorted(os.listdir(os.path.join(_HERE, check_lang(lang)))):
        if name.endswith(".toml"):
            merged.update(templates(lang, name.removesuffix(".toml")))
    return merged


def format_text(text: Text, lang: str = "en") -> str:
    """The words of ``text`` in ``lang``: the template filled with its fields (``KeyError`` for an unknown key)."""
    builtin = _BUILTIN.get(text.key)
    if builtin is not None:
        return builtin(text, lang)
    try:
        template = templates(lang, text.key.split(".", 1)[0])[text.key]
    except KeyError:
        raise KeyError(f"no message {text.key!r}") from None
    return template.format(**{k: _format_field(v, lang) for k, v in text.fields})


def _format_field(value: Field, lang: str) -> str:
    if isinstance(value, Text):
        return format_text(value, lang)
    if isinstance(value, tuple):
        return join_items((_format_field(v, lang) for v in value), lang)
    return _cut(_controls_shown(redact_text(str(value))), lang)  # a mirror's credentials are never shown


#: The longest value from input a sentence shows whole (a bound on output, not a fact): a requirement, a GPU name
#: or a path of 60,000 characters is shown by its first ``_HEAD`` and last ``_TAIL`` characters and its length.
_LONGEST: Final = 2000
_HEAD: Final = 1500
_TAIL: Final = 300


def _cut(text: str, lang: str) -> str:
    """``text``, or its head and tail around the count of its characters when it is longer than ``_LONGEST``."""
    if len(text) <= _LONGEST:
        return text
    cut = format_text(Text.of("word.cut", count=len(text)), lang)
    return f"{text[:_HEAD]}{cut}{text[-_TAIL:]}"


#: C0 controls but newline and tab, DEL, and C1 controls: what a value from input (a GPU name nvidia-smi gave, a
#: lock's field, a file name) must not send to a terminal as it is (an escape sequence, a bell, a carriage return).
_CONTROLS: Final = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _controls_shown(text: str) -> str:
    """``text`` with each control character shown as its escape (``\x1b``), as Python's repr shows it."""
    return _CONTROLS.sub(lambda m: repr(m.group())[1:-1], text) if _CONTROLS.search(text) else text


def shown(value: object, lang: str = "en") -> str:
    """A value from input as a table cell shows it: its control characters as escapes (``_controls_shown``) and a
    long one by its ends (``_cut``), as a ``Text`` field's are; the renderers' cells of names, versions and paths
    that were never a ``Text``."""
    return _cut(_controls_shown(str(value)), lang)


def _joined(sep: Mapping[str, str]) -> Callable[[Text, str], str]:
    def run(text: Text, lang: str) -> str:
        items = text.get("items") or ()
        assert isinstance(items, tuple)
        return sep[check_lang(lang)].join(s for s in (_format_field(i, lang) for i in items) if s)

    return run


def _paren(text: Text, lang: str) -> str:
    return parenthesize(_format_field(text.get("head") or "", lang), _format_field(text.get("inner") or "", lang), lang)


_BUILTIN: Final[Mapping[str, Callable[[Text, str], str]]] = {
    "text.literal": lambda text, lang: _cut(redact_text(str(text.get("text"))), lang),  # argparse's echo the argv
    "text.groups": _joined(_GROUP_SEP),
    "text.sentences": _joined(_SENTENCE_SEP),
    "text.paren": _paren,
}


def message(key: str, lang: str = "en", **fields: object) -> str:
    """Shorthand for ``format_text(Text.of(key, **fields), lang)``: for render code and tests."""
    return format_text(Text.of(key, **fields), lang)


def placeholders(key: str, lang: str = "en") -> frozenset[str]:
    """The field names the template ``key`` takes in ``lang``."""
    return frozenset(name for _, name, _, _ in _FORMATTER.parse(catalogue(lang)[key]) if name)


def join_items(items: Iterable[str], lang: str = "en") -> str:
    """``a, b, c`` in English, ``a、b、c`` in Chinese."""
    return _ITEM_SEP[check_lang(lang)].join(items)


def join_groups(items: Iterable[str], lang: str = "en") -> str:
    """``a; b`` in English (a full-width semicolon in Chinese): for items that contain commas themselves."""
    return _GROUP_SEP[check_lang(lang)].join(items)


def parenthesize(head: str, inner: str, lang: str = "en") -> str:
    """``head (inner)`` in English; full-width parentheses, without the space, in Chinese."""
    left, right = _PARENS[check_lang(lang)]
    return f"{head}{left}{inner}{right}"


def join_sentences(parts: Iterable[str], lang: str = "en") -> str:
    """Sentences joined by a space in English and directly in Chinese."""
    return _SENTENCE_SEP[check_lang(lang)].join(p for p in parts if p)
