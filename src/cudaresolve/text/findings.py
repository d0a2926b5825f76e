"""Coded findings (reasons) and notices (warnings): a stable code, a ``Text``, and the numbers behind it. Pure.

``reason(code, ...)`` and ``warning(code, ...)`` build them from the catalogue's ``reason.<code>``
template; the words are made only when rendered, in the chosen language.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cudaresolve.text.model import Text

__all__ = ["Finding", "Notice", "reason", "warning"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One typed reason (the reason codes listed in the README), with the numbers behind it."""

    code: str
    text: Text
    package: str | None = None
    variant: str | None = None
    required: str | None = None
    found: str | None = None

    @property
    def message(self) -> str:
        """The sentence in English (logs, lock files, tests); render formats ``text`` in the user's language."""
        from cudaresolve.text.catalogue import format_text

        return format_text(self.text)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object; ``message`` is a ``Text`` that render formats in the chosen language."""
        data: dict[str, Any] = {"code": self.code, "message": self.text}
        for key in ("package", "variant", "required", "found"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    """A warning attached to a successful result (``ptx-jit-only``, minor-version compatibility …)."""

    code: str
    text: Text

    @property
    def message(self) -> str:
        """The sentence in English (logs, lock files, tests)."""
        from cudaresolve.text.catalogue import format_text

        return format_text(self.text)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.text}


def reason(
    code: str,
    *,
    package: str | None = None,
    variant: str | None = None,
    required: str | None = None,
    found: str | None = None,
    **extra: object,
) -> Finding:
    """A Finding for reason ``code``, its sentence the catalogue's ``reason.<code>``."""
    fields = {"package": package, "variant": variant, "required": required, "found": found, **extra}
    return Finding(
        code=code,
        text=Text.of(f"reason.{code}", **{k: str(v) if v is not None and not isinstance(v, Text) else v
                                          for k, v in fields.items()}),
        package=package,
        variant=variant,
        required=required,
        found=found,
    )


def warning(code: str, key: str | None = None, **fields: object) -> Notice:
    """A Notice for ``code``; its sentence is ``key``, by default the catalogue's ``reason.<code>``."""
    return Notice(code=code, text=Text.of(key or f"reason.{code}", **fields))
