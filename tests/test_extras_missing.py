"""An extra that the locked release does not define is said, as uv says it (``extra-not-provided``).

Found on real PyPI: ``transformers[torch]`` backtracked to 2.3.0, which has no ``torch`` extra, and the lock
said nothing. An extra counts as defined when the metadata's ``Provides-Extra`` names it or a ``Requires-Dist``
marker tests it, compared as PEP 685 normalises names. Served from 127.0.0.1.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from local_index import LocalIndex

from cudaresolve.index.metadata import parse_core_metadata
from test_whole_env_lock import run_cli

if TYPE_CHECKING:
    from pathlib import Path

ARGS = ["--cpu", "--python-version", "3.11", "--platform", "linux_x86_64", "--json"]


def test_provides_extra_is_read_as_written() -> None:
    text = "Metadata-Version: 2.1\nName: lib\nVersion: 1.0\nProvides-Extra: gpu\nProvides-Extra: Fast_Path\n\nbody\n"
    assert parse_core_metadata(text, source="lib").provides_extra == ("gpu", "Fast_Path")


def test_an_extra_the_release_does_not_define_is_said_once(tmp_path: Path) -> None:
    index = LocalIndex(tmp_path / "index")
    index.add("pypi", "dep", "1.0")
    index.add("pypi", "lib", "1.0", requires=['dep; extra == "fast-path"'])
    with index.serve() as base:
        mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
        result = run_cli(["lock", "lib[Fast_Path,nope]", *ARGS, mirror], tmp_path, tmp_path / "cache")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert {p["name"] for p in out["packages"]} == {"lib", "dep"}  # the extra it has is taken
    said = [w["message"] for w in out["warnings"] if w["code"] == "extra-not-provided"]
    assert said == ["lib 1.0 has no extra named nope; it is locked without it"]
