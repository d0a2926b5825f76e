"""Serve a frozen PyPI copy (``tools/freeze_pypi.py``) on 127.0.0.1, as PyPI serves it. Does I/O: files, a thread.

    with FrozenPyPI(Path("~/.cache/cudaresolve-bench/pypi").expanduser()) as index:
        index.base  # http://127.0.0.1:PORT ; index.base + "/simple" is the index URL

Routes:

* ``/simple/`` and ``/simple/<project>/``: the PEP 691 JSON pages
  (``Content-Type: application/vnd.pypi.simple.v1+json``, ``Cache-Control: max-age=600``, as PyPI
  sends them, with an ``ETag`` for conditional requests); an unknown project is a 404.
* ``/files/<wheel>.metadata``: the PEP 658 files (``max-age=365000000, immutable``). The wheels
  themselves are not there: every tool under test resolves from metadata only.
* ``/whl/<variant>/<project>/``: the PyTorch index as cudaresolve asks for it
  (``--index-mirror https://download.pytorch.org/whl=<base>/whl``), made from PyPI's page. PyPI's
  torch, torchvision and torchaudio ARE one of PyTorch's builds, the database's ``pypi-variant``
  of each release (torch 2.11.0 on PyPI is ``2.11.0+cu130``); the PyTorch index names them with
  that local tag. So this page lists, of PyPI's files, those whose release's ``pypi-variant`` is
  ``<variant>``, under their PyTorch name (``torch-2.11.0+cu130-cp311-...``), with the same sha256
  and size; their ``.metadata`` is PyPI's with only the ``Version:`` line given the local tag
  (``/alias/<variant>/<wheel>.metadata``), since cudaresolve checks that the metadata describes the
  listed version. Dependencies (``Requires-Dist``) are byte for byte PyPI's.

``requests`` counts what was answered, by kind (page, metadata, 304, 404).
"""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import sys
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from local_index import serving

PAGE_TYPE: Final = "application/vnd.pypi.simple.v1+json"
PAGE_CACHE: Final = "max-age=600, public"  # PyPI's simple pages
FILE_CACHE: Final = "max-age=365000000, immutable, public"  # files.pythonhosted.org


@dataclass(frozen=True, slots=True)
class Reply:
    body: bytes
    content_type: str
    cache_control: str
    etag: str


def _reply(body: bytes, content_type: str, cache_control: str) -> Reply:
    return Reply(body, content_type, cache_control, '"' + hashlib.sha256(body).hexdigest()[:32] + '"')


def pypi_variants() -> dict[str, dict[str, str]]:
    """project -> release version -> the database's ``pypi-variant`` (the build PyPI carries)."""
    from cudaresolve.db.database import load_compat

    db = load_compat()
    out: dict[str, dict[str, str]] = {}
    for name in db.package_names:
        for release in db.packages(name):
            if release.pypi_variant:
                out.setdefault(str(name), {})[str(release.version)] = release.pypi_variant
    return out


def alias_pages(root: Path, variants: dict[str, dict[str, str]]) -> dict[str, Reply]:
    """``/whl/<variant>/<project>/`` pages and ``/alias/...`` metadata made from the frozen PyPI pages."""
    out: dict[str, Reply] = {}
    for project, by_version in variants.items():
        page_file = root / "simple" / project / "index.json"
        if not page_file.exists():
            continue
        page = json.loads(page_file.read_text())
        pages: dict[str, list[dict[str, Any]]] = {}
        for file in page["files"]:
            dist, version, rest = file["filename"].split("-", 2)
            variant = by_version.get(version)
            if variant is None:
                continue
            meta = (root / "files" / f"{file['filename']}.metadata").read_bytes()
            meta = re.sub(rb"(?m)^Version: (\S+)$", rb"Version: \1+" + variant.encode(), meta, count=1)
            meta_url = f"/alias/{variant}/{file['filename']}"
            out[meta_url + ".metadata"] = _reply(meta, "application/octet-stream", FILE_CACHE)
            digest = hashlib.sha256(meta).hexdigest()
            renamed = dict(
                file,
                filename=f"{dist}-{version}+{variant}-{rest}",
                url=meta_url,
                **{"core-metadata": {"sha256": digest}, "data-dist-info-metadata": {"sha256": digest}},
            )
            pages.setdefault(variant, []).append(renamed)
        for variant, files in pages.items():
            versions = sorted({f["filename"].split("-")[1] for f in files})
            body = {"meta": {"api-version": "1.1"}, "name": page["name"], "versions": versions, "files": files}
            out[f"/whl/{variant}/{project}/"] = _reply(json.dumps(body).encode(), PAGE_TYPE, PAGE_CACHE)
    return out


