"""Credentials in shown text: a mirror's password or token never reaches the screen. Pure.

Every value a message is filled with passes through ``redact_text`` (``catalogue``), and so do the
pip command lines ``install`` shows (``install.pip``).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["redact_text"]

#: ``scheme://user:secret@`` or ``scheme://token@`` anywhere in a text.
_USERINFO: Final = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)([^/\s@]*?)(:[^/\s@]*)?@")


def redact_text(text: str) -> str:
    """Every URL's password (or lone token) in ``text`` shown as ``****``, as pip shows it."""
    if "@" not in text:
        return text
    return _USERINFO.sub(lambda m: f"{m[1]}{m[2]}:****@" if m[3] else f"{m[1]}****@", text)
