"""A private index's credentials are used to fetch but never reach the on-disk cache.

An index URL may carry ``user:token@`` (``PIP_INDEX_URL``, ``-i``, a mirror). The cached pages
(``http-v2``), their parsed forms (``parsed-v2``) and the cached metadata files are keyed and
stored without it, in files only their owner may read (0600, folders 0700); a warm run gets the
credentials from the configured URL again, so every request it still sends carries them. The
end-to-end part locks against a 127.0.0.1 index of tiny real wheels that answers 401 to any
request without the right HTTP Basic credentials (``tools/local_index.py``).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from local_index import LocalIndex

from cudaresolve import cli
from cudaresolve.core.files import write_private_atomic
from cudaresolve.core.urls import redact, split_url, strip_credentials, strip_credentials_in, with_credentials_of
from cudaresolve.index.http_cache import CachedResponse, HttpCache
from cudaresolve.index.parsed_cache import parse_files

if TYPE_CHECKING:
    from collections.abc import Iterator

SECRET = "s3cret-token"
USER = "ci-bot"
TARGET = ["--gpu", "H100", "--driver", "580.65.06", "--python-version", "3.11", "--platform", "linux_x86_64"]
TAG = "cp311-cp311-manylinux_2_28_x86_64"


def _cache_dir() -> Path:
    return Path(os.environ["CUDARESOLVE_CACHE_DIR"])  # a fresh one per test (conftest)


def _files_and_folders(root: Path) -> tuple[list[Path], list[Path]]:
    found = list(root.rglob("*"))
    return [p for p in found if p.is_file()], [p for p in found if p.is_dir()]


def _assert_private_and_clean(root: Path) -> list[Path]:
    """Every file under ``root`` holds no secret and is 0600; every folder under it is 0700."""
    files, folders = _files_and_folders(root)
    assert files
    for path in files:
        assert SECRET.encode() not in path.read_bytes(), path
        assert USER.encode() not in path.read_bytes(), path
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for path in folders:
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, path
    return files


# --- URLs ------------------------------------------------------------------------------------------


def test_credentials_are_taken_off_urls_and_page_bodies_and_given_back_for_the_same_host_only() -> None:
    url = f"http://{USER}:{SECRET}@127.0.0.1:8080/simple/numpy/"
    assert strip_credentials(url) == "http://127.0.0.1:8080/simple/numpy/"
    same_host = "http://127.0.0.1:8080/files/a.whl"
    assert with_credentials_of(same_host, url) == f"http://{USER}:{SECRET}@127.0.0.1:8080/files/a.whl"
    assert with_credentials_of(same_host, "http://127.0.0.1:8080/simple/") == same_host  # none to give
    for elsewhere in ("http://127.0.0.1:9/files/a.whl", "https://other.example/a.whl"):  # another port, host
        assert with_credentials_of(elsewhere, url) == elsewhere
    body = f'<a href="http://{USER}:{SECRET}@h/a.whl">a</a> {{"url": "https:\\/\\/tok@h\\/b.whl"}} me@example.org'
    stripped = '<a href="http://h/a.whl">a</a> {"url": "https:\\/\\/h\\/b.whl"} me@example.org'
    assert strip_credentials_in(body) == stripped


@pytest.mark.parametrize(
    ("text", "stripped"),
    [
        ("git+https://u:p@h/x", "git+https://h/x"),  # a scheme with + and letters after the first
        ("x1-a.b://u@h 9x://v@h", "x1-a.b://h 9x://h"),  # the scheme starts at its first letter
        ("12://u@h +.-://v@h ://w@h", "12://u@h +.-://v@h ://w@h"),  # no letter before the colon: no scheme
        ("a@b://u@h http://x:y@h", "a@b://h http://h"),  # the run of scheme characters stops at an @
        ("http://a://b@h", "http://a://h"),  # userinfo holds no /: the later URL is the one with a user
        ("ht tp://u@h http:/u@h", "ht tp://h http:/u@h"),  # the scheme ends at the colon; one slash is no URL
    ],
)
def test_userinfo_in_a_body_is_found_after_a_real_scheme_only(text: str, stripped: str) -> None:
    assert strip_credentials_in(text) == stripped
    assert strip_credentials_in(stripped) == stripped


@pytest.mark.parametrize("url", ["http://[::1", "http://u:pw@[::1/pkg-1.0-py3-none-any.whl", "https://host:port/x"])
def test_a_malformed_url_splits_to_none_and_is_still_shown_without_its_password(url: str) -> None:
    assert split_url(url) is None
    assert "pw@" not in strip_credentials(url) and "pw" not in redact(url)
    assert split_url("http://[::1]:8000/simple") is not None


# --- the caches, one entry at a time -------------------------------------------------------------


def test_a_page_fetched_with_credentials_is_stored_without_them_and_read_back_with_them(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path / "cache")
    page = f"http://{USER}:{SECRET}@127.0.0.1:8080/simple/demo/"
    body = (
        '<a href="../../files/demo-1.0-py3-none-any.whl">demo-1.0-py3-none-any.whl</a>\n'
        f'<a href="http://{USER}:{SECRET}@127.0.0.1:8080/files/demo-2.0-py3-none-any.whl">demo-2.0</a>\n'
        '<a href="https://files.example/demo-3.0-py3-none-any.whl">demo-3.0</a>\n'
    )
    entry = CachedResponse.from_headers(
        url=page, status=200, body=body, headers={"Content-Type": "text/html"}, final_url=page, fetched_at=1.0
    )
    first = parse_files(cache, entry, None)
    cache.store(entry)
    files = _assert_private_and_clean(tmp_path / "cache")
    assert {f.parent.name for f in files} == {"http-v3", "parsed-v2"}
    stored = json.loads(cache.path_for(page).read_bytes().partition(b"\n")[0])
    assert stored["url"] == stored["final_url"] == "http://127.0.0.1:8080/simple/demo/"

    again = cache.get(page)  # the entry comes back under the URL asked for, credentials and all
    assert again is not None and again.url == page and again.final_url == page
    assert cache.get(strip_credentials(page)) is not None  # one entry per page, whoever asks
    assert [f.url for f in parse_files(cache, again, None)] == [f.url for f in first] == [
        f"http://{USER}:{SECRET}@127.0.0.1:8080/files/demo-1.0-py3-none-any.whl",
        f"http://{USER}:{SECRET}@127.0.0.1:8080/files/demo-2.0-py3-none-any.whl",
        "https://files.example/demo-3.0-py3-none-any.whl",  # another host: never given this index's credentials
    ]


def test_a_private_write_makes_0600_files_in_0700_folders_and_narrows_an_old_0644_file(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "entry.json"
    write_private_atomic(target, b"one")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    for folder in (tmp_path / "new", tmp_path / "new" / "deeper"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    target.chmod(0o644)  # written by an older cudaresolve
    write_private_atomic(target, b"two")
    assert target.read_bytes() == b"two" and stat.S_IMODE(target.stat().st_mode) == 0o600


# --- end to end: a lock through a private index -----------------------------------------------------


@pytest.fixture(scope="module")
def private_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalIndex, str]]:
    """PyPI's stand-in that answers only requests with ``ci-bot:SECRET``: numpy (needing filelock), filelock."""
    index = LocalIndex(tmp_path_factory.mktemp("private-index"))
    index.add("pypi", "numpy", "1.26.4", tag=TAG, requires=["filelock"])
    index.add("pypi", "filelock", "3.16.1")
    with index.serve(auth=f"{USER}:{SECRET}") as base:
        yield index, base


