"""Property-based fuzzing of every parser of user input this area owns (issue 12, item 5 and "Done means").

GPU strings, driver strings, arch lists, Python versions, platforms, the environment overrides,
host files (any JSON value, and the bytes of the file) and explain-error text: whatever comes in,
the only exception that may come out is a ``CudaResolveError``; explain-error never scans more
than its cap.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cudaresolve.core.archs import parse_arch, parse_arch_list, parse_cc
from cudaresolve.core.platforms import normalize_platform
from cudaresolve.core.versions import parse_cuda_version, parse_driver, parse_python_version
from cudaresolve.db.database import load_compat
from cudaresolve.errorlog.explain import explain_log
from cudaresolve.errorlog.signatures import MAX_TEXT_CHARS, SIGNATURES, match_errors
from cudaresolve.errors import CudaResolveError
from cudaresolve.target.build import TargetOptions, build_target, load_host_file, resolve_gpu, target_from_dict
from cudaresolve.target.readings import (
    parse_cuda_visible_devices,
    parse_nvidia_smi_csv,
    parse_proc_gpu_information,
    parse_proc_version,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from cudaresolve.db.database import CompatDB

DB = load_compat()
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

#: Pieces that steer random text towards the parsers' interesting paths.
_DIGITS = st.sampled_from(["0", "8", "9", "86", "120", "535", "\u0668", "\u0664\u0667\u0660", "\uff18", "9" * 5000])
_PIECES = st.sampled_from(
    ["sm_", "compute_", "lto_", ".", "+PTX", "a", "f", ";", ",", " ", "\t", "\n", "RTX ", "A100", "GeForce ",
     "NVIDIA ", "-", "_", "x", "\x00", "\u200b", "ß", "İ"]
)
USER_TEXT = st.one_of(
    st.text(max_size=40),
    st.lists(st.one_of(_DIGITS, _PIECES), max_size=8).map("".join),
)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
_GPU_ENTRY = st.fixed_dictionaries(
    {},
    optional={"name": st.one_of(USER_TEXT, JSON), "cc": st.one_of(USER_TEXT, JSON), "memory_mib": JSON,
              "datacenter": JSON},
)
#: Host files shaped almost like the real thing, with any field replaced by anything.
HOST = st.fixed_dictionaries(
    {},
    optional={
        "gpus": st.one_of(st.lists(st.one_of(_GPU_ENTRY, JSON), max_size=3), JSON),
        "driver": st.one_of(USER_TEXT, JSON),
        "platform": st.one_of(USER_TEXT, JSON),
        "python": st.one_of(USER_TEXT, JSON),
        "target": JSON,
        "schema": JSON,
    },
)


def _only_coded(call: Callable[[], object]) -> None:
    """``call()`` returns, or raises a CudaResolveError; any other exception fails the property."""
    try:
        call()
    except CudaResolveError:
        pass


@pytest.mark.parametrize(
    "parse",
    [parse_driver, parse_cc, parse_arch, parse_arch_list, parse_cuda_version, parse_python_version, normalize_platform],
)
@FUZZ
@given(text=USER_TEXT)
def test_core_parsers(parse: Callable[[str], object], text: str) -> None:
    _only_coded(lambda: parse(text))


@FUZZ
@given(text=USER_TEXT)
def test_accepted_numbers_are_ascii(text: str) -> None:
    """A driver, CC, arch, CUDA or Python version is accepted only when written in ASCII (item 5)."""
    for parse in (parse_driver, parse_cc, parse_arch_list, parse_cuda_version, parse_python_version):
        try:
            parse(text)
        except CudaResolveError:
            continue
        assert text.strip().isascii(), (parse.__name__, text)


@FUZZ
@given(text=USER_TEXT)
def test_gpu_strings(text: str) -> None:
    _only_coded(lambda: resolve_gpu(text, DB))


@FUZZ
@given(gpus=st.lists(USER_TEXT, max_size=3), driver=st.none() | USER_TEXT, python=st.none() | USER_TEXT,
       platform=st.none() | USER_TEXT, cpu=st.booleans())
def test_target_flags(gpus: list[str], driver: str | None, python: str | None, platform: str | None, cpu: bool) -> None:
    options = TargetOptions(gpus=tuple(gpus), driver=driver, python=python, platform=platform, cpu=cpu)
    _only_coded(lambda: build_target(options, DB, environ={}, detect=lambda env: None))


@FUZZ
@given(env_gpus=USER_TEXT, env_driver=USER_TEXT)
def test_environment_overrides(env_gpus: str, env_driver: str) -> None:
    environ = {"CUDARESOLVE_GPUS": env_gpus, "CUDARESOLVE_DRIVER": env_driver}
    _only_coded(lambda: build_target(TargetOptions(), DB, environ=environ, detect=lambda env: None))


@FUZZ
@given(data=st.one_of(JSON, HOST, HOST.map(lambda h: {"schema": 1, "target": h})))
def test_host_file_values(data: Any) -> None:
    """Any JSON value: a coded error, or a target from an object that said which GPUs and driver."""
    try:
        target_from_dict(data, DB)
    except CudaResolveError:
        return
    inner = data["target"] if "target" in data else data
    assert "gpus" in inner and "driver" in inner, data


@FUZZ
@given(raw=st.one_of(st.binary(max_size=200), JSON.map(lambda v: json.dumps(v).encode()),
                     HOST.map(lambda h: json.dumps(h).encode())))
def test_host_file_bytes(tmp_path: Path, raw: bytes) -> None:
    path = tmp_path / "host.json"
    path.write_bytes(raw)
    _only_coded(lambda: load_host_file(str(path), DB))


@FUZZ
@given(text=USER_TEXT, count=st.integers(min_value=0, max_value=9))
def test_detection_readings(text: str, count: int) -> None:
    for parse in (parse_nvidia_smi_csv, parse_proc_version, parse_proc_gpu_information):
        _only_coded(lambda parse=parse: parse(text))  # type: ignore[misc]
    _only_coded(lambda: parse_cuda_visible_devices(text, count))


#: Fragments of every signature's own words, so random logs come close to matching.
_SIG_WORDS = sorted({w for sig in SIGNATURES for p in sig.patterns for w in p.pattern.replace("\\", "").split(" ")})
LOG = st.lists(st.one_of(st.sampled_from(_SIG_WORDS), USER_TEXT, st.sampled_from([" ", "\n", "sm_", "8.0"])),
               max_size=30).map(" ".join)


@FUZZ
@given(text=LOG)
def test_explain_error_text(text: str) -> None:
    def run() -> None:
        result = explain_log(text, None, DB)
        assert result.scanned <= MAX_TEXT_CHARS

    _only_coded(run)


@settings(max_examples=4, deadline=None)
@given(head=LOG, filler=st.sampled_from(["Found ", "xformers", "a", "\n"]))
def test_explain_error_stays_within_its_cap(head: str, filler: str) -> None:
    """Past the cap nothing is read: the result is that of the first MAX_TEXT_CHARS characters."""
    text = head + filler * (MAX_TEXT_CHARS // len(filler) + 10)
    try:
        result = explain_log(text, None, DB)
    except CudaResolveError:
        assert match_errors(text[:MAX_TEXT_CHARS]) == []
    else:
        assert (result.scanned, result.truncated) == (MAX_TEXT_CHARS, True)


def test_db_fixture_is_the_shipped_one() -> None:
    db: CompatDB = DB
    assert db.gpus  # the fuzz above resolves names against real rows
