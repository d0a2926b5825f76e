"""core.decode: nesting deeper than Python can follow is the parser's own decode error, not RecursionError."""

from __future__ import annotations

import json
import tomllib

import pytest

from cudaresolve.core.decode import TooDeep, loads_json, loads_toml, nesting_limit


@pytest.mark.parametrize("text", [
    "[" * 200_000 + "]" * 200_000,
    '{"a": ' * 50_000 + "0" + "}" * 50_000,
    '[{"x": ' * 20_000 + "1" + "}]" * 20_000,
])
def test_deep_json_is_a_json_decode_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as raised:
        loads_json(text)
    assert isinstance(raised.value, TooDeep) and f"{nesting_limit():,} levels" in str(raised.value)
    with pytest.raises(TooDeep):
        loads_json(text.encode())


@pytest.mark.parametrize("text", [
    "a = " + "[" * 3000 + "]" * 3000,
    "a = " + "{b = " * 3000 + "1" + "}" * 3000,
    "[t]\nx = [" + "[" * 5000 + "]" * 5000 + "]",
])
def test_deep_toml_is_a_toml_decode_error(text: str) -> None:
    with pytest.raises(tomllib.TOMLDecodeError) as raised:
        loads_toml(text)
    assert isinstance(raised.value, TooDeep)


def test_shallow_text_parses_as_usual() -> None:
    assert loads_json("[" * 50 + "]" * 50) == json.loads("[" * 50 + "]" * 50)
    assert loads_toml("a = [[1], {b = 2}]") == {"a": [[1], {"b": 2}]}
    with pytest.raises(json.JSONDecodeError) as raised:
        loads_json("{oops")
    assert not isinstance(raised.value, TooDeep)
