"""--platform and --python-platform: one parser, the glibc or macOS a tag names kept, musl refused."""

from __future__ import annotations

import json

import pytest
from packaging.tags import Tag

from cudaresolve.cli import main
from cudaresolve.core.platforms import normalize_platform
from cudaresolve.db.database import load_compat
from cudaresolve.errors import InvalidInput, UnsupportedPlatform
from cudaresolve.target.build import TargetOptions, build_target
from cudaresolve.target.environment import wheel_tags
from cudaresolve.target.python_platform import declared_platform, parse_platform

DB = load_compat()

SPELLINGS = [
    ("manylinux_2_17_x86_64", "linux_x86_64", "2.17", None),
    ("manylinux_2_31_aarch64", "linux_aarch64", "2.31", None),
    ("manylinux2014_x86_64", "linux_x86_64", "2.17", None),
    ("manylinux2010_x86_64", "linux_x86_64", "2.12", None),
    ("manylinux1_x86_64", "linux_x86_64", "2.5", None),
    ("x86_64-manylinux_2_24", "linux_x86_64", "2.24", None),
    ("aarch64-unknown-linux-gnu", "linux_aarch64", "2.28", None),
    ("x86_64-manylinux2014", "linux_x86_64", "2.17", None),
    ("linux_x86_64", "linux_x86_64", None, None),
    ("macosx_11_0_arm64", "macosx_arm64", None, "11.0"),
    ("macosx_10_15_x86_64", "macosx_x86_64", None, "10.15"),
    ("aarch64-apple-darwin", "macosx_arm64", None, "13.0"),
    ("win_amd64", "win_amd64", None, None),
    ("x86_64-pc-windows-msvc", "win_amd64", None, None),
]


@pytest.mark.parametrize(("text", "platform", "glibc", "macos"), SPELLINGS)
@pytest.mark.parametrize("flag", ["platform", "python_platform"])
def test_both_flags_read_every_spelling_alike(
    flag: str, text: str, platform: str, glibc: str | None, macos: str | None
) -> None:
    options = TargetOptions(cpu=True, python="3.12", platform=text if flag == "platform" else None,
                            python_platform=text if flag == "python_platform" else None)
    target = build_target(options, DB)
    assert (target.platform, target.glibc, target.macos) == (platform, glibc, macos)


def test_a_glibc_the_tag_names_bounds_the_wheels_that_fit() -> None:
    target = build_target(TargetOptions(cpu=True, python="3.12", platform="manylinux_2_17_x86_64"), DB)
    tags = set(wheel_tags(target, glibc=target.glibc))
    assert Tag("cp312", "cp312", "manylinux_2_17_x86_64") in tags
    assert Tag("cp312", "cp312", "manylinux2014_x86_64") in tags
    assert Tag("cp312", "cp312", "manylinux_2_28_x86_64") not in tags  # a 2.28-only wheel needs a newer glibc
    mac = build_target(TargetOptions(cpu=True, python="3.12", platform="macosx_11_0_arm64"), DB)
    assert Tag("cp312", "cp312", "macosx_11_0_arm64") in set(wheel_tags(mac, macos=mac.macos))
    assert Tag("cp312", "cp312", "macosx_14_0_arm64") not in set(wheel_tags(mac, macos=mac.macos))


@pytest.mark.parametrize(
    "text", ["musllinux_1_2_x86_64", "musllinux_1_1_aarch64", "x86_64-unknown-linux-musl", "aarch64-musllinux_1_2"]
)
@pytest.mark.parametrize("flag", ["--platform", "--python-platform"])
def test_musl_targets_are_refused_with_a_code(text: str, flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UnsupportedPlatform) as info:
        parse_platform(text, DB, flag=flag)
    assert info.value.code == "unsupported-platform"
    code = main(["lock", "torch", "--cpu", flag, text, "--offline", "--json", "-o", "pylock.toml"])
    error = json.loads(capsys.readouterr().out)["error"]
    assert code == 1 and error["code"] == "unsupported-platform"
    assert "musl" in error["message"] and error["hint"]


def test_a_musllinux_wheel_never_counts_as_a_linux_one() -> None:
    with pytest.raises(UnsupportedPlatform):
        normalize_platform("musllinux_1_2_x86_64")


def test_the_two_flags_together() -> None:
    both = declared_platform("linux_x86_64", "x86_64-manylinux_2_31", DB)
    assert both is not None and (both.platform, both.glibc) == ("linux_x86_64", "2.31")
    with pytest.raises(InvalidInput, match=r"\(glibc 2.28\) name different platforms"):
        declared_platform("manylinux_2_17_x86_64", "x86_64-unknown-linux-gnu", DB)  # uv's name means glibc 2.28
    with pytest.raises(InvalidInput, match="name different platforms"):
        declared_platform("win_amd64", "x86_64-unknown-linux-gnu", DB)
    with pytest.raises(InvalidInput, match="name different platforms"):
        declared_platform("manylinux_2_17_x86_64", "x86_64-manylinux_2_31", DB)
    assert declared_platform(None, None, DB) is None


@pytest.mark.parametrize("text", ["bogus", "linux_ppc64le", "manylinux_2_17_riscv64", "macosx_arm64_extra", ""])
@pytest.mark.parametrize("flag", ["--platform", "--python-platform"])
def test_unknown_spellings_are_one_coded_line(text: str, flag: str) -> None:
    with pytest.raises(InvalidInput) as info:
        parse_platform(text, DB, flag=flag)
    assert info.value.code == "invalid-input"
    assert info.value.message.startswith(f"unknown {flag} ")
    assert info.value.hint is not None and "manylinux_2_28_x86_64" in info.value.hint
