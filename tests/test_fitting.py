"""Which files of a page are parsed for a target (``index.fitting.tag_filter``): the name test agrees with
packaging's parse of the wheel's tags, on every kind of name a page holds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from packaging.tags import parse_tag
from packaging.utils import parse_wheel_filename

from cudaresolve.index.fitting import tag_filter
from cudaresolve.target.environment import wheel_tags
from cudaresolve.target.model import Target

LINUX = wheel_tags(Target(gpus=(), driver=None, python="3.11", platform="linux_x86_64"), glibc="2.28")
MAC = wheel_tags(Target(gpus=(), driver=None, python="3.12", platform="macosx_arm64"), macos="14.0")

PYS = ["cp311", "cp312", "cp39", "py3", "py2.py3", "cp311.cp312", "pp310"]
ABIS = ["cp311", "cp312", "abi3", "none", "cp311.abi3"]
PLATS = ["manylinux_2_17_x86_64.manylinux2014_x86_64", "manylinux_2_28_x86_64", "manylinux_2_34_x86_64",
         "musllinux_1_2_x86_64", "win_amd64", "macosx_11_0_arm64", "macosx_14_0_universal2", "any",
         "manylinux_2_28_aarch64", "linux_x86_64"]  # fmt: skip


@given(st.sampled_from(PYS), st.sampled_from(ABIS), st.sampled_from(PLATS), st.booleans(), st.booleans())
def test_the_name_test_agrees_with_packagings_tags(py: str, abi: str, plat: str, build: bool, mac: bool) -> None:
    tags = MAC if mac else LINUX
    name = f"Demo_Pkg-1.0{'-1' if build else ''}-{py}-{abi}-{plat}.whl"
    expected = bool(parse_wheel_filename(name)[3] & set(tags))
    assert tag_filter(tags)(name) is expected
    assert bool(set(parse_tag(f"{py}-{abi}-{plat}")) & set(tags)) is expected


def test_sdists_and_odd_names_are_left_to_the_parser_and_the_key_names_the_tags() -> None:
    keep = tag_filter(LINUX)
    assert keep("demo-1.0.tar.gz") and keep("demo-1.0.zip") and keep("weird.whl")
    assert keep.key == tag_filter(tuple(LINUX)).key != tag_filter(MAC).key  # type: ignore[attr-defined]


def test_a_mac_target_takes_the_wheels_pip_takes_on_that_mac() -> None:
    """Found against uv on real PyPI: an arm64 Mac took no ``macosx_10_*_universal2`` wheel, so pyobjc-core 13.0
    (universal2 wheels only) was an sdist to build and a lock with it ran for minutes. The tags are those pip
    computes on such a Mac (``packaging.tags.mac_platforms``), each checked here by name."""
    intel = wheel_tags(Target(gpus=(), driver=None, python="3.11", platform="macosx_x86_64"), macos="13.0")
    arm = wheel_tags(Target(gpus=(), driver=None, python="3.11", platform="macosx_arm64"), macos="14.0")
    for wheel, on_arm, on_intel in [
        ("pyobjc_core-13.0-cp311-cp311-macosx_10_13_universal2.whl", True, True),
        ("numpy-2.0-cp311-cp311-macosx_14_0_arm64.whl", True, False),
        ("numpy-2.0-cp311-cp311-macosx_15_0_arm64.whl", False, False),  # newer than the target's macOS
        ("numpy-2.0-cp311-cp311-macosx_10_9_x86_64.whl", False, True),
        ("old-1.0-cp311-cp311-macosx_10_6_intel.whl", False, True),
        ("x-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", False, False),
    ]:
        tags = parse_wheel_filename(wheel)[3]
        assert (bool(tags & set(arm)), bool(tags & set(intel))) == (on_arm, on_intel), wheel
    catalina = set(wheel_tags(Target(gpus=(), driver=None, python="3.11", platform="macosx_x86_64"), macos="10.15"))
    for platform, fits in [("macosx_10_9_x86_64", True), ("macosx_10_15_x86_64", True), ("macosx_11_0_x86_64", False)]:
        tags = parse_wheel_filename(f"n-2.0-cp311-cp311-{platform}.whl")[3]
        assert bool(tags & catalina) is fits, platform  # review: a 10.x target had lost its minor


def test_a_tag_sets_remembered_rank_is_the_rank_it_has() -> None:
    """``tag_priority`` remembers each tag set's rank against a table: the same answer for a set seen before, for an
    equal set made apart (another page's), and for sets never seen, as the ranks computed afresh."""
    from packaging.tags import Tag, parse_tag

    from cudaresolve.target import environment

    supported = tuple(parse_tag("cp311-cp311-manylinux_2_28_x86_64")) + tuple(parse_tag("py3-none-any"))
    sets = [frozenset(parse_tag(t)) for t in ("py3-none-any", "cp311-cp311-manylinux_2_28_x86_64",
                                              "cp310-cp310-win_amd64", "py2.py3-none-any.manylinux_2_28_x86_64")]
    expected = [1, 0, None, 1]
    for _ in range(2):
        assert [environment.tag_priority(s, supported) for s in sets] == expected
        assert [environment.tag_priority(frozenset(set(s)), supported) for s in sets] == expected
    assert environment.tag_priority(frozenset({Tag("py3", "none", "any")}), supported[:1]) is None
