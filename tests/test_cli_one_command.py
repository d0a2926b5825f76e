"""A run builds the parser of the command it runs alone (``cli.build_parser(only=...)``): the same line
parses to the same namespace as with every command registered."""

from __future__ import annotations

import pytest

from cudaresolve import cli
from cudaresolve.errors import UsageError


@pytest.mark.parametrize(
    ("line", "module"),
    [
        (["install", "--from", "pylock.toml", "-q"], "install"),
        (["--lang", "zh", "--cache-dir", "install", "why-not", "cu118"], "why_not"),  # a value, not the command
        (["--color", "never", "-q", "arch-list", "--gpu", "H100"], "arch_list"),
        (["-v", "--cache-dir=/tmp/x", "db", "show"], "db"),
        (["doctor", "--json"], "doctor"),
    ],
)
def test_a_line_parses_the_same_with_only_its_command(line: list[str], module: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str | None] = []
    real = cli.build_parser

    def recording(*, only: str | None = None, **_: object) -> object:
        asked.append(only)
        raise SystemExit(0)  # the parser is what is looked at here, not the command

    monkeypatch.setattr(cli, "build_parser", recording)
    with pytest.raises(SystemExit):
        cli.main(line)
    assert asked == [module]
    alone, every = real(only=module).parse_args(line), real().parse_args(line)
    assert vars(alone) == vars(every)


@pytest.mark.parametrize("line", [[], ["--json"], ["no-such-command"], ["--lang", "en"]])
def test_a_line_without_a_known_command_gets_every_command(line: list[str], monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    asked: list[dict[str, object]] = []
    real = cli.build_parser

    def recording(**kwargs: object) -> object:
        asked.append(kwargs)
        return real(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cli, "build_parser", recording)
    assert cli.main(line) == 2
    # every command's name and help line, none of their options
    assert asked == [{"summary": True, "json": "--json" in line}]
    if line == ["no-such-command"]:  # argparse names the commands there are
        assert "why-not" in capsys.readouterr().err


def test_the_summary_says_what_the_whole_parser_says_without_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    summary, whole = cli.build_parser(summary=True), cli.build_parser()
    assert summary.format_help() == whole.format_help()  # the top-level help, word for word
    assert summary.format_usage() == whole.format_usage()
    for line in (["--lang", "zh"], ["-q", "--no-cache"], []):
        assert vars(summary.parse_args(line)) == vars(whole.parse_args(line))
    with pytest.raises(UsageError) as summary_error:
        summary.parse_args(["no-such-command"])
    with pytest.raises(UsageError) as whole_error:
        whole.parse_args(["no-such-command"])
    assert str(summary_error.value) == str(whole_error.value)


_LOADED = """
import json, sys
from cudaresolve.cli import main
try:
    code = main(json.loads(sys.argv[1]))
except SystemExit as exit:
    code = exit.code
heavy = {"dataclasses", "inspect", "typing", "cudaresolve.errors"}
print(json.dumps({"code": code, "loaded": sorted(heavy & set(sys.modules))}), file=sys.stderr)
"""


@pytest.mark.parametrize("line", [["--help"], ["-V"], ["lock", "--help"], ["detect", "-h"], ["install", "--help"]])
def test_help_and_version_import_no_dataclass(line: list[str]) -> None:
    """``dataclasses`` imports ``inspect``: together some 15 ms of a ``--help`` that should cost little more than
    the interpreter's start; ``typing``, some 9 ms more (``TYPE_CHECKING = False`` where it would load)."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _LOADED, json.dumps(line)], capture_output=True, text=True,
                          check=False)
    answer = json.loads(done.stderr.strip().splitlines()[-1])
    assert answer["code"] in (0, None) and done.stdout.strip()
    assert answer["loaded"] == []
