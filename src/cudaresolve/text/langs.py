"""The languages everything the tool says exists in. Pure; imports nothing (``--help`` lists them)."""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

__all__ = ["LANGS", "Lang"]

Lang: TypeAlias = Literal["en", "zh"]
#: The languages every sentence exists in (``text/en``, ``text/zh``).
LANGS: Final[tuple[Lang, ...]] = ("en", "zh")
