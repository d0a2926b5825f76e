"""why-not on tests/fixtures/compat-mini.toml: every reason, the ways out, and the answer shown in en and zh."""

# ruff: noqa: RUF001  (the Chinese messages use full-width punctuation on purpose)

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from cudaresolve.core.archs import parse_cc
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import CompatDB, load_compat
from cudaresolve.errors import InvalidInput
from cudaresolve.render import plain
from cudaresolve.render.explain_findings import render_why_not
from cudaresolve.resolve.whynot import WhyNot, why_not
from cudaresolve.target.model import Gpu, Target
from cudaresolve.text.catalogue import format_text

MINI = Path(__file__).parent / "fixtures" / "compat-mini.toml"
PASCAL = "NVIDIA GeForce GTX 1080 Ti"
CU118 = "https://download.pytorch.org/whl/cu118"
DRIVER_TOO_OLD = (
    "CUDA 12.1 wheels (cu121) need driver 525.60.13 at least (530.30.02 for full compatibility);"
    " this host has 470.129.06"
)
UPGRADE = (  # the least change: the minor-version floor runs cu121's builds on this GPU
    "upgrade the NVIDIA driver to 525.60.13 or newer: it runs CUDA 12.1 (cu121) through minor-version"
    " compatibility (530.30.02 or newer runs it fully)"
)


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(MINI)


def host(cc: str, driver: str, name: str, *, datacenter: bool = False) -> Target:
    gpu = Gpu(name=name, cc=parse_cc(cc), datacenter=datacenter)
    return Target(gpus=(gpu,), driver=parse_driver(driver), python="3.11")


A800_R470 = host("8.0", "470.129.06", "NVIDIA A800", datacenter=True)
PASCAL_R470 = host("6.1", "470.129.06", PASCAL)
PASCAL_R535 = host("6.1", "535.104.05", PASCAL)


def reasons(answer: WhyNot) -> list[tuple[str, str | None, str | None, str]]:
    return [(r.code, r.package, r.variant, r.message) for r in answer.reasons]


def ways_out(answer: WhyNot, lang: str = "en") -> list[tuple[str, str]]:
    return [(a.spec, format_text(a.text, lang)) for a in answer.alternatives]


def test_variant_the_driver_cannot_run(db: CompatDB) -> None:
    answer = why_not("cu121", [], db, A800_R470)
    assert (answer.spec, answer.possible, answer.solution) == ("cu121", False, None)
    assert reasons(answer) == [("driver-too-old", None, "cu121", DRIVER_TOO_OLD)]
    assert ways_out(answer) == [
        ("cu118", f"cu118 works here: torch 2.7.1+cu118 from {CU118}"),
        ("driver>=525.60.13", UPGRADE),
    ]
    # the mini database has no [[forward-compat]] rows: no cuda-compat way out even on a data-center GPU
    assert [a.code for a in answer.alternatives] == [None, None]


def test_every_reason_of_a_variant_not_only_the_first(db: CompatDB) -> None:
    answer = why_not("cu121", [], db, PASCAL_R470)
    assert reasons(answer) == [
        ("driver-too-old", None, "cu121", DRIVER_TOO_OLD),
        (
            "sm-not-covered",
            "torch",
            "cu121",
            f"torch 2.8.0 (cu121) has no code for sm_61 ({PASCAL}, compute capability 6.1); it carries sm_80",
        ),
    ]
    assert ways_out(answer) == [
        ("cu118", f"cu118 works here: torch 2.7.1+cu118 from {CU118}"),
        ("driver>=525.60.13", UPGRADE),
        ("TORCH_CUDA_ARCH_LIST=6.1", 'build from source with TORCH_CUDA_ARCH_LIST="6.1" so that every GPU here gets'
         " native code"),
    ]


def test_pinned_build_names_its_variant(db: CompatDB) -> None:
    answer = why_not("torch==2.8.0+cu121", [], db, PASCAL_R535)
    assert [(code, package, variant) for code, package, variant, _ in reasons(answer)] == [
        ("sm-not-covered", "torch", "cu121")
    ]
    assert [spec for spec, _ in ways_out(answer)] == ["cu118", "TORCH_CUDA_ARCH_LIST=6.1"]


