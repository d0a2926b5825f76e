"""The README's first command prints exactly what the README shows (trailing spaces of table rows aside)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from test_direct_e2e import run_cli

README = Path(__file__).resolve().parents[1] / "README.md"


def _first_command_and_output() -> tuple[list[str], str]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Two commands on a fresh machine") :]
    blocks = re.findall(r"```(\w*)\n(.*?)```", section, flags=re.DOTALL)
    command = blocks[0][1].strip().split("&&")[-1]  # the last step: `.venv/bin/cudaresolve lock ...`
    output = next(body for lang, body in blocks[2:] if lang == "")
    return shlex.split(command)[1:], output


def test_the_first_command_prints_what_the_readme_shows(tmp_path: Path) -> None:
    argv, shown = _first_command_and_output()
    assert argv[:3] == ["lock", "torch", "torchrec"] and "--offline" in argv
    result = run_cli(argv, tmp_path, tmp_path / "empty-cache")
    assert result.returncode == 0, result.stderr
    printed = "".join(line.rstrip() + "\n" for line in (result.stdout + result.stderr).splitlines())
    assert printed == shown
    assert not (tmp_path / "pylock.toml").exists()  # it says so, and writes nothing
