"""``core.tomlcache``: a TOML text parsed once, its value read back from the user cache the same, dates and times
included; what cannot be kept exactly is parsed every time."""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from datetime import UTC, date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cudaresolve.core import tomlcache
from cudaresolve.core.tomlcache import FOLDER, KEEP, load_toml

LOCK = """\
lock-version = "1.0"
created-by = "test"
ratio = 0.1
big = 123456789012345678901234567890
inf = inf

[[packages]]
name = "torch"
version = "2.7.1+cu126"
when = 1979-05-27
at = 07:32:00.999999

[[packages.wheels]]
name = "torch-2.7.1+cu126-cp311-cp311-manylinux_2_28_x86_64.whl"
upload-time = 2025-06-04T19:14:34.123456Z
local = 2025-06-04T19:14:34
offset = 2025-06-04T19:14:34+05:30
hashes = {sha256 = "ab"}
"""


def _entries() -> list[Path]:
    folder = Path(os.environ["CUDARESOLVE_CACHE_DIR"]) / FOLDER
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.is_dir() else []


def _unparsed(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str) -> Any:
        raise AssertionError("parsed again")

    monkeypatch.setattr(tomlcache, "loads_toml", refuse)


def test_a_text_read_again_is_not_parsed_and_has_the_same_value(monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_toml(LOCK)
    assert first == tomllib.loads(LOCK)
    assert len(_entries()) == 1
    _unparsed(monkeypatch)
    again = load_toml(LOCK)
    assert again == first
    wheel = again["packages"][0]["wheels"][0]
    assert wheel["upload-time"].tzinfo is not None and wheel["local"].tzinfo is None
    assert wheel["offset"].utcoffset() == timedelta(hours=5, minutes=30)
    assert type(again["packages"][0]["when"]) is date and type(again["packages"][0]["at"]) is time


def test_a_damaged_entry_is_parsed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    load_toml(LOCK)
    (entry,) = _entries()
    for damage in (b"{not json", b"[1, 2]", b'{"a": {"\\u0000datetime": "yesterday"}}', b"\xff\xfe"):
        entry.write_bytes(damage)
        assert load_toml(LOCK) == tomllib.loads(LOCK)
    _unparsed(monkeypatch)
    assert load_toml(LOCK) == tomllib.loads(LOCK)  # the parse above was kept again


def test_a_table_shaped_like_a_tag_is_never_kept() -> None:
    text = 'a = {"\\u0000datetime" = "2025-01-01T00:00:00"}\n'
    assert load_toml(text) == {"a": {"\x00datetime": "2025-01-01T00:00:00"}}
    assert load_toml(text) == {"a": {"\x00datetime": "2025-01-01T00:00:00"}}  # a string still, not a time
    assert _entries() == []


def test_a_text_that_does_not_parse_fails_each_time_and_is_not_kept() -> None:
    for _ in range(2):
        with pytest.raises(tomllib.TOMLDecodeError):
            load_toml("a = [1,\n")
    assert _entries() == []


def test_the_folder_keeps_the_newest_entries() -> None:
    for number in range(KEEP + 5):
        load_toml(f"n = {number}\n")
    assert len(_entries()) == KEEP


def test_without_a_user_cache_every_text_is_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", "")
    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", lambda: (_ for _ in ()).throw(RuntimeError("no home")))
    assert load_toml(LOCK) == tomllib.loads(LOCK)


_times = st.one_of(
    st.datetimes(timezones=st.one_of(st.none(), st.just(UTC),
                                     st.integers(-1439, 1439).map(lambda m: timezone(timedelta(minutes=m))))),
    st.dates(),
    st.times(),
)
_scalars = st.one_of(st.integers(), st.floats(allow_nan=False), st.text(), st.booleans(), _times)
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(st.text(), inner, max_size=4)),
                       max_leaves=20)


@given(st.dictionaries(st.text(), _values, max_size=5))
def test_what_is_kept_reads_back_as_it_was(value: dict[str, Any]) -> None:
    try:
        frozen = tomlcache._frozen(value)
    except ValueError:  # a table shaped like a tag: never kept
        return
    assert tomlcache._thawed(json.loads(json.dumps(frozen))) == value


