"""A warm run inside max-age: no request and no httpx import (the HTTP client is built on first use only)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
import respx
from local_index import CountingHandler, cpu_torch_index

from cudaresolve.index.http_cache import CachedResponse, HttpCache
from cudaresolve.index.listings import fetch_listings
from cudaresolve.index.policy import IndexPolicy
from cudaresolve.index.transport import LazyClient

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures" / "indexes"
CU118_HTML = (FIXTURES / "pytorch-cu118-torch-2026-11-22.html").read_text(encoding="utf-8")
CU118 = "https://download.pytorch.org/whl/cu118"
CU128 = "https://download.pytorch.org/whl/cu128"


def store_page(cache: HttpCache, url: str, *, cache_control: str, fetched_at: float) -> None:
    cache.store(
        CachedResponse(
            url=url, status=200, body=CU118_HTML.replace("cu118", url.split("/")[-3]), content_type="text/html",
            fetched_at=fetched_at, cache_control=cache_control,
        )
    )  # fmt: skip


def test_lazy_client_is_built_on_first_use_once_and_closed() -> None:
    built: list[httpx.Client] = []

    def factory() -> httpx.Client:
        built.append(httpx.Client())
        return built[-1]

    with LazyClient(factory) as lazy:
        assert not lazy.started and built == []
        with respx.mock(assert_all_called=True) as router:
            router.get("https://pypi.org/simple/torch/").respond(200, text="ok")

            def get() -> None:
                with lazy.stream("GET", "https://pypi.org/simple/torch/") as response:
                    response.read()

            threads = [threading.Thread(target=get) for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        assert lazy.started and len(built) == 1
    assert built[0].is_closed
    with pytest.raises(RuntimeError, match="after close"):
        lazy.get_client()


def test_fetch_listings_with_fresh_pages_builds_no_client(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    now = time.time()
    store_page(cache, f"{CU118}/torch/", cache_control="max-age=600", fetched_at=now)
    store_page(cache, f"{CU128}/torch/", cache_control="max-age=600", fetched_at=now)

    def refuse() -> httpx.Client:
        raise AssertionError("no request may be sent")

    with LazyClient(refuse) as lazy:
        listings = fetch_listings(lazy, [(CU118, "torch"), (CU128, "torch")], IndexPolicy(offline=False, cache=cache))
    assert [p.source for p in listings.pages] == ["cache", "cache"]
    assert not lazy.started
    assert listings.files(CU128, "torch")


def test_fetch_listings_builds_the_client_for_the_stale_page_only(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    store_page(cache, f"{CU118}/torch/", cache_control="max-age=600", fetched_at=time.time())
    store_page(cache, f"{CU128}/torch/", cache_control="max-age=600", fetched_at=time.time() - 601)
    with respx.mock(assert_all_called=True) as router, LazyClient(httpx.Client) as lazy:
        route = router.get(f"{CU128}/torch/").respond(304)
        listings = fetch_listings(lazy, [(CU118, "torch"), (CU128, "torch")], IndexPolicy(offline=False, cache=cache))
        assert lazy.started
    assert [p.source for p in listings.pages] == ["cache", "revalidated"]
    assert route.call_count == 1


_FRESH_FETCH = """
import json, sys
from cudaresolve.index.listings import fetch_listings
from cudaresolve.index.http_cache import HttpCache
from cudaresolve.index.policy import IndexPolicy
from cudaresolve.index.transport import LazyClient
root, requests = json.loads(sys.argv[1])
with LazyClient() as lazy:
    listings = fetch_listings(lazy, [tuple(r) for r in requests], IndexPolicy(offline=False, cache=HttpCache(root)))
print(json.dumps({"httpx": "httpx" in sys.modules, "sources": [p.source for p in listings.pages]}))
"""


def test_a_fetch_of_fresh_pages_does_not_import_httpx(tmp_path: Path) -> None:
    cache = HttpCache(tmp_path)
    for index in (CU118, CU128):
        store_page(cache, f"{index}/torch/", cache_control="max-age=600", fetched_at=time.time())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "tools")])}
    argv = [sys.executable, "-c", _FRESH_FETCH, json.dumps([str(tmp_path), [[CU118, "torch"], [CU128, "torch"]]])]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=True, timeout=120)
    assert json.loads(done.stdout) == {"httpx": False, "sources": ["cache", "cache"]}


# --- the whole command against a local index -------------------------------------------------------


@pytest.fixture
def index(tmp_path: Path) -> Iterator[str]:
    """A /whl/cpu/torch/ page on 127.0.0.1 holding the torch the solver picks for this Python."""
    with cpu_torch_index(tmp_path / "site") as base:
        yield base


_LOCK = """
import json, sys
from cudaresolve.cli import main
code = main(json.loads(sys.argv[1]))
print(json.dumps({"code": code, "httpx": "httpx" in sys.modules}), file=sys.stderr)
"""


@pytest.mark.parametrize(("max_age", "requests", "imports_httpx"), [(600, 0, False), (0, 1, True)])
def test_a_warm_lock_sends_nothing_inside_max_age_and_one_conditional_get_after(
    index: str, tmp_path: Path, max_age: int, requests: int, imports_httpx: bool
) -> None:
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    cache = tmp_path / "cache"
    argv = ["lock", "torch", "--cpu", "--python-version", python, "--platform", "linux_x86_64",
            "--index-mirror", f"https://download.pytorch.org/whl={index}", "--format", "requirements"]  # fmt: skip
    CountingHandler.max_age = max_age
    env = {**os.environ, "CUDARESOLVE_CACHE_DIR": str(cache)}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT / "tools")])
    cold = subprocess.run([sys.executable, "-c", _LOCK, json.dumps([*argv, "-o", str(tmp_path / "cold.txt")])],
                          capture_output=True, text=True, env=env, timeout=120, check=False)  # fmt: skip
    assert json.loads(cold.stderr.strip().splitlines()[-1]) == {"code": 0, "httpx": True}
    assert CountingHandler.seen[0] == "/whl/cpu/torch/"  # then the build's PEP 658 metadata, once: immutable
    assert len(CountingHandler.seen) == 2 and CountingHandler.seen[1].endswith(".whl.metadata")
    CountingHandler.seen = []
    warm = subprocess.run([sys.executable, "-c", _LOCK, json.dumps([*argv, "-o", str(tmp_path / "warm.txt")])],
                          capture_output=True, text=True, env=env, timeout=120, check=False)  # fmt: skip
    assert json.loads(warm.stderr.strip().splitlines()[-1]) == {"code": 0, "httpx": imports_httpx}
    assert len(CountingHandler.seen) == requests
    assert (tmp_path / "warm.txt").read_text() == (tmp_path / "cold.txt").read_text()
    assert "--hash=sha256:" in (tmp_path / "warm.txt").read_text()
