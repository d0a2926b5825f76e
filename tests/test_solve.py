"""The solver on a small database: preference, variant choice, failures and their findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudaresolve.core.archs import parse_cc
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.errors import InvalidInput, NoSolution
from cudaresolve.resolve.solve import solve
from cudaresolve.target.model import Gpu, Target

MINI = Path(__file__).parent / "fixtures" / "compat-mini.toml"


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(MINI)


def host(cc: str, driver: str | None, name: str = "GPU") -> Target:
    gpu = Gpu(name=name, cc=parse_cc(cc))
    return Target(gpus=(gpu,), driver=parse_driver(driver) if driver else None, python="3.11")


def pins(result: object) -> dict[str, str]:
    return {p.name: p.version for p in result.solution.packages}  # type: ignore[attr-defined]


def test_newest_torch_with_full_driver_support(db: CompatDB) -> None:
    result = solve(["torch"], db, host("8.0", "535.104.05"))
    assert result.solution.variant == "cu121"
    assert pins(result) == {"torch": "2.8.0+cu121"}
    assert result.solution.warnings == ()


def test_old_driver_gets_minor_version_compat_warning(db: CompatDB) -> None:
    result = solve(["torch"], db, host("8.0", "470.129.06"))
    assert pins(result) == {"torch": "2.7.1+cu118"}
    assert [w.code for w in result.solution.warnings] == ["minor-version-compat"]


def test_one_variant_one_index_for_the_set(db: CompatDB) -> None:
    result = solve(["torch", "torchrec"], db, host("8.0", "470.129.06"))
    assert pins(result) == {"fbgemm-gpu": "1.2.0+cu118", "torch": "2.7.1+cu118", "torchrec": "1.2.0"}
    assert {p.index for p in result.solution.packages} == {"https://download.pytorch.org/whl/cu118"}


def test_pascal_torchrec_fails_on_fbgemm_sm61(db: CompatDB) -> None:
    with pytest.raises(NoSolution) as info:
        solve(["torchrec"], db, host("6.1", "550.54.15", "NVIDIA GeForce GTX 1080 Ti"))
    first = info.value.findings[0]
    assert (first.code, first.package, first.required) == ("sm-not-covered", "fbgemm-gpu", "sm_61")
    assert first.message == (
        "fbgemm-gpu 1.2.0 (cu118) has no code for sm_61 (NVIDIA GeForce GTX 1080 Ti, compute capability 6.1);"
        " it carries sm_70 sm_80"
    )


def test_driver_too_old_for_every_variant(db: CompatDB) -> None:
    with pytest.raises(NoSolution) as info:
        solve(["torch==2.8.0"], db, host("8.0", "470.129.06"))
    (finding,) = info.value.findings
    assert finding.code == "driver-too-old"
    assert finding.message == (
        "CUDA 12.1 wheels (cu121) need driver 525.60.13 at least (530.30.02 for full compatibility);"
        " this host has 470.129.06"
    )


def test_cpu_target_gets_cpu_variant(db: CompatDB) -> None:
    result = solve(["torch"], db, Target(python="3.11"))
    assert result.solution.variant == "cpu"
    assert pins(result) == {"torch": "2.7.1+cpu"}


def test_unknown_python_and_package(db: CompatDB) -> None:
    with pytest.raises(NoSolution) as info:
        solve(["torch"], db, Target(python="3.14"))
    assert info.value.findings[0].code == "no-wheel-for-python"
    with pytest.raises(NoSolution) as info:
        solve(["numpyy"], db, host("8.0", None))
    assert info.value.findings[0].code == "no-such-version"
    with pytest.raises(InvalidInput):
        solve(["torch>>2"], db, host("8.0", None))


def test_user_pin_with_local_version(db: CompatDB) -> None:
    result = solve(["torch==2.7.1+cu121"], db, host("8.0", "535.104.05"))
    assert pins(result) == {"torch": "2.7.1+cu121"}
