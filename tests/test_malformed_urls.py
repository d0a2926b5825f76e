"""A URL urllib cannot split (``http://[::1``: an IPv6 host without its closing bracket) is a coded user error.

``urllib.parse.urlsplit`` raises ``ValueError("Invalid IPv6 URL")`` on it; wherever a user can give
a URL (``PIP_INDEX_URL``, ``-i``/``--index-url``, ``--index-mirror``, a pip or uv settings file,
``[tool.cudaresolve]``, a direct reference, a lock file's archive URL) ``cudaresolve`` answers with one
line naming the setting and exit code 1, never ``internal-error``; a server's ``Location`` of that shape
is a refused redirect. The commands go through ``cli.main`` as a user runs them.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import httpx
import pytest
import respx

from cudaresolve import cli
from cudaresolve.core.urls import split_url
from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.client import IndexClient

if TYPE_CHECKING:
    from pathlib import Path

BAD = "http://[::1"
AUTHED_BAD = "http://ci-bot:s3cret@[::1/simple"
TARGET = ["--gpu", "H100", "--driver", "580.65.06", "--python-version", "3.11", "--platform", "linux_x86_64",
          "--offline"]
PYTORCH = "https://download.pytorch.org/whl"


def _lock(requirement: str, *extra: str, json_output: bool = False) -> list[str]:
    return ["lock", requirement, *TARGET, *extra, *(["--json"] if json_output else [])]


@pytest.fixture
def where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder as the working directory, with no user pip or uv settings."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "none"))
    monkeypatch.setenv("PIP_CONFIG_FILE", str(tmp_path / "no-pip.conf"))
    return tmp_path


# (how the URL is given, the code, what the one line names)
CASES = [
    ("PIP_INDEX_URL", "invalid-input", f"PIP_INDEX_URL sets the default index to {BAD}, which is not an http(s) URL"),
    ("UV_DEFAULT_INDEX", "invalid-input", f"UV_DEFAULT_INDEX sets the default index to {BAD}"),
    ("-i", "invalid-input", f"--index-url sets the default index to {BAD}, which is not an http(s) URL"),
    ("--index-url=", "invalid-input", f"--index-url sets the default index to {BAD}"),
    ("--index-mirror to", "invalid-input", f"mirror is not an http(s) URL: '{BAD}'"),
    ("--index-mirror from", "invalid-input", f"mirrored index is not an http(s) URL: '{BAD}'"),
    ("pip.conf", "invalid-input", f"pip.conf [global] index-url sets the default index to {BAD}"),
    ("uv.toml", "invalid-input", f"uv.toml index-url sets the default index to {BAD}"),
    ("uv.toml [[index]]", "invalid-input", f"uv.toml [[index]] default sets the default index to {BAD}"),
    ("pyproject index-url", "invalid-input", f"[tool.cudaresolve] index-url sets the default index to {BAD}"),
    ("pyproject index-mirror", "invalid-input", f"mirror is not an http(s) URL: '{BAD}'"),
    ("pyproject package-index", "invalid-input", f"package-index is not an http(s) URL: '{BAD}'"),
    ("direct reference", "unsupported-reference", f"a direct reference's URL cannot be read (an IPv6 host without "
     f"its closing ], or a port that is not a number): {BAD}/pkg-1.0-py3-none-any.whl"),
    ("direct reference with a hash", "unsupported-reference", f"a direct reference's URL cannot be read (an IPv6 "
     f"host without its closing ], or a port that is not a number): {BAD}/pkg-1.0-py3-none-any.whl#sha256="),
]


def _give(how: str, url: str, where: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Set ``url`` the way ``how`` says; -> the extra command-line words (the requirement first)."""
    if how in ("PIP_INDEX_URL", "UV_DEFAULT_INDEX"):
        monkeypatch.setenv(how, url)
    elif how == "pip.conf":
        (where / "pip.conf").write_text(f"[global]\nindex-url = {url}\n")
        monkeypatch.setenv("PIP_CONFIG_FILE", str(where / "pip.conf"))
    elif how.startswith("uv.toml"):
        monkeypatch.delenv("UV_NO_CONFIG", raising=False)
        body = f'[[index]]\nurl = "{url}"\ndefault = true\n' if "[[index]]" in how else f'index-url = "{url}"\n'
        (where / "uv.toml").write_text(body)
    elif how.startswith("pyproject"):
        key = how.split()[1]
        value = f'{{mypkg = "{url}"}}' if key == "package-index" else f'"{url}"'
        (where / "pyproject.toml").write_text(f"[tool.cudaresolve]\n{key} = {value}\n")
    elif how == "-i":
        return ["torch", "-i", url]
    elif how == "--index-url=":
        return ["torch", f"--index-url={url}"]
    elif how == "--index-mirror to":
        return ["torch", "--index-mirror", f"{PYTORCH}={url}"]
    elif how == "--index-mirror from":
        return ["torch", "--index-mirror", f"{url}=https://mirror.example.org/whl"]
    elif how == "direct reference":
        return [f"pkg @ {url}/pkg-1.0-py3-none-any.whl"]
    elif how == "direct reference with a hash":  # the fragment is split off first: urldefrag raises too
        return [f"pkg @ {url}/pkg-1.0-py3-none-any.whl#sha256={'0' * 64}"]
    return ["torch"]


