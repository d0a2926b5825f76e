"""The habits of pip and uv: exit 2 on usage errors, -V, -q/-v, --color with NO_COLOR/FORCE_COLOR,
--cache-dir/--no-cache, --json on every command, --python-platform."""

from __future__ import annotations

import argparse
import json
import tempfile
from typing import TYPE_CHECKING

import pytest

from cudaresolve import __version__
from cudaresolve.cli import build_parser, main
from cudaresolve.db.database import load_compat
from cudaresolve.render.output import wants_color
from cudaresolve.target.build import TargetOptions, build_target
from cudaresolve.target.environment import wheel_tags

if TYPE_CHECKING:
    from pathlib import Path

LOCK = ["lock", "torch", "--gpu", "A800", "--driver", "470.129.06", "--python-version", "3.11",
        "--platform", "linux_x86_64", "--offline"]
ANSI = "\x1b["


def test_a_usage_error_is_one_coded_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lock", "--no-such-flag"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("error: usage: cudaresolve: unrecognized arguments: --no-such-flag "
                   "(hint: run 'cudaresolve --help')\n")
    assert main(["lock", "--format", "wheel", "--json"]) == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "usage" and "invalid choice: 'wheel'" in error["message"]
    assert main([]) == 2  # no command: the help, as a usage error
    assert "usage: cudaresolve" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([flag])
    assert (info.value.code, capsys.readouterr().out) == (0, f"cudaresolve {__version__}\n")


@pytest.mark.parametrize(
    ("flag", "env", "terminal", "expected"),
    [
        ("auto", {}, True, True),
        ("auto", {}, False, False),
        ("auto", {"NO_COLOR": "1"}, True, False),
        ("auto", {"NO_COLOR": ""}, True, True),  # set but empty: ignored (no-color.org)
        ("auto", {"FORCE_COLOR": "1"}, False, True),
        ("auto", {"FORCE_COLOR": ""}, False, False),
        ("auto", {"NO_COLOR": "1", "FORCE_COLOR": "1"}, True, False),  # NO_COLOR wins
        ("always", {"NO_COLOR": "1"}, False, True),  # the flag beats the environment
        ("never", {"FORCE_COLOR": "1"}, True, False),
    ],
)
def test_colour_rules(flag: str, env: dict[str, str], terminal: bool, expected: bool) -> None:
    assert wants_color(flag, env, is_terminal=terminal) is expected


def test_colour_on_stderr(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    bad = ["lock", "torch", "--gpu", "A8000", "--offline"]
    assert main(bad) == 1
    assert ANSI not in capsys.readouterr().err  # not a terminal: no colour
    assert main(["--color", "always", *bad]) == 1
    assert capsys.readouterr().err.startswith(f"{ANSI}1;31merror")
    monkeypatch.setenv("FORCE_COLOR", "1")
    main(bad)
    assert ANSI in capsys.readouterr().err
    main([*bad, "--color", "never"])
    assert ANSI not in capsys.readouterr().err
    monkeypatch.setenv("NO_COLOR", "1")
    main(bad)
    assert ANSI not in capsys.readouterr().err


def test_quiet_and_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(LOCK) == 0
    normal = capsys.readouterr().err
    assert "package" in normal and "warning: minor-version-compat" in normal
    assert main(["-q", *LOCK]) == 0
    quiet = capsys.readouterr().err.splitlines()
    assert quiet and all(line.startswith("warning: ") for line in quiet)  # no table, every warning
    assert main([*LOCK, "-qq"]) == 0
    assert capsys.readouterr() == ("", "")
    assert main(["-qq", "lock", "torch", "--gpu", "A8000", "--offline"]) == 1
    assert capsys.readouterr().err.startswith("error: unknown-gpu")  # errors are never hidden
    assert main(["-v", *LOCK]) == 0
    assert capsys.readouterr().err == normal  # offline: nothing fetched, so nothing more to say


def test_cache_dir_and_no_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    env_cache = tmp_path / "env-cache"
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(env_cache))
    flag_cache = tmp_path / "flag-cache"
    assert main(["db", "show", "--cache-dir", str(flag_cache)]) == 0
    assert (flag_cache / "compat").is_dir() and not env_cache.exists()  # the flag beats the environment
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    assert main(["--no-cache", "db", "show"]) == 0
    assert not env_cache.exists() and list(scratch.iterdir()) == []  # a temporary cache, removed after
    assert main(["db", "show"]) == 0
    assert (env_cache / "compat").is_dir()
    capsys.readouterr()


