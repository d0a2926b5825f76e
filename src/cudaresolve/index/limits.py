"""Bounds on one run's network work: a deadline and a page-size cap. Does I/O: reads one environment variable.

One ``Deadline`` is shared by every page a run fetches (``fetch_listings`` makes one); it counts only the time
during which a request is in flight (``Deadline.busy``), so the solver's own time never spends it. Each
request's connect and read timeouts are cut to what is left of it, retries and back-off sleeps
stop when it is spent, and a body is read in chunks with the deadline checked after each, so a
server that trickles one byte every few seconds cannot hold a run for longer than the deadline
plus one read timeout. ``CUDARESOLVE_NETWORK_TIMEOUT`` (seconds) sets it; the default is
``DEFAULT_DEADLINE``.

A page is streamed and dropped once it passes ``MAX_PAGE_BYTES`` (64 MiB; PyPI's largest simple
pages are a few MiB, the PyTorch index's torch page about 1 MiB), so memory stays bounded and an
over-cap body never reaches the cache. Whole files (a direct reference's wheel, an sdist read for
its PKG-INFO) are streamed to a temporary file under ``MAX_DIRECT_BYTES`` or ``MAX_SDIST_BYTES``,
each within ``file_deadline()`` (``FILE_DEADLINE``, or the environment's deadline when lower). Every
deadline holds for every byte of a request, its status line and headers too (``transport.bounded_by``).
"""

from __future__ import annotations

import math
import os
import threading
import time
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.errors import IndexUnavailable, InvalidInput
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = [
    "CONNECT_TIMEOUT",
    "DEADLINE_ENV",
    "DEFAULT_DEADLINE",
    "FILE_DEADLINE",
    "MAX_DIRECT_BYTES",
    "MAX_PAGE_BYTES",
    "MAX_PAGE_FILES",
    "MAX_PKG_INFO_BYTES",
    "MAX_SDIST_BYTES",
    "MAX_SDIST_MEMBERS",
    "MAX_SDIST_UNPACKED",
    "READ_TIMEOUT",
    "Deadline",
    "TooManyFiles",
    "busy",
    "deadline_from_env",
    "file_deadline",
    "page_text",
    "read_body",
    "read_capped",
    "too_large",
    "too_many_files",
]

#: The environment variable that sets the whole run's network deadline, in seconds.
DEADLINE_ENV: Final = "CUDARESOLVE_NETWORK_TIMEOUT"
#: Seconds the index part of one run may take in all, retries and back-off included.
DEFAULT_DEADLINE: Final = 60.0
#: A host that does not accept the connection within this many seconds is treated as down.
CONNECT_TIMEOUT: Final = 5.0
#: Longest wait for one read from the server (cut further to the deadline's rest).
READ_TIMEOUT: Final = 20.0
#: The largest index page read, decoded bytes (64 MiB).
MAX_PAGE_BYTES: Final = 64 * 1024 * 1024
#: The most file entries one index page is read for: a bound on work, 5x PyPI's largest page (ddtrace's 46,724
#: files, 2026-11). Each entry is an object in memory and seconds of parsing per hundred thousand: a 64 MiB page
#: of bare links had held a run at 0.9 GB for 45 s.
MAX_PAGE_FILES: Final = 250_000
#: The largest wheel a direct reference may name (4 GiB): it is downloaded once, to check or compute its
#: hash and read its METADATA (torch's CUDA wheels are about 1 GiB).
MAX_DIRECT_BYTES: Final = 4 * 1024 * 1024 * 1024
#: The largest sdist downloaded to read its PKG-INFO, when its index offers no metadata file (1 GiB: PyPI hosts
#: sdists of over 400 MiB, pyspark's among them, which pip and uv read).
MAX_SDIST_BYTES: Final = 1024 * 1024 * 1024
#: In that sdist: archive members looked at, bytes unpacked on the way to ``PKG-INFO`` (a .tar.gz is read in
#: order), and the largest ``PKG-INFO`` read (its long description included).
MAX_SDIST_MEMBERS: Final = 50_000
MAX_SDIST_UNPACKED: Final = 512 * 1024 * 1024
MAX_PKG_INFO_BYTES: Final = 16 * 1024 * 1024
#: Seconds one such file download may take in all, redirects included; each read still waits at most
#: ``READ_TIMEOUT``. Its own bound: the run's deadline is sized for index pages, not a 1 GiB wheel.
FILE_DEADLINE: Final = 900.0


