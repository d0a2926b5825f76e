"""An archive bounded as a whole (binaries.archive.open_archive, issue 26 item 4): members counted before
zipfile reads the directory, no two entries sharing bytes, all members inflating within a budget."""

from __future__ import annotations

import time
import zipfile
from typing import TYPE_CHECKING

import pytest

from cudaresolve.binaries.scan import read_wheel
from cudaresolve.core import archive
from cudaresolve.text.catalogue import format_text
from hostile.zip_craft import declaring, overlapping, real_zip, shared_offsets

if TYPE_CHECKING:
    from pathlib import Path

ELF_OF_ZEROS = b"\x7fELF" + bytes(1024 * 1024 - 4)  # 1 MiB that deflates to about 1 KiB


def _inspect(tmp_path: Path, data: bytes) -> list[dict[str, object]]:
    wheel = tmp_path / "evil-1.0-py3-none-any.whl"
    wheel.write_bytes(data)
    started = time.monotonic()
    reports = [r.to_dict() for r in read_wheel(wheel)]
    assert time.monotonic() - started < 10
    return reports


def _one_error(reports: list[dict[str, object]], words: str) -> None:
    assert len(reports) == 1, len(reports)  # one row for the archive, not one per entry
    error = reports[0]["error"]
    assert isinstance(error, dict) and error["code"] == "invalid-binary", error
    assert words in format_text(error["message"], "en"), error


@pytest.mark.parametrize("copies", [2, 20_000])
def test_entries_sharing_one_members_bytes_are_refused(tmp_path: Path, copies: int) -> None:
    _one_error(_inspect(tmp_path, shared_offsets(ELF_OF_ZEROS, copies)), "share bytes")


@pytest.mark.parametrize("step", [1, 30, 200])
def test_entries_overlapping_inside_a_member_are_refused(tmp_path: Path, step: int) -> None:
    _one_error(_inspect(tmp_path, overlapping(ELF_OF_ZEROS, 50, step)), "share bytes")


@pytest.mark.parametrize("count", [archive.MAX_ARCHIVE_MEMBERS + 1, 10**9, 2**63])
def test_a_declared_count_over_the_bound_is_refused_before_zipfile_reads_it(tmp_path: Path, count: int) -> None:
    _one_error(_inspect(tmp_path, declaring(count)), f"lists {count} members")


def test_distinct_members_inflating_past_the_budget_are_refused(tmp_path: Path) -> None:
    members = {f"pkg/lib{i}.so": ELF_OF_ZEROS for i in range(600)}  # 600 MiB from about 600 KiB
    data = real_zip(members)
    assert 600 * 1024 * 1024 > archive.inflate_budget(len(data))
    _one_error(_inspect(tmp_path, data), "inflate to")


def test_a_real_archive_within_the_bounds_is_read(tmp_path: Path) -> None:
    data = real_zip({f"pkg/lib{i}.so": ELF_OF_ZEROS for i in range(8)})
    reports = _inspect(tmp_path, data)
    assert [str(r["path"]).rsplit("!", 1)[1] for r in reports] == [f"pkg/lib{i}.so" for i in range(8)]  # each read
    with zipfile.ZipFile(tmp_path / "evil-1.0-py3-none-any.whl") as plain:
        assert len(plain.infolist()) == 8


def test_the_budget_follows_the_archive_size() -> None:
    assert archive.inflate_budget(0) == archive.MIN_ARCHIVE_INFLATE
    assert archive.inflate_budget(10**9) == 10**9 * archive.ARCHIVE_INFLATE_RATIO if (
        10**9 * archive.ARCHIVE_INFLATE_RATIO <= archive.MAX_ARCHIVE_INFLATED) else archive.MAX_ARCHIVE_INFLATED
    assert archive.inflate_budget(10**12) == archive.MAX_ARCHIVE_INFLATED
