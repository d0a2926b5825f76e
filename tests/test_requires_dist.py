"""``index.requires_dist.simple_requirement``: the very ``Requirement`` packaging makes, or None (packaging decides)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.requirements import InvalidRequirement, Requirement

from cudaresolve.index.metadata import parse_core_metadata
from cudaresolve.index.requires_dist import simple_requirement

# Lines as real metadata writes them (torch, transformers, jupyter, datasets), and the odd spellings the grammar allows.
REAL = [
    "filelock", "typing-extensions>=4.10.0", "sympy>=1.13.3", "networkx>=2.5.1", "fsspec>=0.8.5",
    "nvidia-cuda-nvrtc-cu12==12.8.93", "triton==3.4.0", "numpy (>=1.17)", "requests (<3,>=2.21.0)",
    "huggingface-hub<1.0,>=0.34.0", "tokenizers<=0.23.0,>=0.22.0", "regex!=2019.12.17", "packaging>=20.0",
    "fsspec[http]<=2025.9.0,>=2023.1.0", "accelerate>=0.26.0", "Pillow<=15.0,>=10.0.1", "jupyter_core!=5.0.*,>=4.12",
    "ipykernel>=6.5.0", "zope.interface", "a", "A.B-C_D", "x[y,z]", "x [ y , z ] ( >=1 , <2 )", "x>=1,",
    "x ~=1.4.2", "x===1.0.foo", "x==1.0.*", "x!=1.0+local", "x>=1.0.post1.dev2", "x (==2.0)",
    "x\t>=\t1", "  leading", "trailing  ", "x[]", "x[ ]", "x>=1.0a1", "x>1!2.0", "x[a_b,c.d]>=0",
]
BAD = [
    "x>=", "x>=1,,<2", "x==1.*.1", "x<=1.0.*", "x>=1 <2", "x (>=1", "x >=1)", "x[", "x[a,]", "x[,a]", "x-", "x_>=1",
    ".x", "x[a-]", "x 1.0", "x==1.0+loc.*", "x~=1", "x>=1.0+local", "x<=1.0+local", ">=1", "x,", "",
]  # fmt: skip


def _agrees(text: str) -> None:
    """``simple_requirement`` gives None, or what ``Requirement`` gives (and only where it gives one)."""
    fast = simple_requirement(text)
    try:
        slow = Requirement(text)
    except InvalidRequirement:
        assert fast is None, text
        return
    if fast is not None:
        assert fast == slow and str(fast) == str(slow), text
        assert (fast.name, fast.extras, str(fast.specifier), fast.url, fast.marker) == (
            slow.name, slow.extras, str(slow.specifier), slow.url, slow.marker,
        ), text  # fmt: skip


@pytest.mark.parametrize("text", REAL + BAD)
def test_the_same_requirement_as_packaging(text: str) -> None:
    _agrees(text)


@pytest.mark.parametrize("text", REAL)
def test_real_lines_take_the_fast_path(text: str) -> None:
    assert simple_requirement(text) is not None, text


_PIECES = st.sampled_from(
    ["a", "b1", "Z", ".", "-", "_", " ", "\t", "[", "]", ",", "(", ")", ">=", "<", "==", "!=", "~=", "===", "*",
     "1", "0", ".2", "a1", "rc1", ".post1", ".dev0", "+loc", "!", "@", ";", "x"]
)  # fmt: skip


@given(st.lists(_PIECES, max_size=14).map("".join))
def test_any_text_agrees_with_packaging(text: str) -> None:
    _agrees(text)


@given(
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,6}", fullmatch=True),
    st.lists(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,4}", fullmatch=True), max_size=3),
    st.lists(
        st.tuples(st.sampled_from(["<", "<=", ">", ">=", "==", "!=", "~=", "==="]),
                  st.from_regex(r"[0-9]{1,2}(\.[0-9]{1,2}){0,2}(\.\*|a1|\.post1|\+l1)?", fullmatch=True)),
        max_size=3,
    ),
    st.sampled_from(["", " ", "\t"]),
    st.booleans(),
)
def test_well_formed_shapes_agree(name: str, extras: list[str], specs: list[tuple[str, str]], ws: str,
                                  paren: bool) -> None:  # fmt: skip
    spec = f"{ws},{ws}".join(f"{op}{ws}{version}" for op, version in specs)
    head = f"{name}{ws}[{','.join(extras)}]" if extras else name
    _agrees(f"{head}{ws}({spec})" if paren and spec else f"{head}{ws}{spec}")


def test_metadata_lines_read_as_before() -> None:
    """A Requires-Dist line with a marker gets its marker; one with a URL is packaging's; the objects are equal to
    packaging's own."""
    text = (
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Dist: numpy (>=1.17)\n"
        "Requires-Dist: torch[cuda]>=2.0; extra == 'gpu'\nRequires-Dist: pkg @ https://example.org/pkg-1.0.whl\n\n"
    )
    meta = parse_core_metadata(text, source="demo")
    assert [str(r) for r in meta.requires_dist] == [
        "numpy>=1.17", 'torch[cuda]>=2.0; extra == "gpu"', "pkg @ https://example.org/pkg-1.0.whl",
    ]  # fmt: skip
    assert list(meta.requires_dist) == [
        Requirement("numpy (>=1.17)"), Requirement("torch[cuda]>=2.0; extra == 'gpu'"),
        Requirement("pkg @ https://example.org/pkg-1.0.whl"),
    ]  # fmt: skip


def test_another_layout_of_requirement_turns_the_fast_path_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """A packaging whose ``Requirement`` holds another field than the five this module sets is left to read every
    line itself: an object missing a field would fail later, far from here."""
    from cudaresolve.index import requires_dist

    assert simple_requirement("numpy>=1.17") is not None
    monkeypatch.setattr(requires_dist, "_SAME_LAYOUT", False)
    assert simple_requirement("numpy>=1.17") is None
