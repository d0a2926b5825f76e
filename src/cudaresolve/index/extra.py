"""More indexes than the default one: ``--extra-index-url`` and ``--find-links``, from flags, files and the
environment, checked. Pure.

Each package still comes from one index: the first, in this order, that lists it (uv's ``first-index``
rule, which keeps a public index from shadowing a private package: dependency confusion stays
impossible): a ``[tool.cudaresolve] package-index`` entry, then the extra indexes, then the find-links
pages, then the default index. An extra index under the PyTorch index's root (``.../whl/cu121``, what
requirement files from the wild carry) is not one more index: the GPU stack's variant index is chosen for
the target by the database, and that index is never asked for other packages (it also hosts numpy and
others, which would then come from it). A warning says so. An index URL must be https, or plain http on
this machine or on a ``--trusted-host``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cudaresolve.core.urls import redact, split_url
from cudaresolve.errors import InvalidInput
from cudaresolve.index.mirrors import check_http_url
from cudaresolve.index.trust import LOCAL_HOSTS
from cudaresolve.text.findings import warning
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from cudaresolve.text.findings import Notice

__all__ = ["ENV_EXTRA_INDEX", "ExtraSources", "extra_sources"]

#: The environment variables pip and uv read for extra indexes (space-separated URLs).
ENV_EXTRA_INDEX = ("PIP_EXTRA_INDEX_URL", "UV_EXTRA_INDEX_URL")


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtraSources:
    """The checked extra indexes and find-links pages, in the order they are asked, and what the user must hear."""

    indexes: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    notices: tuple[Notice, ...] = ()


def extra_sources(
    indexes: Iterable[str],
    find_links: Iterable[str],
    *,
    trusted_hosts: Iterable[str],
    environ: Mapping[str, str],
    pytorch_root: str,
) -> ExtraSources:
    """``indexes`` (flags, then files) and those of the environment, ``find_links``, as the module docstring says."""
    from_env = [url for name in ENV_EXTRA_INDEX for url in environ.get(name, "").split()]
    trusted = {h.strip().lower().split(":")[0] for h in trusted_hosts}
    root = pytorch_root.rstrip("/")
    kept: list[str] = []
    notices: list[Notice] = []
    for url in dict.fromkeys(u.strip().rstrip("/") for u in (*indexes, *from_env) if u.strip()):
        checked = _checked(url, trusted)
        if checked == root or checked.startswith(f"{root}/"):
            notices.append(warning("extra-index-pytorch", "index.extra-index-pytorch", url=redact(checked)))
            continue
        kept.append(checked)
    links = tuple(dict.fromkeys(_local_folder(u.strip()) or _checked(u.strip(), trusted) for u in find_links
                                if u.strip()))  # fmt: skip
    return ExtraSources(indexes=tuple(kept), find_links=links, notices=tuple(notices))


def _local_folder(text: str) -> str | None:
    """A folder of wheels on this machine given as ``--find-links`` (a path, or a ``file://`` URL naming a folder, as
    pip and uv take it): its ``file://`` URL, without the trailing slash; None when ``text`` names no folder."""
    from pathlib import Path
    from urllib.parse import unquote, urlsplit

    if text.startswith("file:"):
        parts = urlsplit(text)
        if parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
            return None
        text = unquote(parts.path)
    elif "://" in text:
        return None
    folder = Path(text).expanduser()
    return folder.resolve().as_uri() if folder.is_dir() else None


def _checked(url: str, trusted: set[str]) -> str:
    """``check_http_url``'s rule for any index URL, and plain http only here or on a trusted host."""
    checked = check_http_url(url, "index.bad-extra-index", "index.bad-extra-index.hint")
    parts = split_url(checked)
    host = (parts.hostname or "").lower() if parts is not None else ""
    if parts is not None and parts.scheme == "http" and host not in LOCAL_HOSTS and host not in trusted:
        raise InvalidInput(Text.of("index.extra-index-http", url=redact(url)[:200], host=host),
                           hint=Text("index.bad-extra-index.hint"))  # fmt: skip
    return checked
