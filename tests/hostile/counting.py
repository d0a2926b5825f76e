"""A readable, seekable file that counts the bytes read through it (bounds on work for binary readers)."""

from __future__ import annotations

import io
from typing import IO, Any


class CountingFile(io.RawIOBase):
    """Wraps a binary file object; ``bytes_read`` is what the reader under test really read."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._f = raw
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def readinto(self, buf: Any) -> int:
        data = self._f.read(len(buf))
        buf[: len(data)] = data
        self.bytes_read += len(data)
        return len(data)

    def close(self) -> None:
        self._f.close()
        super().close()
