"""install.wheelcache: files fetched from the lock's URLs into a sha256-keyed cache, verified, bounded, trimmed
only of its own entries; install.installer: which installer and its command lines."""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING

import httpx
import pytest
import respx

from cudaresolve.errors import HashMismatch, IndexUnavailable, InvalidInput, InvalidLockfile
from cudaresolve.index.client import IndexClient
from cudaresolve.index.policy import IndexPolicy
from cudaresolve.install import installer
from cudaresolve.install.installer import choose_installer
from cudaresolve.install.wheelcache import cache_path, cached_file, fetch_files, trim
from cudaresolve.resolve.model import LockedPackage

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

BASE = "https://files.example.org/packages"


def _package(name: str, body: bytes, *, sha256: str | None = None, size: int | None = None) -> LockedPackage:
    filename = f"{name}-1.0-py3-none-any.whl"
    return LockedPackage(name=name, version="1.0", index="https://pypi.org/simple", url=f"{BASE}/{filename}",
                         filename=filename, sha256=sha256 or hashlib.sha256(body).hexdigest(), size=size)


def _client() -> IndexClient:
    return IndexClient(httpx.Client(), IndexPolicy(retries=0))


@respx.mock
def test_fetched_once_then_served_from_the_cache(tmp_path: Path) -> None:
    a, b = _package("a", b"AAAA"), _package("b", b"BB")
    route_a = respx.get(a.url).mock(return_value=httpx.Response(200, content=b"AAAA"))
    route_b = respx.get(b.url).mock(return_value=httpx.Response(200, content=b"BB"))
    files = fetch_files([a, b], tmp_path, _client())
    assert files == {"a": cache_path(tmp_path, a), "b": cache_path(tmp_path, b)}
    assert files["a"].read_bytes() == b"AAAA" and files["a"].parent.name == a.sha256
    assert oct(files["a"].parent.stat().st_mode & 0o777) == "0o700"
    assert fetch_files([b, a], tmp_path, _client()) == {"b": files["b"], "a": files["a"]}
    assert (route_a.call_count, route_b.call_count) == (1, 1)  # the second time: nothing fetched


@respx.mock
def test_the_largest_files_are_fetched_first_and_answered_in_the_locks_order(tmp_path: Path) -> None:
    bodies = {"small": b"s", "large": b"L" * 300, "middle": b"m" * 20, "unsized": b"u"}
    packages = [_package(n, b, size=None if n == "unsized" else len(b)) for n, b in bodies.items()]
    asked: list[str] = []
    for package, body in zip(packages, bodies.values(), strict=True):
        def answer(request: httpx.Request, body: bytes = body) -> httpx.Response:
            asked.append(request.url.path.rsplit("/", 1)[-1].split("-")[0])
            return httpx.Response(200, content=body)

        respx.get(package.url).mock(side_effect=answer)
    files = fetch_files(packages, tmp_path, _client(), workers=1)  # one at a time: the order shows
    assert asked == ["large", "middle", "small", "unsized"]
    assert list(files) == list(bodies)


@respx.mock
def test_a_file_of_other_bytes_is_a_hash_mismatch_and_leaves_nothing(tmp_path: Path) -> None:
    package = _package("a", b"locked")
    respx.get(package.url).mock(return_value=httpx.Response(200, content=b"served"))
    with pytest.raises(HashMismatch):
        fetch_files([package], tmp_path, _client())
    assert cached_file(tmp_path, package) is None
    assert list((tmp_path / package.sha256).iterdir()) == []  # no half-written or unverified file


@respx.mock
def test_a_file_that_cannot_be_had_is_index_unavailable(tmp_path: Path) -> None:
    package = _package("a", b"x")
    respx.get(package.url).mock(return_value=httpx.Response(404))
    with pytest.raises(IndexUnavailable):
        fetch_files([package], tmp_path, _client())


@pytest.mark.parametrize("url", [
    "https://user:s3cr3t@127.0.0.1:1/a-1.0-py3-none-any.whl",  # port 1: refused at once, no network needed
    "https://s3cr3t@127.0.0.1:1/a-1.0-py3-none-any.whl",
])  # fmt: skip
def test_a_host_that_cannot_be_reached_is_named_without_its_credentials(tmp_path: Path, url: str) -> None:
    """Found by the hostile-input audit: the URL was shown as https://user:****@..., but the reason beside it said
    'user:s3cr3t@127.0.0.1:1 is unreachable', the password in the clear."""
    from cudaresolve.text.catalogue import format_text

    package = replace(_package("a", b"x"), url=url)
    with pytest.raises(IndexUnavailable) as caught:
        fetch_files([package], tmp_path, _client())
    said = format_text(caught.value.text, "en")
    assert "s3cr3t" not in said and "127.0.0.1:1 is unreachable" in said, said


def test_a_package_without_url_or_hash_or_with_an_unsafe_name_is_refused(tmp_path: Path) -> None:
    bad = LockedPackage(name="a", version="1.0", index="x", url=f"{BASE}/a.whl", filename="../../etc/x.whl",
                        sha256="1" * 64)
    for package in (LockedPackage(name="a", version="1.0", index="x"), bad):
        with pytest.raises(InvalidLockfile):
            fetch_files([package], tmp_path, _client())


