"""Hardware targets from the audit of November 2026: each case of ``fixtures/targets/hardware.toml`` through the CLI.

No GPU and no network: every run is ``--offline``, its target named with flags, on the shipped data.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from cudaresolve.cli import main

CASES: list[dict[str, Any]] = tomllib.loads(
    (Path(__file__).parent / "fixtures" / "targets" / "hardware.toml").read_text(encoding="utf-8")
)["case"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")  # one built database for every case


def argv(case: dict[str, Any]) -> list[str]:
    target = ["--cpu"] if case.get("cpu") else ["--gpu", case["gpu"]]
    target += ["--driver", case["driver"]] if "driver" in case else []
    return [
        "lock", "torch", *case.get("with", ()), *target, "--python-version", case.get("python", "3.11"),
        "--platform", case.get("platform", "linux_x86_64"), "--offline", "--json",
    ]


def test_case_ids_are_unique_and_each_case_has_one_answer() -> None:
    assert len({c["id"] for c in CASES}) == len(CASES) >= 40
    for case in CASES:
        assert ("error" in case) != ("torch" in case), case["id"]
        assert case["why"], case["id"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_hardware_target(
    case: dict[str, Any], cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(cache))
    code = main(argv(case))
    result = json.loads(capsys.readouterr().out)
    if "error" in case:
        assert (code, result["error"]["code"]) == (1, case["error"]), result
        assert result["error"]["findings"][0]["code"] == case["finding"], result["error"]
        return
    assert code == 0, result
    locked = {p["name"]: p["version"] for p in result["packages"]}
    assert (result["variant"], locked["torch"]) == (case["variant"], case["torch"]), case["why"]
    assert {name: locked.get(name) for name in case.get("versions", {})} == case.get("versions", {}), case["why"]
    assert set(case.get("warnings", ())) <= {w["code"] for w in result["warnings"]}