def test_a_datetime_keeps_its_type_not_only_its_value() -> None:
    stamp = datetime(2025, 1, 1, tzinfo=UTC)
    back = tomlcache._thawed(json.loads(json.dumps(tomlcache._frozen({"t": stamp, "d": stamp.date()}))))
    assert type(back["t"]) is datetime and type(back["d"]) is date


@pytest.mark.parametrize("url", ["https://user:S3CR3T@mirror.example/simple", "https://S3CR3T@mirror.example/simple",
                                 "https://mirror.example/simple?token=S3CR3T"])
def test_a_text_with_a_url_that_may_carry_a_secret_is_never_kept(url: str) -> None:
    text = f'[tool.cudaresolve]\nindex-url = "{url}"\n'
    assert load_toml(text) == tomllib.loads(text)
    assert _entries() == []
    plain = '[tool.cudaresolve]\nindex-url = "https://mirror.example/simple"\n'
    load_toml(plain)
    assert len(_entries()) == 1


@pytest.mark.parametrize("escaped", [
    'index-url = """https://ci-bot:S3CR3T\\\n@mirror.example/simple"""',  # a line ending escaped inside the URL
    'url = "https://alice:S3CR3T\\u0040files.example/x.whl"',  # the @ written as an escape
    'url = "https\\u003a//alice:S3CR3T@files.example/x.whl"',
    'mirrors = {"https://alice:S3CR3T@mirror.example/simple" = "https://pypi.org/simple"}',  # in a key
])
def test_a_secret_written_with_escapes_is_never_kept(escaped: str) -> None:
    text = f"[tool.cudaresolve]\n{escaped}\n"
    assert load_toml(text) == tomllib.loads(text)
    assert _entries() == []


def test_a_long_run_of_url_like_text_is_read_in_linear_time() -> None:
    """A text the secret check used to scan quadratically (hours for a megabyte): bounded work."""
    import subprocess
    import sys

    code = ("from cudaresolve.core.tomlcache import load_toml\n"
            "for body in ('a' * 1_000_000, 'https://' + 'a' * 1_000_000, 'a://' * 250_000):\n"
            "    load_toml('x = 1\\n# ' + body + '\\ny = \"' + body + '\"\\n')\n")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr


def _entry_of(text: str) -> Path:
    return Path(os.environ["CUDARESOLVE_CACHE_DIR"]) / FOLDER / hashlib.sha256(text.encode()).hexdigest()


def _planted(text: str, body: bytes) -> Path:
    load_toml(text)
    entry = _entry_of(text)
    entry.unlink()
    entry.write_bytes(body)
    return entry


def test_an_entry_made_for_another_text_is_not_used() -> None:
    other = load_toml("name = 'other'\n")
    (kept,) = _entries()
    body = kept.read_bytes()
    entry = _planted("name = 'mine'\n", body)  # another text's entry under this text's hash
    assert load_toml("name = 'mine'\n") == {"name": "mine"} != other
    assert json.loads(entry.read_bytes())["value"] == {"name": "mine"}  # made again from the text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs and modes")
@pytest.mark.parametrize("plant", ["fifo", "link", "group-writable", "too-big"])
def test_an_entry_that_is_not_a_private_file_is_not_read(tmp_path: Path, plant: str) -> None:
    text = "name = 'mine'\n"
    load_toml(text)
    (entry,) = _entries()
    good = entry.read_bytes().replace(b'"mine"', b'"evil"')
    entry.unlink()
    if plant == "fifo":
        os.mkfifo(entry)
    elif plant == "link":
        (tmp_path / "target").write_bytes(good)
        entry.symlink_to(tmp_path / "target")
    elif plant == "group-writable":
        entry.write_bytes(good)
        entry.chmod(0o662)
    else:
        entry.write_bytes(good[:-1] + b" " * tomlcache.MAX_ENTRY_BYTES + b"}")
    assert load_toml(text) == {"name": "mine"}  # parsed, not read from the planted entry


def test_a_value_too_large_to_keep_is_parsed_each_time() -> None:
    text = f'blob = "{"x" * (tomlcache.MAX_ENTRY_BYTES + 10)}"\n'
    assert load_toml(text)["blob"].startswith("xxx")
    assert _entries() == []
