"""``cudaresolve explain-error`` through ``main(argv)``: text or stdin, target flags, languages, JSON, unknown text."""

# The Chinese expectations use full-width punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any

import pytest
import tomlkit

from cudaresolve.cli import explain_error, main
from cudaresolve.errors import DetectionError
from cudaresolve.target.model import Target

if TYPE_CHECKING:
    from pathlib import Path

# https://github.com/meta-pytorch/torchrec/issues/2708 (GTX 1080 Ti, torchrec 1.0)
TORCHREC_LOG = """\
    return torch.ops.fbgemm.asynchronous_complete_cumsum(lengths)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/home/ankur/miniconda3/envs/py3_12/lib/python3.12/site-packages/torch/_ops.py", line 1116, in __call__
    return self._op(*args, **(kwargs or {}))
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: CUDA error: no kernel image is available for execution on the device
"""
# https://github.com/facebookresearch/detectron2/issues/460
CPU_TORCH = "AssertionError: Torch not compiled with CUDA enabled"

_DB: dict[str, Any] = {
    "schema-version": 1,
    "index": {"default": "https://pypi.org/simple", "pytorch-root": "https://download.pytorch.org/whl",
              "allowed-hosts": ["download.pytorch.org", "pypi.org", "flashinfer.ai"], "source": "s"},
    "packages": {"tables": ["torch", "torchvision", "torchaudio", "fbgemm-gpu", "torchrec", "xformers", "flashinfer",
                            "flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache"],
                 "anchor": "torch", "source": "s"},
    "cuda": [
        {"version": "12.6", "min-driver-linux": "560.28.03", "minor-compat-driver-linux": "525.60.13",
         "nvcc-sm": ["sm_50", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "source": "s"},
        {"version": "11.8", "min-driver-linux": "520.61.05", "minor-compat-driver-linux": "450.80.02",
         "nvcc-sm": ["sm_37", "sm_50", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"], "source": "s"},
    ],
    "gpu": [{"name": "NVIDIA GeForce GTX 1080 Ti", "aliases": ["GTX 1080 Ti"], "cc": "6.1", "arch": "Pascal",
             "datacenter": False, "source": "s"}],
    "variant": [
        {"name": "cu126", "cuda": "12.6", "index-url": "https://download.pytorch.org/whl/cu126", "source": "s"},
        {"name": "cu118", "cuda": "11.8", "index-url": "https://download.pytorch.org/whl/cu118", "source": "s"},
    ],
    "torch": [{"version": "2.7.1", "python": ["3.11"], "source": "s", "build": [
        {"variant": "cu126", "sass": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]},
        {"variant": "cu118", "sass": ["sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]}]}],
    "fbgemm-gpu": [{"version": "1.2.0", "python": ["3.11"], "source": "s", "build": [
        {"variant": "cu126", "sass": ["sm_70", "sm_80", "sm_90", "sm_90a"]},
        {"variant": "cu118", "sass": ["sm_70", "sm_80", "sm_90"]}]}],
}  # fmt: skip

EXPECTED_EN: list[dict[str, Any]] = [
    {
        "code": "no-kernel-image",
        "cause": "The failing kernel comes from fbgemm-gpu, whose wheel carries neither native code (SASS) nor PTX "
        "for this GPU's architecture. The target's GPUs: NVIDIA GeForce GTX 1080 Ti (6.1); a build must carry "
        "code for sm_61.",
        "fixes": [
            "No fbgemm-gpu wheel in the database has native code for sm_61.",
            "torch releases with native code for sm_61: 2.7.1 (cu118, cu126).",
            'Build fbgemm-gpu from source with TORCH_CUDA_ARCH_LIST="6.1" so that it carries code for these GPUs.',
            "Run 'cudaresolve doctor' in the failing environment: it checks each installed library against the GPUs "
            "and the driver.",
        ],
    }
]


@pytest.fixture
def compat(tmp_path: Path) -> str:
    path = tmp_path / "compat.toml"
    path.write_text(tomlkit.dumps(_DB), encoding="utf-8")
    return str(path)


@pytest.fixture
def target_args(compat: str) -> list[str]:
    return ["--gpu", "GTX 1080 Ti", "--driver", "535.104.05", "--compat", compat, "--platform", "linux_x86_64"]


@pytest.fixture(autouse=True)
def _english_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["explain-error", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_for_a_message_given_as_argument(capsys: pytest.CaptureFixture[str], target_args: list[str]) -> None:
    code, out, _ = run(capsys, TORCHREC_LOG, *target_args, "--json")
    assert code == 0
    assert json.loads(out) == {"schema": 1, "matches": EXPECTED_EN}


def test_log_from_stdin_with_dash(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, target_args: list[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(TORCHREC_LOG))
    code, out, _ = run(capsys, "-", *target_args, "--json")
    assert (code, json.loads(out)["matches"]) == (0, EXPECTED_EN)


def test_log_from_stdin_without_text(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, target_args: list[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(TORCHREC_LOG))
    code, out, _ = run(capsys, *target_args, "--json")
    assert (code, json.loads(out)["matches"]) == (0, EXPECTED_EN)


def test_unquoted_words_are_one_message(capsys: pytest.CaptureFixture[str], target_args: list[str]) -> None:
    code, out, _ = run(capsys, "Torch", "not", "compiled", "with", "CUDA", "enabled", *target_args, "--json")
    assert code == 0
    assert [m["code"] for m in json.loads(out)["matches"]] == ["torch-cpu-build"]


def test_human_output_in_english(capsys: pytest.CaptureFixture[str], target_args: list[str]) -> None:
    code, out, err = run(capsys, TORCHREC_LOG, *target_args)
    assert (code, err) == (0, "")
    (match,) = EXPECTED_EN
    cause, fixes = match["cause"], match["fixes"]
    assert isinstance(cause, str)
    assert out == "\n".join(["no-kernel-image", f"  cause: {cause}", *(f"  fix: {fix}" for fix in fixes)]) + "\n"


def test_human_output_in_chinese_by_flag(capsys: pytest.CaptureFixture[str], target_args: list[str]) -> None:
    code, out, _ = run(capsys, CPU_TORCH, *target_args, "--lang", "zh")
    assert code == 0
    assert out == (
        "torch-cpu-build\n"
        "  原因：当前安装的 torch 是仅 CPU 的构建（+cpu 的 wheel，或 Windows 和 macOS 上来自 PyPI 的 wheel）。\n"
        "  修复：安装 cu118（CUDA 11.8）构建，这是该驱动完全支持的最新变体："
        "cudaresolve install torch（连同所用的其他 GPU 包）会从 PyPI 或 "
        "https://download.pytorch.org/whl/cu118 中提供这些构建且能访问的那个安装它们，并让每个包与 torch 保持配对\n"
        "  修复：如果机器没有 NVIDIA GPU，代码就不应请求 'cuda'：请改在 CPU 设备上运行。\n"
    )


def test_chinese_from_the_locale_and_flag_wins(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, target_args: list[str]
) -> None:
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    _, out, _ = run(capsys, CPU_TORCH, *target_args, "--json")
    assert json.loads(out)["matches"][0]["cause"].startswith("当前安装的 torch 是仅 CPU 的构建")
    _, out, _ = run(capsys, CPU_TORCH, *target_args, "--json", "--lang", "en")
    assert json.loads(out)["matches"][0]["cause"].startswith("The installed torch is a CPU-only build")


def test_unknown_text_is_exit_1_with_a_hint_to_run_doctor(
    capsys: pytest.CaptureFixture[str], target_args: list[str]
) -> None:
    code, out, _ = run(capsys, "ModuleNotFoundError: No module named 'numpy'", *target_args, "--json")
    assert code == 1
    assert json.loads(out) == {
        "schema": 1,
        "error": {
            "code": "no-known-error",
            "message": "no known CUDA error in the text",
            "hint": "run 'cudaresolve doctor' to check the installed packages against this machine",
            "findings": [],
        },
    }
    code, out, err = run(capsys, "Segmentation fault", *target_args)
    assert (code, out) == (1, "")
    # The layout of an error line belongs to render.render_error; here: its code, message and hint.
    assert err.startswith("error: no-known-error: no known CUDA error in the text")
    assert "run 'cudaresolve doctor' to check the installed packages against this machine" in err


def test_unknown_text_in_chinese(capsys: pytest.CaptureFixture[str], target_args: list[str]) -> None:
    code, out, _ = run(capsys, "Segmentation fault", *target_args, "--json", "--lang", "zh")
    assert code == 1
    assert json.loads(out)["error"] == {
        "code": "no-known-error",
        "message": "文本中没有已知的 CUDA 错误",
        "hint": "运行 'cudaresolve doctor'，对照本机检查已安装的软件包",
        "findings": [],
    }


def test_empty_stdin_is_bad_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, target_args: list[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("  \n"))
    code, out, _ = run(capsys, "-", *target_args, "--json")
    assert code == 1
    assert json.loads(out)["error"] == {
        "code": "invalid-input",
        "message": "no error text given",
        "hint": "pass the message as an argument, or pipe a log: ... 2>&1 | cudaresolve explain-error -",
        "findings": [],
    }


def test_empty_input_in_chinese(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, target_args: list[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, out, _ = run(capsys, *target_args, "--json", "--lang", "zh")
    assert code == 1
    assert json.loads(out)["error"] == {
        "code": "invalid-input",
        "message": "没有提供错误文本",
        "hint": "把错误信息作为参数传入，或通过管道传入日志：... 2>&1 | cudaresolve explain-error -",
        "findings": [],
    }


def test_bad_language_flag_is_refused(capsys: pytest.CaptureFixture[str], target_args: list[str]) -> None:
    code, _, err = run(capsys, CPU_TORCH, *target_args, "--lang", "fr")
    assert code == 2  # a usage error, as argparse, pip and uv exit
    assert err.startswith("error: usage: cudaresolve explain-error: argument --lang: invalid choice: 'fr'")


@pytest.mark.parametrize(
    "detected",
    [Target(source="none"), DetectionError("NVML failed: Unknown Error")],
    ids=["nothing-detected", "detection-failed"],
)
def test_without_flags_an_empty_or_failed_detection_means_no_target(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, compat: str, detected: object
) -> None:
    def fake_target(args: object, db: object) -> Target:
        if isinstance(detected, Exception):
            raise detected
        assert isinstance(detected, Target)
        return detected

    monkeypatch.setattr(explain_error, "target_from_args", fake_target)
    code, out, _ = run(capsys, TORCHREC_LOG, "--compat", compat, "--json")
    assert code == 0
    assert json.loads(out)["matches"][0]["fixes"] == [
        "Name the GPU (--gpu NAME or --gpu 6.1) or run this on the failing machine to get fixes for it.",
        "Run 'cudaresolve doctor' in the failing environment: it checks each installed library against the GPUs "
        "and the driver.",
    ]


def test_a_declared_cpu_target_is_kept(capsys: pytest.CaptureFixture[str], compat: str) -> None:
    code, out, _ = run(capsys, CPU_TORCH, "--cpu", "--compat", compat, "--json")
    assert code == 0
    assert json.loads(out)["matches"][0]["fixes"] == [
        "This target has no NVIDIA GPU; only the cpu variant applies.",
        "If the machine has no NVIDIA GPU, the code must not ask for 'cuda': run it on the CPU device.",
    ]


def test_format_and_render_agree_for_several_matches() -> None:
    from rich.console import Console

    from cudaresolve.errorlog.explain import Explanation
    from cudaresolve.render import plain
    from cudaresolve.render.explain import format_explanations, render_explanations, to_json
    from cudaresolve.text.model import Text, literal

    explanations = [
        Explanation(code="no-driver", cause=literal("原因一。"), fixes=(Text("fix.detect"), literal("修复二。"))),
        Explanation(code="torch-cpu-build", cause=literal("原因[二]。"), fixes=()),
    ]
    text = format_explanations(explanations, "zh")
    assert text == (
        "no-driver\n  原因：原因一。\n  修复：运行 'cudaresolve detect' 查看驱动报告的信息。\n  修复：修复二。"
        "\n\ntorch-cpu-build\n  原因：原因[二]。"
    )
    stream = io.StringIO()
    render_explanations(explanations, Console(file=stream, width=100, color_system=None), "zh")
    assert stream.getvalue() == text + "\n"
    assert plain(to_json(explanations), "zh") == {
        "matches": [
            {
                "code": "no-driver",
                "cause": "原因一。",
                "fixes": ["运行 'cudaresolve detect' 查看驱动报告的信息。", "修复二。"],
            },
            {"code": "torch-cpu-build", "cause": "原因[二]。", "fixes": []},
        ]
    }


def test_release_fixes_run_on_the_target_driver(capsys: pytest.CaptureFixture[str]) -> None:
    """A 570 driver runs CUDA 12.8 at most: no fix may name a cu130 build (it needs 580)."""
    from cudaresolve.cli import main

    code = main(["explain-error", "CUDA error: no kernel image is available", "--gpu", "RTX 4090",
                 "--driver", "570.86.10", "--json"])
    out = capsys.readouterr().out
    assert code == 0
    fixes = " ".join(f for m in json.loads(out)["matches"] for f in m["fixes"])
    assert "native code for sm_89" in fixes and "cu130" not in fixes and "cu132" not in fixes


@pytest.mark.parametrize(("gpu", "offered"), [("GTX 580", False), ("Tesla K80", True), ("V100", True)])
def test_a_source_build_is_offered_only_where_some_toolkit_compiles_for_the_gpu(
    gpu: str, offered: bool, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found in review: explain-error and doctor offered TORCH_CUDA_ARCH_LIST for any GPU, a Fermi (sm_20) among
    them, which no CUDA toolkit the database knows compiles ([[cuda]] nvcc-sm); why-not already checked."""
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("RuntimeError: CUDA error: no kernel image is available\n"))
    main(["explain-error", "--gpu", gpu, "--driver", "470.82.01", "--json"])
    text = capsys.readouterr().out
    assert ("TORCH_CUDA_ARCH_LIST" in text) is offered, text[:400]
