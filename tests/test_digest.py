"""``core.digest``: the built-in SHA-256 gives hashlib's digests, and a build without it falls back to hashlib."""

from __future__ import annotations

import builtins
import hashlib
from typing import TYPE_CHECKING, Any

from hypothesis import given
from hypothesis import strategies as st

from cudaresolve.core.digest import sha256_bytes, sha256_hex

if TYPE_CHECKING:
    import pytest


@given(st.binary(max_size=4096))
def test_the_digests_are_hashlibs(data: bytes) -> None:
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()
    assert sha256_bytes(data) == hashlib.sha256(data).digest()


def test_without_the_built_in_module_hashlib_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    real = builtins.__import__

    def no_builtin_hashes(name: str, *args: Any, **kwargs: Any) -> Any:
        if name in ("_sha256", "_sha2"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_builtin_hashes)
    assert sha256_hex(b"abc") == hashlib.sha256(b"abc").hexdigest()
