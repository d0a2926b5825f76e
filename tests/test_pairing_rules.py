"""Pairings the database states as the wheels behave: torchaudio 2.11.0 and torchvision 0.29.1 beside newer torch."""

from __future__ import annotations

import json

import pytest

from cudaresolve.cli import main
from cudaresolve.db.database import load_compat

DB = load_compat()
TARGET = ["--gpu", "9.0", "--driver", "580.65.06", "--offline", "--python-version", "3.12", "--json"]


def _why_not(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    main(["why-not", *argv, *TARGET])
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


def _pins(result: dict[str, object]) -> dict[str, str]:
    solution = result["solution"]
    assert isinstance(solution, dict)
    return {p["name"]: p["version"] for p in solution["packages"]}


@pytest.mark.parametrize("torch", ["2.12.0", "2.13.0", "2.14.1", "2.11.0"])
def test_torchaudio_2_11_runs_beside_any_later_torch_of_its_cuda_variant(
    torch: str, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _why_not(capsys, "torchaudio==2.11.0", f"torch=={torch}")
    assert result["possible"] is True, result
    pins = _pins(result)
    assert pins["torchaudio"].startswith("2.11.0") and pins["torch"].startswith(torch)
    assert result["solution"]["variant"] in {b.variant for r in DB.packages("torchaudio")  # type: ignore[index]
                                             if str(r.version) == "2.11.0" for b in r.builds}


def test_torchaudio_2_11_is_not_paired_across_cuda_versions(capsys: pytest.CaptureFixture[str]) -> None:
    # PyPI's torch 2.15.0 is cu132 and torchaudio 2.11.0 has no cu132 build: the pair refuses to import
    result = _why_not(capsys, "torch==2.15.0+cu132", "torchaudio==2.11.0")
    assert result["possible"] is False, result
    result = _why_not(capsys, "torchaudio==2.11.0", "torch==2.10.0")
    assert result["possible"] is False  # below its own torch


def test_the_rows_say_what_the_wheels_declare() -> None:
    audio = next(r for r in DB.packages("torchaudio") if str(r.version) == "2.11.0")
    assert [str(r) for r in audio.requires] == ["torch>=2.11.0"]
    vision = next(r for r in DB.packages("torchvision") if str(r.version) == "0.29.1")
    assert [str(r) for r in vision.requires] == list(vision.metadata_requires) == ["torch>=2.14.0"]


def test_torchvision_0_29_1_beside_torch_2_15(capsys: pytest.CaptureFixture[str]) -> None:
    result = _why_not(capsys, "torchvision==0.29.1", "torch==2.15.0")
    assert result["possible"] is True, result
    assert _pins(result)["torchvision"].startswith("0.29.1")
