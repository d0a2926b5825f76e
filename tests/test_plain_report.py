"""A lock's report written as plain text is what rich prints on a stream that is no terminal, byte for byte."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from cudaresolve.lock.flow import LockResult
from cudaresolve.lock.previous import Change
from cudaresolve.render.explain_findings import render_lock_result
from cudaresolve.render.output import Output, configure
from cudaresolve.render.report import lock_items, plain_lines, plain_width
from cudaresolve.resolve.model import LockedPackage, Solution
from cudaresolve.target.model import Target
from cudaresolve.text.findings import Notice
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from pathlib import Path

#: Pieces of text rich prints as they are (markup-like ones, once escaped, included), and those it drops (controls),
#: expands (a tab), measures its own way or may double (a backslash): most words are of the first kind.
_KEPT = st.sampled_from([*"abz-./:+_0179 []软件ü", "[/]", "[bold]", ":smile:"])
_ODD = st.sampled_from([*"\t\r\x1b\x7f\u200d\u0301\\", "\\[", "[x]\\"])
_PLAIN_WORD = st.lists(_KEPT, min_size=1, max_size=8).map("".join)
_WORD = _PLAIN_WORD | _PLAIN_WORD | _PLAIN_WORD | st.lists(_KEPT | _ODD, min_size=1, max_size=10).map("".join)
_SHORT = st.lists(_KEPT, min_size=1, max_size=4).map("".join) | st.lists(_KEPT | _ODD, max_size=4).map("".join)
_PACKAGE = st.builds(
    lambda name, version, index: LockedPackage(name=name, version=version, index=index),
    _SHORT, _SHORT, st.sampled_from(["https://pypi.org/simple", "https://download.pytorch.org/whl/cu128", "x" * 90]),
)  # fmt: skip
_NOTICE = st.builds(lambda code, items: Notice(code=code, text=Text.of("word.list", items=items)), _WORD, _WORD)
_CHANGE = st.builds(Change, name=_WORD, old=_WORD, new=st.none() | _WORD) | st.builds(
    Change, name=_WORD, old=st.none(), new=_WORD
)  # moved, removed or added


def _rich(result: LockResult, width: int) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, color_system=None, soft_wrap=True, highlight=False, emoji=False)
    render_lock_result(result, console)
    return buffer.getvalue()


@settings(max_examples=150, deadline=None)
@given(
    packages=st.lists(_PACKAGE, max_size=5), notices=st.lists(_NOTICE, max_size=3),
    changes=st.lists(_CHANGE, max_size=3), path=st.sampled_from([None, "-", "pylock.toml", "a\tb.toml"]),
    unchanged=st.booleans(), verbosity=st.sampled_from([0, -1]),
    width=st.sampled_from([80, 120]) | st.integers(20, 130),
)  # fmt: skip
def test_the_plain_report_is_what_rich_prints(
    packages: list[LockedPackage], notices: list[Notice], changes: list[Change], path: str | None,
    unchanged: bool, verbosity: int, width: int,
) -> None:  # fmt: skip
    solution = Solution(target=Target(), variant="cu128", index_url="https://pypi.org/simple",
                        packages=tuple(packages), warnings=tuple(notices))  # fmt: skip
    result = LockResult(solution=solution, path=path, format="pylock", changes=tuple(changes), unchanged=unchanged)
    configure(Output(verbosity=verbosity))
    try:
        lines = plain_lines(lock_items(result, width, "en"), width)
        if lines is not None:
            assert "".join(f"{line}\n" for line in lines) == _rich(result, width)
        else:  # left to rich: some line holds what rich changes, or the table is rich's to lay out
            shown = lock_items(result, width, "en")
            assert any(not isinstance(i, str) for i in shown) or not all(
                part.isprintable() for i in shown for part in i.split("\n")
            )  # fmt: skip
    finally:
        configure(Output())


_SAMPLE = """
from cudaresolve.lock.flow import LockResult
from cudaresolve.lock.previous import Change
from cudaresolve.resolve.model import LockedPackage, Solution
from cudaresolve.target.model import Target
from cudaresolve.text.findings import Notice
from cudaresolve.text.model import Text

packages = tuple(LockedPackage(name=f"pkg-{i}", version=f"1.{i}", index="https://pypi.org/simple") for i in (1, 2))
warned = (Notice(code="some-code", text=Text.of("word.list", items="[x] said")),)
solution = Solution(target=Target(), variant="cpu", index_url="https://pypi.org/simple", packages=packages,
                    warnings=warned)
result = LockResult(solution=solution, path="pylock.toml", format="pylock",
                    changes=(Change(name="pkg-1", old="1.0", new="1.1"),))
"""


def test_a_plain_report_is_written_where_rich_would_print_the_text(tmp_path: Path) -> None:
    """The lock's report on a file for stderr, as rich prints it there, and rich not loaded at all."""
    program = _SAMPLE + """
import sys
from cudaresolve.render.report import report_lock
report_lock(result)
print(sorted(m for m in sys.modules if m.split(".")[0] == "rich"))
"""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "NO_COLOR")}
    with (tmp_path / "err").open("w") as err:
        done = subprocess.run([sys.executable, "-c", program], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=err, text=True, env=env, check=True)  # fmt: skip
    assert done.stdout.strip() == "[]"
    shown: dict[str, object] = {}
    exec(_SAMPLE, shown)
    assert (tmp_path / "err").read_text() == _rich(shown["result"], 80)  # type: ignore[arg-type]
    assert "warning: some-code: [x] said\n" in (tmp_path / "err").read_text()
    assert (tmp_path / "err").read_text().endswith("pkg-1 1.0 -> 1.1\nwrote pylock.toml (pylock)\n")


@pytest.mark.parametrize("columns", ["100", "7", "", "abc", "0", "080"])
def test_the_plain_width_is_rich_s(columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    width = plain_width(os.environ)
    rich_width = Console(file=io.StringIO(), force_terminal=False).width
    assert width == rich_width if width is not None else rich_width == 0


def test_the_variant_line_only_when_a_package_comes_from_the_variants_index() -> None:
    """``lock requests --gpu A100`` said "variant cpu from https://download.pytorch.org/whl/cpu" above a set with
    no GPU package, none of it from that index; with torch from PyPI's builds the line stays, as it says that."""
    from cudaresolve.render.report import solution_items

    plain = (LockedPackage(name="requests", version="2.32.3", index="https://pypi.org/simple"),)
    cpu = Solution(target=Target(), variant="cpu", index_url="https://download.pytorch.org/whl/cpu", packages=plain)
    assert not any(isinstance(i, str) and i.startswith("variant") for i in solution_items(cpu, 80, "en"))
    torch = LockedPackage(name="torch", version="2.10.0", index="https://pypi.org/simple")
    pypi = Solution(target=Target(), variant="cu128", index_url="https://pypi.org/simple", packages=(*plain, torch))
    assert solution_items(pypi, 80, "en")[0] == "variant cu128 from https://pypi.org/simple"