@pytest.mark.parametrize(("how", "code", "message"), CASES, ids=[c[0] for c in CASES])
def test_a_malformed_url_from_each_source_is_one_coded_line_with_a_hint(
    how: str, code: str, message: str, where: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    requirement, *extra = _give(how, BAD, where, monkeypatch)
    assert cli.main(_lock(requirement, *extra)) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith(f"error: {code}: ") and message in captured.err
    assert "(hint: " in captured.err and len(captured.err.strip().splitlines()) == 1
    assert "internal-error" not in captured.err + captured.out and "Traceback" not in captured.err

    assert cli.main(_lock(requirement, *extra, json_output=True)) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == code and message in error["message"] and error["hint"]


@pytest.mark.parametrize("how", ["PIP_INDEX_URL", "-i", "--index-mirror to", "pyproject index-url",
                                 "direct reference"])
def test_a_malformed_url_with_credentials_is_refused_without_showing_the_password(
    how: str, where: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    requirement, *extra = _give(how, AUTHED_BAD, where, monkeypatch)
    assert cli.main(_lock(requirement, *extra)) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "internal-error" not in err and "s3cret" not in err


def test_a_lock_file_archive_url_that_cannot_be_split_is_an_invalid_lock_file(
    where: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (where / "pylock.toml").write_text(
        'lock-version = "1.0"\ncreated-by = "test"\n\n[[packages]]\nname = "pkg"\nversion = "1.0"\n\n'
        f'[packages.archive]\nurl = "{BAD}/pkg-1.0-py3-none-any.whl"\n'
        'hashes = {sha256 = "' + "0" * 64 + '"}\n'
    )
    code = cli.main(["install", "--from", "pylock.toml", "--dry-run", "--python", sys.executable, *TARGET[:-1]])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("error: invalid-lockfile: ") and "internal-error" not in err


def test_a_redirect_to_a_url_that_cannot_be_split_is_refused() -> None:
    index = "https://mirror.example.org/simple"
    with respx.mock(assert_all_called=True) as router, httpx.Client() as http:
        # httpx takes this Location (as http://%5ba/simple/torch/); urllib's urljoin raises on it
        router.get(f"{index}/torch/").respond(302, headers={"Location": "http://[a/simple/torch/"})
        with pytest.raises(IndexUnavailable) as info:
            IndexClient(http, sleep=lambda _: None).fetch_project(index, "torch")
    assert info.value.code == "index-unavailable"
    assert "redirects to another host, http://[a/simple/torch/; not followed" in info.value.message


@pytest.mark.parametrize("url", [BAD, "http://[::1/x", "https://host:port/", "http://[zz]/", "https://h:99999/"])
def test_split_url_is_none_where_urllib_raises(url: str) -> None:
    assert split_url(url) is None
    assert split_url("http://[::1]:8000/x") is not None and split_url("not-a-url") is not None


@pytest.mark.parametrize("inside", [" ", "\n", "\t", "\r", "\x00", "\x0b", "\x1f", "\x7f", "\x85", "\u00a0",
                                    "\u2028", "\u3000", "\u200b", "\u202e", "\ufeff"])
def test_split_url_refuses_whitespace_and_control_characters_anywhere(inside: str) -> None:
    for url in (f"https://a.example{inside}/simple", f"https://a.example/simple{inside}https://b.example/simple",
                f"https://a.example/simple{inside}"):
        assert split_url(url) is None, repr(url)


def test_shown_url_masks_password_and_query_and_escapes_control_characters() -> None:
    from cudaresolve.core.urls import shown_url

    shown = shown_url("https://u:pw@h.example/simple?token=abc#frag\nhttps://evil")
    assert shown == "https://u:****@h.example/simple?****#frag\\nhttps://evil"
    assert "\n" not in shown and "pw" not in shown and "abc" not in shown
    assert len(shown_url("https://h.example/" + "x" * 1000)) == 200
