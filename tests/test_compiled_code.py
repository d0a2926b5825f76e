"""The dataclasses' methods and the patterns compiled once (``core.compiled_code``): the code kept for a text is the
code that text compiles to, a pattern's program the one ``re`` makes, taken back only whole, from this user's own
file, for this Python; the classes and patterns behave the same."""

from __future__ import annotations

import builtins
import dataclasses
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from cudaresolve.core import compiled_code
from cudaresolve.core.compiled_code import compiled_once

if TYPE_CHECKING:
    from pathlib import Path


def _kept(cache: Path) -> list[Path]:
    return sorted((cache / "compiled-v2").glob("*.marshal"))


def _texts(kept: Path) -> set[str]:
    import marshal
    import zlib

    data = zlib.decompress(kept.read_bytes().partition(b"\n")[2])
    texts, at = set(), 0
    while at < len(data):  # each entry: the key, then the value, each after its length
        size = int.from_bytes(data[at : at + 4], "little")
        texts.add(marshal.loads(data[at + 4 : at + 4 + size]))
        at += 4 + size
        at += 4 + int.from_bytes(data[at : at + 4], "little")
    return texts


def _make(fields: tuple[str, ...] = ("size", "name")) -> type:
    """A frozen, slotted, keyword-only class of ``fields`` (the last with a default), made anew."""
    annotations = dict.fromkeys(fields, "Any")
    namespace: dict[str, Any] = {"__annotations__": annotations, fields[-1]: "x", "__module__": __name__}
    return dataclasses.dataclass(frozen=True, slots=True, kw_only=True)(type("Made", (), namespace))


