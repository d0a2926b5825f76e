"""The field readers a lock's entries share: a key of the expected TOML type, a sha256 digest, a URL's file
name; and the hint of every error about a lock's shape. Pure."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, TypeAlias
from urllib.parse import unquote

from cudaresolve.core.urls import split_url
from cudaresolve.errors import InvalidLockfile
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["REGENERATE_HINT", "WheelChoice", "get_field", "is_sha256", "url_filename"]

#: Picks one of a package's wheels by their file names (its name, the names): the index, or None when none fits.
WheelChoice: TypeAlias = "Callable[[str, Sequence[str]], int | None]"

REGENERATE_HINT: Final = Text("lock.regenerate.hint")
_SHA256: Final = re.compile(r"^[0-9a-f]{64}$")
_KINDS: Final[dict[type, str]] = {dict: "lock.should-be-table", list: "lock.should-be-array"}


def is_sha256(text: str) -> bool:
    """Whether ``text`` is a lower-case hex sha256 digest (64 digits)."""
    return _SHA256.match(text) is not None


def get_field(data: Mapping[str, Any], key: str, kind: type, *, required: bool = False, path: str = "") -> Any:
    """``data[key]`` when it is of ``kind`` (a table for ``dict``), None when absent; else ``InvalidLockfile``
    naming the dotted ``path``."""
    where = f"{path}.{key}" if path else key
    value = data.get(key)
    if value is None:
        if required:
            raise InvalidLockfile(Text.of("lock.missing-key", path=where), hint=REGENERATE_HINT)
        return None
    expected = Mapping if kind is dict else kind
    if not isinstance(value, expected):
        raise InvalidLockfile(Text.of(_KINDS.get(kind, "lock.should-be-string"), path=where), hint=REGENERATE_HINT)
    return value


def url_filename(url: str | None) -> str | None:
    """The file name at the end of a wheel URL, percent-decoded (``%2B`` is the ``+`` of a local version)."""
    parts = split_url(url) if url else None
    if parts is None:  # no URL, or one urllib cannot split (``http://[::1/x.whl``)
        return None
    return unquote(parts.path.rsplit("/", 1)[-1]) or None
