"""SHA-256 of small values (cache keys, RECORD rows) without loading OpenSSL. Pure.

``hashlib`` loads OpenSSL's library when imported (about 5 ms, a fortieth of a warm install); CPython's own
SHA-256 module (``_sha256``, ``_sha2`` from Python 3.12) gives the same digest and loads in under 1 ms. It is
slower per byte, so files (wheels, downloads) are still hashed with ``hashlib``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["sha256_bytes", "sha256_hex"]


def _new(data: bytes) -> Any:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
        except ImportError:  # a build without the built-in hashes
            from hashlib import sha256  # type: ignore[assignment,unused-ignore]
    return sha256(data)


def sha256_hex(data: bytes) -> str:
    """The SHA-256 of ``data`` in hexadecimal."""
    return str(_new(data).hexdigest())


def sha256_bytes(data: bytes) -> bytes:
    """The SHA-256 of ``data``."""
    return bytes(_new(data).digest())