def test_requirement_gets_another_release_as_its_way_out(db: CompatDB) -> None:
    answer = why_not("torch==2.8.0", [], db, A800_R470)
    assert reasons(answer) == [("driver-too-old", None, "cu121", DRIVER_TOO_OLD)]
    assert ways_out(answer) == [
        ("torch==2.7.1+cu118", f"torch==2.7.1+cu118 works here: torch 2.7.1+cu118 from {CU118}"),
        ("driver>=525.60.13", UPGRADE),
    ]


def test_context_requirements_are_what_the_alternative_names(db: CompatDB) -> None:
    answer = why_not("cu121", ["torchrec"], db, A800_R470)
    assert ways_out(answer)[0] == ("cu118", f"cu118 works here: torchrec 1.2.0 from {CU118}")
    answer = why_not("cu121", ["torch", "torchrec"], db, A800_R470)
    assert ways_out(answer)[0] == ("cu118", f"cu118 works here: torch 2.7.1+cu118, torchrec 1.2.0 from {CU118}")
    picked_zh = f"cu118 在本机可用：从 {CU118} 安装 torch 2.7.1+cu118、torchrec 1.2.0"
    assert ways_out(answer, "zh")[0] == ("cu118", picked_zh)


def test_possible_spec_carries_the_solution(db: CompatDB) -> None:
    answer = why_not("cu118", [], db, A800_R470)
    assert (answer.possible, answer.reasons, answer.alternatives) == (True, (), ())
    assert answer.solution is not None
    assert [(p.name, p.version, p.index) for p in answer.solution.packages] == [("torch", "2.7.1+cu118", CU118)]
    assert [w.code for w in answer.solution.warnings] == ["minor-version-compat"]


def test_bad_specs_are_invalid_input_in_both_languages(db: CompatDB) -> None:
    with pytest.raises(InvalidInput) as info:
        why_not("cu999", [], db, A800_R470)
    assert (info.value.message, info.value.hint) == ("unknown variant 'cu999'", "known variants: cpu, cu121, cu118")
    assert info.value.hint_text is not None
    assert format_text(info.value.hint_text, "zh") == "已知的变体：cpu、cu121、cu118"
    with pytest.raises(InvalidInput) as info:
        why_not("torch>>2", [], db, A800_R470)
    assert info.value.message == "not a variant, build or requirement: 'torch>>2'"
    assert format_text(info.value.text, "zh") == "既不是变体，也不是构建或需求：'torch>>2'"


def test_json_shape_in_chinese(db: CompatDB) -> None:
    data = plain(why_not("cu121", [], db, A800_R470).to_dict(), "zh")
    assert data == {
        "spec": "cu121",
        "possible": False,
        "reasons": [
            {
                "code": "driver-too-old",
                "message": "CUDA 12.1 的 wheel（cu121）至少需要驱动 525.60.13（完全兼容需要 530.30.02）；"
                "本机驱动为 470.129.06",
                "variant": "cu121",
                "required": "525.60.13",
                "found": "470.129.06",
            }
        ],
        "alternatives": [
            {"spec": "cu118", "message": f"cu118 在本机可用：从 {CU118} 安装 torch 2.7.1+cu118"},
            {
                "spec": "driver>=525.60.13",
                "message": "把 NVIDIA 驱动升级到 525.60.13 或更高版本：它借助小版本兼容性即可运行 CUDA 12.1（cu121）"
                "（530.30.02 或更高版本完全支持）",
            },
        ],
    }


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        (
            "en",
            [
                "cu121 is not possible here",
                "├── because",
                f"│   └── driver-too-old: {DRIVER_TOO_OLD}",
                "└── ways out",
                f"    ├── cu118: cu118 works here: torch 2.7.1+cu118 from {CU118}",
                f"    └── driver>=525.60.13: {UPGRADE}",
            ],
        ),
        (
            "zh",
            [
                "cu121 在本机不可行",
                "├── 原因",
                "│   └── driver-too-old: CUDA 12.1 的 wheel（cu121）至少需要驱动 525.60.13（完全兼容需要 530.30.02）；"
                "本机驱动为 470.129.06",
                "└── 解决办法",
                f"    ├── cu118: cu118 在本机可用：从 {CU118} 安装 torch 2.7.1+cu118",
                "    └── driver>=525.60.13: 把 NVIDIA 驱动升级到 525.60.13 或更高版本：它借助小版本兼容性即可运行 CUDA"
                " 12.1（cu121）（530.30.02 或更高版本完全支持）",
            ],
        ),
    ],
)
def test_human_answer_groups_reasons_and_ways_out(db: CompatDB, lang: str, expected: list[str]) -> None:
    stream = io.StringIO()
    render_why_not(why_not("cu121", [], db, A800_R470), Console(file=stream, width=300, color_system=None), lang=lang)
    assert stream.getvalue().splitlines() == expected


