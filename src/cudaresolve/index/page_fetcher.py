"""Index pages fetched into the cache by a helper process. Does I/O: one child process, its pipes and sockets.

A cold lock's pages are most of what its process reads: 28 MB for the 8-package project on PyPI, each 16 KB TLS
record read by a thread that must win the interpreter lock back from the threads parsing and solving. With its
pages already in the cache the same lock took 1.17 s instead of 2.00 s. ``PageFetcher`` moves that reading to a
second process: the child GETs a page as ``IndexClient`` would (the same headers, timeouts, size cap and network
deadline, no redirect followed), parses it (``parsed_cache.parse_files``, which stores the parsed form) and only
then stores the response in the cache, so junk is never cached; the parent, told the page is stored, reads its
head and parsed form from the cache as it reads a warm run's.

Only a page with no cache entry (a conditional request stays the parent's), with the file filter the parent reads
by (``fitting.tag_filter``'s) and no credentials in its URL, in a run with a network deadline, from a host not down
for the parent (``retries.Hosts``), goes to the child, which parses only what the parent could (``parsed_cache``'s
bound on nesting). A cold lock starts the child as it starts (``lock.network.helper_ahead``), so that its first
pages, the requested projects', are the child's too. Whatever the child does not take (a redirect, any status but
200, 404 and 410, a page it cannot parse, a network error) is left to the parent, which fetches the page as it
always did, and that host is the parent's for the rest of the run; a child that does not answer in time, or fails,
is killed, so that nothing it still does lands in the cache, and every page is the parent's. The child only moves
work, with two exceptions that change nothing the parent would conclude: when it could not connect to a host the
parent has not heard from, it says why, in the words of ``retries.transient``, and the parent takes that host as
down with that error (``retries.unreached``), as its own failed connect would have made it, rather than wait on a
connect of its own (an unreachable index must not cost a run two connect timeouts); when a body passed the cap,
it says so, and the parent raises what its own read would have (``limits.too_large``) rather than read another.

Frames, both ways: ``<I`` then that many bytes of JSON. A request: ``id``, ``url``, ``headers``, ``timeout``,
``connect``, ``rest`` (seconds left of the run's network deadline), ``cap``, ``cache`` (the cache's folder),
``tags`` (the file filter's tags, or null: all files) and ``kept`` (that filter's key, which the child's must
match); a reply: ``id``, ``ok`` and, when the child could not connect, ``unreached`` (why), or, when the body
passed the cap, ``too_large``. The child serves requests on threads of its own, reads only its stdin, ignores
SIGINT and ends at the end of its input.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import threading
import time
from typing import IO, TYPE_CHECKING, Any, Final

from cudaresolve.index.pipes import end_child, python_command, read_all, write_all

if TYPE_CHECKING:
    import subprocess
    from collections.abc import Sequence
    from types import TracebackType

    from cudaresolve.index.http_cache import CachedResponse
    from cudaresolve.index.policy import IndexPolicy
    from cudaresolve.index.retries import Hosts
    from cudaresolve.index.simple import Keep

__all__ = ["PageFetcher", "fetch_into_cache", "serve"]

_FRAME: Final = struct.Struct("<I")
_READY: Final = b"R"
#: Bounds, not facts: the largest frame either side sends; the child's threads; how long past the network
#: deadline, or the read timeout when sooner, the parent waits for a reply (then the child is stopped, and what is
#: left of the deadline is the parent's own); how long a request may take to be written; how long the child, its
#: input ended, lets the answers under way finish; how much of a reply's reason the parent reads.
_MAX_FRAME: Final = 1024 * 1024
_THREADS: Final = 16
_SLACK_SECONDS: Final = 5.0
_WRITE_SECONDS: Final = 5.0
_END_SECONDS: Final = 0.5
_MAX_REASON: Final = 1000


class _Slot:
    """One request's answer: ``ok``, the page stored; ``unreached``, why the child could not connect to its host;
    ``too_large``, its body passed the cap."""

    __slots__ = ("done", "ok", "too_large", "unreached")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.ok = self.too_large = False
        self.unreached: str | None = None


class PageFetcher:
    """The parent's end of the helper process; threads share it, each waiting for its own page. A context
    manager: leaving it ends the child."""

    def __init__(self, *, command: Sequence[str] | None = None, start: bool = False) -> None:
        """``command``: what starts the child (default: this interpreter running ``serve``); ``start``: start it
        now (a run that will surely fetch pages), else on the first ``fetch``."""
        self._command = list(command) if command is not None else _serve_command()
        self._lock = threading.Lock()  # the process, the next id, the waiting slots, writes
        self._proc: subprocess.Popen[bytes] | None = None
        self._ready = threading.Event()
        self._broken = False
        self._next = 0
        self._waiting: dict[int, _Slot] = {}
        self._failed_hosts: set[str] = set()
        self._tag_lists: dict[frozenset[str], list[str]] = {}  # a filter's tags as sent, sorted once
        self._reader: threading.Thread | None = None
        if start:
            with self._lock:
                self._start()

    def __enter__(self) -> PageFetcher:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def entry(self, url: str, *, policy: IndexPolicy, keep: Keep | None, hosts: Hosts) -> CachedResponse | None:
        """The head of ``url``'s cache entry once the child fetched the page into ``policy``'s cache, with the
        parsed form ``keep`` reads (``fitting.tag_filter``'s, or None: every file); None when the caller is to
        fetch the page itself (module docstring). ``hosts``: what the caller learnt of the hosts this run."""
        from cudaresolve import __version__
        from cudaresolve.core.urls import strip_credentials
        from cudaresolve.index.limits import busy, too_large
        from cudaresolve.index.parsed_cache import may_send_pages
        from cudaresolve.index.retries import host_of, unreached
        from cudaresolve.index.simple import ACCEPT

        cache, deadline, tags = policy.cache, policy.deadline, getattr(keep, "tags", None)
        if policy.offline or cache is None or deadline is None:
            return None  # no run deadline to bound the wait by
        if keep is not None and not isinstance(tags, frozenset):
            return None  # a filter it cannot be sent
        host = host_of(url)
        if host in hosts.down or host in self._failed_hosts:
            return None  # a host down for this client, or one the child declined, is its own
        rest = deadline.remaining()
        if strip_credentials(url) != url or rest <= 0 or not may_send_pages():
            return None  # credentials stay here; a stack too deep to parse what the child parses
        request = {
            "url": url, "headers": {"Accept": ACCEPT, "User-Agent": f"cudaresolve/{__version__}"},
            "timeout": policy.timeout, "connect": policy.connect_timeout, "rest": rest, "cap": policy.max_page_bytes,
            "cache": os.path.abspath(cache.root), "tags": self._tag_list(tags) if tags is not None else None,
            "kept": getattr(keep, "key", None),
        }  # fmt: skip
        since = time.time()
        with busy(deadline):  # the run's network time, as the caller's own request would be
            answer = self.fetch(request, wait=min(rest, policy.timeout) + _SLACK_SECONDS)
        if answer is not None and answer.unreached is not None and host not in hosts.answered:
            raise unreached(url, answer.unreached, hosts)  # what the caller's own failed connect would raise
        if answer is not None and answer.too_large:
            raise too_large(url, policy.max_page_bytes)  # as the caller's own read would: not read a second time
        entry = cache.get(url, body=False) if answer is not None and answer.ok else None
        if entry is None or entry.fetched_at < since or entry.status not in (200, 404):
            if answer is not None:  # declined, or stored something else: this host is the caller's from now on
                self._failed_hosts.add(host)
            return None
        return entry

    def _tag_list(self, tags: frozenset[str]) -> list[str]:
        found = self._tag_lists.get(tags)
        if found is None:
            found = self._tag_lists[tags] = sorted(tags)
        return found

    def fetch(self, request: dict[str, Any], *, wait: float) -> _Slot | None:
        """The child's answer to ``request`` (``ok`` once it fetched and stored the page) within ``wait`` seconds;
        None, not asked, while it is not ready (started now on the first call) and once it failed."""
        with self._lock:
            if self._proc is None and not self._broken:
                self._start()
                return None
            proc = self._proc
            if self._broken or proc is None or proc.stdin is None or not self._ready.is_set():
                return None
            ident, self._next = self._next, self._next + 1
            slot = self._waiting[ident] = _Slot()
            data = json.dumps({**request, "id": ident}).encode("utf-8")
            try:
                write_all(proc.stdin, _FRAME.pack(len(data)) + data, time.monotonic() + _WRITE_SECONDS)
            except (OSError, ValueError, TimeoutError):
                self._fail_locked()
                return None
            except BaseException:  # Ctrl-C half way through a frame: the child could not read another
                self._fail_locked()
                raise
        if not slot.done.wait(wait):  # a child that keeps no time: every page is left to its thread from now on
            with self._lock:
                self._fail_locked()
        return slot

    def _start(self) -> None:
        """The child and the thread that reads its replies; any failure to start them leaves every page here."""
        import subprocess

        try:
            self._proc = subprocess.Popen(
                self._command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
            )
            assert self._proc.stdin is not None and self._proc.stdout is not None
            os.set_blocking(self._proc.stdin.fileno(), False)  # a child that stops reading cannot hold a write
            self._reader = threading.Thread(
                target=self._read_replies, args=(self._proc.stdout,), name="page-fetcher", daemon=True
            )
            self._reader.start()
        except Exception:
            self._fail_locked()

    def _read_replies(self, stdout: IO[bytes]) -> None:
        """The replies, each handed to its waiting slot; at the end of the child's output, or anything wrong with
        it, the child is given up and every waiting page left to its thread."""
        try:
            if read_all(stdout, len(_READY)) != _READY:
                raise ValueError("the page fetcher did not start")
            self._ready.set()
            while True:
                (size,) = _FRAME.unpack(read_all(stdout, _FRAME.size))
                if size > _MAX_FRAME:
                    raise ValueError(f"a reply of {size} bytes")
                reply = json.loads(read_all(stdout, size))
                with self._lock:
                    ident = reply.get("id") if isinstance(reply, dict) else None
                    slot = self._waiting.pop(ident, None) if type(ident) is int else None
                if slot is not None:
                    slot.ok = reply.get("ok") is True
                    why = reply.get("unreached")
                    slot.unreached = why[:_MAX_REASON] if isinstance(why, str) and why and not slot.ok else None
                    slot.too_large = reply.get("too_large") is True and not slot.ok
                    slot.done.set()
        except (OSError, ValueError, TimeoutError, struct.error, RecursionError):
            with self._lock:
                self._fail_locked()

    def _fail_locked(self, *, kill: bool = True) -> None:
        """Given up for the run (the lock held): every page waited for left to its thread, and (``kill``) the child
        killed, so that nothing it still does lands in the cache after the caller fetched the page itself."""
        self._broken = True
        waiting, self._waiting = self._waiting, {}
        for slot in waiting.values():
            slot.done.set()
        if kill and self._proc is not None and self._proc.poll() is None:
            self._proc.kill()

    def close(self) -> None:
        """End the child (``pipes.end_child``: its input closed, then killed if it does not end at once); a page
        still waited for is left to its thread."""
        with self._lock:
            self._fail_locked(kill=False)
            proc, self._proc = self._proc, None
        if proc is not None:
            end_child(proc, reader=self._reader)


def _serve_command() -> list[str]:
    return python_command("from cudaresolve.index.page_fetcher import serve; serve()")


class _Until:
    """``index.limits.Deadline``'s ``remaining`` for a child: the seconds left until a monotonic time."""

    def __init__(self, end: float) -> None:
        self._end = end

    def remaining(self) -> float:
        return self._end - time.monotonic()


def fetch_into_cache(
    http: Any, request: dict[str, Any], *, end: float, filters: dict[str, Keep] | None = None
) -> bool:
    """GET ``request``'s page with ``http`` as ``IndexClient`` would, by ``end`` (``time.monotonic``), parse it and
    store its parsed form, then the response, in the cache; False, nothing stored, for anything the parent must see
    for itself. ``filters``: the file filters made for earlier requests, by key (the child's: each request carries
    the same tags, and a filter remembers its verdicts)."""
    import httpx

    from cudaresolve.index.fitting import names_filter
    from cudaresolve.index.http_cache import CachedResponse, HttpCache
    from cudaresolve.index.limits import page_text, read_body
    from cudaresolve.index.parsed_cache import store_parsed
    from cudaresolve.index.transport import stream_within

    tags = request["tags"]
    keep = filters.get(request["kept"]) if filters is not None and tags is not None else None
    if keep is None and tags is not None:
        keep = names_filter(frozenset(tags))
        if filters is not None and getattr(keep, "key", None) == request["kept"]:
            filters[request["kept"]] = keep
    if getattr(keep, "key", None) != request["kept"] or end <= time.monotonic():
        return False  # not the parsed form the parent reads; too late: its page to fetch
    url, cap = request["url"], request["cap"]
    timeout = httpx.Timeout(request["timeout"], connect=request["connect"])
    with stream_within(http, url, headers=request["headers"], timeout=timeout, deadline=_Until(end)) as response:
        status, body = response.status_code, ""
        if status in (404, 410):
            status = 404
        elif status != 200:
            return False
        else:  # over the cap: raises, as the parent's read does
            body = page_text(response, read_body(response, url=url, cap=cap, deadline=None))
        headers = response.headers
    entry = CachedResponse.from_headers(
        url=url, status=status, body=body, headers=headers, final_url=None, fetched_at=time.time()
    )
    cache = HttpCache(request["cache"])
    if status == 200:
        store_parsed(cache, entry, keep)  # junk raises here, and nothing is stored
    cache.store(entry)
    return True


def _failure(error: Exception, end: float) -> dict[str, Any]:
    """What of ``error`` the parent is told, for it to conclude what its own request would have, without a second
    one: ``unreached``, why the child could not connect to the page's host, in the words of ``retries.transient``
    (the deadline not passed: a host the parent has not heard from is then down for it, without a second wait);
    ``too_large``, the body passed the cap (not read a second time). Nothing for any other failure."""
    import httpx

    from cudaresolve.errors import IndexUnavailable
    from cudaresolve.index.retries import transient

    if isinstance(error, IndexUnavailable) and error.text.key == "index.page-too-large":
        return {"too_large": True}
    if not isinstance(error, httpx.HTTPError) or time.monotonic() >= end:
        return {}
    failure = transient(error)
    return {"unreached": failure.reason} if failure.connect else {}


def serve(threads: int = _THREADS) -> None:
    """The child's loop: each request on stdin answered on a thread of its own, until stdin ends; then the answers
    under way are given ``_END_SECONDS`` to finish (their files are written whole or not at all) and it exits."""
    import signal
    from concurrent.futures import ThreadPoolExecutor

    from cudaresolve.index.transport import TlsAhead, make_http_client

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    http = make_http_client(TlsAhead())  # the CA bundle loaded while the first request is awaited
    filters: dict[str, Keep] = {}
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    written = threading.Lock()
    busy = threading.Condition()
    active = [0]

    def answer(request: dict[str, Any], end: float) -> None:
        with busy:
            active[0] += 1
        failed: dict[str, Any] = {}
        try:
            ok = fetch_into_cache(http, request, end=end, filters=filters)
        except Exception as e:  # the parent fetches the page itself and says what is wrong with it, but for these
            ok, failed = False, _failure(e, end)
        try:
            said = {"id": request.get("id"), "ok": ok, **failed}
            reply = json.dumps(said).encode("utf-8")
            with written:
                stdout.write(_FRAME.pack(len(reply)) + reply)
                stdout.flush()
        except OSError:  # the parent stopped reading: it fetches what it still waits for itself
            pass
        finally:
            with busy:
                active[0] -= 1
                busy.notify_all()

    stdout.write(_READY)
    stdout.flush()
    pool = ThreadPoolExecutor(max_workers=threads)
    while True:
        head = stdin.read(_FRAME.size)
        if len(head) < _FRAME.size:
            break
        (size,) = _FRAME.unpack(head)
        data = stdin.read(size) if size <= _MAX_FRAME else b""
        if len(data) < size:
            break
        try:
            request = json.loads(data)
            end = time.monotonic() + float(request["rest"])  # the parent's deadline, from when it asked
        except (ValueError, TypeError, KeyError):
            break
        pool.submit(answer, request, end)
    pool.shutdown(wait=False, cancel_futures=True)
    with busy:  # answers not started are dropped: those under way finish, within a bound, their stores whole
        busy.wait_for(lambda: active[0] <= 0, timeout=_END_SECONDS)
    os._exit(0)
