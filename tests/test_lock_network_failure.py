"""A page the network failed to deliver is named as that (index-unavailable, exit 2), never as a package the
database does not know (issue 23, item 6)."""

from __future__ import annotations

import json
import socket
from typing import TYPE_CHECKING

from cudaresolve.cli import main
from cudaresolve.lock.cached import network_failure
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from pathlib import Path

    import pytest


def _refusing_port() -> int:
    with socket.socket() as s:  # bound, then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refused_index_is_an_index_failure_not_an_unknown_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    mirror = f"https://pypi.org/simple=http://127.0.0.1:{_refusing_port()}/simple"
    code = main(["lock", "some-project-not-in-the-database", "--cpu", "--python-version", "3.11",
                 f"--index-mirror={mirror}", "--json"])  # fmt: skip
    error = json.loads(capsys.readouterr().out)["error"]
    assert code == 2
    assert error["code"] == "index-unavailable"
    assert "some-project-not-in-the-database" in error["message"]
    assert "could not reach" in error["message"]
    assert "compatibility database" not in error["message"]
    assert not (tmp_path / "pylock.toml").exists()


def test_what_counts_as_the_network() -> None:
    reach = Text.of("index.could-not-reach", url="https://x/simple/a/", reason="refused")
    assert network_failure(Text.of("index.package-unavailable", package="a", reason=reach))
    assert network_failure(Text.of("index.deadline", url="https://x/", seconds=60))
    bad = Text.of("index.bad-json", url="https://x/simple/a/", error="Expecting value")
    assert not network_failure(Text.of("index.package-unavailable", package="a", reason=bad))


def test_a_file_whose_host_refuses_is_the_networks_failure() -> None:
    """A whole file (a release asset hashed for the lock, a direct reference, an sdist) whose host is down is the
    network's failure, as a page's is: a lock that needed it ends index-unavailable (exit 2), not invalid-input
    (flash-attn's GitHub release asset, github.com unreachable)."""
    import pytest

    from cudaresolve.errors import IndexUnavailable
    from cudaresolve.index.client import IndexClient
    from cudaresolve.index.transport import make_http_client

    url = f"http://127.0.0.1:{_refusing_port()}/flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl"
    with make_http_client() as http, pytest.raises(IndexUnavailable) as info:
        IndexClient(http).download(url, lambda chunk: None, cap=1024)
    assert info.value.message.startswith(f"could not fetch {url}: 127.0.0.1:")
    assert network_failure(Text.of("lock.not-whole-environment", reason=info.value.text))
