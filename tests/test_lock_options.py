"""--prerelease and --exclude-newer (issue 22, item 4), as uv means them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest
from packaging.tags import Tag

from cudaresolve.core.versions import parse_cutoff
from cudaresolve.db.database import load_compat
from cudaresolve.errors import InvalidInput, NoSolution
from cudaresolve.index.fitting import best_files
from cudaresolve.index.simple import wheel_file
from cudaresolve.resolve.solve import solve
from test_source_solve import MINI, DictSource, target

if TYPE_CHECKING:
    from pathlib import Path

if TYPE_CHECKING:
    from pathlib import Path

RELEASES = {"lib": [("1.0", [], False), ("2.0rc1", [], False)], "onlypre": [("1.0b1", [], False)]}


def _pins(requests: list[str], prerelease: str) -> dict[str, str]:
    solution = solve(requests, load_compat(MINI), target(), source=DictSource(RELEASES), prerelease=prerelease).solution
    return {p.name: p.version for p in solution.packages}


@pytest.mark.parametrize(
    ("requests", "mode", "expected"),
    [
        (["lib"], "explicit", {"lib": "1.0"}),
        (["lib>=2.0rc1"], "explicit", {"lib": "2.0rc1"}),  # the specifier names a pre-release
        (["lib"], "allow", {"lib": "2.0rc1"}),
        (["lib>=2.0rc1"], "disallow", None),
        (["onlypre"], "if-necessary", {"onlypre": "1.0b1"}),  # no final release at all
        (["lib"], "if-necessary", {"lib": "1.0"}),
        (["lib>=2.0rc1"], "if-necessary-or-explicit", {"lib": "2.0rc1"}),
        (["onlypre"], "explicit", None),
    ],
)
def test_prerelease_modes(requests: list[str], mode: str, expected: dict[str, str] | None) -> None:
    if expected is None:
        with pytest.raises(NoSolution):
            _pins(requests, mode)
    else:
        assert _pins(requests, mode) == expected


def test_exclude_newer_hides_files_uploaded_after_the_cutoff() -> None:
    tags = (Tag("py3", "none", "any"),)
    def file(version: str, day: int | None) -> object:
        when = datetime(2025, 6, day, 12, tzinfo=UTC) if day else None
        return wheel_file(f"demo-{version}-py3-none-any.whl", f"https://x.example/demo-{version}.whl", upload_time=when)

    files = [file("1.0", 1), file("1.1", 2), file("2.0", 3), file("0.9", None)]
    cutoff = parse_cutoff("2025-06-02")  # the end of that day
    assert sorted(str(v) for v in best_files(files, tags, "3.11.0", exclude_newer=cutoff)) == ["0.9", "1.0", "1.1"]
    assert sorted(str(v) for v in best_files(files, tags, "3.11.0")) == ["0.9", "1.0", "1.1", "2.0"]


def test_cutoffs_parse_as_uv_takes_them() -> None:
    assert parse_cutoff("2025-06-01") == datetime(2025, 6, 2, tzinfo=UTC)
    assert parse_cutoff("2025-06-01T12:00:00Z") == datetime(2025, 6, 1, 12, tzinfo=UTC)
    assert parse_cutoff(" 2025-06-01T12:00:00+02:00 ").utcoffset() is not None
    for bad in ("2025-06-01T12:00:00", "yesterday", "", "06/01/2025", "2025-13-01"):
        with pytest.raises(InvalidInput):
            parse_cutoff(bad)


def test_lock_python_takes_the_target_from_that_interpreter(tmp_path: Path) -> None:
    import json
    import sys

    from test_direct_e2e import run_cli

    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    result = run_cli(["lock", "torch", "--cpu", "--python", sys.executable, "--offline", "--json"], tmp_path,
                     tmp_path / "cache")  # fmt: skip
    assert json.loads(result.stdout)["target"]["python"] == here, result.stdout
    other = "3.12" if here != "3.12" else "3.13"
    clash = run_cli(["lock", "torch", "--cpu", "--python", sys.executable, "--python-version", other, "--offline"],
                    tmp_path, tmp_path / "cache")  # fmt: skip
    assert clash.returncode == 1 and "--python-version" in clash.stderr
    missing = run_cli(["lock", "torch", "--cpu", "--python", str(tmp_path / "nope"), "--offline"], tmp_path,
                      tmp_path / "cache")  # fmt: skip
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
