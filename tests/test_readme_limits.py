"""The README's "Limits" table quotes the bounds the code enforces; each number is checked here."""

from __future__ import annotations

import csv
from pathlib import Path

from cudaresolve.binaries.elf import DEFAULT_LIMITS
from cudaresolve.core import archive, code_digest, compiled_code, tomlcache
from cudaresolve.core.decode import nesting_limit
from cudaresolve.core.files import CACHE_MARK
from cudaresolve.db.cache import KEEP, MAX_ENTRY_BYTES, SUBDIR
from cudaresolve.doctor import child
from cudaresolve.errorlog.signatures import MAX_TEXT_CHARS
from cudaresolve.fleet.inputs import MAX_CONTAINERS, MAX_GPU_COUNT, MAX_HOSTS, MAX_INVENTORY_BYTES, MAX_LINES
from cudaresolve.index import file_download, page_fetcher, parsed_cache
from cudaresolve.index.build_metadata import BUILD_TIMEOUT, BUILD_TIMEOUT_ENV
from cudaresolve.index.limits import (
    CONNECT_TIMEOUT,
    DEADLINE_ENV,
    DEFAULT_DEADLINE,
    FILE_DEADLINE,
    MAX_DIRECT_BYTES,
    MAX_PAGE_BYTES,
    MAX_PAGE_FILES,
    MAX_PKG_INFO_BYTES,
    MAX_SDIST_BYTES,
    MAX_SDIST_MEMBERS,
    MAX_SDIST_UNPACKED,
    READ_TIMEOUT,
)
from cudaresolve.index.policy import IndexPolicy
from cudaresolve.index.settings import MAX_CONFIG_BYTES
from cudaresolve.install.unpack import UNPACKED
from cudaresolve.install.wheelcache import MAX_CACHE_BYTES
from cudaresolve.lock import keep
from cudaresolve.lock.lockfile import MAX_LOCK_BYTES
from cudaresolve.lock.previous import MAX_PREVIOUS_BYTES
from cudaresolve.lock.project import MAX_PROJECT_BYTES
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
    assert "every byte of every request (status line and headers too)" in network
    assert f"are sent again {IndexPolicy().retries} times, with back-off" in network
    page = rows["one index page"]
    assert f"{MAX_PAGE_BYTES // MIB} MiB and {MAX_PAGE_FILES:,} files" in page
    assert f"redirects {file_download.MAX_REDIRECTS}" in page
    second = rows["an index page fetched by `lock`'s helper process (a page with no cache entry, from a host not "
                  "down for `lock`, once the helper is up; a lock with an empty cache starts it as it starts)"]
    assert f"network time, when less), and {page_fetcher._SLACK_SECONDS:g} s more, for its answer" in second
    assert f"{page_fetcher._THREADS} pages at once" in second
    assert f"a JSON entry holding {parsed_cache._BRACKETS} brackets or more is left to `lock` itself" in second
    assert f"each request and reply at most {page_fetcher._MAX_FRAME // 1024} KiB" in second
    direct = rows["a direct reference's wheel (`pkg @ URL`)"]
    assert f"{MAX_DIRECT_BYTES // MIB} MiB, within {FILE_DEADLINE:g} s (or `{DEADLINE_ENV}` when lower)" in direct
    assert f"redirects {file_download.MAX_REDIRECTS}" in direct
    sdist = rows["an sdist read for its PKG-INFO (no PEP 658 file)"]
    lower = f"(or `{DEADLINE_ENV}` when lower)"
    assert f"{MAX_SDIST_BYTES // MIB} MiB downloaded, within {FILE_DEADLINE:g} s {lower}" in sdist
    assert f"{MAX_SDIST_MEMBERS:,} members and {MAX_SDIST_UNPACKED // MIB} MiB unpacked" in sdist
    assert f"`PKG-INFO` {MAX_PKG_INFO_BYTES // MIB} MiB" in sdist
    build = rows["an sdist built for its metadata (dynamic `Requires-Dist`)"]
    assert f"{BUILD_TIMEOUT:g} s for its build" in build and f"`{BUILD_TIMEOUT_ENV}=SECONDS` sets the 300" in build
    previous = rows["the lock already at the output path, read for its pins and its stamp"]
    assert f"{MAX_PREVIOUS_BYTES // MIB} MiB, a regular file" in previous
    inventory = rows["a `plan` inventory (`--from FILE`, each file of a folder)"]
    assert f"{MAX_INVENTORY_BYTES // MIB} MiB a file" in inventory and f"{MAX_LINES:,} lines" in inventory
    assert f"{MAX_CONTAINERS:,} JSON objects and arrays" in inventory and f"{MAX_HOSTS:,} hosts in all" in inventory
    project = rows["the project's `pyproject.toml` (`lock`, `install`, `why-not` in its folder)"]
    assert f"{MAX_PROJECT_BYTES // MIB} MiB, a regular file" in project
    lock = rows["a lock file (`install --from FILE`)"]
    assert f"{MAX_LOCK_BYTES // MIB} MiB, a regular file" in lock
    fetched = rows["one locked file fetched by `install`"]
    assert f"{MAX_DIRECT_BYTES // MIB} MiB, within {FILE_DEADLINE:g} s" in fetched
    assert f"redirects {file_download.MAX_REDIRECTS}" in fetched
    assert f"{MAX_CACHE_BYTES // 1024**3} GiB" in rows["the shared file cache (`<cache>/files-v1/`)"]
    unpacked = rows[f"the unpacked wheels installs link from (`<cache>/{UNPACKED}/`)"]
    assert f"{archive.MAX_ARCHIVE_MEMBERS:,} members" in unpacked
    assert f"at most {archive.ARCHIVE_INFLATE_RATIO} times the wheel's size" in unpacked
    least, most = archive.MIN_ARCHIVE_INFLATE // MIB, archive.MAX_ARCHIVE_INFLATED // 1024**3
    assert f"{least} MiB at least and {most} GiB at most" in unpacked
    host = rows["a host file (`--host FILE`)"]
    assert HOST_FILE_MAX_BYTES == MIB and f"({HOST_FILE_MAX_BYTES:,} bytes)" in host
    settings = rows["a pip or uv settings file read for the default index (`pip.conf`, `uv.toml`, ...)"]
    assert MAX_CONFIG_BYTES == MIB and f"({MAX_CONFIG_BYTES:,} bytes)" in settings
    entry = rows[f"the database cache entry (`<cache>/{SUBDIR}/*.pickle`)"]
    assert f"{MAX_ENTRY_BYTES // MIB} MiB" in entry and f"the {KEEP} newest are kept" in entry
    assert f"(it holds `{CACHE_MARK}`), never through a link" in entry
    caches = next(line for key, line in rows.items() if key.startswith("the other install and lock caches"))
    assert f"(`<cache>/{keep._MEMO_DIR}/`, by the lock's stamp" in caches
    assert f"{tomlcache.KEEP}, {keep._MEMO_KEEP}, {code_digest._KEEP} and {compiled_code._KEEP} entries" in caches
    assert f"(at most {compiled_code._MAX_TEXTS:,} methods and patterns in one)" in caches
    assert f"(`<cache>/{compiled_code._SUBDIR}/`, one compressed file per Python build" in caches
    assert f"(`<cache>/{code_digest._SUBDIR}/`, by every module's path, size and modification time" in caches
    nesting = rows["TOML or JSON nesting (a lock, `pyproject.toml`, a settings file, an index page, an inventory, "
                   "a host file, a cache entry)"]
    assert f"{nesting_limit():,} levels (Python's recursion limit)" in nesting
    count = rows["a GPU count in a `plan` inventory (kubectl `nvidia.com/gpu.count`, a CSV `count`, "
                 "a Slurm gres count)"]
    assert f"a whole number from 1 to {MAX_GPU_COUNT:,}" in count
    assert f"{csv.field_size_limit():,} characters" in rows["one field of a CSV inventory"]
    explain = rows["`explain-error` text"]
    assert MAX_TEXT_CHARS == MIB and f"({MAX_TEXT_CHARS:,} characters)" in explain
    zipped = rows["one archive read by `inspect` or `doctor` (a wheel, a `.pt2`)"]
    assert f"{archive.MAX_ARCHIVE_MEMBERS:,} members" in zipped
    assert f"at most {archive.ARCHIVE_INFLATE_RATIO} times the archive's size" in zipped
    most = archive.MAX_ARCHIVE_INFLATED // 1024 // MIB
    assert f"({archive.MIN_ARCHIVE_INFLATE // MIB} MiB at least, {most} GiB at most)" in zipped
    binary = rows["one binary read by `inspect`"]
    limits = DEFAULT_LIMITS
    assert f"{limits.max_read_bytes // MIB} MiB read" in binary
    for count, what in (
        (limits.max_sections, "ELF sections"),
        (limits.max_containers, "fatbin containers"),
        (limits.max_entries, "entries"),
    ):
        assert f"{count:,} {what}" in binary


