"""PEP 503 indexes of tiny real wheels served on 127.0.0.1, for tests and benches. Does I/O: files, a server thread.

    index = LocalIndex(tmp)
    index.add("pypi", "numpy", "1.26.4", requires_python=">=3.9")
    index.add("whl/cu128", "torch", "2.9.1+cu128", tag="cp311-cp311-manylinux_2_28_x86_64", requires=["filelock"])
    index.add_sdist("pypi", "only-sdist", "1.0", requires=["numpy"])  # no wheel: its PKG-INFO is its metadata
    with index.serve() as base:  # http://127.0.0.1:PORT
        ...  # base + "/pypi/simple" and base + "/whl/cu128" are indexes

Each index ``NAME`` has pages at ``/NAME/<project>/`` (``pypi`` is served as ``/pypi/simple``), with
``#sha256=`` fragments, ``data-requires-python``, ``data-yanked`` and PEP 658/714 metadata
attributes; the wheels and their ``.metadata`` files are under ``/files/``. Pages say
``Cache-Control: max-age=0`` (revalidate; ``serve(max_age=...)`` keeps them fresh), files ``immutable``,
as PyPI does. ``requests`` counts what the server answered, per path. ``serve(auth="user:password")``
makes a private index: a request without that HTTP Basic ``Authorization`` is answered 401 and counted in ``refused``.
"""

from __future__ import annotations

import base64
import hashlib
import html
import http.server
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar

from tiny_wheels import TinySdist, TinyWheel, build_sdist, build_wheel

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path

__all__ = ["LocalIndex", "find_uv", "fresh_venv", "printed_by", "serving", "uv_synced_venv"]


@dataclass(frozen=True, slots=True)
class _Entry:
    wheel: TinyWheel | TinySdist
    requires_python: str | None
    yanked: str | None
    metadata: bool

    @property
    def metadata_sha256(self) -> str:
        wheel = self.wheel
        if isinstance(wheel, TinyWheel):
            return wheel.metadata_sha256
        return hashlib.sha256(wheel.pkg_info.encode()).hexdigest()


