"""The solver issue's worked cases, through the CLI, on declared targets, from the shipped data.

No GPU and no network: every run is ``--offline`` and names its target with flags.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from cudaresolve.cli import main
from cudaresolve.core.archs import parse_arch
from cudaresolve.db.database import load_compat


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(tmp_path / "cache"))


def lock(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["lock", *argv, "--offline", "--python-version", "3.11", "--platform", "linux_x86_64", "--json"])
    return code, json.loads(capsys.readouterr().out)


def versions(result: dict[str, Any]) -> dict[str, str]:
    return {p["name"]: p["version"] for p in result["packages"]}


def torch_build(version: str) -> Any:
    release, _, variant = version.partition("+")
    for row in load_compat().packages("torch"):
        if str(row.version) == release:
            return next(b for b in row.builds if b.variant == variant and b.channel == "index")
    raise AssertionError(version)


def test_a800_old_driver_gets_newest_torch_with_a_cuda11_build(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = lock(capsys, "torch", "--gpu", "A800", "--driver", "470.129.06")
    assert code == 0
    assert result["variant"] == "cu118"
    assert result["index_url"] == "https://download.pytorch.org/whl/cu118"
    newest_cu118 = max(
        r.version for r in load_compat().packages("torch") if any(b.variant == "cu118" for b in r.builds)
    )
    assert versions(result) == {"torch": f"{newest_cu118}+cu118"}
    assert next(w["code"] for w in result["warnings"]) == "minor-version-compat"
    assert "470.129.06" in result["warnings"][0]["message"]
    # offline: no hashes, so no pylock.toml is written (and nothing under another name)
    assert (result["complete"], result["output"]) == (False, None)
    assert "no-lock-written" in [w["code"] for w in result["warnings"]]
    assert not Path("pylock.toml").exists() and not Path("requirements.txt").exists()


def test_a800_torch_torchrec_is_one_release_line_one_variant_one_index(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = lock(capsys, "torch", "torchrec", "--gpu", "A800", "--driver", "470.129.06")
    assert code == 0
    got = versions(result)
    assert set(got) == {"torch", "fbgemm-gpu", "torchrec"}
    fbgemm, torchrec, torch = got["fbgemm-gpu"], got["torchrec"], got["torch"]
    assert fbgemm.endswith("+cu118") and torch.endswith("+cu118")
    # torchrec X.Y pairs with fbgemm-gpu X.Y; both pin one torch minor (the torchrec rows of the shipped compat.toml)
    assert fbgemm.split(".")[:2] == torchrec.split(".")[:2]
    db = load_compat()
    row = next(r for r in db.packages("torchrec") if str(r.version) == torchrec)
    chosen = {"fbgemm-gpu": Version(fbgemm), "torch": Version(torch)}
    assert {req.name for req in row.requires} == {"fbgemm-gpu", "torch"}
    assert all(req.specifier.contains(chosen[req.name]) for req in row.requires)
    indexes = {p["name"]: p["index"] for p in result["packages"]}
    assert indexes["torch"] == indexes["fbgemm-gpu"] == "https://download.pytorch.org/whl/cu118"
    assert indexes["torchrec"] == "https://pypi.org/simple"  # a pure wheel PyPI carries too (--gpu-source auto)


def test_gtx_1080_ti_torchrec_fails_on_fbgemm_sm61(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = lock(capsys, "torchrec", "--gpu", "GeForce GTX 1080 Ti", "--driver", "550.54.15")
    assert code == 1
    error = result["error"]
    assert error["code"] == "no-solution"
    first = error["findings"][0]
    assert (first["code"], first["package"], first["required"]) == ("sm-not-covered", "fbgemm-gpu", "sm_61")
    assert "sm_61" in first["message"] and "fbgemm-gpu" in first["message"]


def test_rtx_5090_gets_a_torch_build_with_sm120(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = lock(capsys, "torch", "--gpu", "RTX 5090", "--driver", "570.86.10")
    assert code == 0
    build = torch_build(versions(result)["torch"])
    assert parse_arch("sm_120")[0] in build.sass


def test_mixed_2080_3090_gets_one_set_covering_both(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = lock(capsys, "torch", "xformers", "--gpu", "RTX 2080", "--gpu", "RTX 3090", "--driver", "550.54.15")
    assert code == 0
    got = versions(result)
    assert set(got) == {"torch", "xformers"}
    variant = result["variant"]
    assert got["torch"].endswith(f"+{variant}")
    db = load_compat()
    for name in ("torch", "xformers"):
        release, _, _local = got[name].partition("+")
        row = next(r for r in db.packages(name) if str(r.version) == release)
        build = next(b for b in row.builds if b.variant == variant)
        sass = {a.name for a in build.sass}
        assert {"sm_75", "sm_86"} <= sass or ({"sm_75"} <= sass and "sm_80" in sass), (name, sass)


def test_cpu_gets_the_cpu_variant(capsys: pytest.CaptureFixture[str]) -> None:
    code, result = lock(capsys, "torch", "--cpu")
    assert code == 0
    assert result["variant"] == "cpu"
    assert versions(result)["torch"].endswith("+cpu")
    assert result["index_url"] == "https://download.pytorch.org/whl/cpu"


def test_failed_lock_leaves_the_old_lock_intact(capsys: pytest.CaptureFixture[str]) -> None:
    Path("requirements.txt").write_text("old\n")
    code, _ = lock(capsys, "torchrec", "--gpu", "GTX 1080 Ti", "--driver", "550.54.15", "--format", "requirements")
    assert code == 1
    assert Path("requirements.txt").read_text() == "old\n"


def test_requirements_come_from_pyproject(capsys: pytest.CaptureFixture[str]) -> None:
    Path("pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = ["torch"]\n[tool.cudaresolve]\nrequirements = ["torch", "xformers"]\n'
    )
    code, result = lock(capsys, "--gpu", "H100", "--driver", "580.65.06")
    assert code == 0
    assert set(versions(result)) == {"torch", "xformers"}
