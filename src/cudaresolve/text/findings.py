"""Coded findings (reasons) and notices (warnings), with the fields their sentences are made from. Pure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Finding", "Notice"]

@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One typed reason (design section 4 reason codes), with the numbers behind it."""

    code: str
    message: str
    package: str | None = None
    variant: str | None = None
    required: str | None = None
    found: str | None = None
    fields: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)  # for other languages

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "message": self.message}
        for key in ("package", "variant", "required", "found"):
            value = getattr(self, key)
            if value is not None:
                data[key] = value
        return data

@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    """A warning attached to a successful result (``ptx-jit-only``, minor-version compatibility …)."""

    code: str
    message: str
    fields: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)  # for other languages

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message}
