"""The on-disk HTTP cache: location, round trip, atomic writes, corrupt entries, unwritable roots."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from cudaresolve.index.http_cache import APART_BYTES, CachedResponse, HttpCache, default_cache_dir, entry_bytes

URL = "https://download.pytorch.org/whl/cu118/torch/"


def entry(url: str = URL, **overrides: object) -> CachedResponse:
    fields: dict[str, object] = {
        "url": url,
        "status": 200,
        "body": "<a href='torch-2.7.1+cu118-cp311-cp311-linux_x86_64.whl'>t</a>",
        "content_type": "text/html",
        "etag": '"abc"',
        "last_modified": "Sat, 21 Nov 2026 10:00:00 GMT",
        "fetched_at": 1000.0,
    }
    fields.update(overrides)
    return CachedResponse(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("env", "platform", "expected"),
    [
        ({"CUDARESOLVE_CACHE_DIR": "/tmp/cr", "XDG_CACHE_HOME": "/x"}, "linux", Path("/tmp/cr")),
        ({"XDG_CACHE_HOME": "/xdg"}, "linux", Path("/xdg/cudaresolve")),
        ({}, "linux", Path.home() / ".cache" / "cudaresolve"),
        ({"XDG_CACHE_HOME": ""}, "linux", Path.home() / ".cache" / "cudaresolve"),
        ({"LOCALAPPDATA": "C:/Users/u/AppData/Local"}, "win32", Path("C:/Users/u/AppData/Local/cudaresolve/Cache")),
        ({}, "darwin", Path.home() / "Library" / "Caches" / "cudaresolve"),
    ],
)
def test_default_cache_dir(env: dict[str, str], platform: str, expected: Path) -> None:
    assert default_cache_dir(env, platform=platform) == expected


def test_round_trip_and_layout(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    stored = entry(final_url="https://cdn.example.org/whl/cu118/torch/")
    cache.store(stored)
    assert cache.get(URL) == stored
    assert stored.page_url == "https://cdn.example.org/whl/cu118/torch/"
    path = cache.path_for(URL)
    digest = hashlib.sha256(URL.encode()).hexdigest()
    assert path == tmp_path / "http-v3" / f"{digest}.entry"
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left behind
    assert cache.get("https://download.pytorch.org/whl/cu128/torch/") is None


def test_store_replaces_an_older_entry(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    cache.store(entry())
    cache.store(entry(etag='"def"', fetched_at=2000.0))
    got = cache.get(URL)
    assert got is not None
    assert (got.etag, got.fetched_at) == ('"def"', 2000.0)


def test_conditional_headers_and_age() -> None:
    assert entry().conditional_headers() == {
        "If-None-Match": '"abc"',
        "If-Modified-Since": "Sat, 21 Nov 2026 10:00:00 GMT",
    }
    assert entry(etag=None, last_modified=None).conditional_headers() == {}
    assert entry().age(1500.0) == 500.0
    assert entry().age(10.0) == 0.0
    assert entry().page_url == URL


@pytest.mark.parametrize(
    "content",
    [
        b"not json at all",
        b"[]\n",
        b'{"format": 1}\n',
        entry_bytes({**entry().to_dict(), "format": 99}),
        entry_bytes({**entry().to_dict(), "status": 500}),
        entry_bytes({**entry().to_dict(), "status": True}),
        entry_bytes({**entry().to_dict(), "fetched_at": "yesterday"}),
        entry_bytes({**entry().to_dict(), "etag": 5}),
        entry_bytes({**entry().to_dict(), "url": "https://elsewhere.example.org/"}),
        entry_bytes(entry().to_dict())[:-1],  # the body cut short
        entry_bytes(entry().to_dict()) + b"!",  # grown
        entry_bytes(entry().to_dict()).replace(b"\n", b" ", 1),  # no head line
        entry_bytes(entry().to_dict()).replace(b'"apart": false', b'"apart": 0'),
        entry_bytes(entry().to_dict()).replace(b'"size": ', b'"size": 1', 1),
        entry_bytes(entry().to_dict()).replace(b"torch-2.7.1", b"torch-2.7.2"),  # the same size, another body
    ],
)
def test_corrupt_entries_read_as_missing_and_are_replaced(tmp_path: Path, content: bytes) -> None:
    cache = HttpCache(tmp_path)
    path = cache.path_for(URL)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    assert cache.get(URL) is None
    cache.store(entry())
    assert cache.get(URL) == entry()


def test_undecodable_bytes_read_as_missing(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    path = cache.path_for(URL)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert cache.get(URL) is None


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse"])
def test_an_entry_that_is_no_bounded_regular_file_is_missing_at_once(tmp_path: Path, kind: str) -> None:
    """Found by the hostile-index hunt: a cache entry made a FIFO hung lock for ever in open(), and one linked to
    /dev/zero, or a sparse 8 GB file, was read whole into memory (an internal MemoryError). Both kinds of cache:
    the HTTP entries, and the sealed ones (parsed pages, a lock's kept verdict)."""
    from cudaresolve.core.files import read_sealed, write_sealed

    cache = HttpCache(tmp_path)
    cache.store(entry())
    sealed = tmp_path / "sealed.json"
    write_sealed(sealed, json.dumps({"a": 1}))
    assert read_sealed(sealed) == {"a": 1}
    for path in (cache.path_for(URL), sealed):
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "dev-zero":
            path.symlink_to("/dev/zero")
        else:
            with open(path, "wb") as handle:
                handle.truncate(8 * 1024**3)
    assert cache.get(URL) is None  # returns at once: a blocking open or a whole read would hang or fail here
    assert read_sealed(sealed, limit=1024 * 1024) is None


def test_unwritable_root_is_skipped_silently(tmp_path: Path) -> None:
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x", encoding="utf-8")
    cache = HttpCache(blocker)
    cache.store(entry())  # must not raise
    assert cache.get(URL) is None


def test_a_404_entry_round_trips(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    absent = entry(status=404, body="", content_type=None, etag=None, last_modified=None)
    cache.store(absent)
    assert cache.get(URL) == absent


def test_a_failed_write_keeps_the_old_entry_and_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = HttpCache(tmp_path)
    old = entry()
    cache.store(old)

    def full_disk(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    cache.store(entry(body="<html>newer</html>"))  # must not raise
    monkeypatch.undo()
    assert cache.get(URL) == old
    assert [p.name for p in cache.path_for(URL).parent.iterdir()] == [cache.path_for(URL).name]


def _big(tag: str) -> str:
    """A page body over ``APART_BYTES``: stored in a file of its own."""
    line = f"<a href='torch-2.7.1+cu118-cp311-cp311-linux_x86_64.whl#{tag}'>t</a>\n"
    return line * (APART_BYTES // len(line) + 2)


def test_a_large_body_is_stored_apart_once_and_read_only_when_asked(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    stored = entry(body=_big("a"))
    cache.store(stored)
    head = json.loads(cache.path_for(URL).read_bytes().partition(b"\n")[0])
    assert "body" not in head and len(cache.path_for(URL).read_bytes()) < 1024  # the entry stays small
    body_file = cache.path_for(URL).with_suffix(".body")
    assert body_file.read_bytes() == stored.body.encode() and head["size"] == len(stored.body.encode())
    assert head["sha256"] == hashlib.sha256(stored.body.encode()).hexdigest()
    assert cache.get(URL) == stored  # read whole by default
    light = cache.get(URL, body=False)
    assert light is not None and light.apart and light.body == "" and light.body_sha256 == head["sha256"]
    assert cache.with_body(light) == stored
    written = body_file.stat().st_mtime_ns
    cache.store(replace(stored, fetched_at=2000.0))  # fetched again, unchanged: only the entry is written
    cache.store(light.refreshed({"ETag": '"abc"'}, 3000.0))  # a 304 on an entry whose body was not read
    assert body_file.stat().st_mtime_ns == written
    assert cache.get(URL) == replace(stored, fetched_at=3000.0, date=None, age_header=None)
    cache.store(entry(body=_big("b")))  # the page changed: its body file with it
    assert cache.get(URL) == entry(body=_big("b")) and cache.with_body(light) is None  # the old entry: gone
    cache.store(entry())  # small again: back in the entry, and the body file removed
    assert not body_file.exists() and cache.get(URL) == entry()


def test_a_small_body_follows_its_head_and_is_read_only_when_asked(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    stored = entry()
    cache.store(stored)
    raw = cache.path_for(URL).read_bytes()
    line, _, body = raw.partition(b"\n")
    head = json.loads(line)
    assert body == stored.body.encode() and "body" not in head and (head["size"], head["apart"]) == (len(body), False)
    assert not cache.path_for(URL).with_suffix(".body").exists()
    light = cache.get(URL, body=False)
    assert light is not None and light.apart and light.body == "" and light.body_sha256 == head["sha256"]
    assert light.apart_size == len(body) and cache.with_body(light) == stored
    cache.store(light.refreshed({"ETag": '"new"'}, 3000.0))  # a 304 on an entry whose body was not read
    assert cache.get(URL) == replace(stored, etag='"new"', fetched_at=3000.0, date=None, age_header=None)
    light = cache.get(URL, body=False)
    cache.store(entry(body="<a href='torch-2.7.2+cu118-cp311-cp311-linux_x86_64.whl'>t</a>"))  # replaced since
    assert light is not None and cache.with_body(light) is None  # the body there is not the one it names
    cache.store(light.refreshed({}, 4000.0))  # nor is it carried into a 304's entry: what is there stays
    assert cache.get(URL) == entry(body="<a href='torch-2.7.2+cu118-cp311-cp311-linux_x86_64.whl'>t</a>")
    cache.path_for(URL).write_bytes(raw[:-1])  # cut short: looked at, not read, it does not fit
    assert cache.get(URL, body=False) is None and cache.get(URL) is None


@pytest.mark.parametrize("damage", ["removed", "cut", "same-size", "folder"])
def test_an_entry_whose_body_no_longer_fits_reads_as_missing_and_is_written_again(
    tmp_path: Path, damage: str
) -> None:
    cache = HttpCache(tmp_path)
    stored = entry(body=_big("a"))
    cache.store(stored)
    light = cache.get(URL, body=False)
    assert light is not None
    body_file = cache.path_for(URL).with_suffix(".body")
    body_file.unlink()
    if damage == "cut":
        body_file.write_text(_big("a")[:1000])
    elif damage == "same-size":
        body_file.write_text(_big("z"))  # another body of the same length
    elif damage == "folder":
        body_file.mkdir()
    if damage != "same-size":
        assert cache.get(URL, body=False) is None  # looked at, not read: it does not fit
    assert cache.get(URL) is None and cache.with_body(light) is None
    if damage == "folder":
        body_file.rmdir()
    cache.store(stored)  # the same page fetched again mends it
    assert cache.get(URL) == stored
