"""A release whose core metadata was read but cannot be used is passed over for another, as pip and uv do.

Found on real PyPI: lightning 1.8.3.post2 declares ``Requires-Dist: torch (>=1.9.*)``, which no PEP 440
parser takes; a lock that backtracked onto it ended there, blaming the index. Now that release depends on
``<metadata>``, which has no candidate: the solver takes another release, the lock says which one it passed
over (``metadata-unusable``), and when none is left the failure names it. Served from 127.0.0.1.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from local_index import LocalIndex

from test_whole_env_lock import run_cli

if TYPE_CHECKING:
    from pathlib import Path

ARGS = ["--cpu", "--python-version", "3.11", "--platform", "linux_x86_64", "--json"]


def test_a_release_with_malformed_metadata_is_passed_over_and_said(tmp_path: Path) -> None:
    index = LocalIndex(tmp_path / "index")
    index.add("pypi", "dep", "1.0")
    index.add("pypi", "app", "1.0", requires=["dep"])
    index.add("pypi", "app", "2.0", requires=["dep (>=1.*)"])  # what no PEP 440 parser takes
    index.add("pypi", "lone", "1.0", requires=["dep (>=1.*)"])
    with index.serve() as base:
        mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
        (tmp_path / "ok").mkdir()
        passed = run_cli(["lock", "app", *ARGS, mirror], tmp_path / "ok", tmp_path / "cache")
        failed = run_cli(["lock", "lone", *ARGS, mirror], tmp_path, tmp_path / "cache")
    assert passed.returncode == 0, passed.stderr
    out = json.loads(passed.stdout)
    assert {p["name"]: p["version"] for p in out["packages"]} == {"app": "1.0", "dep": "1.0"}
    (said,) = [w["message"] for w in out["warnings"] if w["code"] == "metadata-unusable"]
    assert "app 2.0" in said and "dep (>=1.*)" in said
    assert failed.returncode == 1, failed.stderr
    error = json.loads(failed.stdout)["error"]
    assert error["code"] == "no-solution" and [f["code"] for f in error["findings"]] == ["metadata-unusable"]
    assert "lone 1.0" in error["message"]
