"""A name the index does not list (its page answers 404) is said to be missing from that index, as uv says it.

Found on real PyPI: ``lock nonexistent-pkg-zzzq`` said it "has no release with a wheel or sdist for CPython 3.12 on
linux_x86_64", which sends the user after the target when the name is mistyped. A project that is listed but has
no file for the target keeps that finding. Served from 127.0.0.1."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from local_index import LocalIndex

from test_whole_env_lock import run_cli

if TYPE_CHECKING:
    from pathlib import Path

ARGS = ["--cpu", "--python-version", "3.11", "--platform", "linux_x86_64", "--json"]


def test_a_name_the_index_does_not_list_is_said_to_be_missing_there(tmp_path: Path) -> None:
    index = LocalIndex(tmp_path / "index")
    index.add("pypi", "app", "1.0")
    index.add("pypi", "winonly", "1.0", tag="py3-none-win_amd64")
    with index.serve() as base:
        mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
        missing = run_cli(["lock", "app", "apq", *ARGS, mirror], tmp_path, tmp_path / "cache")
        other = run_cli(["lock", "winonly", *ARGS, mirror, "-o", "pylock.w.toml"], tmp_path, tmp_path / "cache")
    assert missing.returncode == 1, missing.stdout
    error = json.loads(missing.stdout)["error"]
    assert [f["code"] for f in error["findings"]] == ["no-such-version"]
    assert "apq is not on the index https://pypi.org/simple" in error["message"]
    assert other.returncode == 1, other.stdout
    message = json.loads(other.stdout)["error"]["message"]
    assert "winonly has no release with a wheel or sdist for CPython 3.11 on linux_x86_64" in message