# --- ways out are offered only when they would work (the shipped database) -----------------------


@pytest.fixture(scope="module")
def shipped() -> CompatDB:
    return load_compat()


def _on(shipped: CompatDB, gpu: str, driver: str) -> Target:
    found = shipped.find_gpu(gpu)
    assert found is not None
    return Target(gpus=(Gpu(name=found.name, cc=found.cc, datacenter=found.datacenter),),
                  driver=parse_driver(driver), python="3.11", platform="linux_x86_64")  # fmt: skip


def _full_driver(shipped: CompatDB, variant: str) -> str:
    info = shipped.variant(variant)
    assert info is not None and info.cuda is not None
    release = shipped.cuda_release(info.cuda)
    assert release is not None
    return str(release.min_driver("linux_x86_64"))


def test_no_driver_makes_a_variant_without_code_for_the_gpu_possible(shipped: CompatDB) -> None:
    answer = why_not("cu130", [], shipped, _on(shipped, "V100", "535.104.05"))  # cu130 starts at sm_75
    assert not answer.possible
    assert "sm-not-covered" in {r.code for r in answer.reasons}
    specs = [a.spec for a in answer.alternatives]
    assert not any(s.startswith(("driver", "cuda-compat")) for s in specs), specs
    assert any(s.startswith("cu12") for s in specs)  # an older variant that has sm_70 still works


def test_a_new_gpu_on_an_old_driver_gets_the_driver_the_cuda_needs_not_only_the_gpu(shipped: CompatDB) -> None:
    answer = why_not("cu130", [], shipped, _on(shipped, "H100", "450.80.02"))
    assert "driver-unsupported-gpu" in {r.code for r in answer.reasons}
    assert [a.spec for a in answer.alternatives] == [f"driver>={_full_driver(shipped, 'cu130')}"]
    older = why_not("cu118", [], shipped, _on(shipped, "H100", "450.80.02"))  # Hopper's own minimum is then enough
    (way,) = older.alternatives
    assert way.code == "driver-unsupported-gpu" and way.spec != f"driver>={_full_driver(shipped, 'cu130')}"


def test_an_old_gpu_past_its_last_branch_gets_a_driver_range_only_where_a_build_has_its_code(
    shipped: CompatDB,
) -> None:
    p100 = _on(shipped, "P100", "590.44.01")  # Pascal's last branch is R580
    assert not [a for a in why_not("cu130", [], shipped, p100).alternatives if a.spec.startswith("driver")]
    (way,) = [a for a in why_not("cu126", [], shipped, p100).alternatives if a.spec.startswith("driver")]
    words = format_text(way.text, "en")
    # the lowest driver that runs cu126 on it, its minor-version floor (the hardware audit found the full-support
    # driver named, though the README promises the lowest): a lock on it then warns minor-version-compat
    info = shipped.variant("cu126")
    release = shipped.cuda_release(info.cuda) if info is not None and info.cuda is not None else None
    assert release is not None and release.minor_compat_driver("linux_x86_64") < release.min_driver("linux_x86_64")
    assert way.spec == "driver R580" and f"from {release.minor_compat_driver('linux_x86_64')} up to" in words


def test_the_variant_advice_of_explain_error_has_code_for_the_gpu(shipped: CompatDB) -> None:
    from cudaresolve.advice.variants import best_variant

    v100 = _on(shipped, "V100", "590.44.01")
    cuda_max = shipped.max_cuda_for_driver(v100.driver, "linux_x86_64")  # type: ignore[arg-type]
    blind = best_variant(shipped, cuda_max=cuda_max, driver=v100.driver)
    seeing = best_variant(shipped, cuda_max=cuda_max, driver=v100.driver, ccs=v100.ccs)
    assert blind is not None and seeing is not None
    assert blind.variant.name == "cu130" and seeing.variant.name != "cu130"
    assert seeing.variant.cuda is not None and blind.variant.cuda is not None
    assert seeing.variant.cuda < blind.variant.cuda


