"""Large pages parsed in the helper process: the same files and the same stored form as a parse here, and any
failure of the helper (dead, silent, junk, a page it cannot read) leaves the page to the parent, never changes
an answer or an error."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from typing import TYPE_CHECKING, TypeVar

import pytest

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.fitting import names_filter, tag_filter
from cudaresolve.index.http_cache import CachedResponse, HttpCache
from cudaresolve.index.page_worker import PageWorker
from cudaresolve.index.parsed_cache import WORKER_CHARS, parse_files, parsed_path
from cudaresolve.index.simple import parse_body
from cudaresolve.target.environment import interpreter_tags

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

T = TypeVar("T")

TAGS = interpreter_tags("3.11", "linux_x86_64", "2.28")
PLATFORMS = (
    "cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64", "cp311-cp311-musllinux_1_2_x86_64",
    "cp312-cp312-manylinux_2_28_aarch64", "cp310-cp310-win_amd64", "py3-none-any", "cp311-abi3-macosx_11_0_arm64",
)  # fmt: skip


def _entry(name: str, version: str, platform: str, n: int) -> dict[str, object]:
    digest = hashlib.sha256(f"{name}{version}{platform}".encode()).hexdigest()
    filename = f"{name}-{version}-{platform}.whl" if platform else f"{name}-{version}.tar.gz"
    url = f"https://files.example.org/packages/{digest[:2]}/{filename}" if n % 7 else f"../../files/{filename}"
    return {
        "core-metadata": {"sha256": digest} if n % 3 else False, "filename": filename, "hashes": {"sha256": digest},
        "requires-python": ">=3.9" if n % 2 else None, "size": 1000 + n, "upload-time": "2025-01-02T03:04:05.123456Z",
        "url": url, "yanked": "broken" if n % 11 == 0 else False,
    }  # fmt: skip


def json_page(name: str = "big", versions: int = 160) -> str:
    files = [
        _entry(name, f"1.{v}.0", platform, n)
        for v in range(versions)
        for n, platform in enumerate((*PLATFORMS, ""), start=v)
    ]
    body = json.dumps({"meta": {"api-version": "1.1"}, "name": name, "files": files})
    assert len(body) > WORKER_CHARS  # large enough to be sent to the worker
    return body


def html_page(name: str = "big", versions: int = 400) -> str:
    anchors = "\n".join(
        f'<a href="/whl/{name}-1.{v}.0%2Bcu128-{p}.whl#sha256={"0" * 64}" data-requires-python="&gt;=3.9">'
        f"{name}-1.{v}.0+cu128-{p}.whl</a><br/>"
        for v in range(versions)
        for p in PLATFORMS
    )
    body = f"<!DOCTYPE html><html><body>\n{anchors}\n</body></html>"
    assert len(body) > WORKER_CHARS
    return body


def page(body: str, *, content_type: str = "application/vnd.pypi.simple.v1+json", name: str = "big") -> CachedResponse:
    return CachedResponse(
        url=f"https://index.example.org/simple/{name}/", status=200, body=body, content_type=content_type,
        fetched_at=1.0,
    )


def served(worker: PageWorker, cache: HttpCache, entry: CachedResponse, keep: object) -> list[object]:
    """``parse_files`` through ``worker`` once it has taken a page: the first pages go to the parent while the
    child starts (``PageWorker.parse``)."""
    answered: list[bytes | None] = []
    ask = worker.parse

    def spy(request: dict[str, object], body: str, *, per_byte: int) -> bytes | None:
        answered.append(ask(request, body, per_byte=per_byte))
        return answered[-1]

    worker.parse = spy  # type: ignore[method-assign]
    deadline = time.monotonic() + 60
    while True:
        parsed_path(cache, entry.url).unlink(missing_ok=True)
        files = parse_files(cache, entry, keep, worker=worker)  # type: ignore[arg-type]
        if answered and answered[-1] is not None:
            return files
        assert time.monotonic() < deadline, "the page worker never answered"
        time.sleep(0.05)


@pytest.mark.parametrize(
    ("body", "content_type", "filtered"),
    [
        (json_page(), "application/vnd.pypi.simple.v1+json", True),
        (json_page(), "application/vnd.pypi.simple.v1+json", False),
        (html_page(), "text/html", True),
    ],
    ids=["json-tags", "json-all", "html-tags"],
)
def test_the_worker_gives_the_files_and_the_stored_form_a_parse_here_gives(
    tmp_path: Path, body: str, content_type: str, filtered: bool
) -> None:
    keep = tag_filter(TAGS) if filtered else None
    entry = page(body, content_type=content_type)
    here = HttpCache(tmp_path / "here")
    expected = parse_files(here, entry, keep)
    assert expected
    assert len(expected) < len(parse_body(body, content_type, entry.url)) or not filtered
    there = HttpCache(tmp_path / "there")
    with PageWorker() as worker:
        assert served(worker, there, entry, keep) == expected
    assert parsed_path(there, entry.url).read_bytes() == parsed_path(here, entry.url).read_bytes()
    assert parse_files(there, entry, keep) == expected  # and a later run reads what the worker stored


def test_a_page_the_worker_cannot_read_fails_as_it_fails_here(tmp_path: Path) -> None:
    entry = page(json_page()[:-1])  # cut short: not JSON
    with pytest.raises(IndexUnavailable) as here:
        parse_files(HttpCache(tmp_path / "here"), entry, None)
    with PageWorker() as worker:
        started = HttpCache(tmp_path / "there")
        served(worker, started, page(json_page("other"), name="other"), None)  # up and answering
        with pytest.raises(IndexUnavailable) as there:
            parse_files(started, entry, None, worker=worker)
        assert worker.parse({}, "", per_byte=0) is None  # a refusal is not a failure: the worker still serves
    assert there.value.text == here.value.text


def test_a_small_page_or_a_filter_it_cannot_send_stays_here(tmp_path: Path) -> None:
    class Refuses(PageWorker):
        def parse(self, request: dict[str, object], body: str, *, per_byte: int) -> bytes | None:
            raise AssertionError("not to be sent")

    cache = HttpCache(tmp_path)
    small = page(json.dumps({"meta": {"api-version": "1.0"}, "files": [_entry("small", "1.0", PLATFORMS[0], 1)]}))
    assert parse_files(cache, small, None, worker=Refuses(command=["false"]))
    def by_name(name: str) -> bool:
        return name.startswith("big-1.1")

    by_name.key = "by-name"  # type: ignore[attr-defined]  # a stored form, but no tags to send
    big = page(json_page())
    assert parse_files(cache, big, by_name, worker=Refuses(command=["false"])) == parse_body(big.body, big.content_type,
                                                                                      big.url, by_name)  # fmt: skip


def _deep(frames: int, call: Callable[[], T]) -> T:
    return call() if frames == 0 else _deep(frames - 1, call)


def _outcome(call: Callable[[], list[object]]) -> object:
    try:
        return call()
    except IndexUnavailable as e:
        return e.text


def test_a_page_nested_too_deep_for_the_caller_fails_as_it_fails_here(tmp_path: Path) -> None:
    # nested JSON counts against the recursion limit from the caller's depth: the shallow child must not
    # accept a page the caller, deep in the solver, refuses (nor store its parsed form)
    nest = sys.getrecursionlimit() - 60
    entry = page(json_page()[:-1] + ', "extra": ' + "[" * nest + "]" * nest + "}")
    with PageWorker() as worker:
        served(worker, HttpCache(tmp_path / "up"), page(json_page("other"), name="other"), None)
        for frames in (0, 20, 60):
            here, there = HttpCache(tmp_path / f"here{frames}"), HttpCache(tmp_path / f"there{frames}")
            expected = _deep(frames, lambda: _outcome(lambda: parse_files(here, entry, None)))  # noqa: B023
            got = _deep(frames, lambda: _outcome(lambda: parse_files(there, entry, None, worker=worker)))  # noqa: B023
            assert got == expected
            assert parsed_path(there, entry.url).is_file() == parsed_path(here, entry.url).is_file()
        assert not isinstance(got, list)  # the deepest caller could not parse it


def test_a_surrogate_pair_comes_back_as_two_code_points(tmp_path: Path) -> None:
    # a body decoded with an odd charset may hold a surrogate pair as two code points: parsed here, they stay two
    pair = "a\ud83d\ude00b"  # two code points, not one character
    entry = page(json_page().replace("https://files.example.org/packages/", f"https://files.example.org/{pair}/", 1))
    assert pair in entry.body
    expected = parse_files(HttpCache(tmp_path / "here"), entry, None)
    assert any(pair in f.url for f in expected)
    with PageWorker() as worker:
        assert served(worker, HttpCache(tmp_path / "there"), entry, None) == expected


def test_an_interrupted_request_stops_the_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C between a request and its reply: the reply still in the pipe must never answer the next page
    import cudaresolve.index.page_worker as module

    first, second, keep = page(json_page("alpha"), name="alpha"), page(json_page("beta"), name="beta"), None
    with PageWorker(timeout=20) as worker:
        served(worker, HttpCache(tmp_path / "up"), page(json_page("other"), name="other"), keep)
        read = module.read_exactly

        def interrupted(*args: object) -> bytes:
            monkeypatch.setattr(module, "read_exactly", read)
            raise KeyboardInterrupt

        monkeypatch.setattr(module, "read_exactly", interrupted)
        with pytest.raises(KeyboardInterrupt):
            parse_files(HttpCache(tmp_path / "a"), first, keep, worker=worker)
        started = time.monotonic()
        assert parse_files(HttpCache(tmp_path / "b"), second, keep, worker=worker) == parse_files(
            HttpCache(tmp_path / "c"), second, keep
        )
        assert time.monotonic() - started < 10  # at once: not after a wait on a child still busy with the first
        assert worker.parse({}, "", per_byte=0) is None  # stopped for the run


_FRAMED = (
    "import sys, struct; o = sys.stdout.buffer; o.write(b'R'); o.flush();"
    " a, b = struct.unpack('<II', sys.stdin.buffer.read(8)); sys.stdin.buffer.read(a); sys.stdin.buffer.read(b);"
    " o.write({reply}); o.flush(); sys.stdin.buffer.read()"
)


@pytest.mark.parametrize(
    "script",
    [
        "pass",  # ends at once
        "import sys, time; sys.stdout.buffer.write(b'R'); sys.stdout.flush(); time.sleep(30)",  # never answers
        "import sys; sys.stdout.buffer.write(b'R'); sys.stdout.flush(); sys.stdin.buffer.read(8);"
        " sys.stdout.buffer.write(b'\\x03\\x00\\x00\\x00[1]'); sys.stdout.flush()",  # junk rows
        "import sys; sys.stdout.buffer.write(b'X'); sys.stdout.flush()",  # not the ready sign
        _FRAMED.format(reply="struct.pack('<I', 3) + b'xyz'"),  # not JSON
        _FRAMED.format(reply="struct.pack('<I', 100000) + b'[' * 100000"),  # nested past any limit
        _FRAMED.format(reply="struct.pack('<I', 2**32 - 1) + b' ' * 65536"),  # a reply of 4 GiB announced
    ],
    ids=["dead", "silent", "junk", "garbled", "not-json", "deep", "huge"],
)
def test_a_failing_worker_leaves_every_page_to_the_parent(tmp_path: Path, script: str) -> None:
    entry, keep = page(json_page()), tag_filter(TAGS)
    expected = parse_body(entry.body, entry.content_type, entry.url, keep)
    worker = PageWorker(command=[sys.executable, "-c", script], timeout=0.5)
    started = time.monotonic()
    with worker:
        for _ in range(4):
            parsed_path(HttpCache(tmp_path), entry.url).unlink(missing_ok=True)
            assert parse_files(HttpCache(tmp_path), entry, keep, worker=worker) == expected
            time.sleep(0.2)
        assert worker.parse({}, "", per_byte=0) is None
    assert time.monotonic() - started < 10  # one wait of ``timeout`` at most, then never asked again


def test_closing_ends_the_child(tmp_path: Path) -> None:
    worker = PageWorker()
    served(worker, HttpCache(tmp_path), page(json_page()), None)
    proc = worker._proc  # the child itself, to see it end
    assert proc is not None and proc.poll() is None
    worker.close()
    assert proc.poll() is not None
    assert worker.parse({}, "", per_byte=0) is None  # closed: nothing more is sent


def test_a_child_that_ignores_the_end_of_its_input_is_killed() -> None:
    worker = PageWorker(command=[sys.executable, "-c", "import time; time.sleep(60)"])
    assert worker.parse({}, "", per_byte=0) is None  # started, not ready
    proc = worker._proc
    assert proc is not None
    started = time.monotonic()
    worker.close()
    assert proc.poll() is not None and time.monotonic() - started < 10


def test_the_filter_sent_is_the_filter_the_form_is_keyed_by() -> None:
    sent = names_filter(tag_filter(TAGS).tags)  # type: ignore[attr-defined]
    here = tag_filter(TAGS)
    assert sent.key == here.key  # type: ignore[attr-defined]
    names = [f["filename"] for f in json.loads(json_page())["files"]]
    assert [sent(n) for n in names] == [here(n) for n in names]
    assert any(sent(n) for n in names) and not all(sent(n) for n in names)


def test_the_child_imports_what_the_parent_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a project folder holding a module of a standard name (here ``html``, which reads the PyTorch index's pages)
    # must not be run by the child when the parent does not run it
    project = tmp_path / "project"
    (project / "html").mkdir(parents=True)
    marker = tmp_path / "ran"
    (project / "html" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\nunescape = str\n")
    monkeypatch.chdir(project)
    entry = page(html_page(), content_type="text/html")
    expected = parse_files(HttpCache(tmp_path / "here"), entry, None)
    with PageWorker() as worker:
        assert served(worker, HttpCache(tmp_path / "there"), entry, None) == expected
    assert not marker.exists()


def test_a_relative_cache_gets_the_form_where_the_parent_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    entry = page(json_page())
    with PageWorker() as worker:
        served(worker, HttpCache("warm"), page(json_page("other"), name="other"), None)  # started from a/
        monkeypatch.chdir(tmp_path / "b")
        expected = parse_files(HttpCache(tmp_path / "here"), entry, None)
        assert served(worker, HttpCache("cache"), entry, None) == expected
    assert parsed_path(HttpCache(tmp_path / "b" / "cache"), entry.url).is_file()
    assert not (tmp_path / "a" / "cache").exists()