Leaf = tuple[tuple[str, ...], argparse.ArgumentParser]


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[Leaf]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += _leaves(child, (*path, name))
    return found or [(path, parser)]


def test_every_command_takes_json_and_the_global_options() -> None:
    leaves = _leaves(build_parser())
    assert len(leaves) >= 11
    for path, parser in leaves:
        known = parser._option_string_actions
        missing = {"--json", "-q", "-v", "--color", "--cache-dir", "--no-cache", "--lang", "--debug"} - set(known)
        assert not missing, (path, missing)


def test_arch_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arch-list", "--gpu", "RTX 3090", "--gpu", "7.5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["schema"], data["arch_list"], data["ccs"]) == (1, "7.5;8.6", ["7.5", "8.6"])


def test_python_platform_names_from_the_database(capsys: pytest.CaptureFixture[str]) -> None:
    db = load_compat()
    for name in db.python_platform_names:  # every row names a platform the database has wheels for
        named = db.python_platform(name)
        assert named is not None and named.platform in {"linux_x86_64", "linux_aarch64", "win_amd64",
                                                        "macosx_arm64", "macosx_x86_64"}
    assert main(["detect", "--gpu", "A100", "--python-platform", "x86_64-unknown-linux-gnu", "--json"]) == 0
    target = json.loads(capsys.readouterr().out)["target"]
    assert (target["platform"], target["glibc"]) == ("linux_x86_64", "2.28")
    assert main(["detect", "--cpu", "--python-platform", "aarch64-apple-darwin", "--json"]) == 0
    target = json.loads(capsys.readouterr().out)["target"]
    assert (target["platform"], target["macos"]) == ("macosx_arm64", "13.0")
    assert main(["detect", "--cpu", "--python-platform", "aarch64-manylinux_2_31", "--json"]) == 0
    target = json.loads(capsys.readouterr().out)["target"]
    assert (target["platform"], target["glibc"]) == ("linux_aarch64", "2.31")
    assert main(["detect", "--cpu", "--python-platform", "i686-pc-windows-msvc"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: invalid-input: unknown --python-platform 'i686-pc-windows-msvc'")
    assert "x86_64-unknown-linux-gnu" in err
    assert main(["detect", "--cpu", "--python-platform", "macos", "--platform", "linux_x86_64"]) == 1
    assert "name different platforms" in capsys.readouterr().err


def test_manylinux_name_sets_the_glibc_of_the_wheel_tags() -> None:
    db = load_compat()
    newer = build_target(TargetOptions(cpu=True, python="3.11", python_platform="x86_64-manylinux_2_31"), db)
    plain = build_target(TargetOptions(cpu=True, python="3.11", python_platform="x86_64-unknown-linux-gnu"), db)
    assert (newer.glibc, plain.glibc) == ("2.31", "2.28")
    newer_tags = {str(t) for t in wheel_tags(newer, glibc=newer.glibc)}
    plain_tags = {str(t) for t in wheel_tags(plain, glibc=plain.glibc)}
    assert "cp311-cp311-manylinux_2_31_x86_64" in newer_tags
    assert "cp311-cp311-manylinux_2_31_x86_64" not in plain_tags
    assert "cp311-cp311-manylinux_2_28_x86_64" in plain_tags
