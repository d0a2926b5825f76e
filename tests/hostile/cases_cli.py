"""The command line itself: unknown flags, bad values, empty input."""

from __future__ import annotations

from hostile.case import Case

CASES = [
    Case("cli-unknown-flag", ["lock", "--no-such-flag"], codes=(1, 2)),
    Case("cli-bad-lang", ["detect", "--lang", "fr"], codes=(1, 2)),
    Case("cli-explain-empty-stdin", ["explain-error", "-"], stdin="", codes=(1,)),
    Case("cli-why-not-garbage-spec", ["why-not", "((((", "--gpu", "8.0", "--driver", "535.104.05"], codes=(1,)),
]