def test_a_cuda_variant_on_a_cpu_target_says_there_is_no_gpu(db: CompatDB) -> None:
    answer = why_not("cu121", [], db, Target(python="3.11"))
    assert not answer.possible
    assert [r.code for r in answer.reasons] == ["no-gpu"]
    assert "<cuda>" not in format_text(answer.reasons[0].text, "en")
    assert [a.spec for a in answer.alternatives] == ["cpu"]


SHIPPED = load_compat()


@pytest.mark.parametrize("gpu", ["Tesla K80", "Tesla P100-PCIE-16GB", "GTX 1080 Ti", "Tesla V100-SXM2-16GB"])
@pytest.mark.parametrize("variant", [v.name for v in SHIPPED.variants if v.cuda is not None])
def test_a_source_build_is_offered_only_where_the_variants_cuda_compiles_for_the_gpu(gpu: str, variant: str) -> None:
    """Found by the hardware audit: why-not cu130 on a V100 offered a source build with TORCH_CUDA_ARCH_LIST=7.0,
    which CUDA 13's nvcc cannot compile (it dropped sm_50-sm_72), and cu126 on a K80 one for sm_37."""
    from cudaresolve.target.build import TargetOptions, build_target

    target = build_target(TargetOptions(gpus=(gpu,), driver="580.65.06", python="3.11"), SHIPPED)
    answer = why_not(variant, [], SHIPPED, target)
    offered = any(a.spec.startswith("TORCH_CUDA_ARCH_LIST=") for a in answer.alternatives)
    info = SHIPPED.variant(variant)
    assert info is not None and info.cuda is not None
    release = SHIPPED.cuda_release(info.cuda)
    compiles = release is not None and all(any(a.cc == cc and not a.ptx for a in release.nvcc_sm) for cc in target.ccs)
    assert not offered or compiles, (variant, gpu)
    if compiles and {r.code for r in answer.reasons} & {"sm-not-covered", "gpu-too-old"}:
        assert offered


@pytest.mark.parametrize(
    ("request_", "gpu"),
    [("flashinfer-python", "Tesla P100-PCIE-16GB"), ("xformers==0.0.35", "Tesla V100-SXM2-16GB"),
     ("xformers==0.0.35", "GTX 1080 Ti"), ("flashinfer-python", "Tesla V100-SXM2-16GB")],
)  # fmt: skip
def test_no_source_build_is_offered_for_a_gpu_the_package_refuses(request_: str, gpu: str) -> None:
    """Found by this stop's hardware audit: why-not offered TORCH_CUDA_ARCH_LIST=6.0 for flashinfer on a P100 and
    =7.0 for xformers 0.0.35 on a V100, though both refuse any GPU below sm_75 at run time (their rows' min-sm)."""
    from packaging.requirements import Requirement

    from cudaresolve.target.build import TargetOptions, build_target

    target = build_target(TargetOptions(gpus=(gpu,), driver="580.65.06", python="3.12"), SHIPPED)
    answer = why_not(request_, [], SHIPPED, target)
    assert not answer.possible
    assert not any(a.spec.startswith("TORCH_CUDA_ARCH_LIST=") for a in answer.alternatives)
    name = Requirement(request_).name
    floors = {r.min_sm for r in SHIPPED.packages(name) if Requirement(request_).specifier.contains(r.version)}
    assert floors and all(f is not None and target.ccs[0] < f for f in floors)  # each release the pin admits


