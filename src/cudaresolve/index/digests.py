"""A downloaded file's digests checked against the hashes its URL or its index gave for it. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudaresolve.errors import HashMismatch
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["check_hashes"]


def check_hashes(url: str, wanted: Iterable[tuple[str, str]], found: Mapping[str, str]) -> None:
    """``HashMismatch`` naming ``url`` when a digest in ``wanted`` ((algorithm, hex) pairs) differs from the one
    the bytes gave (``found``: algorithm -> hex)."""
    for algorithm, digest in wanted:
        if found[algorithm] != digest.lower():
            raise HashMismatch(
                Text.of("index.hash-mismatch", url=url, algorithm=algorithm, expected=digest, found=found[algorithm]),
                hint=Text("index.hash-mismatch.hint"),
            )
