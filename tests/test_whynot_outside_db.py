"""why-not on a package the database does not hold: no verdict (lock takes it from the index), said as one
coded line; such packages in the context set are left to the index too, so they change no verdict."""

from __future__ import annotations

import json

import pytest

from cudaresolve.cli import main
from cudaresolve.db.database import load_compat

TARGET = ["--gpu", "H100", "--driver", "580.65.06", "--python-version", "3.11", "--platform", "linux_x86_64",
          "--offline"]  # fmt: skip
OUTSIDE = ["numpy", "einops", "onnxruntime-gpu", "Jinja2>=3"]


@pytest.mark.parametrize("spec", OUTSIDE)
def test_a_package_outside_the_database_gets_no_verdict(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    name = spec.split(">")[0].lower()
    assert name not in load_compat().package_names  # the premise: the database holds no table of it
    assert main(["why-not", spec, *TARGET, "--json"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["code"] == "invalid-input" and name in error["message"] and "index" in error["message"]
    assert "lock" in error["hint"]


@pytest.mark.parametrize(("spec", "context"), [("xformers", ["numpy", "einops"]), ("torchvision", ["numpy", "einops"]),
                                               ("cu128", ["torch", "numpy", "einops"]), ("cu128", ["numpy"])])
def test_context_outside_the_database_changes_no_verdict(
    spec: str, context: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["why-not", spec, *TARGET, "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert main(["why-not", spec, *context, *TARGET, "--json"]) == 0
    with_context = json.loads(capsys.readouterr().out)
    assert with_context["possible"] == alone["possible"]
    assert with_context["reasons"] == alone["reasons"]
    assert with_context["solution"]["packages"] == alone["solution"]["packages"]  # a variant alone: the anchor's set
