"""why-not through the CLI on the shipped data: the canonical case, possible, unknown and malformed SPECs."""
# ruff: noqa: RUF001  (the Chinese messages use full-width punctuation on purpose)

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from cudaresolve.cli import main

if TYPE_CHECKING:
    import pytest

A800 = ["--gpu", "A800", "--driver", "470.129.06", "--python-version", "3.11", "--platform", "linux_x86_64"]


def why_not(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["why-not", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_canonical_cu121_on_a800_with_r470(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = why_not(capsys, "cu121", *A800)
    assert code == 1
    assert answer["possible"] is False
    assert answer["reasons"] == [
        {
            "code": "driver-too-old",
            "message": "CUDA 12.1 wheels (cu121) need driver 525.60.13 at least (530.30.02 for full compatibility);"
            " this host has 470.129.06",
            "variant": "cu121",
            "required": "525.60.13",
            "found": "470.129.06",
        }
    ]
    specs = [a["spec"] for a in answer["alternatives"]]
    assert specs[0] == "cu118"
    assert answer["alternatives"][0]["message"].startswith("cu118 works here: torch 2.7.1+cu118")
    assert "driver>=525.60.13" in specs
    forward = next(a for a in answer["alternatives"] if a.get("code") == "forward-compat-available")
    assert forward["spec"] == "cuda-compat-12-1"
    assert forward["message"] == (
        "NVIDIA A800 is a data-center GPU: with the cuda-compat package, driver 470.129.06 can run CUDA 12.1 (cu121)"
    )


def test_no_forward_compat_for_a_geforce(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = why_not(capsys, "cu121", "--gpu", "RTX 3090", "--driver", "470.129.06", "--python-version", "3.11")
    assert code == 1
    assert not [a for a in answer["alternatives"] if a.get("code") == "forward-compat-available"]


def test_possible_spec_says_what_it_would_install(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = why_not(capsys, "cu118", *A800)
    assert code == 0
    assert answer["possible"] is True and answer["reasons"] == []
    assert answer["solution"]["packages"][0]["version"] == "2.7.1+cu118"


def test_pinned_build(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = why_not(capsys, "torch==2.5.1+cu121", *A800)
    assert code == 1
    assert [r["code"] for r in answer["reasons"]] == ["driver-too-old"]
    assert answer["alternatives"][0]["spec"] != "cu121"


def test_sm_not_covered_offers_the_exact_arch_list(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = why_not(
        capsys, "torchrec", "--gpu", "GTX 1080 Ti", "--driver", "550.54.15", "--python-version", "3.11"
    )
    assert code == 1
    assert answer["reasons"][0]["code"] == "sm-not-covered"
    assert answer["reasons"][0]["required"] == "sm_61"
    assert {
        "spec": "TORCH_CUDA_ARCH_LIST=6.1",
        "message": 'build from source with TORCH_CUDA_ARCH_LIST="6.1" so that every GPU here gets native code',
    } in answer["alternatives"]


def test_unknown_package(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = why_not(capsys, "numpyy", *A800)  # not in the database: no verdict, the index's at lock time
    assert code == 1
    assert answer["error"]["code"] == "invalid-input"
    assert "numpyy" in answer["error"]["message"] and "torch" in answer["error"]["message"]  # the packages it judges


def test_malformed_spec_and_unknown_variant(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = why_not(capsys, "torch>>2", *A800)
    assert code == 1
    assert answer["error"]["code"] == "invalid-input"
    assert answer["error"]["hint"]
    code, answer = why_not(capsys, "cu999", *A800)
    assert code == 1
    assert answer["error"]["message"] == "unknown variant 'cu999'"


def test_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = why_not(capsys, "cu121", *A800, "--lang", "zh")
    assert code == 1
    assert answer["reasons"][0]["message"] == (
        "CUDA 12.1 的 wheel（cu121）至少需要驱动 525.60.13（完全兼容需要 530.30.02）；本机驱动为 470.129.06"
    )
    assert answer["alternatives"][0]["message"].startswith("cu118 在本机可用")


def test_human_output_is_a_tree(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["why-not", "cu121", *A800]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "cu121 is not possible here"
    assert "driver-too-old: CUDA 12.1 wheels (cu121) need driver 525.60.13" in out
    assert "ways out" in out


def test_one_reason_shared_by_many_releases_is_said_once(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = why_not(capsys, "cu121", "--gpu", "RTX 5090", "--driver", "570.86.10", "--python-version", "3.11")
    assert code == 1
    assert [r["code"] for r in answer["reasons"]] == ["sm-not-covered"]  # no findings about other variants
    (only,) = answer["reasons"]
    assert only["message"].startswith("torch 2.1.0 to 2.5.1 (12 releases) (cu121) has no code for sm_120")
    assert (only["variant"], only["required"]) == ("cu121", "sm_120")
    code, answer = why_not(
        capsys, "cu121", "--gpu", "RTX 5090", "--driver", "570.86.10", "--python-version", "3.11", "--lang", "zh"
    )
    assert answer["reasons"][0]["message"].startswith("torch 2.1.0 至 2.5.1（共 12 个版本）")


def test_ways_out_keep_the_users_own_pin(capsys: pytest.CaptureFixture[str]) -> None:
    h100 = ["--gpu", "H100", "--driver", "535.104.05", "--python-version", "3.11"]
    code, answer = why_not(capsys, "xformers==0.0.32.post2", "torch==2.5.1", *h100)
    assert code == 1
    assert [a["spec"] for a in answer["alternatives"]] == ["torch==2.5.1+cu121, xformers==0.0.29.post1"]
    # a pinned build keeps its version on another variant: torch 2.7.1 on cu118, not an older torch on cu117
    code, answer = why_not(capsys, "torch==2.7.1+cu128", "--gpu", "A100", "--driver", "470.129.06")
    works = [a for a in answer["alternatives"] if "works here" in a["message"]]
    assert [(a["spec"], a["message"].split(" from ")[0]) for a in works] == [
        ("cu118", "cu118 works here: torch 2.7.1+cu118")
    ]


def test_driver_upgrade_names_the_lowest_driver_for_the_build_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = why_not(capsys, "torch==2.9.0", "--gpu", "A100", "--driver", "470.129.06")
    assert code == 1
    upgrade = next(a for a in answer["alternatives"] if a["spec"].startswith("driver>="))
    # the least change: 12.x's minor-version floor runs torch 2.9.0's builds (the newest, cu128, is chosen
    # there), not the full-compatibility driver of its oldest CUDA (560.28.03) nor the newest CUDA's
    assert upgrade == {
        "spec": "driver>=525.60.13",
        "message": "upgrade the NVIDIA driver to 525.60.13 or newer: it runs CUDA 12.8 (cu128) through"
        " minor-version compatibility (570.26 or newer runs it fully)",
    }


JETSON = ["--gpu", "Jetson AGX Orin", "--driver", "540.4.0", "--platform", "linux_aarch64", "--python-version", "3.10"]
JETSON_URL = "https://docs.nvidia.com/deeplearning/frameworks/install-pytorch-jetson-platform/index.html"


def test_jetson_is_not_served_by_these_indexes(capsys: pytest.CaptureFixture[str]) -> None:
    code, answer = why_not(capsys, "torch", *JETSON)
    assert code == 1
    assert [r["code"] for r in answer["reasons"]] == ["jetson-not-served"]
    assert "built for Arm servers (SBSA), not for Jetson" in answer["reasons"][0]["message"]
    assert answer["alternatives"] == [
        {
            "spec": "jetson-wheels",
            "message": f"on Jetson, install the PyTorch wheels NVIDIA builds for your JetPack release: {JETSON_URL}",
            "code": "jetson-not-served",
        }
    ]


def test_jetson_lock_fails_with_one_line_and_the_jetson_hint(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lock", "torch", *JETSON, "--offline"]) == 1
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert first.startswith("error: no-solution: no set of packages fits this target: torch ")
    assert "not for Jetson (NVIDIA Jetson Orin); these indexes do not serve Jetson" in first
    assert first.endswith(
        f"(hint: on Jetson, install the PyTorch wheels NVIDIA builds for your JetPack release: {JETSON_URL})"
    )
    assert "no wheel for linux_aarch64" not in err


def test_a_release_the_database_does_not_describe_is_said_so_whatever_the_gpu(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A pin older than every release the database describes is not "no such release" (PyPI may have it), and the
    range named is the database's, not the newest release that happens to fit one GPU."""
    from cudaresolve.db.database import load_compat

    held = sorted(r.version for r in load_compat().packages("vllm"))
    messages = set()
    for gpu in ("T4", "GTX 1080 Ti", "V100"):
        code, answer = why_not(capsys, "vllm==0.0.1", "--gpu", gpu, "--driver", "550.54.14", "--python-version", "3.12")
        assert code == 1
        assert [r["code"] for r in answer["reasons"]] == ["no-such-version"]
        messages.add(answer["reasons"][0]["message"])
    assert messages == {
        f"vllm ==0.0.1 is not among the releases the database describes (vllm {held[0]} to {held[-1]}), whose builds"
        " it has checked for this GPU stack"
    }


def test_a_variant_conflict_is_said_in_words(capsys: pytest.CaptureFixture[str]) -> None:
    """Two pins on builds of different CUDA variants: the findings name the variants, not the solver's ``<cuda>``."""
    code = main(["lock", "torch==2.11.0", "torchaudio==2.11.1", "--gpu", "A100", "--driver", "580.65.06",
                 "--python-version", "3.12", "--offline", "--json"])
    findings = json.loads(capsys.readouterr().out)["error"]["findings"]
    assert code == 1
    conflicts = [f["message"] for f in findings if f["code"] == "pin-conflict"]
    assert conflicts and all("CUDA variant cu" in m and "<cuda>" not in m for m in conflicts)


def test_a_variant_in_upper_case_is_that_variant(capsys: pytest.CaptureFixture[str]) -> None:
    """PEP 440 reads a local label in any case: ``CU121`` and ``+CU121`` are cu121, as lock takes them."""
    for spec in ("CU121", "torch==2.5.1+CU121", "torch===2.5.1+Cu121"):
        code, answer = why_not(capsys, spec, "--gpu", "A100", "--driver", "535.54.03", "--python-version", "3.11")
        assert code == 0, spec
        assert answer["possible"] is True
        assert answer["solution"]["packages"][0]["version"] == "2.5.1+cu121"


def test_a_local_label_that_is_no_known_variant_is_the_pins_reason_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``+cu121.post1`` or ``+cu999`` names no variant: the reason is the pin, never the solver's ``<cuda>``."""
    for spec in ("torch==2.5.1+cu121.post1", "torch==2.5.1+cu999"):
        code, answer = why_not(capsys, spec, "--gpu", "A100", "--driver", "535.54.03", "--python-version", "3.11")
        assert code == 1
        assert [r["code"] for r in answer["reasons"]] == ["no-such-version"], spec
        assert all("<cuda>" not in r["message"] for r in answer["reasons"])


def test_a_spec_whose_marker_is_false_here_is_said_not_to_apply(capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the hostile-input audit: ``why-not 'torch; python_version<"3"'`` said torch was possible and what it
    would install, though lock leaves such a requirement out on this target. It is now a coded line saying so."""
    argv = ["why-not", 'torch; python_version<"3"', "--gpu", "H100", "--driver", "580.65.06"]
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert err.startswith("error: invalid-input: ") and 'its marker (python_version < "3") is false' in err
    assert main(["why-not", 'torch; python_version>="3"', "--gpu", "H100", "--driver", "580.65.06"]) == 0
