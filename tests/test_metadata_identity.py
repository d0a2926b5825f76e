"""A release's core metadata is the one its index announces: hashed as served, and cached with the file's hash.

Found by the hostile-index hunt:
- the PEP 658 hash was checked on the decoded text re-encoded as UTF-8, so a ``.metadata`` file with a Latin-1
  byte, or served with another charset, failed a hash it matched, and the release was passed over;
- the metadata cache was keyed by the URL alone, so a wheel replaced at the same URL (a private index may allow
  it) was locked with its new hash and its old dependencies.
Served with respx, as the index would serve them.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import httpx
import pytest
import respx

from cudaresolve.index.client import IndexClient
from cudaresolve.index.http_cache import HttpCache
from cudaresolve.index.metadata import fetch_core_metadata
from cudaresolve.index.simple import wheel_file

if TYPE_CHECKING:
    from pathlib import Path

URL = "https://files.example.org/pkg/demo-1.0-py3-none-any.whl"


def _metadata(requires: str, extra: bytes = b"") -> bytes:
    return b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n" + extra + f"Requires-Dist: {requires}\n".encode()


@pytest.mark.parametrize(
    ("body", "content_type"),
    [(_metadata("six", b"Author: Jos\xe9\n"), "text/plain"),  # a Latin-1 byte, as old wheels have
     (_metadata("six", "Author: José\n".encode()), "text/plain; charset=iso-8859-1")],
    ids=["latin-1-byte", "charset-header"],
)  # fmt: skip
def test_the_metadata_hash_is_of_the_bytes_as_served(body: bytes, content_type: str) -> None:
    listed = wheel_file("demo-1.0-py3-none-any.whl", URL, core_metadata=True,
                        core_metadata_sha256=hashlib.sha256(body).hexdigest())  # fmt: skip
    assert listed is not None
    with respx.mock() as router, httpx.Client() as http:
        router.get(f"{URL}.metadata").mock(
            return_value=httpx.Response(200, content=body, headers={"Content-Type": content_type})
        )
        meta = fetch_core_metadata(IndexClient(http), None, listed)
    assert [str(r) for r in meta.requires_dist] == ["six"]


def test_a_file_replaced_at_the_same_url_is_read_again_not_taken_from_the_cache(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    old, new = _metadata("six"), _metadata("idna")
    for body, wheel_hash in ((old, "a" * 64), (new, "b" * 64)):  # the same URL, another file on the page
        listed = wheel_file("demo-1.0-py3-none-any.whl", URL, sha256=wheel_hash, core_metadata=True,
                            core_metadata_sha256=hashlib.sha256(body).hexdigest())  # fmt: skip
        assert listed is not None
        with respx.mock() as router, httpx.Client() as http:
            router.get(f"{URL}.metadata").mock(return_value=httpx.Response(200, content=body))
            meta = fetch_core_metadata(IndexClient(http), cache, listed)
        assert [str(r) for r in meta.requires_dist] == (["six"] if body is old else ["idna"])


@pytest.mark.parametrize(("requires_python", "size"), [(">=3.6.*", -5), ("garbage", 10**30), (">=3.8", 621)])
def test_an_index_files_odd_fields_neither_drop_it_nor_reach_the_lock(requires_python: str, size: int) -> None:
    """Found by the hostile-index hunt: a page's ``requires-python`` that is no specifier dropped the file (pip
    keeps it): foo 1.0 was locked instead of 2.0, with no word; and its ``size`` went into the lock as given, so a
    negative one made cudaresolve's own install refuse the lock, and 10**30 made it unreadable to uv."""
    from cudaresolve.index.fitting import file_rank
    from cudaresolve.resolve.solve import _locked
    from cudaresolve.resolve.source import Artifact, IndexRelease
    from cudaresolve.target.environment import interpreter_tags

    listed = wheel_file("demo-1.0-py3-none-any.whl", URL, requires_python=requires_python, size=size)
    assert listed is not None
    assert file_rank(listed, interpreter_tags("3.11", "linux_x86_64", "2.28"), "3.11.0") is not None
    release = IndexRelease(name="demo", version=listed.version, index_url="https://pypi.org/simple",
                           artifact=Artifact(filename=listed.filename, url=listed.url, sha256="a" * 64,
                                             requires_python=listed.requires_python, size=listed.size))  # fmt: skip
    locked = _locked("demo", "1.0", "https://pypi.org/simple", release)
    valid = requires_python == ">=3.8"
    assert (locked.requires_python, locked.size) == ((">=3.8", 621) if valid else (None, None))
