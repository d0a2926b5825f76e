"""A build backend's output and its leftovers are bounded: what prepare_tree_metadata keeps and how long it waits.

Found by the hostile-index hunt: a backend printing 1 GiB was read whole (an internal MemoryError), and one that
returned at once but left a process holding its output open was reported as having run past the build timeout.
The backends here are real PEP 517 in-tree backends, run through PyPA's ``build`` as every sdist build is.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import pytest

from cudaresolve.errors import DynamicMetadata
from cudaresolve.index.build_metadata import _TAIL_BYTES, BuildPolicy, prepare_tree_metadata

if TYPE_CHECKING:
    from pathlib import Path

_BACKEND = '''
import os, subprocess, sys

def get_requires_for_build_wheel(config_settings=None):
    return []

def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    {action}
    info = os.path.join(metadata_directory, "demo-1.0.dist-info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\\nName: demo\\nVersion: 1.0\\nRequires-Dist: six\\n")
    return "demo-1.0.dist-info"

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    raise RuntimeError("not needed")
'''
FLOOD = "chunk = 'x' * 65536 + '\\n'\n    for _ in range(800): sys.stdout.write(chunk)\n    sys.stdout.flush()"
LEFT_BEHIND = "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])"


def _project(tmp_path: Path, action: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n', encoding="utf-8"
    )
    (tmp_path / "backend.py").write_text(_BACKEND.format(action=action), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(("action", "within"), [(FLOOD, 60.0), (LEFT_BEHIND, 30.0)], ids=["flood", "left-behind"])
def test_a_backend_that_floods_or_leaves_a_process_behind_still_gives_its_metadata(
    tmp_path: Path, action: str, within: float
) -> None:
    start = time.monotonic()
    try:
        text = prepare_tree_metadata(_project(tmp_path, action), BuildPolicy(timeout=within))
    except DynamicMetadata as e:  # the flood's last line is no path: passed over, with a bounded reason
        assert action == FLOOD and len(e.message) < 4 * _TAIL_BYTES, e.message[:200]
    else:
        assert "Requires-Dist: six" in text
    assert time.monotonic() - start < within  # the left-behind process holds the pipe for 60 s: not waited for
