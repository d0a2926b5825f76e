"""The methods ``dataclasses`` writes for each class, compiled once and kept in the cache. Does I/O.

CPython's ``dataclasses`` writes the ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__`` and
``__delattr__`` of each class as source text and compiles the text with ``exec`` when the class is made (3.11
and 3.12: one text per method; 3.13: one per class). Compiling is most of the cost: about 1 ms a frozen class
on this machine, 55 ms of a repeated 189-package lock, which makes 56 of ours. The text is the same from run to
run for the same class on the same Python, so, as Python keeps a module's bytecode, the code compiled from
each text is kept: ``compiled_once`` has the module's ``exec`` (looked up in its globals before the builtins)
take code already compiled for that very text, and writes the texts compiled anew when the command ends.
What runs is the code Python's own compiler made of the text ``dataclasses`` wrote: the classes are the same.

The kept file holds each text with its code (``marshal``), one entry after another, each after its length,
compressed entry by entry (so that writing it holds little more than its compressed size), for one Python build
(its ``sys.version`` names the file): code marshalled by another Python is never read. It is read only when it
is this user's own regular file that nobody else may write and that is no larger than ``_MAX_BYTES``
(``core.files.private_entry``), and only whole: its first line is the SHA-256 of the rest, and it inflates to at
most ``_MAX_INFLATED`` bytes. At most ``_MAX_TEXTS`` texts are kept, those of the last run first; the folder
keeps the newest ``_KEEP`` files (one per Python build).
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import hashlib
import itertools
import marshal
import re
import struct
import sys
import zlib
from types import CodeType
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = ["compiled_once"]

_SUBDIR: Final = "methods-v1"
_KEEP: Final = 4
_NAMES: Final = re.compile(r"[0-9a-f]{64}\.marshal")
_MAX_BYTES: Final = 16 * 1024 * 1024  # this package's classes: about 0.1 MB for the 80 a cold lock makes
_MAX_INFLATED: Final = 64 * 1024 * 1024  # the marshalled texts and code a kept file may hold (a bound, not a fact)
_MAX_TEXTS: Final = 4096
_SIZE: Final = struct.Struct("<I")  # before each entry: its length


class _Compiled:
    """``exec`` for ``dataclasses``: a text it was given before runs the code compiled from it then."""

    def __init__(self, kept: dict[str, CodeType]) -> None:
        self.kept = kept
        self.used: dict[str, CodeType] = {}
        self.new = 0

    def __call__(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        if type(source) is str:
            code = self.used.get(source) or self.kept.get(source)
            if code is None:
                code = compile(source, "<string>", "exec")
                self.new += 1
            self.used[source] = code
            source = code
        builtins.exec(source, globals, locals)


@contextlib.contextmanager
def compiled_once(cache: Path | None) -> Iterator[None]:
    """While the block runs, the classes made take their methods' code from ``cache`` (None: compiled as
    always); the texts compiled anew are kept there when it ends. Nested, the outer one serves."""
    if cache is None or "exec" in vars(dataclasses):
        yield
        return
    path = cache / _SUBDIR / f"{hashlib.sha256(sys.version.encode()).hexdigest()}.marshal"
    compiled = _Compiled(_read(path))
    dataclasses.exec = compiled  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del dataclasses.exec  # type: ignore[attr-defined]
        if compiled.new:
            _write(path, compiled)


def _read(path: Path) -> dict[str, CodeType]:
    """The texts and their code kept at ``path``; empty when there are none, or they cannot be trusted whole."""
    from cudaresolve.core.files import private_entry

    try:
        if not private_entry(path, _MAX_BYTES):
            return {}
        digest, _, payload = path.read_bytes().partition(b"\n")
        if hashlib.sha256(payload).hexdigest().encode() != digest:
            return {}
        inflate = zlib.decompressobj()
        data = inflate.decompress(payload, _MAX_INFLATED)
        if inflate.unconsumed_tail or not inflate.eof:
            return {}  # more than the bound, or cut short
        kept, at, view = {}, 0, memoryview(data)
        while at < len(data):
            (size,) = _SIZE.unpack_from(data, at)
            at += _SIZE.size + size
            if at > len(data):
                return {}
            entry = marshal.loads(view[at - size : at])
            if type(entry) is not tuple or len(entry) != 2:
                return {}
            text, code = entry
            if type(text) is not str or type(code) is not CodeType:
                return {}
            kept[text] = code
    except (OSError, ValueError, EOFError, TypeError, zlib.error, struct.error):
        return {}
    return kept


def _write(path: Path, compiled: _Compiled) -> None:
    """The texts this run used, then as many kept ones as ``_MAX_TEXTS`` leaves room for, written at ``path``."""
    from cudaresolve.core.files import store_bounded

    kept = dict(itertools.islice(compiled.used.items(), _MAX_TEXTS))
    for text, code in compiled.kept.items():
        if len(kept) >= _MAX_TEXTS:
            break
        kept.setdefault(text, code)
    pack = zlib.compressobj(1)  # entry by entry: what is held while writing is the compressed sixth
    chunks = [pack.compress(_SIZE.pack(len(blob)) + blob) for blob in map(marshal.dumps, kept.items())]
    payload = b"".join([*chunks, pack.flush()])
    store_bounded(path, hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload, keep=_KEEP, names=_NAMES)
