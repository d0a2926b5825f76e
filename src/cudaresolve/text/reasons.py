"""Findings and warnings built from the message catalogue, and their translation. Pure.

A ``Finding`` keeps the fields its sentence was made from, so the same finding can be shown
in English (the JSON default) or Chinese (``--lang zh``) without being rebuilt.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TypeVar

from cudaresolve.text.catalogue import message
from cudaresolve.text.findings import Finding, Notice

__all__ = ["localize", "localize_all", "reason", "warning"]

_T = TypeVar("_T", Finding, Notice)


def _text_fields(fields: dict[str, object]) -> dict[str, str]:
    return {k: str(v) for k, v in fields.items() if v is not None}


def reason(
    code: str,
    *,
    package: str | None = None,
    variant: str | None = None,
    required: str | None = None,
    found: str | None = None,
    **extra: object,
) -> Finding:
    """A Finding for reason ``code``, its English sentence from ``reason.<code>``."""
    fields = _text_fields({"package": package, "variant": variant, "required": required, "found": found, **extra})
    return Finding(
        code=code,
        message=message(f"reason.{code}", "en", **fields),
        package=package,
        variant=variant,
        required=required,
        found=found,
        fields=tuple(sorted(fields.items())),
    )


def warning(code: str, **fields: object) -> Notice:
    """A Notice (a warning on success) for ``code``, from ``reason.<code>``."""
    text = _text_fields(fields)
    return Notice(code=code, message=message(f"reason.{code}", "en", **text), fields=tuple(sorted(text.items())))


def localize(item: _T, lang: str) -> _T:
    """The same finding or notice with its sentence in ``lang`` (unchanged if it has no fields)."""
    if lang == "en" or not item.fields:
        return item
    return replace(item, message=message(f"reason.{item.code}", lang, **dict(item.fields)))


def localize_all(items: tuple[_T, ...] | list[_T], lang: str) -> tuple[_T, ...]:
    return tuple(localize(i, lang) for i in items)
