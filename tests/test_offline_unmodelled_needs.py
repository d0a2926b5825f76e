"""A database row may require a package the database does not model (flash-attn's ``einops``): the
offline answer (``why-not``, a solve without an index) leaves that need to the index, as it leaves torch's
numpy, rather than calling the whole set impossible for want of a row; lock reads it from the metadata."""

from __future__ import annotations

import pytest

from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import load_compat
from cudaresolve.errors import NoSolution
from cudaresolve.resolve.solve import solve
from cudaresolve.resolve.whynot import why_not
from cudaresolve.target.build import resolve_gpu
from cudaresolve.target.model import Target

DB = load_compat()
H100 = Target(gpus=(resolve_gpu("H100", DB),), driver=parse_driver("580.65.06"), platform="linux_x86_64",
              python="3.12", source="flags")  # fmt: skip


def _unmodelled_needs() -> list[tuple[str, str, str]]:
    """(package, version, unmodelled requirement) for each package's newest release that names one."""
    known = set(DB.package_names)
    found = []
    for name in DB.package_names:
        for release in DB.packages(name):
            outside = [r.name for r in release.requires if r.name not in known]
            if outside:
                found.append((name, str(release.version), outside[0]))
                break
    return found


CASES = _unmodelled_needs()


def test_the_shipped_database_has_such_a_row() -> None:
    assert CASES, "no row requires a package outside the database: the rule below is not exercised"


@pytest.mark.parametrize(("name", "version", "outside"), CASES, ids=[c[0] for c in CASES])
def test_a_need_outside_the_database_does_not_make_the_offline_answer_impossible(
    name: str, version: str, outside: str
) -> None:
    spec = f"{name}=={version}"
    try:
        result = solve([spec], DB, H100)
    except NoSolution as exc:
        assert outside not in str(exc), f"{spec} refused for want of a {outside} row"
        pytest.skip(f"{spec} has no build for an H100 on 580 for another reason")
    answer = why_not(spec, [], DB, H100)
    assert answer.possible, [r.message for r in answer.reasons]
    names = set(result.pins)
    assert name in names and outside not in names
