"""The anchors of a PEP 503 HTML page, as ``index.simple.parse_simple_html`` reads them. Pure.

Apart from ``index.simple`` so that ``html.parser`` is imported only for an HTML page: PyPI sends JSON.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Final

from cudaresolve.index.limits import MAX_PAGE_FILES, TooManyFiles

__all__ = ["AnchorParser"]

#: A ``<`` that no ``>`` closes before the next ``<``: no tag. html.parser scans again from each such ``<`` to the
#: end of what it holds, so a page of them (``<a <a <a ...``, ``<!--<!--...``) took time quadratic in its size
#: (160 KB: a minute); escaped, it is text, and the page parses in one pass.
_LONE_LT: Final = re.compile(r"<(?=[^<>]*(?:<|\Z))")


class AnchorParser(HTMLParser):
    """Collects ``<a>`` attributes and text, ``<base href>`` and the repository-version meta tag; ``TooManyFiles``
    past ``MAX_PAGE_FILES`` anchors."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)  # attribute values arrive html-unescaped
        self.anchors: list[tuple[dict[str, str | None], str]] = []
        self.base: str | None = None
        self.api_version: str | None = None
        self._open: tuple[dict[str, str | None], list[str]] | None = None

    def feed(self, data: str) -> None:
        super().feed(_LONE_LT.sub("&lt;", data))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "a":
            self._close()
            self._open = (values, [])
        elif tag == "base" and self.base is None and values.get("href"):
            self.base = values["href"]
        elif tag == "meta" and values.get("name") == "pypi:repository-version":
            self.api_version = values.get("content")

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self._open[1].append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._close()

    def close(self) -> None:
        super().close()
        self._close()  # an anchor left open at the end of the page still counts

    def _close(self) -> None:
        if self._open is not None:
            if len(self.anchors) >= MAX_PAGE_FILES:
                raise TooManyFiles(MAX_PAGE_FILES)
            self.anchors.append((self._open[0], "".join(self._open[1]).strip()))
            self._open = None