def _lock(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    (tmp_path / "pylock.toml").unlink(missing_ok=True)
    code = cli.main(["lock", "numpy", *TARGET, "-o", str(tmp_path / "pylock.toml")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert SECRET not in captured.out + captured.err
    return (tmp_path / "pylock.toml").read_text()


@pytest.mark.parametrize("apart", [False, True], ids=["inline", "bodies-apart"])
def test_a_lock_through_a_private_index_caches_no_credentials_and_a_warm_run_still_sends_them(
    private_index: tuple[LocalIndex, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], apart: bool,
) -> None:
    from cudaresolve.index import http_cache

    if apart:  # every body in a file of its own, as PyPI's large pages are
        monkeypatch.setattr(http_cache, "APART_BYTES", 0)
    index, base = private_index
    monkeypatch.setenv("PIP_INDEX_URL", base.replace("http://", f"http://{USER}:{SECRET}@") + "/pypi/simple")
    monkeypatch.chdir(tmp_path)
    cache = _cache_dir()
    index.requests.clear()
    index.refused.clear()

    cold = _lock(tmp_path, capsys)
    assert 'name = "filelock"' in cold and SECRET not in cold
    assert index.requests["/files/numpy-1.26.4-cp311-cp311-manylinux_2_28_x86_64.whl.metadata"] == 1
    files = _assert_private_and_clean(cache)
    assert {"http-v3", "parsed-v2"} <= {p.relative_to(cache).parts[0] for p in files}
    stored_urls = {_head(p)["url"] for p in (cache / "http-v3").rglob("*.entry")}
    assert f"{base}/pypi/simple/numpy/" in stored_urls  # keyed by the URL without credentials

    # Warm: the pages are revalidated (max-age=0), each request with the credentials; the metadata is cached.
    index.requests.clear()
    assert _lock(tmp_path, capsys) == cold
    assert index.requests["/pypi/simple/numpy/"] >= 1 and not index.refused
    assert not any(path.endswith(".metadata") for path in index.requests)
    _assert_private_and_clean(cache)

    # Only the pages cached: the file URLs come from the parsed cache, and their metadata is fetched with
    # the credentials the configured index URL carries (the server refuses any request without them).
    for entry in (cache / "http-v3").rglob("*.entry"):
        if ".metadata" in _head(entry)["url"]:  # keyed ``<file>.metadata#sha256=<the file's hash>``
            entry.unlink()
    index.requests.clear()
    assert _lock(tmp_path, capsys) == cold
    assert index.requests["/files/numpy-1.26.4-cp311-cp311-manylinux_2_28_x86_64.whl.metadata"] == 1
    assert not index.refused
    _assert_private_and_clean(cache)


def test_the_private_index_refuses_a_request_without_credentials(
    private_index: tuple[LocalIndex, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The check above means something: without the credentials the same lock fails at the index."""
    index, base = private_index
    monkeypatch.setenv("PIP_INDEX_URL", f"{base}/pypi/simple")
    monkeypatch.chdir(tmp_path)
    index.refused.clear()
    assert cli.main(["lock", "numpy", *TARGET, "-o", str(tmp_path / "pylock.toml")]) != 0
    assert "401" in capsys.readouterr().err and index.refused["/pypi/simple/numpy/"] >= 1


def _head(path: Path) -> dict[str, object]:
    """The head of a stored page or metadata file: its first line."""
    head: dict[str, object] = json.loads(path.read_bytes().partition(b"\n")[0])
    return head
