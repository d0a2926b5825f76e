"""``MarkerVerdicts.added_by`` and ``applying`` read only the lines whose markers can hold for the extras asked,
and give what evaluating every line gives (found by the hostile-index hunt: a package whose 1,999 extras each
require the next had every marker evaluated for every extra, 49-72 s and 1.1 GB)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement

from cudaresolve.resolve.source import MarkerVerdicts

ENV = {"python_version": "3.11", "sys_platform": "linux", "platform_machine": "x86_64"}
EXTRAS = ["a", "b", "Foo_Bar", "foo-bar", "c.d", "gpu"]
ATOMS = [
    *(f'extra == "{e}"' for e in EXTRAS),
    *(f'extra != "{e}"' for e in EXTRAS),
    *(f'"{e}" == extra' for e in EXTRAS[:2]),
    '"a" in extra',
    'extra not in "abc"',
    'extra == ""',
    'python_version >= "3.10"',
    'python_version < "3.9"',
    'sys_platform == "win32"',
]


@st.composite
def markers(draw: st.DrawFn, depth: int = 2) -> str:
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(ATOMS))
    joiner = draw(st.sampled_from([" and ", " or "]))
    return "(" + joiner.join(draw(st.lists(markers(depth - 1), min_size=2, max_size=3))) + ")"


lines = st.lists(st.one_of(st.none(), markers()), max_size=12).map(
    lambda ms: [Requirement(f"dep{n}" + (f"; {m}" if m else "")) for n, m in enumerate(ms)]
)


@settings(max_examples=300, deadline=None)
@given(lines, st.lists(st.sampled_from([*EXTRAS, "other"]), max_size=3))
def test_the_lines_read_are_those_every_line_evaluated_gives(reqs: list[Requirement], extras: list[str]) -> None:
    verdicts = MarkerVerdicts(ENV)
    oracle = MarkerVerdicts(ENV)
    assert verdicts.added_by(reqs, extras) == [r for r in reqs if oracle.selected(r, extras, only_extras=True)]
    assert verdicts.applying(reqs, extras) == [r for r in reqs if oracle.selected(r, extras)]


def test_a_chain_of_extras_evaluates_a_marker_per_line_not_per_line_and_extra() -> None:
    count = 400
    reqs = [Requirement(f'ex[e{n + 1}]; extra == "e{n}"') for n in range(count)]
    verdicts = MarkerVerdicts(ENV)
    for n in range(count):
        assert verdicts.added_by(reqs, [f"e{n}"]) == reqs[n : n + 1]
    assert len(verdicts._seen) <= 2 * count  # each line with no extra, and with the one extra it names
