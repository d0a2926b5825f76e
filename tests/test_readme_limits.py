"""The README's "Limits" table quotes the bounds the code enforces; each number is checked here."""

from __future__ import annotations

from pathlib import Path

from cudaresolve.binaries.elf import DEFAULT_LIMITS
from cudaresolve.db.cache import MAX_ENTRY_BYTES
from cudaresolve.errorlog.signatures import MAX_TEXT_CHARS
from cudaresolve.index import client
from cudaresolve.index.limits import (
    CONNECT_TIMEOUT,
    DEADLINE_ENV,
    DEFAULT_DEADLINE,
    FILE_DEADLINE,
    MAX_DIRECT_BYTES,
    MAX_PAGE_BYTES,
    MAX_PKG_INFO_BYTES,
    MAX_SDIST_BYTES,
    MAX_SDIST_MEMBERS,
    MAX_SDIST_UNPACKED,
    READ_TIMEOUT,
)
from cudaresolve.index.settings import MAX_CONFIG_BYTES
from cudaresolve.install.wheelcache import MAX_CACHE_BYTES
from cudaresolve.lock.lockfile import MAX_LOCK_BYTES
from cudaresolve.lock.replay import MAX_RECORD_BYTES, MAX_RECORDS
from cudaresolve.target.build import HOST_FILE_MAX_BYTES

README = Path(__file__).resolve().parents[1] / "README.md"
MIB = 1024 * 1024


def _rows() -> dict[str, str]:
    text = README.read_text(encoding="utf-8")
    table = text.split("### Limits", 1)[1].split("\n\n")[2]
    return {line.split("|")[1].strip(): line for line in table.splitlines()[2:]}


def test_the_limits_table_matches_the_code() -> None:
    rows = _rows()
    network = rows["network time for one run's index pages (`lock` adding hashes)"]
    assert f"{DEFAULT_DEADLINE:g} s in all" in network and f"`{DEADLINE_ENV}=SECONDS` sets the 60" in network
    assert f"within {CONNECT_TIMEOUT:g} s" in network and f"within {READ_TIMEOUT:g} s" in network
    page = rows["one index page"]
    assert f"{MAX_PAGE_BYTES // MIB} MiB" in page and f"redirects {client._MAX_REDIRECTS}" in page
    direct = rows["a direct reference's wheel (`pkg @ URL`)"]
    assert f"{MAX_DIRECT_BYTES // MIB} MiB, within {FILE_DEADLINE:g} s" in direct
    assert f"redirects {client._MAX_REDIRECTS}" in direct
    sdist = rows["an sdist read for its PKG-INFO (no PEP 658 file)"]
    assert f"{MAX_SDIST_BYTES // MIB} MiB downloaded, within {FILE_DEADLINE:g} s" in sdist
    assert f"{MAX_SDIST_MEMBERS:,} members and {MAX_SDIST_UNPACKED // MIB} MiB unpacked" in sdist
    assert f"`PKG-INFO` {MAX_PKG_INFO_BYTES // MIB} MiB" in sdist
    lock = rows["a lock file (`install --from FILE`)"]
    assert f"{MAX_LOCK_BYTES // MIB} MiB, a regular file" in lock
    fetched = rows["one locked file fetched by `install`"]
    assert f"{MAX_DIRECT_BYTES // MIB} MiB, within {FILE_DEADLINE:g} s" in fetched
    assert f"redirects {client._MAX_REDIRECTS}" in fetched
    assert f"{MAX_CACHE_BYTES // 1024**3} GiB" in rows["the shared file cache (`<cache>/files-v1/`)"]
    host = rows["a host file (`--host FILE`)"]
    assert HOST_FILE_MAX_BYTES == MIB and f"({HOST_FILE_MAX_BYTES:,} bytes)" in host
    settings = rows["a pip or uv settings file read for the default index (`pip.conf`, `uv.toml`, ...)"]
    assert MAX_CONFIG_BYTES == MIB and f"({MAX_CONFIG_BYTES:,} bytes)" in settings
    assert f"{MAX_ENTRY_BYTES // MIB} MiB" in rows["the database cache entry (`<cache>/compat/*.pickle`)"]
    record = rows["a lock's answer record (`<cache>/answers-v1/*.json`)"]
    assert f"{MAX_RECORD_BYTES // MIB} MiB" in record and f"the {MAX_RECORDS} newest are kept" in record
    explain = rows["`explain-error` text"]
    assert MAX_TEXT_CHARS == MIB and f"({MAX_TEXT_CHARS:,} characters)" in explain
    binary = rows["one binary read by `inspect`"]
    limits = DEFAULT_LIMITS
    assert f"{limits.max_read_bytes // MIB} MiB read" in binary
    for count, what in (
        (limits.max_sections, "ELF sections"),
        (limits.max_containers, "fatbin containers"),
        (limits.max_entries, "entries"),
    ):
        assert f"{count:,} {what}" in binary