class Deadline:
    """A budget of network time: ``seconds`` of wall-clock time during which at least one request of the run is
    in flight (``busy``), on a monotonic clock; thread-safe. Time the run spends without a request under way
    (solving, building an sdist's metadata, a busy CPU) does not count: a CPU-bound run never fails for it."""

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._spent = 0.0  # network time of the intervals that ended
        self._active = 0  # requests in flight
        self._since = 0.0  # when the current interval began (``_active`` > 0)

    def remaining(self) -> float:
        with self._lock:
            spent = self._spent + (self._clock() - self._since if self._active else 0.0)
        return max(0.0, self.seconds - spent)

    @contextmanager
    def busy(self) -> Iterator[None]:
        """One request in flight (its retries and waits included): the budget runs down while any is."""
        with self._lock:
            if self._active == 0:
                self._since = self._clock()
            self._active += 1
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                if self._active == 0:
                    self._spent += self._clock() - self._since

    def check(self, url: str) -> None:
        """Raise ``IndexUnavailable`` once the deadline has passed."""
        if self.remaining() <= 0:
            raise IndexUnavailable(
                Text.of("index.deadline", url=url, seconds=f"{self.seconds:g}"),
                hint=Text.of("index.deadline.hint", env=DEADLINE_ENV),
            )


def busy(deadline: Deadline | None) -> AbstractContextManager[None]:
    """``deadline.busy()``, or nothing for a run without a deadline (offline)."""
    return deadline.busy() if deadline is not None else nullcontext()


def deadline_from_env(environ: dict[str, str] | None = None) -> float:
    """``CUDARESOLVE_NETWORK_TIMEOUT`` in seconds (> 0, finite), else ``DEFAULT_DEADLINE``."""
    raw = (os.environ if environ is None else environ).get(DEADLINE_ENV, "").strip()
    if not raw:
        return DEFAULT_DEADLINE
    try:
        value = float(raw) if raw.isascii() else math.nan
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise InvalidInput(
            Text.of("index.bad-deadline", env=DEADLINE_ENV, value=repr(raw[:40])),
            hint=Text.of("index.bad-deadline.hint", env=DEADLINE_ENV),
        )
    return value


def file_deadline(environ: dict[str, str] | None = None) -> float:
    """Seconds one whole-file download may take: ``FILE_DEADLINE``, or ``CUDARESOLVE_NETWORK_TIMEOUT`` when that
    is set lower (a user who bounds the run's network time bounds this too)."""
    if not (os.environ if environ is None else environ).get(DEADLINE_ENV, "").strip():
        return FILE_DEADLINE
    return min(FILE_DEADLINE, deadline_from_env(environ))


def read_body(response: Any, *, url: str, cap: int, deadline: Deadline | None) -> bytes:
    """The body of ``response`` (an httpx streamed response) under ``cap``: refused at once when its
    ``Content-Length`` says more, else read as ``read_capped`` reads it; ``too_large`` on either."""
    length = response.headers.get("Content-Length", "")
    if length.strip().isdigit() and int(length) > cap:
        raise too_large(url, cap)
    return read_capped(response.iter_bytes(), url=url, cap=cap, deadline=deadline)


def page_text(response: Any, raw: bytes) -> str:
    """``raw``, a page's body, as text: in the charset its ``Content-Type`` names where Python has a text codec of
    that name that decodes it, else as UTF-8 (a page naming ``charset=x-unknown``, ``idna`` or ``rot13`` is read
    as pip and uv read a page with no charset, not raised on). Bytes no charset maps are replaced."""
    charset = response.charset_encoding
    if charset:
        try:
            return raw.decode(charset, errors="replace")
        except (LookupError, UnicodeError):
            pass
    return raw.decode("utf-8", errors="replace")


def read_capped(chunks: Iterator[bytes], *, url: str, cap: int, deadline: Deadline | None) -> bytes:
    """Join ``chunks`` until the end, the cap or the deadline; raises ``IndexUnavailable`` on the last two.

    At most ``cap`` plus one chunk is ever held: the read stops as soon as the total passes ``cap``.
    """
    parts: list[bytes] = []
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > cap:
            raise too_large(url, cap)
        parts.append(chunk)
        if deadline is not None:
            deadline.check(url)
    return b"".join(parts)


def too_large(url: str, cap: int, *, file: bool = False) -> IndexUnavailable:
    """Over ``cap`` bytes: an index page, or with ``file`` a wheel or sdist downloaded whole (another hint)."""
    limit = f"{cap // (1024 * 1024)} MiB" if cap >= 1 << 20 else f"{cap} B"
    hint = Text("index.file-too-large.hint") if file else Text("index.page-too-large.hint")
    return IndexUnavailable(Text.of("index.page-too-large", url=url, limit=limit), hint=hint)


class TooManyFiles(ValueError):
    """A page's parser passed ``most`` entries, its bound (``MAX_PAGE_FILES``): ``too_many_files`` says it."""

    def __init__(self, most: int) -> None:
        super().__init__(f"more than {most} files")
        self.most = most


def too_many_files(url: str, most: int) -> IndexUnavailable:
    """The index page at ``url`` lists more than ``most`` files."""
    return IndexUnavailable(
        Text.of("index.page-too-many-files", url=url, limit=f"{most:,}"),
        hint=Text("index.page-too-large.hint"),
    )
