from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cudaresolve.core.archs import (
    Arch,
    ComputeCapability,
    Coverage,
    arch_runs_on,
    coverage,
    format_arch_list,
    parse_arch,
    parse_arch_list,
    parse_cc,
)
from cudaresolve.errors import InvalidArch

CC = ComputeCapability


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8.6", (Arch(CC(8, 6)),)),
        ("86", (Arch(CC(8, 6)),)),
        ("sm_86", (Arch(CC(8, 6)),)),
        ("compute_86", (Arch(CC(8, 6), ptx=True),)),
        ("sm_90a", (Arch(CC(9, 0), "a"),)),
        ("9.0a", (Arch(CC(9, 0), "a"),)),
        ("sm_100f", (Arch(CC(10, 0), "f"),)),
        ("compute_120f", (Arch(CC(12, 0), "f", ptx=True),)),
        ("8.0+PTX", (Arch(CC(8, 0)), Arch(CC(8, 0), ptx=True))),
        (" 12.1 ", (Arch(CC(12, 1)),)),
    ],
)
def test_parse_arch_forms(text: str, expected: tuple[Arch, ...]) -> None:
    assert parse_arch(text) == expected


@pytest.mark.parametrize("text", ["", "sm_", "abc", "8.x", "sm_8", "compute_86+PTX", "0.5", "sm_90b", "1234"])
def test_parse_arch_rejects(text: str) -> None:
    with pytest.raises(InvalidArch) as info:
        parse_arch(text)
    assert info.value.code == "invalid-arch"
    assert info.value.hint


def test_parse_cc_refuses_suffix_and_ptx() -> None:
    assert parse_cc("sm_61") == CC(6, 1)
    with pytest.raises(InvalidArch):
        parse_cc("sm_90a")
    with pytest.raises(InvalidArch):
        parse_cc("compute_90")


def test_names_round_trip() -> None:
    assert [a.name for a in parse_arch_list("7.5;8.6+PTX sm_90a,sm_100f")] == [
        "sm_75",
        "sm_86",
        "compute_86",
        "sm_90a",
        "sm_100f",
    ]


@pytest.mark.parametrize(
    ("arch", "gpu", "runs"),
    [
        ("sm_80", "8.6", True),  # same major, higher minor
        ("sm_86", "8.0", False),  # lower minor
        ("sm_86", "8.9", True),  # RTX 40xx runs sm_86 cubins
        ("sm_90", "10.0", False),  # never across majors
        ("sm_90a", "9.0", True),
        ("sm_90a", "9.1", False),  # arch-specific: exact only
        ("sm_100a", "10.3", False),
        ("sm_100f", "10.3", True),  # family: same major, >= minor
        ("sm_100f", "12.0", False),
        ("sm_120", "12.1", True),
        ("compute_80", "12.0", True),  # PTX JITs forward across majors
        ("compute_90", "8.6", False),
        ("compute_90a", "10.0", False),
        ("compute_100f", "10.3", True),
        ("compute_100f", "12.0", False),
    ],
)
def test_runs_on(arch: str, gpu: str, runs: bool) -> None:
    (parsed,) = parse_arch(arch)
    assert arch_runs_on(parsed, parse_cc(gpu)) is runs


def test_tegra_needs_exact_sass() -> None:
    (sm80,) = parse_arch("sm_80")
    (sm87,) = parse_arch("sm_87")
    assert arch_runs_on(sm80, CC(8, 7), tegra=True) is False
    assert arch_runs_on(sm87, CC(8, 7), tegra=True) is True


def test_coverage_prefers_sass_then_ptx() -> None:
    archs = parse_arch_list("7.0;8.0;9.0+PTX")
    assert coverage(archs, CC(8, 6)) is Coverage.SASS
    assert coverage(archs, CC(12, 0)) is Coverage.PTX_JIT
    assert coverage(archs, CC(12, 0), ptx_jit_ok=False) is Coverage.NONE
    assert coverage(archs, CC(6, 1)) is Coverage.NONE


def test_format_arch_list() -> None:
    assert format_arch_list([CC(8, 6), CC(7, 5), CC(8, 6)]) == "7.5;8.6"
    assert format_arch_list([CC(8, 6), CC(7, 5)], ptx=True) == "7.5;8.6+PTX"
    assert format_arch_list([]) == ""


ccs = st.builds(CC, st.integers(min_value=3, max_value=13), st.integers(min_value=0, max_value=9))


@given(ccs, ccs)
def test_plain_sass_rule_is_same_major_not_lower_minor(build: CC, gpu: CC) -> None:
    runs = arch_runs_on(Arch(build), gpu)
    assert runs == (gpu.major == build.major and gpu.minor >= build.minor)


@given(ccs, ccs)
def test_arch_specific_runs_only_on_itself(build: CC, gpu: CC) -> None:
    assert arch_runs_on(Arch(build, "a"), gpu) == (gpu == build)
    assert arch_runs_on(Arch(build, "a", ptx=True), gpu) == (gpu == build)


@given(ccs, ccs)
def test_plain_ptx_reaches_every_newer_gpu(build: CC, gpu: CC) -> None:
    assert arch_runs_on(Arch(build, ptx=True), gpu) == (gpu >= build)


@given(ccs, st.integers(min_value=0, max_value=9))
def test_sass_implies_ptx_of_same_target(build: CC, step: int) -> None:
    # whatever SASS for X reaches, PTX for X reaches too (PTX is the more portable form); the GPU is
    # built to be one that SASS reaches (same major, minor at least X's), so the premise always holds
    gpu = CC(build.major, min(9, build.minor + step))
    assert arch_runs_on(Arch(build), gpu)
    assert arch_runs_on(Arch(build, ptx=True), gpu)


@given(ccs, ccs)
def test_ptx_reaches_at_least_what_sass_reaches(build: CC, gpu: CC) -> None:
    sass, ptx = arch_runs_on(Arch(build), gpu), arch_runs_on(Arch(build, ptx=True), gpu)
    assert ptx or not sass


@given(st.lists(ccs, min_size=1, max_size=6))
def test_arch_list_round_trips(values: list[CC]) -> None:
    text = format_arch_list(values, ptx=True)
    parsed = parse_arch_list(text)
    assert {a.cc for a in parsed if not a.ptx} == set(values)
    assert [a.cc for a in parsed if a.ptx] == [max(values)]
