"""Patterns run on input the user controls take time linear in it (found by the adversarial hunt: each was
quadratic in a run of blanks or word characters, so an input within its size bound ran for minutes).

Each test gives a run of 300,000 characters: quadratic, that is 10^11 steps and hangs the test; linear, a few
milliseconds. The answers stay what they were on short input."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudaresolve.db.read import _REPO_AT_TAG
from cudaresolve.install.link import _entry_points
from cudaresolve.lock.reqfiles import read_requirement_files
from cudaresolve.target.options import split_gpu_list

if TYPE_CHECKING:
    from pathlib import Path

RUN = 300_000


def test_a_requirement_line_with_a_long_run_of_blanks(tmp_path: Path) -> None:
    path = tmp_path / "req.txt"
    path.write_text("torch" + " " * RUN + "\nnumpy  # a comment\n# only a comment\nrich#not-a-comment\n")
    found = read_requirement_files([str(path)], environ={})
    assert [line.strip() for line in found.requirements] == ["torch", "numpy", "rich#not-a-comment"]


def test_a_gpu_list_with_a_long_run_of_blanks() -> None:
    assert split_gpu_list("A100" + " " * RUN + "x") == ("A100" + " " * RUN + "x",)
    assert split_gpu_list("A100 and H100; T4,L4") == ("A100", "H100", "T4", "L4")


def test_a_database_source_with_a_long_run_of_word_characters() -> None:
    assert _REPO_AT_TAG.search("_" * RUN) is None
    assert _REPO_AT_TAG.search("see facebookresearch/xformers@v0.0.27:setup.py") is not None


def test_an_entry_point_with_a_long_run_of_blanks(tmp_path: Path) -> None:
    path = tmp_path / "entry_points.txt"
    path.write_text("[console_scripts]\nsix = a:b" + " " * RUN + "x\ntool = mod.sub:main [extra]\n")
    assert _entry_points(path) == [("tool", "mod.sub", "main")]
