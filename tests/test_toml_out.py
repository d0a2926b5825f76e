"""``lock.toml_out`` writes a pylock.toml character for character as tomlkit did, or leaves the shape to it."""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from cudaresolve.lock.lockfile import _direct, _with_tomlkit

_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
_KEY = st.sampled_from(["name", "url", "path", "marker", "weird key", "k.dot", "é", "x\n"])
_SCALAR = st.one_of(
    _TEXT, st.integers(min_value=-(2**40), max_value=2**40), st.booleans(), st.lists(_TEXT, max_size=3),
    st.datetimes(timezones=st.just(UTC)),
)
_HASHES = st.fixed_dictionaries({"sha256": st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)})
_FILE = st.dictionaries(_KEY, _SCALAR, max_size=3).flatmap(
    lambda d: _HASHES.map(lambda h: {**d, "hashes": h})
)
_PACKAGE = st.fixed_dictionaries(
    {"name": _TEXT, "version": _TEXT},
    optional={
        "marker": _TEXT,
        "requires-python": _TEXT,
        "index": _TEXT,
        "sdist": _FILE,
        "archive": _FILE,
        "wheels": st.lists(_FILE, max_size=3),
        "extra key": _SCALAR,
    },
)
_TOOL = st.fixed_dictionaries(
    {
        "cudaresolve": st.fixed_dictionaries(
            {"variant": _TEXT},
            optional={"warnings": st.lists(st.fixed_dictionaries({"code": _TEXT, "message": _TEXT}), max_size=2)},
        )
    }
)


@given(
    st.lists(_PACKAGE, min_size=1, max_size=4),
    st.lists(_TEXT, max_size=2),
    st.one_of(st.none(), _TOOL),
)
@settings(max_examples=300, deadline=None)
def test_the_direct_writer_gives_tomlkits_text(packages: list[dict[str, Any]], extras: list[str],
                                                tool: dict[str, Any] | None) -> None:  # fmt: skip
    data: dict[str, Any] = {"lock-version": "1.0", "requires-python": "==3.11.*", "extras": extras,
                            "created-by": "cudaresolve", "packages": packages}  # fmt: skip
    if tool is not None:
        data["tool"] = tool
    direct = _direct(data)
    assert direct is not None
    assert direct == _with_tomlkit(data)
    assert tomllib.loads(direct)["packages"] == tomllib.loads(_with_tomlkit(data))["packages"]


def test_a_shape_it_does_not_write_is_left_to_tomlkit() -> None:
    directory = {"lock-version": "1.0", "created-by": "cudaresolve",
                 "packages": [{"name": "app", "directory": {"path": ".", "editable": True}}]}  # fmt: skip
    assert _direct(directory) is None
    floats = {"lock-version": "1.0", "created-by": "cudaresolve", "packages": [{"name": "a", "weight": 0.5}]}
    assert _direct(floats) is None
    assert _direct({"lock-version": "1.0", "created-by": "cudaresolve", "packages": []}) is None


def test_a_real_upload_time_is_a_toml_datetime() -> None:
    when = datetime(2026, 9, 9, 13, 4, 47, 331389, tzinfo=UTC)
    wheel = {"name": "a-1-py3-none-any.whl", "upload-time": when, "hashes": {"sha256": "0" * 64}}
    data = {"lock-version": "1.0", "created-by": "cudaresolve", "packages": [{"name": "a", "wheels": [wheel]}]}
    text = _direct(data)
    assert text is not None and "upload-time = 2026-09-09T13:04:47.331389Z\n" in text
    assert text == _with_tomlkit(data)


_LEAF = st.dictionaries(_KEY, st.one_of(_SCALAR, st.floats(allow_nan=False)), max_size=3)
_NESTED = st.recursive(
    _LEAF,
    lambda inner: st.dictionaries(_KEY, st.one_of(_SCALAR, inner, st.lists(_LEAF, max_size=2)), max_size=4),
    max_leaves=8,
)


#: Tables this writer takes: a scalar in each (not a float), arrays of tables of scalars, keys in any order.
_WRITTEN = st.recursive(
    st.dictionaries(_KEY, _SCALAR, min_size=1, max_size=3),
    lambda inner: st.dictionaries(
        _KEY, st.one_of(_SCALAR, inner, st.lists(st.dictionaries(_KEY, _SCALAR, min_size=1, max_size=2), min_size=1,
                                                 max_size=2)), min_size=1, max_size=4,
    ).filter(lambda d: any(not isinstance(v, dict | list) or v == [] or (isinstance(v, list) and
                           all(isinstance(x, str) for x in v)) for v in d.values())),
    max_leaves=10,
)  # fmt: skip


@given(st.dictionaries(_KEY, st.one_of(_NESTED, _SCALAR, _WRITTEN), max_size=2))
@settings(max_examples=400, deadline=None)
@example({"c": {"t": {"x": 1}, "u": [{"y": 1}], "a": 1}})  # an array of tables after a table, before any key
@example({"c": {"u": [{"y": 1}], "t": {"x": 1}, "a": 1}})  # an array of tables first
@example({"c": {"target": {"driver": "580", "x\n": "1"}}})  # a key that needs quotes, though it ends bare
def test_the_tool_table_is_written_as_tomlkit_writes_it_or_left_to_it(tool: dict[str, Any]) -> None:
    import tomlkit

    from cudaresolve.lock.toml_out import tool_toml

    direct = tool_toml(tool)
    if direct is not None:
        assert direct == tomlkit.dumps({"tool": tool})
        data = {"lock-version": "1.0", "created-by": "cudaresolve", "packages": [{"name": "a"}], "tool": tool}
        assert _direct(data) == _with_tomlkit(data)


def test_the_tool_table_a_lock_carries_is_written_without_tomlkit() -> None:
    import tomlkit

    from cudaresolve.lock.toml_out import tool_toml

    tool = {"cudaresolve": {
        "variant": "cu128", "index-url": "https://pypi.org/simple",
        "warnings": [{"code": "a", "message": "m"}, {"code": "b", "message": "n\n\"q\""}],
        "target": {"driver": "580.65.06", "python": "3.11", "gpus": [{"name": "NVIDIA H100", "cc": "9.0",
                                                                       "datacenter": True}]},
    }}  # fmt: skip
    text = tool_toml(tool)
    assert text is not None
    assert text == tomlkit.dumps({"tool": tool})
    # as a lock builds it: the target's GPUs before its keys, which tomlkit moves up; a key after the tables
    target = {"gpus": [{"name": "A"}], "driver": "1"}
    gpus_first = {"cudaresolve": {**tool["cudaresolve"], "after": 1, "target": target}}
    assert tool_toml(gpus_first) == tomlkit.dumps({"tool": gpus_first})
    assert tomllib.loads(text) == {"tool": tool}
