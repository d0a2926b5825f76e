"""The languages everything the tool says exists in, and the one a run speaks. Pure; imports nothing (``--help``
lists them; a run that says nothing picks its language without loading the catalogue)."""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: ``--help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Final, Literal, TypeAlias

    Lang: TypeAlias = Literal["en", "zh"]

__all__ = ["LANGS", "Lang", "check_lang", "pick_lang"]

#: The languages every sentence exists in (``text/en``, ``text/zh``).
LANGS: Final[tuple[Lang, ...]] = ("en", "zh")


def check_lang(lang: str) -> Lang:
    """``lang`` as a ``Lang``; another value is a ``ValueError``."""
    if lang == "en":
        return "en"
    if lang == "zh":
        return "zh"
    raise ValueError(f"unknown language: {lang!r} (use en or zh)")


def pick_lang(flag: str | None, env: Mapping[str, str]) -> Lang:
    """``--lang`` if given; else the POSIX message locale (LC_ALL, then LC_MESSAGES, then LANG): zh* is Chinese."""
    if flag:
        return check_lang(flag.strip().lower())
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"
