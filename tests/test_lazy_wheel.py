"""METADATA read out of a remote wheel with range requests (indexes without PEP 658 files). respx, no network."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import httpx
import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_wheels import build_wheel

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.client import IndexClient
from cudaresolve.index.lazy_wheel import read_remote_metadata

if TYPE_CHECKING:
    from pathlib import Path

URL = "https://files.example.org/pkg/demo-1.0-py3-none-any.whl"


def _serve_ranges(router: respx.MockRouter, body: bytes, seen: list[str]) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        wanted = request.headers["Range"]
        seen.append(wanted)
        suffix = re.fullmatch(r"bytes=-(\d+)", wanted)
        if suffix:
            first, last = max(0, len(body) - int(suffix.group(1))), len(body) - 1
        else:
            a, b = re.fullmatch(r"bytes=(\d+)-(\d+)", wanted).groups()  # type: ignore[union-attr]
            first, last = int(a), min(int(b), len(body) - 1)
        headers = {"Content-Range": f"bytes {first}-{last}/{len(body)}"}
        return httpx.Response(206, content=body[first : last + 1], headers=headers)

    router.get(URL).mock(side_effect=answer)


def _wheel(tmp_path: Path, padding: int = 0) -> bytes:
    built = build_wheel(tmp_path, "demo", "1.0", "py3-none-any", requires=["numpy>=1.26", "idna; extra == 'x'"])
    data = (tmp_path / built.filename).read_bytes()
    return data if not padding else b"\0" * padding + data  # leading junk: offsets shift, zip still reads


def test_metadata_from_ranges(tmp_path: Path) -> None:
    body = _wheel(tmp_path, padding=200_000)  # larger than the first tail request
    seen: list[str] = []
    with respx.mock() as router, httpx.Client() as http:
        _serve_ranges(router, body, seen)
        text = read_remote_metadata(IndexClient(http), URL, "demo", "1.0")
    assert "Requires-Dist: numpy>=1.26" in text and "Name: demo" in text
    assert seen[0] == "bytes=-65536" and len(seen) <= 3  # the tail, then at most a member read


def test_server_ignoring_range_gives_the_whole_file(tmp_path: Path) -> None:
    body = _wheel(tmp_path)
    with respx.mock() as router, httpx.Client() as http:
        router.get(URL).mock(return_value=httpx.Response(200, content=body))
        assert "Name: demo" in read_remote_metadata(IndexClient(http), URL, "demo", "1.0")


def test_not_a_wheel_is_a_coded_error() -> None:
    with respx.mock() as router, httpx.Client() as http:
        router.get(URL).mock(return_value=httpx.Response(200, content=b"<html>not a zip</html>"))
        with pytest.raises(IndexUnavailable, match="not a readable wheel"):
            read_remote_metadata(IndexClient(http), URL, "demo", "1.0")


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=4096), st.integers(min_value=0, max_value=4095))
def test_corrupted_wheels_never_escape_as_other_errors(junk: bytes, where: int) -> None:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        body = bytearray(_wheel(Path(tmp)))
    where = where % len(body)
    body[where : where + len(junk)] = junk
    seen: list[str] = []
    with respx.mock() as router, httpx.Client() as http:
        _serve_ranges(router, bytes(body), seen)
        try:
            read_remote_metadata(IndexClient(http), URL, "demo", "1.0")
        except IndexUnavailable:
            pass
    assert len(seen) <= 16  # bounded requests whatever the bytes say


def test_a_range_read_wheel_whose_metadata_names_another_release_is_named_by_its_own_url(tmp_path: Path) -> None:
    from cudaresolve.index.metadata import fetch_core_metadata
    from cudaresolve.index.simple import wheel_file

    body = _wheel(tmp_path)  # METADATA says demo 1.0
    listed = wheel_file("demo-2.0-py3-none-any.whl", URL.replace("1.0", "2.0"))  # the page lists it as 2.0
    assert listed is not None and not listed.core_metadata
    with respx.mock() as router, httpx.Client() as http:
        router.get(listed.url).mock(return_value=httpx.Response(200, content=body))
        with pytest.raises(IndexUnavailable) as info:
            fetch_core_metadata(IndexClient(http), None, listed)
    assert f"the core metadata at {listed.url} cannot be used" in info.value.message
    assert ".metadata" not in info.value.message  # no PEP 658 file was offered or read
