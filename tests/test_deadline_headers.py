"""A deadline bounds every byte of a request, the status line and headers included (issue 26, item 2),
against real slow servers on 127.0.0.1; a whole-file download follows CUDARESOLVE_NETWORK_TIMEOUT when
it is lower than its own bound."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.client import IndexClient
from cudaresolve.index.limits import FILE_DEADLINE, Deadline, file_deadline
from cudaresolve.index.policy import IndexPolicy
from cudaresolve.index.transport import LazyClient
from hostile.cases_index import HostileServer, answer, redirect_to_slow_headers, slow_headers, slow_status_line

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

CPU = "https://download.pytorch.org/whl/cpu"
SLOW = [slow_headers, slow_status_line, redirect_to_slow_headers]
#: Interpreter start-up is not in these runs; one header line or byte interval past the deadline is.
MARGIN = 4.0


@contextmanager
def serve(behaviour: Callable[..., None]) -> Iterator[HostileServer]:
    server = HostileServer(behaviour, lifetime=30.0)
    try:
        yield server
    finally:
        server.stop()


def _client(server: HostileServer, http: LazyClient, deadline: float) -> IndexClient:
    return IndexClient(
        http,
        IndexPolicy(
            mirrors={"https://download.pytorch.org/whl": f"{server.base}/whl"}, deadline=Deadline(deadline), retries=3
        ),
        sleep=lambda s: None,
    )


@pytest.mark.parametrize("behaviour", SLOW, ids=lambda b: b.__name__)
def test_a_page_whose_headers_trickle_ends_at_the_deadline(behaviour: Callable[..., None]) -> None:
    with serve(behaviour) as server, LazyClient() as http:
        start = time.monotonic()
        with pytest.raises(IndexUnavailable):
            _client(server, http, 1.5).fetch_project(CPU, "torch")
        elapsed = time.monotonic() - start
    assert elapsed < 1.5 + MARGIN, elapsed  # it waited for the server's 30 s lifetime before


@pytest.mark.parametrize("behaviour", SLOW, ids=lambda b: b.__name__)
def test_a_download_whose_headers_trickle_follows_the_lower_env_deadline(
    behaviour: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDARESOLVE_NETWORK_TIMEOUT", "1.5")
    with serve(behaviour) as server, LazyClient() as http:
        start = time.monotonic()
        with pytest.raises(IndexUnavailable):
            _client(server, http, 60.0).download(f"{server.base}/whl/cpu/torch/x.whl", lambda b: None, cap=1 << 20)
        elapsed = time.monotonic() - start
    assert elapsed < 1.5 + MARGIN, elapsed


def test_a_ranged_read_whose_status_line_trickles_ends_at_the_deadline() -> None:
    with serve(slow_status_line) as server, LazyClient() as http:
        start = time.monotonic()
        with pytest.raises(IndexUnavailable):
            _client(server, http, 1.5).fetch_range(f"{server.base}/whl/x.whl", None, 100, cap=1 << 20)
        assert time.monotonic() - start < 1.5 + MARGIN


def test_a_prompt_server_is_unaffected() -> None:
    page = f'<a href="/whl/torch-2.7.1+cpu-cp311-cp311-linux_x86_64.whl#sha256={"a" * 64}">t</a>'
    with serve(answer(page)) as server, LazyClient() as http:
        files = _client(server, http, 5.0).fetch_project(CPU, "torch")
    assert [f.filename for f in files] == ["torch-2.7.1+cpu-cp311-cp311-linux_x86_64.whl"]


@pytest.mark.parametrize(("value", "expected"), [
    (None, FILE_DEADLINE), ("", FILE_DEADLINE), ("2.5", 2.5), (str(FILE_DEADLINE * 10), FILE_DEADLINE),
])
def test_file_deadline_follows_the_environment_only_when_lower(value: str | None, expected: float) -> None:
    env = {} if value is None else {"CUDARESOLVE_NETWORK_TIMEOUT": value}
    assert file_deadline(env) == expected
