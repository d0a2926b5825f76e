"""What Python compiles anew on every run, compiled once and kept in the cache: the methods ``dataclasses`` writes
for each class and the regular expressions modules compile when imported. Does I/O.

CPython's ``dataclasses`` writes the ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__`` and
``__delattr__`` of each class as source text and compiles the text with ``exec`` when the class is made (3.11
and 3.12: one text per method; 3.13: one per class). Compiling is most of the cost: about 1 ms a frozen class
on this machine, 55 ms of a repeated 189-package lock, which makes 56 of ours. Regular expressions are the same
kind of cost: ``re`` keeps what it compiled for the process only, and a repeated lock compiles some 150 of them
(packaging's requirement, specifier and version grammars, rich's markup, ours), 13 ms of its 150. The text is the
same from run to run on the same Python, so, as Python keeps a module's bytecode, what is compiled from it is
kept: while ``compiled_once`` runs, ``dataclasses`` (its ``exec``, looked up in its globals before the builtins)
takes the code already compiled for that very text, and ``re`` (its ``_compiler.compile``) the program its
compiler made for that pattern and those flags; the texts and patterns compiled anew are written when the block
ends. What runs is what Python's own compilers made: a class's code comes from ``compile``, and a pattern is
made by ``_sre.compile`` from its parser's and code generator's output, as ``re`` makes it (``_sre`` checks a
program before taking it), and a pattern compiled anew is kept only when it equals the one ``re`` makes. On a
Python whose ``re`` is not laid out so (``_regex_parts``), patterns are compiled as always.

The kept file holds each text or pattern and what it compiled to (``marshal``, each after its length), one entry
after another, compressed entry by entry (so that writing it holds little more than its compressed size), for
one Python build (its ``sys.version`` names the file): what another Python marshalled is never read. A run
unmarshals the keys alone, and the code or program of an entry only when it is asked for (a repeated lock uses
some 500 of the 900 a file holds; unmarshalling all took 4 of the 8 ms the file cost). It is read
only when it is this user's own regular file that nobody else may write and that is no larger than
``_MAX_BYTES`` (``core.files.private_entry``), and only whole: its first line is the SHA-256 of the rest, and it
inflates to at most ``_MAX_INFLATED`` bytes. At most ``_MAX_TEXTS`` entries are kept, those of the last run
first; the folder keeps the newest ``_KEEP`` files (one per Python build).

A run whose cache has no such file (a first run, a new ``--cache-dir``) starts from the one its wheel carries
(``shipped_file``: ``hatch_build.py`` runs ``compiled_once`` while it imports every module of the package and
builds the database, and puts what it kept in the wheel), when that was made by this very Python build and is a
file only its installer could have written (``core.files.installed_entry``); it is read as the cache's is, and
what the run compiles beyond it goes to the cache.
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
    from collections.abc import Callable, Iterator
    from pathlib import Path

__all__ = ["compiled_once", "kept_file", "shipped_file"]

#: "methods-v1" held the dataclasses' methods only; 1 marshalled each entry whole, 2 its key and value apart
_SUBDIR: Final = "compiled-v2"
_KEEP: Final = 4
_NAMES: Final = re.compile(r"[0-9a-f]{64}\.marshal")
_MAX_BYTES: Final = 16 * 1024 * 1024  # this package's classes and patterns: about 0.2 MB for a cold lock's
_MAX_INFLATED: Final = 64 * 1024 * 1024  # the marshalled entries a kept file may hold (a bound, not a fact)
_MAX_TEXTS: Final = 4096
_SIZE: Final = struct.Struct("<I")  # before each entry: its length
_REGEX: Final = "re"  # a pattern's key: (_REGEX, the pattern, its flags); a method's key is its text

#: What ``_sre.compile`` takes after the pattern: the flags, the program, the number of groups, the names of
#: the groups to their numbers and back.
RegexParts = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]


class _Kept:
    """What one block serves and keeps: the entries read (each value still marshalled), those used this run
    (unmarshalled) and how many were made anew."""

    def __init__(self, kept: dict[Any, bytes]) -> None:
        self.kept = kept
        self.used: dict[Any, Any] = {}
        self.new = 0

    def take(self, key: Any) -> Any:
        found = self.used.get(key)
        if found is None:
            blob = self.kept.get(key)
            if blob is None:
                return None
            try:
                found = marshal.loads(blob)
            except (ValueError, EOFError, TypeError):
                found = None
            if not _well_formed(key, found):
                del self.kept[key]  # made anew, and not written again as it was
                return None
            self.used[key] = found
        return found

    def add(self, key: Any, value: Any) -> None:
        self.used[key] = value
        self.new += 1


class _Methods:
    """``exec`` for ``dataclasses``: a text it was given before runs the code compiled from it then."""

    def __init__(self, kept: _Kept) -> None:
        self.kept = kept

    def __call__(self, source: Any, globals: Any = None, locals: Any = None, /) -> None:
        if type(source) is str:
            code = self.kept.take(source)
            if code is None:
                code = compile(source, "<string>", "exec")
                self.kept.add(source, code)
            source = code
        builtins.exec(source, globals, locals)


class _Regexes:
    """``re._compiler.compile`` while a block runs: a pattern compiled before is made from its kept program; one
    compiled anew is made as ``re`` makes it (``_regex_parts``), the first of them checked against ``re``'s own.
    What is kept for a pattern serves the flags it was given and the flags it ended with (``re.UNICODE`` added to
    a text pattern, its inline flags): a pickled pattern (the database's) is compiled again with the latter, and
    Python's own pickling holds the two alike."""

    def __init__(self, kept: _Kept, original: Callable[..., re.Pattern[Any]], make: Callable[..., Any]) -> None:
        self.kept, self.original, self.make = kept, original, make
        self.checked = self.off = False

    def __call__(self, pattern: Any, flags: int = 0) -> re.Pattern[Any]:
        if type(pattern) not in (str, bytes) or flags & re.DEBUG or self.off:
            return self.original(pattern, flags)
        key = (_REGEX, pattern, int(flags))
        parts = self.kept.take(key)
        if parts is not None:
            with contextlib.suppress(TypeError, ValueError, RuntimeError, OverflowError):  # not a program: anew
                return self.make(pattern, *parts)  # type: ignore[no-any-return]
        try:
            parts = _regex_parts(pattern, int(flags))
            made = self.make(pattern, *parts) if parts is not None else None
        except Exception:  # a pattern that does not compile: ``re`` raises its own error for it
            made = None
        if made is None:
            return self.original(pattern, flags)
        if not self.checked:
            self.checked = True
            if made != self.original(pattern, flags):  # the same flags and program, or this ``re`` works otherwise
                self.off = True
                return self.original(pattern, flags)
        self.kept.add(key, parts)
        if parts[0] != key[2]:  # also under the flags it ended with, as a pickled pattern is compiled again
            self.kept.add((_REGEX, pattern, parts[0]), parts)
        return made  # type: ignore[no-any-return]


def _regex_parts(pattern: str | bytes, flags: int) -> RegexParts | None:
    """What ``re._compiler.compile`` hands ``_sre.compile`` for ``pattern``, worked out as CPython 3.11's does (a
    Python whose compiler works otherwise fails the first check in ``_Regexes``); None where ``re`` has no such
    parser and code generator."""
    compiler, parser = getattr(re, "_compiler", None), getattr(re, "_parser", None)
    code_of, parse = getattr(compiler, "_code", None), getattr(parser, "parse", None)
    if code_of is None or parse is None:
        return None
    parsed = parse(pattern, flags)
    code = [int(op) for op in code_of(parsed, flags)]
    groupindex = {str(name): int(number) for name, number in parsed.state.groupdict.items()}
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, number in groupindex.items():
        indexgroup[number] = name
    return int(flags | parsed.state.flags), code, int(parsed.state.groups - 1), groupindex, tuple(indexgroup)


@contextlib.contextmanager
def compiled_once(cache: Path | None) -> Iterator[None]:
    """While the block runs, classes take their methods' code and patterns their programs from ``cache`` (None:
    compiled as always); what was compiled anew is kept there when it ends. Nested, the outer one serves."""
    compiler = getattr(re, "_compiler", None)
    if cache is None or "exec" in vars(dataclasses):
        yield
        return
    path = kept_file(cache)
    kept = _Kept(_read(path) or _read(shipped_file(), installed=True))
    original = getattr(compiler, "compile", None)
    make = getattr(sys.modules.get("_sre"), "compile", None)
    dataclasses.exec = _Methods(kept)  # type: ignore[attr-defined]
    if original is not None and make is not None:
        compiler.compile = _Regexes(kept, original, make)  # type: ignore[union-attr]
    try:
        yield
    finally:
        del dataclasses.exec  # type: ignore[attr-defined]
        if original is not None and make is not None:
            compiler.compile = original  # type: ignore[union-attr]
        if kept.new:
            _write(path, kept)


def kept_file(cache: Path) -> Path:
    """The file ``compiled_once`` keeps in ``cache``: one per Python build."""
    return cache / _SUBDIR / f"{hashlib.sha256(sys.version.encode()).hexdigest()}.marshal"


def shipped_file() -> Path:
    """The file a wheel carries for the Python build that built it (``hatch_build.py`` writes it as ``kept_file``
    does, every module of the package imported): what a run whose cache has none starts from."""
    from pathlib import Path

    return Path(__file__).resolve().parent.parent / "data" / "compiled" / kept_file(Path()).name


def _read(path: Path, *, installed: bool = False) -> dict[Any, bytes]:
    """The entries kept at ``path``, each key with its value still marshalled; empty when there are none, or they
    cannot be trusted whole. ``installed``: a file the package carries (``core.files.installed_entry``)."""
    from cudaresolve.core.files import installed_entry, private_entry, unseal

    try:
        trusted = installed_entry(path, _MAX_BYTES) if installed else private_entry(path, _MAX_BYTES)
        payload = unseal(path.read_bytes()) if trusted else None
        if payload is None:
            return {}
        inflate = zlib.decompressobj()
        data = inflate.decompress(payload, _MAX_INFLATED)
        if inflate.unconsumed_tail or not inflate.eof:
            return {}  # more than the bound, or cut short
        kept: dict[Any, bytes] = {}
        at, view = 0, memoryview(data)
        while at < len(data):
            (key_size,) = _SIZE.unpack_from(data, at)
            key_end = at + _SIZE.size + key_size
            (size,) = _SIZE.unpack_from(data, key_end)
            at = key_end + _SIZE.size + size
            if at > len(data):
                return {}
            key = marshal.loads(view[key_end - key_size : key_end])
            if not _is_key(key):
                return {}
            kept[key] = view[at - size : at]  # type: ignore[assignment]  # bytes-like: unmarshalled when asked
    except (OSError, ValueError, EOFError, TypeError, zlib.error, struct.error):
        return {}
    return kept


def _entry(key: bytes, value: bytes | memoryview) -> bytes:
    """One entry as the file holds it: the marshalled key and value, each after its length."""
    return b"".join((_SIZE.pack(len(key)), key, _SIZE.pack(len(value)), value))


def _is_key(key: Any) -> bool:
    """Whether ``key`` is a method's text or a pattern's key, ``(_REGEX, the pattern, its flags)``."""
    if type(key) is str:
        return True
    return type(key) is tuple and len(key) == 3 and key[0] == _REGEX and type(key[1]) in (str, bytes) and (
        type(key[2]) is int
    )


def _well_formed(key: Any, value: Any) -> bool:
    """Whether an entry read is a method's text and its code, or a pattern's key and what makes it."""
    if not _is_key(key):
        return False
    return type(value) is CodeType if type(key) is str else type(value) is tuple and len(value) == 5


def _write(path: Path, kept: _Kept) -> None:
    """The entries this run used, then as many kept ones as ``_MAX_TEXTS`` leaves room for, written at ``path``."""
    from cudaresolve.core.files import seal, store_bounded

    used = dict(itertools.islice(kept.used.items(), _MAX_TEXTS))
    room = itertools.islice((item for item in kept.kept.items() if item[0] not in used), _MAX_TEXTS - len(used))
    pack = zlib.compressobj(1)  # entry by entry: what is held while writing is the compressed sixth
    chunks = [pack.compress(_entry(marshal.dumps(key), marshal.dumps(value))) for key, value in used.items()]
    chunks += [pack.compress(_entry(marshal.dumps(key), blob)) for key, blob in room]  # as read: never unmarshalled
    payload = b"".join([*chunks, pack.flush()])
    store_bounded(path, seal(payload), keep=_KEEP, names=_NAMES)