@pytest.mark.parametrize("gpu", ["GH200", "Jetson AGX Orin"])
def test_a_pinned_build_for_other_platforms_says_so_not_no_such_version(gpu: str) -> None:
    """Found by this stop's hardware audit: why-not torch==2.14.1+cu126 on aarch64 said "torch has no release
    ==2.14.1+cu126", though the database had that build, for x86_64 and Windows only. The index's aarch64 cu126
    build of 2.14.1 is in the database now, so the 2.11.0 cu129 side build (linux_x86_64 only) stands in."""
    from cudaresolve.target.build import TargetOptions, build_target

    options = TargetOptions(gpus=(gpu,), driver="580.65.06", python="3.12", platform="aarch64-unknown-linux-gnu")
    answer = why_not("torch==2.11.0+cu129", [], SHIPPED, build_target(options, SHIPPED))
    assert not answer.possible
    codes = [r.code for r in answer.reasons]
    assert "no-such-version" not in codes and "no-wheel-for-platform" in codes
    told = " ".join(format_text(r.text) for r in answer.reasons if r.code == "no-wheel-for-platform")
    assert "2.11.0+cu129" in told and "linux_aarch64" in told


def test_a_pinned_build_is_answered_for_its_release_not_the_variants_others(shipped: CompatDB) -> None:
    # cu126 has no sm_120 in any torch release; the answer to 2.9.0+cu126 is about 2.9.0, not "2.6.0 to 2.14.1"
    answer = why_not("torch==2.9.0+cu126", [], shipped, _on(shipped, "RTX 5090", "575.51.03"))
    assert not answer.possible and answer.reasons
    torch_reasons = [r for r in answer.reasons if r.package == "torch"]
    assert torch_reasons and {r.variant for r in torch_reasons} == {"cu126"}
    assert [r.text.get("version") for r in torch_reasons] == ["2.9.0"] * len(torch_reasons), reasons(answer)


def test_an_exact_pin_gets_every_reason_python_and_driver_beside_the_first(shipped: CompatDB) -> None:
    from packaging.version import Version

    target = Target(gpus=_on(shipped, "A100", "450.80.02").gpus, driver=parse_driver("450.80.02"), python="3.9",
                    platform="linux_x86_64")  # fmt: skip
    releases = [r for r in shipped.packages("torch") if r.version == Version("2.15.0")]
    assert releases and all("3.9" not in r.python for r in releases)
    driver = parse_driver("450.80.02")
    too_new = set()  # the variants of 2.15.0's builds whose CUDA this driver cannot run
    for build in (b for r in releases for b in r.builds):
        info = shipped.variant(build.variant)
        release = shipped.cuda_release(info.cuda) if info is not None and info.cuda is not None else None
        if release is not None and release.minor_compat_driver("linux_x86_64") > driver:
            too_new.add(build.variant)
    assert too_new
    answer = why_not("torch==2.15.0", [], shipped, target)
    codes = {r.code for r in answer.reasons}
    assert "no-wheel-for-python" in codes, reasons(answer)
    assert {r.variant for r in answer.reasons if r.code == "driver-too-old"} == too_new, reasons(answer)
    # a GPU older than every build that fits is said once, not again for each build
    old = why_not("torch==2.15.0", [], shipped, _on(shipped, "V100", "580.65.06"))
    assert [r.code for r in old.reasons if r.package == "torch"] == ["gpu-too-old"], reasons(old)


@pytest.mark.parametrize(("variant", "pin"), [("cu118", "torch==2.9.0"), ("cu130", "torch==2.7.1")])
def test_a_variant_the_pinned_release_was_never_published_for_says_so(
    shipped: CompatDB, variant: str, pin: str
) -> None:
    from packaging.version import Version

    (release,) = [r for r in shipped.packages("torch") if r.version == Version(pin.split("==")[1])]
    published = list(dict.fromkeys(b.variant for b in release.builds))
    assert variant not in published
    answer = why_not(variant, [pin], shipped, _on(shipped, "A100", "580.65.06"))
    assert not answer.possible
    assert [(r.code, r.package, r.variant, r.required) for r in answer.reasons] == [
        ("variant-not-published", "torch", variant, ", ".join(published))
    ]


def test_a_pinned_build_of_a_variant_its_release_lacks_says_so(shipped: CompatDB) -> None:
    answer = why_not("torch==2.9.0+cu118", [], shipped, _on(shipped, "A100", "580.65.06"))
    unpublished = [r for r in answer.reasons if r.code == "variant-not-published"]
    assert [(r.package, r.variant, r.text.get("version")) for r in unpublished] == [("torch", "cu118", "2.9.0")]
