"""Pages whose bodies the HTTP cache keeps apart from their entries: a lock reads them as it reads any page, and a
body replaced or damaged behind the cache's back costs a request, never the page."""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import pytest
from local_index import LocalIndex

from cudaresolve.index import http_cache
from cudaresolve.lock import flow
from cudaresolve.lock.request import LockRequest
from cudaresolve.target.options import TargetOptions

if TYPE_CHECKING:
    from pathlib import Path

TARGET = TargetOptions(cpu=True, python="3.11", platform="linux_x86_64")


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(http_cache, "APART_BYTES", 0)  # every page's body apart, as PyPI's pages of MBs are
    # every page fetched and stored by this process: the page helper, a process of its own, keeps its own bound
    monkeypatch.setattr(flow, "helper_ahead", lambda request: nullcontext(None))
    monkeypatch.setattr(flow, "page_fetcher", lambda policy, tls, started=None: nullcontext(None))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(tmp_path / "cache"))
    index = LocalIndex(tmp_path / "index")
    for version in ("1.0", "1.1"):
        index.add("pypi", "numpyish", version)
    index.add("pypi", "app", "1.0", requires=["numpyish"])
    with index.serve() as base:
        yield index, base, tmp_path / "cache"


def _lock(base: str) -> Any:
    request = LockRequest(requirements=("app",), target=TARGET, mirrors=(f"https://pypi.org/simple={base}/pypi/simple",),
                          environ={}, upgrade=True)  # fmt: skip
    return flow.lock(request, output="pylock.toml", fmt="pylock")


@pytest.mark.parametrize("damage", ["same-size", "cut"])
def test_a_body_replaced_behind_the_cache_is_fetched_again(served: Any, damage: str) -> None:
    index, base, cache = served
    first = _lock(base)
    body = next(cache.rglob("*.body"))
    assert all(p.with_suffix(".body").exists() for p in cache.glob("http-v3/*.entry")
               if '"status": 200' in p.read_text() and "simple" in p.read_text())  # fmt: skip
    text = body.read_text()
    body.write_text(text.replace("1.", "9.") if damage == "same-size" else text[: len(text) // 2])
    for stored in cache.glob("parsed-v2/*.json"):
        stored.unlink()  # the pages must be parsed again: from their bodies
    index.requests.clear()
    again = _lock(base)
    assert again.solution == first.solution and again.complete
    if damage == "same-size":  # read as fitting, then not the body its entry names: asked again, once
        assert sum(n for path, n in index.requests.items() if path.startswith("/pypi/simple/")) >= 2
