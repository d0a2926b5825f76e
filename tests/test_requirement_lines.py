"""Requires-Dist lines read with their markers shared (``index.metadata._requirement``): the same requirement as
packaging makes of the whole line, and the same refusal of a malformed one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.markers import InvalidMarker
from packaging.requirements import InvalidRequirement, Requirement

from cudaresolve.index.metadata import _requirement

NAMES = ["torch", "nvidia-cublas-cu12", "a.b_c", "x[extra1,extra2]", "", "1bad", "y[", "z @ https://h/z-1.whl"]
SPECS = ["", ">=1", "==2.11.0", "<0.22,>=0.21", "~=1.4", "!=1.*", ">=>1", "==1.0 ", " (>=1)"]
MARKERS = [
    "",
    "; extra == 'dev'",
    '; python_version < "3.12"',
    "; sys_platform == 'linux' and platform_machine == 'x86_64'",
    "; extra == 'a' or python_version >= '3.11'",
    "; platform_system=='Linux'",
    "; ",
    "; python_versio < '3'",
    "; extra == ",
    " ; os_name == 'nt'",
    "; (extra == 'x')",
    ";;",
]


def outcome(parse: object, line: str) -> str:
    try:
        return f"ok {parse(line)!s}"  # type: ignore[operator]
    except (InvalidRequirement, InvalidMarker):
        return "refused"


@settings(max_examples=300, deadline=None, derandomize=True)
@given(name=st.sampled_from(NAMES), spec=st.sampled_from(SPECS), marker=st.sampled_from(MARKERS))
def test_a_line_reads_as_packaging_reads_it_whole(name: str, spec: str, marker: str) -> None:
    line = " ".join(f"{name}{spec}{marker}".split())
    assert outcome(_requirement, line) == outcome(Requirement, line)


def test_the_same_marker_is_parsed_once_and_evaluates_as_its_own() -> None:
    first, second = _requirement("a>=1; extra == 'cuda'"), _requirement("b; extra == 'cuda'")
    assert first.marker is second.marker
    assert first.marker is not None and first.marker.evaluate({"extra": "cuda"})
    assert not first.marker.evaluate({"extra": ""})
