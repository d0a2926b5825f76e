"""The solver on a small database: preference, variant choice, failures and their findings."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from resolvelib import BaseReporter, Resolver

from cudaresolve.core.archs import parse_cc
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.errors import InvalidInput, NoSolution
from cudaresolve.resolve.catalog import CUDA, Candidate, Need, build_catalog
from cudaresolve.resolve.provider import CatalogProvider
from cudaresolve.resolve.solve import parse_requests, reachable, solve
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
    indexes = {p.name: p.index for p in result.solution.packages}
    cu118 = "https://download.pytorch.org/whl/cu118"
    assert indexes == {"torch": cu118, "fbgemm-gpu": cu118, "torchrec": "https://pypi.org/simple"}  # pure: PyPI's
    pytorch = solve(["torch", "torchrec"], db, host("8.0", "470.129.06"), gpu_source="pytorch")
    assert {p.index for p in pytorch.solution.packages} == {cu118}  # --gpu-source pytorch: the variant's index only


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


def _companion_db(tiny: dict[str, Any], *, audio_releases: int = 1) -> CompatDB:
    """torch 2.2.0 and 2.1.0; fbgemm-gpu fits each; torchaudio's newest release pins torch==2.1.0."""
    build = [{"variant": "cu121", "sass": ["sm_80"]}, {"variant": "cu118", "sass": ["sm_80"]}]
    tiny["torch"] = [
        {"version": v, "python": ["3.11"], "source": "s", "build": copy.deepcopy(build)} for v in ("2.2.0", "2.1.0")
    ]
    tiny["fbgemm-gpu"] = [
        {"version": v, "python": ["3.11"], "requires": [f"torch=={t}.*"], "source": "s", "build": copy.deepcopy(build)}
        for v, t in (("0.6.0", "2.2"), ("0.5.0", "2.1"))
    ]
    tiny["torchaudio"] = [
        {
            "version": f"2.1.{n}",
            "python": ["3.11"],
            "requires": ["torch==2.1.0"],
            "source": "s",
            "build": copy.deepcopy(build),
        }
        for n in reversed(range(audio_releases))
    ]
    return CompatDB.from_dict(tiny)


def test_a_companion_pinning_an_older_torch_is_named_as_the_cause(tiny_db_dict: dict[str, Any]) -> None:
    db = _companion_db(tiny_db_dict)
    target = host("8.0", "535.104.05")
    assert pins(solve(["torch", "torchaudio", "fbgemm-gpu"], db, target)) == {
        "fbgemm-gpu": "0.5.0+cu121",
        "torch": "2.1.0+cu121",
        "torchaudio": "2.1.0+cu121",
    }
    with pytest.raises(NoSolution) as info:
        solve(["fbgemm-gpu", "torch", "torchaudio", "torch>=2.2"], db, target)
    assert [(f.code, f.package, f.required, f.found) for f in info.value.findings] == [
        ("request-conflict", "torchaudio", "torch==2.1.0", "torch>=2.2")
    ]
    assert info.value.message == (
        "no set of packages fits this target: torchaudio 2.1.0 requires torch==2.1.0, but torch>=2.2 was requested;"
        " no other torchaudio release fits that request either"
    )


def test_the_search_itself_stays_small(tiny_db_dict: dict[str, Any]) -> None:
    """Bounded work, counted not timed: each (requirement, build) check is made once, and a search
    that must give up on many companion releases does so in a few rounds."""
    db = _companion_db(tiny_db_dict, audio_releases=40)
    target = host("8.0", "535.104.05")
    needs = parse_requests(["torch", "fbgemm-gpu", "torchaudio"])
    catalog = build_catalog(db, target, reachable(db, [n.name for n in needs]))
    rounds: list[int] = []

    class Counter(BaseReporter[Need, Candidate, str]):
        def starting_round(self, index: int) -> None:
            rounds.append(index)

    provider = CatalogProvider(catalog, anchor="torch", user_requested={n.name for n in needs})
    result = Resolver(provider, Counter()).resolve(needs, max_rounds=200)
    assert {k: str(v.version) for k, v in result.mapping.items() if k != CUDA} == {
        "fbgemm-gpu": "0.5.0+cu121",
        "torch": "2.1.0+cu121",
        "torchaudio": "2.1.39+cu121",
    }
    assert len(rounds) <= 10  # 8 today: torch, <cuda>, fbgemm-gpu, then torchaudio forces torch 2.1.0
    # 4 torch, 4 fbgemm-gpu and 80 torchaudio builds: each (requirement, build) pair is checked at most
    # once (100 today); without the memo every torchaudio build re-checks every torch build (~1,000)
    assert provider.matches.checks <= 150


def test_a_search_too_deep_over_every_variant_is_searched_one_variant_at_a_time(
    db: CompatDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    """torch with jax[cuda12] went past the round limit over every variant at once (the one-CUDA-major rule set
    against jax's hundreds of releases), though torch 2.10 (cu128) with it is found at once: such a search is made
    again one variant at a time, and the best set found stands; too deep on every variant is still the error."""
    from resolvelib.resolvers import ResolutionTooDeep

    from cudaresolve.resolve import solve as solving

    target = host("8.0", "535.104.05")
    expected = pins(solve(["torch"], db, target))
    real_run = solving._Search.run

    def run(self: Any, needs: Any, **kwargs: Any) -> Any:
        if not any(n.name == CUDA for n in needs):  # the search over every variant
            raise ResolutionTooDeep(1)
        return real_run(self, needs, **kwargs)

    monkeypatch.setattr(solving._Search, "run", run)
    assert pins(solve(["torch"], db, target)) == expected

    def never(self: Any, needs: Any, **kwargs: Any) -> Any:
        raise ResolutionTooDeep(1)

    monkeypatch.setattr(solving._Search, "run", never)
    with pytest.raises(NoSolution) as info:
        solve(["torch"], db, target)
    assert info.value.text.key == "resolve.too-deep"