class _Counting:
    """``compile`` as the module sees it, counting the texts given."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, source: str, *args: Any) -> Any:
        self.texts.append(source)
        return builtins.compile(source, *args)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> _Counting:
    spy = _Counting()
    monkeypatch.setattr(compiled_code, "compile", spy, raising=False)
    return spy


def _behaves(cls: type) -> None:
    one, same, other = cls(size=1), cls(size=1), cls(size=2, name="y")
    assert one == same and hash(one) == hash(same) and one != other
    assert repr(other) == "Made(size=2, name='y')" and one.name == "x"
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.size = 3
    with pytest.raises(TypeError):
        cls(1)  # keyword-only
    assert not hasattr(one, "__dict__")


def test_a_class_made_again_takes_the_kept_code_and_behaves_the_same(tmp_path: Path, counting: _Counting) -> None:
    cache = tmp_path / "cache"
    with compiled_once(cache):
        _behaves(_make())
    compiled = len(counting.texts)
    assert compiled >= 4  # __init__, __repr__, __eq__, __setattr__, ... as this Python writes them
    [kept] = _kept(cache)
    written = kept.stat().st_mtime_ns
    with compiled_once(cache):
        _behaves(_make())
    assert len(counting.texts) == compiled  # nothing compiled: every text was kept
    assert kept.stat().st_mtime_ns == written  # and nothing new to write
    with compiled_once(cache):
        _make(("size", "name", "extra"))  # another shape: another __init__ text, compiled and added
    assert len(counting.texts) > compiled
    assert len(_texts(kept)) > compiled and set(counting.texts) <= _texts(kept)
    assert "exec" not in vars(dataclasses)  # the module is as it was once a block ends


def test_only_the_entries_asked_for_are_unmarshalled_and_a_bad_one_is_made_anew(
    tmp_path: Path, counting: _Counting
) -> None:
    import marshal

    cache = tmp_path / "cache"
    with compiled_once(cache):
        _make()
        _make(("size", "name", "extra"))
    [kept] = _kept(cache)
    entries = compiled_code._Kept(compiled_code._read(kept))
    assert entries.kept and all(isinstance(blob, memoryview) for blob in entries.kept.values())  # none unmarshalled
    text = next(t for t in entries.kept if isinstance(t, str) and "extra" in t)
    entries.kept[text] = memoryview(marshal.dumps(5))  # sealed and whole, but not a method's code
    compiled_code._write(kept, entries)
    counting.texts.clear()
    with compiled_once(cache):
        _behaves(_make())  # its texts all served as kept
        assert counting.texts == []
        _make(("size", "name", "extra"))
    assert counting.texts == [text]  # the bad one alone compiled anew, and kept as compiled
    assert isinstance(marshal.loads(compiled_code._read(kept)[text]), type(compile("", "", "exec")))


def test_without_a_cache_or_nested_nothing_is_kept_twice(tmp_path: Path, counting: _Counting) -> None:
    with compiled_once(None):
        _behaves(_make())
    assert counting.texts == [] and "exec" not in vars(dataclasses)  # compiled by the module as always
    cache, inner = tmp_path / "cache", tmp_path / "inner"
    with compiled_once(cache):
        served = dataclasses.exec  # type: ignore[attr-defined]
        with compiled_once(inner):
            assert dataclasses.exec is served  # type: ignore[attr-defined]  # the outer one serves
            _make()
        assert dataclasses.exec is served  # type: ignore[attr-defined]
    assert _kept(cache) and not inner.exists()


def _fill(cache: Path) -> Path:
    with compiled_once(cache):
        _make()
    [kept] = _kept(cache)
    return kept


@pytest.mark.parametrize("damage", ["edited", "cut", "not-marshal", "too-large", "writable-by-others", "a-link"])
def test_a_kept_file_not_whole_or_not_ours_is_not_read(
    tmp_path: Path, counting: _Counting, damage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = _fill(tmp_path / "cache")
    data = kept.read_bytes()
    seal, _, payload = data.partition(b"\n")
    if damage == "edited":
        middle = len(payload) // 2
        kept.write_bytes(seal + b"\n" + payload[:middle] + bytes([payload[middle] ^ 1]) + payload[middle + 1 :])
    elif damage == "cut":
        kept.write_bytes(data[: len(data) // 2])
    elif damage == "not-marshal":
        import hashlib

        junk = b"\x00not marshal"
        kept.write_bytes(hashlib.sha256(junk).hexdigest().encode() + b"\n" + junk)
    elif damage == "too-large":  # sealed, but inflating past the bound
        import hashlib
        import zlib

        monkeypatch.setattr(compiled_code, "_MAX_INFLATED", 16)
        big = zlib.compress(b"\x00" * 1024)
        kept.write_bytes(hashlib.sha256(big).hexdigest().encode() + b"\n" + big)
    elif damage == "writable-by-others":
        os.chmod(kept, 0o666)
    else:
        real = kept.with_name("real")
        kept.rename(real)
        kept.symlink_to(real)
    before = len(counting.texts)
    with compiled_once(tmp_path / "cache"):
        _behaves(_make())
    assert len(counting.texts) > before  # compiled anew, not taken from that file


def test_the_file_is_for_one_python_build_and_bounded(
    tmp_path: Path, counting: _Counting, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = _fill(tmp_path / "cache")
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    before = len(counting.texts)
    with compiled_once(tmp_path / "cache"):
        _make()
    assert len(counting.texts) > before  # another build's file is another file
    assert len(_kept(tmp_path / "cache")) == 2 and kept in _kept(tmp_path / "cache")
    monkeypatch.setattr(compiled_code, "_MAX_TEXTS", 3)
    with compiled_once(tmp_path / "bounded"):
        _make(("a", "b"))
        _make(("c", "d", "e"))
    [bounded] = _kept(tmp_path / "bounded")
    assert len(_texts(bounded)) == 3


def test_a_command_run_again_compiles_and_writes_nothing_new(tmp_path: Path) -> None:
    """As users run it: the first command keeps its classes' methods and patterns (the database's unpickled by the
    second with the flags they ended with among them), the second compiles none and writes none."""
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDARESOLVE_")}
    line = [sys.executable, "-m", "cudaresolve", "--cache-dir", str(cache), "detect", "--gpu", "H100",
            "--driver", "580.65.06", "--json"]  # fmt: skip
    first = subprocess.run(line, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert first.returncode == 0, first.stderr
    [kept] = _kept(cache)
    written = kept.stat().st_mtime_ns
    second = subprocess.run(line, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert second.returncode == 0 and second.stdout == first.stdout
    assert kept.stat().st_mtime_ns == written
    bare = subprocess.run([*line[:3], "--no-cache", *line[5:]], capture_output=True, text=True, timeout=120,
                          env=env, check=False)  # fmt: skip
    assert bare.returncode == 0 and bare.stdout == first.stdout


def _fresh(name: str) -> str:
    """A pattern ``re`` has not compiled in this process (its own cache would answer before the compiler)."""
    import uuid

    return rf"(?P<{name}>[a-z]+)-(\d+)\.(?:whl|tar\.gz)#{uuid.uuid4().hex}"


@pytest.fixture
def parsing(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The patterns ``re``'s parser is given (what is compiled, not made from a kept program)."""
    import re

    seen: list[Any] = []
    parse = re._parser.parse  # type: ignore[attr-defined]

    def spy(pattern: Any, *args: Any) -> Any:
        seen.append(pattern)
        return parse(pattern, *args)

    monkeypatch.setattr(re._parser, "parse", spy)  # type: ignore[attr-defined]
    return seen


