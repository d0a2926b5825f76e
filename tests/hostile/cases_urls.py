"""URLs read from files with whitespace or control characters in them, and credentials in a query string
or an argparse error (issue 26, item 5). ``core.urls.split_url`` refuses such a URL wherever it is read
(pip would split it into several indexes); a token never reaches a message, the cache or a lock."""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import TYPE_CHECKING

from hostile.case import Case, Result
from hostile.cases_install import GOOD, INDEX, PIN, TORCH, _pylock, _requirements

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

EVIL = "https://evil.example.org/simple"
SECRET = "S3CR3T-t0ken"


def _write(name: str, text: str, pyproject: str | None = None) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / name).write_text(text, encoding="utf-8")
        if pyproject is not None:
            (tmp / "pyproject.toml").write_text(pyproject, encoding="utf-8")
    return setup


def _one_line_refusal(*codes: str) -> Callable[[Result, Path], None]:
    def check(result: Result, tmp: Path) -> None:
        assert result.stderr.count("\n") == 1, result.stderr  # an escaped newline, not a second line
        assert result.stderr.startswith(tuple(f"error: {c}: " for c in codes)), result.stderr
        assert "pip install" not in result.stdout + result.stderr
    return check


def _no_secret(result: Result, tmp: Path) -> None:
    assert SECRET not in result.stdout + result.stderr
    for path in tmp.rglob("*"):
        if path.is_file() and path.name != "pyproject.toml":
            assert SECRET.encode() not in path.read_bytes(), path


def _pylock_with(**fields: str) -> str:
    return _pylock(replace(GOOD, packages=(replace(TORCH, **fields),)))


_INSTALL = ["install", "--from", "pylock.toml", "--dry-run", "--python", sys.executable]
_INSTALL_REQ = ["install", "--from", "requirements.txt", "--dry-run", "--python", sys.executable]
_LOCK = ["lock", "torch==2.7.1", "--cpu", "--python-version", "3.11", "--platform", "linux_x86_64",
         "--format", "requirements", "-o", "out.txt"]
_BAD_INDEXES = {
    "space": f"{INDEX} {EVIL}",
    "newline": f"{INDEX}\n{EVIL}",
    "tab": f"{INDEX}\t{EVIL}",
    "crlf": f"{INDEX}\r\n{EVIL}",
    "nbsp": f"{INDEX}\u00a0{EVIL}",
    "line-separator": f"{INDEX}\u2028{EVIL}",
    "nul": f"{INDEX}\x00{EVIL}",
    "zero-width-space": f"{INDEX}\u200b",
    "bidi-override": "https://download.pytorch.org/\u202ewhl/cu126",
}
CASES = [
    *(Case(f"url-pylock-index-{name}", _INSTALL, setup=_write("pylock.toml", _pylock_with(index=url)), codes=(1,),
           check=_one_line_refusal("invalid-lockfile")) for name, url in _BAD_INDEXES.items()),
    *(Case(f"url-pylock-wheel-url-{name}", _INSTALL, setup=_write("pylock.toml", _pylock_with(url=f"{url}/t.whl")),
           codes=(1,), check=_one_line_refusal("invalid-lockfile")) for name, url in list(_BAD_INDEXES.items())[:4]),
    Case("url-pylock-index-under-named-mirror", [*_INSTALL, "--index-mirror", f"{INDEX}=http://127.0.0.1:9/whl"],
         setup=_write("pylock.toml", _pylock_with(index=f"http://127.0.0.1:9/whl/cu126 {EVIL}")), codes=(1,),
         check=_one_line_refusal("invalid-lockfile")),
    Case("url-requirements-index-control", _INSTALL_REQ,
         setup=_write("requirements.txt", _requirements(f"--index-url {INDEX}\x01{EVIL}\n{PIN}")), codes=(1,),
         check=_one_line_refusal("invalid-lockfile")),
    Case("url-requirements-index-vertical-tab", _INSTALL_REQ,
         setup=_write("requirements.txt", _requirements(f"--index-url {INDEX}\x0b{EVIL}\n{PIN}")), codes=(1,),
         check=_one_line_refusal("invalid-lockfile")),
    Case("url-pyproject-index-url-newline", _LOCK,
         setup=_write("x", "", '[tool.cudaresolve]\nindex-url = "https://a.example.org/simple\\nhttps://b.example.org"\n'),
         codes=(1,), check=_one_line_refusal("invalid-input")),
    Case("url-pyproject-mirror-space", _LOCK,
         setup=_write("x", "", f'[tool.cudaresolve]\nindex-mirror = {{"{INDEX[:-6]}" = "https://m.example/w x"}}\n'),
         codes=(1,), check=_one_line_refusal("invalid-input")),
    Case("url-index-query-token", [*_LOCK, "-i", f"https://127.0.0.1:9/simple?token={SECRET}"], codes=(1,),
         check=_no_secret),
    Case("url-mirror-query-token", [*_LOCK, "--index-mirror", f"{INDEX[:-6]}=https://m.example.org/whl?t={SECRET}"],
         codes=(1,), check=_no_secret),
    Case("url-pyproject-index-query-token", _LOCK, setup=_write(
        "x", "", f'[tool.cudaresolve]\nindex-url = "https://m.example.org/simple?token={SECRET}"\n'), codes=(1,),
         check=_no_secret),
    Case("url-usage-error-echoes-credentials", ["lock", "torch", "--format", f"https://tok:{SECRET}@h.example/x"],
         codes=(1, 2), check=_no_secret),
    Case("url-usage-error-echoes-credentials-json", ["lock", "torch", "--json", "--gpu-source",
         f"https://{SECRET}@h.example/x"], codes=(1, 2), check=_no_secret),
    Case("url-usage-error-unrecognized", ["gpus", f"--x=https://u:{SECRET}@h.example/simple"], codes=(1, 2),
         check=_no_secret),
]