def test_a_cached_file_of_another_size_than_the_lock_says_is_not_used(tmp_path: Path) -> None:
    package = _package("a", b"AAAA", size=4)
    path = cache_path(tmp_path, package)
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_bytes(b"AAAA")
    assert cached_file(tmp_path, package) == path
    path.write_bytes(b"AAA")
    assert cached_file(tmp_path, package) is None


def test_trim_removes_the_least_recently_used_of_its_own_entries_only(tmp_path: Path) -> None:
    entries = []
    for number in range(3):
        package = _package(f"p{number}", bytes([number]) * 100)
        path = cache_path(tmp_path, package)
        assert path is not None
        path.parent.mkdir(parents=True)
        path.write_bytes(bytes([number]) * 100)
        os.utime(path.parent, (1000 + number, 1000 + number))
        entries.append(path)
    mine_not = tmp_path / ("f" * 64)  # named like an entry, but holding what we never write
    mine_not.mkdir()
    (mine_not / "notes.txt").write_text("x" * 1000)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "big.whl").write_bytes(b"x" * 1000)
    trim(tmp_path, limit=200, keep=[entries[0]])  # 300 bytes of entries: one must go
    assert [p.exists() for p in entries] == [True, False, True]  # the oldest is kept (just used), the next goes
    assert (mine_not / "notes.txt").exists() and (tmp_path / "other" / "big.whl").exists()


def test_choose_installer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    uv = tmp_path / "uv"
    uv.write_text("#!/bin/sh\n")
    uv.chmod(0o755)
    path = {"PATH": str(tmp_path)}
    found = choose_installer("/env/bin/python", has_pip=False, env=path)
    assert (found.kind, found.head) == ("uv", (str(uv), "pip"))
    command = found.install([tmp_path / "a.whl"])
    assert command.argv[:4] == (str(uv), "pip", "install", "--python")
    assert {"--no-deps", "--no-index", "--offline", "--reinstall"} <= set(command.argv)
    assert "--no-cache" in found.install([tmp_path / "a.whl"], fresh=True).argv
    found = choose_installer("/env/bin/python", has_pip=True, env={**path, "CUDARESOLVE_INSTALLER": "pip"})
    assert found.head == ("/env/bin/python", "-m", "pip")
    assert found.uninstall(["x"]).argv == ("/env/bin/python", "-m", "pip", "uninstall", "-y", "x")
    found = choose_installer("/env/bin/python", has_pip=False, env={**path, "CUDARESOLVE_INSTALLER": "pip"})
    assert found.head == (sys.executable, "-m", "pip", "--python", "/env/bin/python")  # a venv without pip
    monkeypatch.setattr(installer, "find_uv", lambda env=None: None)  # no uv anywhere
    with pytest.raises(InvalidInput) as info:
        choose_installer("/env/bin/python", has_pip=True, env={"CUDARESOLVE_INSTALLER": "uv"})
    assert "asked for uv" in info.value.message


@respx.mock
def test_no_more_than_the_locked_size_is_read(tmp_path: Path) -> None:
    package = _package("a", b"AAAA", size=4)
    sent: list[int] = []

    def endless() -> Iterator[bytes]:
        for _ in range(10_000):  # 640 MB if it were all read
            sent.append(1)
            yield b"A" * 65536

    respx.get(package.url).mock(return_value=httpx.Response(200, content=endless()))
    with pytest.raises(InvalidLockfile, match="larger than the 4 bytes the lock records"):  # the lock is wrong
        fetch_files([package], tmp_path, _client())
    assert len(sent) < 4 and cached_file(tmp_path, package) is None


@respx.mock
def test_a_file_smaller_than_the_locked_size_is_refused_though_its_hash_matches(tmp_path: Path) -> None:
    """PEP 751: an installer checks the size too. A lock whose size is larger than the file it hashes is wrong (it,
    or the index page it was made from): refused, nothing cached."""
    body = b"AAAA"
    package = replace(_package("a", body, size=4), size=5)
    respx.get(package.url).mock(return_value=httpx.Response(200, content=body))
    with pytest.raises(InvalidLockfile, match="has 4 bytes, not the 5 the lock records"):
        fetch_files([package], tmp_path, _client())
    assert cached_file(tmp_path, package) is None


@respx.mock
@pytest.mark.parametrize("shape", ["files-root-is-a-file", "entry-is-a-file", "file-is-a-folder", "entry-is-a-link"])
def test_a_cache_not_as_it_was_left_is_one_coded_error_and_nothing_written_elsewhere(
    tmp_path: Path, shape: str
) -> None:
    package = _package("a", b"AAAA", size=4)
    root, elsewhere = tmp_path / "files", tmp_path / "elsewhere"
    path = cache_path(root, package)
    assert path is not None
    elsewhere.mkdir()
    if shape == "files-root-is-a-file":
        root.write_text("x")
    else:
        root.mkdir()
        if shape == "entry-is-a-file":
            path.parent.write_text("x")
        elif shape == "entry-is-a-link":
            path.parent.symlink_to(elsewhere)
        else:
            path.mkdir(parents=True)
    respx.get(package.url).mock(return_value=httpx.Response(200, content=b"AAAA"))
    with pytest.raises(InvalidInput) as info:
        fetch_files([package], root, _client())
    assert info.value.code == "invalid-input" and "cache" in str(info.value)
    assert list(elsewhere.iterdir()) == []