@dataclass
class LocalIndex:
    root: Path
    entries: dict[str, dict[str, list[_Entry]]] = field(default_factory=dict)  # index -> project -> wheels
    requests: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)  # path -> requests without the right credentials

    def add(
        self,
        index: str,
        name: str,
        version: str,
        *,
        tag: str = "py3-none-any",
        requires: Sequence[str] = (),
        requires_python: str | None = None,
        yanked: str | None = None,
        metadata: bool = True,
        imports: Sequence[str] = (),
        origin: str | None = None,
        listed_requires_python: bool = True,
    ) -> TinyWheel:
        """A wheel; ``requires_python`` goes into its METADATA and, unless ``listed_requires_python`` is False
        (a mirror that drops it), into the page's ``data-requires-python``."""
        wheel = build_wheel(
            self.root / "files",
            name,
            version,
            tag,
            requires=requires,
            metadata_file=True,
            imports=imports,
            requires_python=requires_python,
            origin=origin if origin is not None else index,
        )
        project = re.sub(r"[-_.]+", "-", name).lower()
        self.entries.setdefault(index, {}).setdefault(project, []).append(
            _Entry(wheel, requires_python if listed_requires_python else None, yanked, metadata)
        )
        return wheel

    def add_sdist(
        self,
        index: str,
        name: str,
        version: str,
        *,
        requires: Sequence[str] = (),
        requires_python: str | None = None,
        metadata: bool = False,
        listed_requires_python: bool = True,
        **options: Any,
    ) -> TinySdist:
        """An sdist (``tiny_wheels.build_sdist``; ``options`` go to it), listed without a PEP 658 file unless
        ``metadata``: a client must read its PKG-INFO out of the archive. ``requires_python`` as for ``add``."""
        sdist = build_sdist(self.root / "files", name, version, requires=requires, metadata_file=True,
                            origin=options.pop("origin", index), requires_python=requires_python, **options)
        project = re.sub(r"[-_.]+", "-", name).lower()
        self.entries.setdefault(index, {}).setdefault(project, []).append(
            _Entry(sdist, requires_python if listed_requires_python else None, None, metadata)
        )
        return sdist

    def write(self) -> None:
        for index, projects in self.entries.items():
            base = self.root / ("pypi/simple" if index == "pypi" else index)
            for project, entries in projects.items():
                links = []
                for e in entries:
                    attrs = ""
                    if e.metadata:
                        attrs += f' data-core-metadata="sha256={e.metadata_sha256}"'
                    if e.requires_python:
                        attrs += f' data-requires-python="{html.escape(e.requires_python)}"'
                    if e.yanked is not None:
                        attrs += f' data-yanked="{html.escape(e.yanked)}"'
                    href = "/files/" + e.wheel.filename.replace("+", "%2B")
                    links.append(f'<a href="{href}#sha256={e.wheel.sha256}"{attrs}>{e.wheel.filename}</a><br/>\n')
                page = base / project / "index.html"
                page.parent.mkdir(parents=True, exist_ok=True)
                page.write_text(
                    '<!DOCTYPE html>\n<html><head><meta name="pypi:repository-version" content="1.1"></head><body>\n'
                    + "".join(links)
                    + "</body></html>\n"
                )
            for e in (e for entries in projects.values() for e in entries if not e.metadata):
                (self.root / "files" / f"{e.wheel.filename}.metadata").unlink(missing_ok=True)

    @contextmanager
    def serve(self, *, auth: str | None = None, max_age: int = 0) -> Iterator[str]:
        """Serve the indexes; with ``auth`` (``"user:password"``), only to requests that send it (HTTP Basic).
        ``max_age``: the seconds a page stays fresh (``Cache-Control``; 0: revalidated on every use)."""
        self.write()
        counter, refused = self.requests, self.refused
        wanted = None if auth is None else "Basic " + base64.b64encode(auth.encode()).decode()

        class Handler(http.server.SimpleHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def send_head(self) -> Any:
                if wanted is not None and self.headers.get("Authorization") != wanted:
                    refused[self.path] += 1
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="private index"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return None
                return super().send_head()

            def end_headers(self) -> None:
                immutable = self.path.startswith("/files/")
                self.send_header("Cache-Control", "max-age=31536000, immutable" if immutable else f"max-age={max_age}")
                super().end_headers()

            def log_message(self, format: str, *args: object) -> None:
                counter[self.path] += 1

        with serving(partial(Handler, directory=str(self.root))) as base:
            yield base


class _NoDelayServer(http.server.ThreadingHTTPServer):
    """Sends each reply at once (TCP_NODELAY), as production web servers do: http.server writes the headers
    and the body in two sends, and with Nagle's algorithm the body then waits for the client's delayed ACK
    (about 40 ms on Linux) on every kept-alive request."""

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, addr = super().get_request()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return conn, addr


@contextmanager
def serving(handler: Callable[..., http.server.BaseHTTPRequestHandler], *, nodelay: bool = True) -> Iterator[str]:
    """A threading HTTP server for ``handler`` on 127.0.0.1 (a free port), in a daemon thread; yields its base URL
    and stops it on exit. Shared by the tests' indexes and the benchmarks' servers. ``nodelay=False``: plain
    ``http.server``, whose kept-alive replies wait about 40 ms each for the client's delayed ACK."""
    server_class = _NoDelayServer if nodelay else http.server.ThreadingHTTPServer
    server = server_class(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def fresh_venv(path: Path) -> Path:
    """A new virtual environment at ``path`` (this interpreter's version) -> its python."""
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True, timeout=120)
    return path / "bin" / "python"


def printed_by(python: Path, script: str) -> str:
    """What ``script`` prints when ``python`` runs it; an AssertionError with its stderr when it fails."""
    result = subprocess.run([str(python), "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def find_uv() -> str | None:
    """uv on PATH, else beside this interpreter (a test dependency in the venv); None when there is none."""
    uv = shutil.which("uv") or os.path.join(os.path.dirname(sys.executable), "uv")
    return uv if os.path.exists(uv) else None


def uv_synced_venv(uv: str, lock_dir: Path, venv: Path) -> Path:
    """A fresh venv at ``venv`` made equal to ``lock_dir``'s pylock.toml by ``uv pip sync`` (no user config,
    no cache) -> its python; an AssertionError with uv's stderr when the sync fails."""
    python = fresh_venv(venv)
    synced = subprocess.run(
        [uv, "pip", "sync", "pylock.toml", "--python", str(python), "--no-cache"],
        cwd=lock_dir, capture_output=True, text=True, timeout=120, env={**os.environ, "UV_NO_CONFIG": "1"},
    )  # fmt: skip
    assert synced.returncode == 0, synced.stderr
    return python


class CountingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder with ``Cache-Control: max-age=<max_age>`` and keeps the paths asked for (``seen``);
    the tests set both on the class before a run."""

    max_age: ClassVar[int] = 600
    seen: ClassVar[list[str]] = []

    def end_headers(self) -> None:
        self.send_header("Cache-Control", f"max-age={type(self).max_age}")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        type(self).seen.append(self.path)


@contextmanager
def cpu_torch_index(root: Path) -> Iterator[str]:
    """A ``/whl/cpu/torch/`` page on 127.0.0.1 (``CountingHandler``) holding one tiny wheel of the CPU torch
    the shipped database offers this interpreter's Python, with its PEP 658 metadata; yields the ``.../whl``
    root to mirror ``https://download.pytorch.org/whl`` to."""
    from packaging.tags import sys_tags

    from cudaresolve.db.database import load_compat

    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    torch_version = next(
        f"{r.version}+cpu"
        for r in load_compat().packages("torch")
        if python in r.python and any(b.variant == "cpu" for b in r.builds)
    )
    tag = next(iter(sys_tags()))
    wheel = build_wheel(root / "whl" / "files", "torch", torch_version, f"{tag.interpreter}-{tag.abi}-{tag.platform}",
                        metadata_file=True)  # fmt: skip
    page = root / "whl" / "cpu" / "torch" / "index.html"
    page.parent.mkdir(parents=True)
    href = f"/whl/files/{wheel.filename.replace('+', '%2B')}"
    page.write_text(
        f'<a href="{href}#sha256={wheel.sha256}" data-core-metadata="sha256={wheel.metadata_sha256}">'
        f"{wheel.filename}</a>\n"
    )
    CountingHandler.seen = []
    with serving(partial(CountingHandler, directory=str(root))) as base:
        yield f"{base}/whl"
