"""Every coded error says its way out: ``error: <code>: <message> (hint: ...)``, also for the rarer inputs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from cudaresolve.cli import main
from cudaresolve.errors import DetectionError, InvalidLockfile
from cudaresolve.lock.lockfile import loads_pylock
from cudaresolve.target.readings import parse_nvidia_smi_csv

if TYPE_CHECKING:
    from pathlib import Path

_PYLOCK = """\
lock-version = "1.0"
created-by = "cudaresolve"

[[packages]]
name = "filelock"
version = "3.16.1"
index = "https://pypi.org/simple"

[[packages.wheels]]
name = "filelock-3.16.1-py3-none-any.whl"
url = "https://files.example.org/filelock-3.16.1-py3-none-any.whl"
hashes = {sha256 = "not-hex"}
"""


def test_a_host_file_of_another_schema_has_a_hint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    host = tmp_path / "host.json"
    host.write_text(json.dumps({"schema": 2, "target": {"gpus": [], "driver": None}}))
    assert main(["arch-list", "--host", str(host)]) == 1
    line = capsys.readouterr().err.strip().splitlines()[0]
    assert line.startswith("error: invalid-input: ") and "schema 2" in line and "(hint: " in line


def test_a_lock_hash_that_is_no_sha256_has_a_hint() -> None:
    with pytest.raises(InvalidLockfile) as info:
        loads_pylock(_PYLOCK)
    assert "is not a sha256 digest" in info.value.message and info.value.hint


def test_an_unreadable_compute_capability_from_nvidia_smi_has_a_hint() -> None:
    with pytest.raises(DetectionError) as info:
        parse_nvidia_smi_csv("NVIDIA A100, 8.x, 550.54.15, 81920 MiB")
    assert "8.x" in info.value.message and info.value.hint
