"""A mirror of the PyTorch index laid out as flat directories, served by a plain file server (issue 22, item 6).

The mirror has ``cu118/index.html`` listing the wheel files and no per-project pages, and its server
(``http.server``) ignores ``Range``: the wheel's METADATA is read from the whole body, and a wheel over the
one-request cap is downloaded whole instead (as pip and uv then do), never reported as missing metadata.
"""

from __future__ import annotations

import functools
import http.server
import json
import tomllib
from typing import TYPE_CHECKING

import httpx
from local_index import serving
from tiny_wheels import build_wheel

from cudaresolve.index.client import IndexClient
from cudaresolve.index.lazy_wheel import read_remote_metadata
from test_direct_e2e import run_cli

if TYPE_CHECKING:
    from pathlib import Path

TAG = "cp311-cp311-manylinux_2_28_x86_64"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    seen: list[str]

    def log_message(self, format: str, *args: object) -> None:
        type(self).seen.append(self.path)


def _handler(root: Path) -> type[_Quiet]:
    class Handler(_Quiet):
        seen: list[str] = []  # noqa: RUF012

    Handler.__init__ = functools.partialmethod(Handler.__init__, directory=str(root))  # type: ignore[method-assign]
    return Handler


def test_a_flat_directory_mirror_locks_end_to_end(tmp_path: Path) -> None:
    flat = tmp_path / "mirror" / "pytorch-wheels" / "cu118"
    wheel = build_wheel(flat, "torch", "2.7.1+cu118", TAG)
    (flat / "index.html").write_text(f'<a href="{wheel.filename}#sha256={wheel.sha256}">{wheel.filename}</a>\n')
    handler = _handler(tmp_path / "mirror")
    work = tmp_path / "work"
    work.mkdir()
    with serving(handler) as base:
        result = run_cli(
            ["lock", "torch", "--gpu", "A800", "--driver", "470.129.06", "--python-version", "3.11", "--json",
             "--index-mirror", f"https://download.pytorch.org/whl={base}/pytorch-wheels"],
            work, work / "cache",
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["complete"] is True
    (torch,) = tomllib.loads((work / "pylock.toml").read_text())["packages"]
    assert torch["wheels"][0]["url"] == f"{base}/pytorch-wheels/cu118/{wheel.filename}"
    assert torch["wheels"][0]["hashes"]["sha256"] == wheel.sha256
    assert "/pytorch-wheels/cu118/torch/" in handler.seen and "/pytorch-wheels/cu118/" in handler.seen


def test_a_wheel_over_the_request_cap_from_a_server_without_ranges_is_downloaded_whole(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path, "big", "1.0", "py3-none-any", requires=["idna"])
    with open(tmp_path / wheel.filename, "ab") as handle:  # a wheel larger than one request may carry
        handle.write(b"\0" * 8192)  # trailing bytes after the end record: zipfile still reads it
    handler = _handler(tmp_path)
    with serving(handler) as base, httpx.Client() as http:
        text = read_remote_metadata(IndexClient(http), f"{base}/{wheel.filename}", "big", "1.0", request_cap=4096)
    assert "Requires-Dist: idna" in text
    assert handler.seen.count(f"/{wheel.filename}") == 2  # the capped probe, then the whole file
