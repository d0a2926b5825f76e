"""Index URLs and mirror mappings as the user gives them: checked (http or https, a host, no query or fragment),
and a URL rewritten through the longest matching mirror prefix. Pure.

Apart from the page parsers (``simple``) so that reading a lock's mirrors (``install``) imports no HTML parser.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit

from cudaresolve.core.platforms import canonical_name, is_project_name
from cudaresolve.core.urls import shown_url, split_url
from cudaresolve.errors import InvalidInput
from cudaresolve.text.model import Text

__all__ = ["apply_mirror", "check_http_url", "parse_mirrors", "parse_package_indexes"]


def _matches_prefix(url: str, prefix: str) -> bool:
    return url == prefix or url.startswith((prefix + "/", prefix + "?", prefix + "#"))


def apply_mirror(url: str, mirrors: Mapping[str, str]) -> str:
    """Rewrite ``url`` through the longest matching mirror prefix, on a path boundary.

    ``apply_mirror("https://download.pytorch.org/whl/cu118/torch/",
    {"https://download.pytorch.org/whl": "https://mirror.example.org/pytorch/whl"})`` gives
    ``"https://mirror.example.org/pytorch/whl/cu118/torch/"``; an unmatched URL comes back as is.
    """
    best: tuple[str, str] | None = None
    for prefix, target in mirrors.items():
        clean = prefix.rstrip("/")
        if clean and _matches_prefix(url, clean) and (best is None or len(clean) > len(best[0])):
            best = (clean, target.rstrip("/"))
    return url if best is None else best[1] + url[len(best[0]) :]


def check_http_url(url: str, key: str, hint: str = "index.not-http-url.hint") -> str:
    """An index or mirror URL: http(s) with a host and no query or fragment (a token there would reach the cache
    and the lock), without a trailing slash; else ``InvalidInput`` with message ``key``."""
    parts = split_url(url.strip())  # None: malformed (``http://[::1``, a port that is not a number), or whitespace
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInput(Text.of(key, url=repr(shown_url(url))), hint=Text(hint))
    if parts.query or parts.fragment:
        raise InvalidInput(Text.of("index.url-query", url=shown_url(url.strip())), hint=Text("index.url-query.hint"))
    return url.strip().rstrip("/")


def parse_package_indexes(value: Mapping[str, str]) -> dict[str, str]:
    """``[tool.cudaresolve] package-index`` (``{"mypkg": "https://private.example/simple"}``) -> a checked
    mapping of normalized project name to index URL: https, or http on 127.0.0.1/localhost only."""
    out: dict[str, str] = {}
    for name, url in value.items():
        if not isinstance(name, str) or not is_project_name(name):
            raise InvalidInput(
                Text.of("index.bad-package-name", name=repr(name)[:80]), hint=Text("index.package-index.hint")
            )
        checked = check_http_url(str(url), "index.not-http-url.package-index", "index.package-index.hint")
        parts = urlsplit(checked)
        if parts.scheme != "https" and parts.hostname not in ("127.0.0.1", "localhost", "::1"):
            raise InvalidInput(  # an http(s) URL all right, but plain http to another machine
                Text.of("index.package-index-plain-http", name=name, url=shown_url(checked)),
                hint=Text("index.package-index.hint"),
            )
        out[canonical_name(name)] = checked
    return out


def parse_mirrors(value: Mapping[str, str] | Iterable[str]) -> dict[str, str]:
    """``{"ORIGINAL": "MIRROR"}`` (pyproject) or ``["ORIGINAL=MIRROR", ...]`` (flags) -> a checked mapping."""
    pairs: list[tuple[str, str]] = []
    if isinstance(value, Mapping):
        pairs = [(str(k), str(v)) for k, v in value.items()]
    else:
        for item in value:
            original, sep, mirror = str(item).partition("=")
            if not sep:
                raise InvalidInput(
                    Text.of("index.not-a-mirror-mapping", item=repr(item)),
                    hint=Text.of(
                        "index.not-a-mirror-mapping.hint",
                        example="https://download.pytorch.org/whl=https://mirror.example.org/whl",
                    ),
                )
            pairs.append((original, mirror))
    return {
        check_http_url(o, "index.not-http-url.original"): check_http_url(m, "index.not-http-url.mirror")
        for o, m in pairs
    }