def test_the_doctor_run_rows_match_the_code() -> None:
    rows = _rows()
    bounds = child.ChildLimits()
    one = rows["one child of `doctor --run` (one package on one GPU)"]
    assert f"{bounds.timeout_s:g} s (`--run-timeout`), {bounds.memory_mib:,} MiB resident memory" in one
    assert f"watched every {child._POLL_S:g} s" in one
    assert f"the last {bounds.output_chars // 1024} KiB of each of its stdout and stderr" in one
    every = rows["all children of one `doctor --run`"]
    assert f"{bounds.total_s:,.0f} s (`--run-budget`)" in every


def test_the_abi_check_row_matches_the_code() -> None:
    from cudaresolve.binaries import abi, demangle, dynamic, linkage

    row = _rows()["the ABI check of `doctor` and `inspect` (extension modules against torch's libraries)"]
    assert f"{linkage.MAX_FILES:,} `.so` files and {linkage.MAX_TOTAL_BYTES // MIB:,} MiB read in one check" in row
    assert f"{dynamic.MAX_SYMBOLS:,} dynamic symbols" in row
    assert f"the first {linkage._TORCH_FILES} files of `torch/lib`" in row
    assert f"{abi.SHOWN_SYMBOLS} missing symbols named per package" in row
    assert f"up to {demangle.MAX_INPUT:,} characters, its readable form up to {demangle.MAX_OUTPUT:,}" in row
