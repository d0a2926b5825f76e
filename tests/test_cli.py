# ruff: noqa: RUF001
"""The CLI shell itself: global options, one-line errors, --debug."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

import pytest

from cudaresolve import cli

if TYPE_CHECKING:
    from pathlib import Path


def _parser_whose_command_raises(exc: BaseException) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cudaresolve")
    parser.add_argument("--debug", action="store_true")
    parser.add_argument("--json", action="store_true")

    def boom(args: argparse.Namespace) -> int:
        raise exc

    parser.set_defaults(func=boom)
    return parser


def test_an_unexpected_error_is_one_coded_line_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "build_parser", lambda **_: _parser_whose_command_raises(ZeroDivisionError("oops")))
    assert cli.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: internal-error: an unexpected ZeroDivisionError: oops (hint: ")
    assert "--debug" in err and "Traceback" not in err


def test_an_unexpected_error_in_json_mode_is_the_error_object(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "build_parser", lambda **_: _parser_whose_command_raises(KeyError("k")))
    assert cli.main(["--json"]) == 2
    payload = json.loads(capsys.readouterr().out)
    assert payload["schema"] == 1 and payload["error"]["code"] == "internal-error"


def test_debug_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "build_parser", lambda **_: _parser_whose_command_raises(ZeroDivisionError("oops")))
    with pytest.raises(ZeroDivisionError, match="oops"):
        cli.main(["--debug"])


@pytest.mark.parametrize("command", ["detect", "arch-list", "db show", "lock", "install", "why-not cu118", "doctor",
                                     "inspect x", "explain-error x"])
def test_every_command_takes_lang_and_debug(command: str) -> None:
    parser = cli.build_parser()
    args = parser.parse_args([*command.split(), "--lang", "zh", "--debug"])
    assert args.lang == "zh" and args.debug is True


def test_lang_before_the_command_is_kept() -> None:
    args = cli.build_parser().parse_args(["--lang", "zh", "why-not", "cu118"])
    assert args.lang == "zh"
    assert cli.build_parser().parse_args(["why-not", "cu118"]).lang is None


def test_errors_are_rendered_in_the_chosen_language(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["lock", "torch", "--gpu", "8.0", "--driver", "470.129.06", "--python-version", "3.11",
                     "--platform", "macosx_arm64", "--offline", "--lang", "zh"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: no-solution: 没有一组软件包适合这台机器：")


def test_detect_speaks_the_chosen_language(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["detect", "--gpu", "A800", "--driver", "470.129.06", "--python-version", "3.11",
                     "--platform", "linux_x86_64", "--lang", "zh"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["#", "GPU", "计算能力", "显存"]
    assert lines[2:] == ["驱动：470.129.06", "支持的最高 CUDA：11.4", "平台：linux_x86_64", "python：3.11",
                         "来源：命令行参数"]


def test_lock_speaks_the_chosen_language(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.txt"
    assert cli.main(["lock", "torch", "--gpu", "A800", "--driver", "470.129.06", "--python-version", "3.11",
                     "--platform", "linux_x86_64", "--offline", "-o", str(out), "--format", "requirements",
                     "--lang", "zh"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "变体 cu118，来自 https://download.pytorch.org/whl/cu118"
    assert err[1].split() == ["软件包", "版本", "索引"]
    assert err[-1] == f"已写入 {out}（requirements）"


def test_a_users_text_is_echoed_as_typed_with_no_emoji_code_replaced(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """rich reads ``:cd:`` as an emoji code; what the user typed (a GPU name, a path, a label) is shown as typed."""
    code = cli.main(["lock", "torch", "--gpu", "X:cd:Y :rocket:", "--driver", "580.65.06",
                     "-o", str(tmp_path / "pylock.toml")])  # fmt: skip
    err = capsys.readouterr().err
    assert code != 0 and "unknown-gpu" in err
    assert "'X:cd:Y :rocket:'" in err
