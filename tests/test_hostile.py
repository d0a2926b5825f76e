"""Every hostile case of ``tests/hostile/*.py``: a coded one-line error or success, never a traceback or a hang."""

from __future__ import annotations

import importlib
import pkgutil
from typing import TYPE_CHECKING

import pytest

import hostile
from hostile.case import Case, run

if TYPE_CHECKING:
    from pathlib import Path


def _cases() -> list[Case]:
    cases: list[Case] = []
    for info in sorted(pkgutil.iter_modules(hostile.__path__), key=lambda i: i.name):
        if info.name.startswith("cases_"):
            cases += importlib.import_module(f"hostile.{info.name}").CASES
    return cases


CASES = _cases()


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_input(case: Case, tmp_path: Path) -> None:
    run(case, tmp_path)
