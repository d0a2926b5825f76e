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
UPGRADE = (
    "upgrade the NVIDIA driver to 530.30.02 or newer for CUDA 12.1"
    " (525.60.13 is the floor under minor-version compatibility)"
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
        ("driver>=530.30.02", UPGRADE),
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
        ("driver>=530.30.02", UPGRADE),
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
        ("driver>=530.30.02", UPGRADE),
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
                "spec": "driver>=530.30.02",
                "message": "把 NVIDIA 驱动升级到 530.30.02 或更高版本以完全支持 CUDA 12.1"
                "（借助小版本兼容性的最低要求是 525.60.13）",
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
                f"    └── driver>=530.30.02: {UPGRADE}",
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
                "    └── driver>=530.30.02: 把 NVIDIA 驱动升级到 530.30.02 或更高版本以完全支持 CUDA 12.1"
                "（借助小版本兼容性的最低要求是 525.60.13）",
            ],
        ),
    ],
)
def test_human_answer_groups_reasons_and_ways_out(db: CompatDB, lang: str, expected: list[str]) -> None:
    stream = io.StringIO()
    render_why_not(why_not("cu121", [], db, A800_R470), Console(file=stream, width=300, color_system=None), lang=lang)
    assert stream.getvalue().splitlines() == expected
