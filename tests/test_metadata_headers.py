"""A METADATA header block is read without the email parser where it is plain, and gives what that parser gives."""

from __future__ import annotations

from email.parser import HeaderParser

from hypothesis import given, settings
from hypothesis import strategies as st

from cudaresolve.index.metadata import parse_core_metadata, plain_headers

_NAMES = ("Name", "Version", "Requires-Dist", "Requires-Python", "Metadata-Version", "Dynamic")
_GOOD_NAME = st.sampled_from([*_NAMES, "requires-dist", "NAME", "Summary", "X-Odd!", "Requires"])
_ODD_NAME = st.sampled_from(["Na me", "", "From", "Nâme", "Require\u017f-Dist", "\u212aey"])
_GOOD_VALUE = st.text(alphabet="ab1 \t:;=<>.,()[]\"'é-", max_size=10)
_ODD_VALUE = st.text(alphabet="a\r\x0b\x85\u2028\ud800", max_size=2)


def _line(kind: int) -> st.SearchStrategy[str]:
    """Mostly plain lines (a field, a continuation), now and then an odd one: a block of several lines then
    often stays plain, and both readers are compared on it."""
    name = _ODD_NAME if kind == 0 else _GOOD_NAME
    value = _ODD_VALUE if kind == 1 else _GOOD_VALUE
    if kind == 2:
        return st.sampled_from(["", "From someone", "no colon here", ":empty name", "\r", "\rName: x", "\r "])
    if kind in (3, 4):
        return st.builds(lambda lead, v: f"{lead}{v}", st.sampled_from([" ", "\t", "  "]), value)  # a continuation
    return st.builds(lambda f, sep, v: f"{f}{sep}{v}", name, st.sampled_from([":", ": ", ":\t", " :", ":  "]), value)


_LINE = st.integers(0, 19).flatmap(_line)


def _email(block: str, name: str) -> list[str] | None:
    return HeaderParser().parsestr(block, headersonly=True).get_all(name)


@given(st.lists(_LINE, max_size=8), st.booleans(), st.sampled_from(["\n", "\r\n"]))
@settings(max_examples=500, deadline=None)
def test_a_plain_block_reads_as_the_email_parser_reads_it(lines: list[str], newline: bool, eol: str) -> None:
    block = eol.join(lines) + (eol if newline else "")
    ours = plain_headers(block)
    if ours is None:
        return
    for name in _NAMES:
        assert ours.get_all(name) == _email(block, name), name
        assert ours.get(name) == HeaderParser().parsestr(block, headersonly=True).get(name), name


def test_a_usual_metadata_file_is_read_without_the_email_parser() -> None:
    text = (
        "Metadata-Version: 2.4\nName: Demo_Pkg\nVersion: 1.2.0\nSummary: a demo\nRequires-Python: >=3.9\n"
        "Requires-Dist: numpy>=1.24\nRequires-Dist: torch;\n  extra == 'gpu'\nLicense: line one\n  line two\n"
        "Provides-Extra: gpu\n\nA long description: with: colons\n"
    )
    block = text[: text.find("\n\n") + 1]
    headers = plain_headers(block)
    assert headers is not None
    assert headers.get_all("requires-dist") == ["numpy>=1.24", "torch;\n  extra == 'gpu'"]
    assert headers.get_all("Requires-Dist") == HeaderParser().parsestr(block, headersonly=True).get_all("Requires-Dist")
    meta = parse_core_metadata(text, source="demo")
    assert (meta.name, str(meta.version), meta.requires_python) == ("demo-pkg", "1.2.0", ">=3.9")
    assert plain_headers("Name: x\nAuthor: Zoë Ünal\nRequires-Dist: a\n") is not None  # a name in a value
    assert [str(r) for r in meta.requires_dist] == ["numpy>=1.24", 'torch; extra == "gpu"']


def test_an_unusual_block_is_left_to_the_email_parser() -> None:
    assert plain_headers("Name: x\nVersion: 1\n\r\nbody\r\n") is not None  # CRLF after the headers only
    crlf = plain_headers("Name: x\r\nRequires-Dist: a;\r\n  extra == 'b'\r\n\r\nbody\rmore\n")  # a Windows build
    assert crlf is not None and crlf.get_all("requires-dist") == ["a;\r\n  extra == 'b'"]
    odd = ("Name: x\r\nVersion: 1\n", "Name: x\rVersion: 1\n", "Name: \ud800\n", " lead: x\n", "From me\nName: x\n",
           "Name x\n", ":x\n", "Nâme: x\n")  # fmt: skip
    for block in odd:
        assert plain_headers(block) is None, block