def test_a_pattern_compiled_again_takes_its_kept_program_and_matches_the_same(
    tmp_path: Path, parsing: list[Any]
) -> None:
    import pickle
    import re

    cache, text, raw = tmp_path / "cache", _fresh("name"), _fresh("raw").encode()
    original = re._compiler.compile  # type: ignore[attr-defined]
    with compiled_once(cache):
        first = re.compile(text, re.IGNORECASE | re.VERBOSE)
        first_raw = re.compile(raw)
    assert text in parsing and raw in parsing
    assert re._compiler.compile is original  # type: ignore[attr-defined]  # as it was once the block ends
    [kept] = _kept(cache)
    assert ("re", text, int(re.IGNORECASE | re.VERBOSE)) in _texts(kept) and ("re", raw, 0) in _texts(kept)
    re.purge()
    parsing.clear()
    with compiled_once(cache):
        again = re.compile(text, re.IGNORECASE | re.VERBOSE)
        again_raw = re.compile(raw)
        unpickled = pickle.loads(pickle.dumps(first))  # compiled again with the flags it ended with (UNICODE too)
    assert parsing == []  # all made from their kept programs
    assert unpickled == first and unpickled.flags == first.flags != int(re.IGNORECASE | re.VERBOSE)
    assert again == first == re.compile(text, re.IGNORECASE | re.VERBOSE) and again_raw == first_raw
    name = text.split("#")[0]
    found = again.match("Torch-2.whl#" + text.split("#")[1])
    assert found is not None and found["name"] == "Torch" and again.groupindex == {"name": 1}
    assert again.flags == first.flags and again.groups == 2 and name in again.pattern


def test_a_pattern_that_does_not_compile_raises_what_re_raises(tmp_path: Path) -> None:
    import re

    with compiled_once(tmp_path / "cache"), pytest.raises(re.error, match="missing \\)"):
        re.compile("(unclosed" + _fresh("x"))


def test_a_kept_program_that_sre_refuses_is_compiled_anew(tmp_path: Path, parsing: list[Any]) -> None:
    import re

    cache, text = tmp_path / "cache", _fresh("p")
    with compiled_once(cache):
        good = re.compile(text)
    [kept] = _kept(cache)
    broken = compiled_code._Kept(compiled_code._read(kept))
    flags, code, groups, groupindex, indexgroup = broken.take(("re", text, 0))
    broken.used[("re", text, 0)] = (flags, [999, *code], groups, groupindex, indexgroup)  # no program _sre takes
    compiled_code._write(kept, broken)  # sealed and whole: only the program is wrong
    re.purge()
    parsing.clear()
    with compiled_once(cache):
        again = re.compile(text)
    assert text in parsing and again == good


def test_where_re_works_otherwise_patterns_are_compiled_as_always(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import re

    def other(pattern: Any, flags: int) -> Any:  # what a Python whose compiler hands _sre other parts would give
        return (flags | re.ASCII, [1, 0], 0, {}, ())

    monkeypatch.setattr(compiled_code, "_regex_parts", other)
    cache, text = tmp_path / "cache", _fresh("q")
    with compiled_once(cache):
        made = re.compile(text)
        later = re.compile(_fresh("r"))
    assert made == re._compiler.compile(text, 0) and later.pattern.startswith("(?P<r>")  # type: ignore[attr-defined]
    assert not any(type(k) is tuple for kept in _kept(cache) for k in _texts(kept))  # nothing of it kept


def test_a_cache_with_no_file_starts_from_the_one_the_wheel_carries(
    tmp_path: Path, counting: _Counting, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hatch_build.py`` puts a kept file in the wheel (``shipped_file``): a first run's classes take its code."""
    with compiled_once(tmp_path / "build"):
        _make(("size", "shipped", "name"))
    shipped = tmp_path / "package" / "data" / "compiled" / compiled_code.kept_file(tmp_path).name
    shipped.parent.mkdir(parents=True)
    shipped.parent.chmod(0o755)
    shipped.write_bytes(compiled_code.kept_file(tmp_path / "build").read_bytes())
    monkeypatch.setattr(compiled_code, "shipped_file", lambda: shipped)
    counting.texts.clear()
    with compiled_once(tmp_path / "fresh"):
        _make(("size", "shipped", "name"))
    assert counting.texts == []  # every method's code from the wheel's file
    shipped.chmod(0o666)  # a file anyone may write is not the installer's: compiled anew
    with compiled_once(tmp_path / "other"):
        _make(("size", "shipped", "name"))
    assert counting.texts
