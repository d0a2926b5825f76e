"""The notices a user hears about index listings, one per index: failures, stale copies, refused links. Pure."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from cudaresolve.text.findings import warning
from cudaresolve.text.model import Text, literal

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cudaresolve.text.findings import Notice

__all__ = ["listing_notices"]


def _when(timestamp: float | None) -> str | Text:
    if timestamp is None:
        return Text("index.when-unknown")
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")


def listing_notices(
    failed: Mapping[str, tuple[Text, list[str]]],
    stale: Mapping[str, tuple[Text, float | None, list[str]]],
    refused: Mapping[str, list[tuple[str, str]]],
) -> list[Notice]:
    """One notice per index: pages that failed (the embedded data is used), stale copies served, links refused."""
    notices = [
        warning("index-unavailable-fallback", "index.unavailable-fallback", index=index, reason=reason,
                names=literal(", ".join(names)))
        for index, (reason, names) in failed.items()
    ]
    notices += [
        warning("index-stale-cache", "index.stale-cache", index=index, reason=reason,
                names=literal(", ".join(names)), when=_when(fetched_at))
        for index, (reason, fetched_at, names) in stale.items()
    ]
    notices += [
        warning("index-file-refused", "index.file-refused", index=index, count=len(files),
                example=literal(f"{files[0][0][:120]} ({files[0][1][:80]})"))
        for index, files in refused.items()
    ]
    return notices
