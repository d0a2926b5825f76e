"""A package the solver backtracks over has the metadata of its next older wheels read ahead, as uv's batch prefetch.

Found against uv on real PyPI: ``lock boto3 'botocore<1.30' awscli s3transfer`` read the metadata of 823 boto3
releases one after another on the solver's thread, 79 s cold where uv took 5 s. Now, once the solver has read a
few releases of one package, the next older ones are read on the walk's threads. Served from 127.0.0.1."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from local_index import LocalIndex

from test_whole_env_lock import run_cli

if TYPE_CHECKING:
    from pathlib import Path

ARGS = ["--cpu", "--python-version", "3.11", "--platform", "linux_x86_64", "--json"]


def test_releases_the_solver_backtracks_over_are_read_ahead(tmp_path: Path) -> None:
    index = LocalIndex(tmp_path / "index")
    index.add("pypi", "lib", "0.5")
    index.add("pypi", "lib", "1.0")
    for minor in range(1, 21):  # dep 1.20 ... 1.4 need lib>=1, which the request rules out; dep 1.3 and older do not
        index.add("pypi", "dep", f"1.{minor}", requires=["lib>=1"] if minor > 3 else ["lib"])
    index.add("pypi", "dep", "1.0rc1")  # a pre-release: never read ahead
    with index.serve() as base:
        mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
        result = run_cli(["lock", "dep", "lib<1", *ARGS, mirror], tmp_path, tmp_path / "cache")
    assert result.returncode == 0, result.stdout
    assert {p["name"]: p["version"] for p in json.loads(result.stdout)["packages"]} == {"dep": "1.3", "lib": "0.5"}
    read = {path.split("/")[-1] for path in index.requests if path.endswith(".metadata")}
    assert "dep-1.1-py3-none-any.whl.metadata" in read  # older than the one taken: only the read ahead wants it
    assert "dep-1.0rc1-py3-none-any.whl.metadata" not in read


def test_one_release_asked_for_with_several_extras_reads_nothing_ahead(tmp_path: Path) -> None:
    """Found on real PyPI (jupyter-server on Windows): ``bleach[css]`` and ``bleach`` ask for one release's metadata
    apart, which counted as a backtrack and read 50 older bleach releases (5.0.0's unusable metadata among them,
    warned about) in a lock that backtracked over none."""
    index = LocalIndex(tmp_path / "index")
    index.add("pypi", "lib", "1.0")
    for minor in range(1, 11):
        index.add("pypi", "dep", f"1.{minor}", requires=["lib ; extra == 'x'", "lib ; extra == 'y'"])
    with index.serve() as base:
        mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
        result = run_cli(["lock", "dep[x]", "dep[y]", "dep", *ARGS, mirror], tmp_path, tmp_path / "cache")
    assert result.returncode == 0, result.stdout
    assert {p["name"]: p["version"] for p in json.loads(result.stdout)["packages"]} == {"dep": "1.10", "lib": "1.0"}
    read = {path.split("/")[-1] for path in index.requests if path.endswith(".metadata")}
    assert read == {"dep-1.10-py3-none-any.whl.metadata", "lib-1.0-py3-none-any.whl.metadata"}