@dataclass
class FrozenPyPI:
    """The server; ``alias`` adds the ``/whl/<variant>/`` pages (needs cudaresolve importable)."""

    root: Path
    alias: bool = True
    nodelay: bool = False  # TCP_NODELAY: no ~40 ms delayed-ACK wait per kept-alive reply (``local_index.serving``)
    base: str = ""
    requests: Counter[str] = field(default_factory=Counter)
    paths: Counter[tuple[str, int]] = field(default_factory=Counter)  # (path, status) answered
    _replies: dict[str, Reply] = field(default_factory=dict)
    _stack: ExitStack = field(default_factory=ExitStack, repr=False)

    def load(self) -> None:
        for page in (self.root / "simple").glob("*/index.json"):
            self._replies[f"/simple/{page.parent.name}/"] = _reply(page.read_bytes(), PAGE_TYPE, PAGE_CACHE)
        top = self.root / "simple" / "index.json"
        self._replies["/simple/"] = _reply(top.read_bytes(), PAGE_TYPE, PAGE_CACHE)
        if self.alias:
            self._replies.update(alias_pages(self.root, pypi_variants()))

    def lookup(self, path: str) -> Reply | None:
        path = path.split("?", 1)[0].split("#", 1)[0]
        if not path.endswith("/") and not path.endswith(".metadata"):
            path += "/"
        found = self._replies.get(path)
        if found is None and path.startswith("/files/") and path.endswith(".metadata") and "/" not in path[7:]:
            file = self.root / "files" / path[7:]
            if file.is_file():
                found = _reply(file.read_bytes(), "application/octet-stream", FILE_CACHE)
        return found

    def __enter__(self) -> FrozenPyPI:
        if not self._replies:
            self.load()
        index = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as PyPI

            def do_GET(self) -> None:
                reply = index.lookup(self.path)
                status = 404 if reply is None else 304 if self.headers.get("If-None-Match") == reply.etag else 200
                index.paths[(self.path, status)] += 1
                if reply is None:
                    index.requests["404"] += 1
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self.headers.get("If-None-Match") == reply.etag:
                    index.requests["304"] += 1
                    self.send_response(304)
                    self.send_header("ETag", reply.etag)
                    self.send_header("Cache-Control", reply.cache_control)
                    self.end_headers()
                    return
                index.requests["metadata" if self.path.endswith(".metadata") else "page"] += 1
                self.send_response(200)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(reply.body)))
                self.send_header("Cache-Control", reply.cache_control)
                self.send_header("ETag", reply.etag)
                self.end_headers()
                self.wfile.write(reply.body)

            def do_HEAD(self) -> None:
                self.do_GET()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.base = self._stack.enter_context(serving(Handler, nodelay=self.nodelay))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()


def main() -> int:
    import argparse
    import sys
    import time

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    from freeze_pypi import DEFAULT_OUT

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--no-alias", action="store_true", help="no /whl/<variant>/ pages")
    args = parser.parse_args()
    with FrozenPyPI(args.dir, alias=not args.no_alias) as index:
        print(f"serving {args.dir} at {index.base}/simple (Ctrl-C stops)", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
