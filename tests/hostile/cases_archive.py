"""Archives bounded as a whole (``binaries.archive.open_archive``): a 1.4 MB wheel whose 20,000 directory
entries all point at one 1 MiB member (20 GiB inflated), entries overlapping inside one member, a ``.pt2``
listing one kernel many times, and an end record declaring a billion entries. Each ends at once in one
``invalid-binary`` report for the archive, not one row per entry."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from hostile.case import Case, Result
from hostile.zip_craft import declaring, overlapping, shared_offsets

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

_MEMBER = b"\x7fELF\x02\x01\x01" + bytes(1024 * 1024 - 7)
_STARTED: dict[str, float] = {}


def _write(name: str, make: Callable[[], bytes]) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / name).write_bytes(make())
        _STARTED[str(tmp)] = time.monotonic()
    return setup


def _one_report(words: str) -> Callable[[Result, Path], None]:
    def check(result: Result, tmp: Path) -> None:
        assert time.monotonic() - _STARTED.pop(str(tmp)) < 30  # it took 6 minutes before
        files = json.loads(result.stdout)["files"]
        assert len(files) == 1, len(files)
        assert files[0]["error"]["code"] == "invalid-binary" and words in files[0]["error"]["message"], files[0]
    return check


_WHEEL = "evil-1.0-py3-none-any.whl"
CASES = [
    Case("archive-20000-entries-one-member", ["inspect", "--json", f"{{tmp}}/{_WHEEL}"],
         setup=_write(_WHEEL, lambda: shared_offsets(_MEMBER, 20_000)), codes=(0, 1), check=_one_report("share bytes")),
    Case("archive-overlapping-entries", ["inspect", "--json", f"{{tmp}}/{_WHEEL}"],
         setup=_write(_WHEEL, lambda: overlapping(_MEMBER, 5_000, step=7)), codes=(0, 1),
         check=_one_report("share bytes")),
    Case("archive-pt2-one-kernel-listed-1000-times", ["inspect", "--json", "{tmp}/model.pt2"],
         setup=_write("model.pt2", lambda: shared_offsets(_MEMBER, 1_000, "m/data/aotinductor/model/k{}.cubin")),
         codes=(0, 1), check=_one_report("share bytes")),
    Case("archive-declares-a-billion-entries", ["inspect", "--json", f"{{tmp}}/{_WHEEL}"],
         setup=_write(_WHEEL, lambda: declaring(10**9)), codes=(0, 1), check=_one_report("1000000000 members")),
]
