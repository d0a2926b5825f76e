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


@pytest.mark.parametrize("text", [
    "x." * 150 + "y = 1",  # a dotted key
    "[" + ".".join(["a"] * 150) + "]\nb = 1",  # a table header
    "[[" + ".".join(["a"] * 150) + "]]\nb = 1",
    'x = {' + "a." * 150 + "b = 1}",  # inside an inline table
    '"a" . ' * 150 + "b = 1",  # quoted parts, spaces around the dots
    "'a'.\"\\u0061\"." * 75 + "b = 1",  # literal and escaped parts
])
def test_a_key_of_too_many_parts_is_a_toml_decode_error_before_tomllib_reads_it(text: str) -> None:
    """Found by the hostile-input audit: tomllib's work on a dotted key grows with the square of its parts, so a
    pylock.toml of a few hundred KB held install for minutes (a 40,000-part key: 30 s), with no nesting for the
    recursion bound to see."""
    from cudaresolve.core.decode import MAX_KEY_PARTS

    with pytest.raises(tomllib.TOMLDecodeError) as raised:
        loads_toml(text)
    assert isinstance(raised.value, TooDeep) and f"more than {MAX_KEY_PARTS}" in str(raised.value)


def test_keys_up_to_the_bound_and_dots_that_are_no_key_parse_as_usual() -> None:
    from cudaresolve.core.decode import MAX_KEY_PARTS

    key = ".".join(["a"] * MAX_KEY_PARTS) + " = 1"
    assert loads_toml(key) == tomllib.loads(key)
    many = 'm = "' + " or ".join(["python_version >= '3.8'"] * 500) + '"\nf = [' + ", ".join(["1.5"] * 500) + "]\n"
    many += "u = '" + "a." * 500 + "'\n"  # dots inside a string are no key
    assert loads_toml(many) == tomllib.loads(many)
