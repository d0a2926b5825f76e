"""Inputs that were taken silently (issue 26, item 6): an empty flag value taken as the default, a host
file whose GPU name and compute capability disagree, ``-o newdir/`` written as a file ``newdir``,
``--version --json`` printing text, a requirements lock with two ``--index-url`` lines (pip uses the
last, a reader the first)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from hostile.case import Case, Result
from hostile.cases_install import INDEX, PIN, _requirements

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

_GPU = ["--gpu", "8.0", "--driver", "550.54.15"]
_LOCK = ["lock", "torch", "--cpu", "--python-version", "3.11", "--platform", "linux_x86_64", "--offline",
         "--format", "requirements"]


def _first_line(*words: str) -> Callable[[Result, Path], None]:
    def check(result: Result, tmp: Path) -> None:
        first = result.stderr.splitlines()[0]
        assert all(word in first for word in words), first
    return check


def _host(name: str, cc: str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        target = {"gpus": [{"name": name, "cc": cc}], "driver": "550.54.15", "platform": "linux_x86_64",
                  "python": "3.11"}
        (tmp / "h.json").write_text(json.dumps({"schema": 1, "target": target}))
    return setup


def _no_file(name: str, *words: str) -> Callable[[Result, Path], None]:
    def check(result: Result, tmp: Path) -> None:
        assert not (tmp / name.rstrip("/")).is_file(), name
        _first_line(*words)(result, tmp)
    return check


def _version_json(result: Result, tmp: Path) -> None:
    data = json.loads(result.stdout)
    assert data["schema"] == 1 and data["name"] == "cudaresolve" and data["version"]


def _existing_folder(tmp: Path) -> None:
    (tmp / "locks").mkdir()


def _reqs(body: str) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        (tmp / "requirements.txt").write_text(_requirements(body), encoding="utf-8")
    return setup


_EMPTY = [("driver", ["arch-list", "--gpu", "8.0", "--driver", ""]),
          ("python-version", ["arch-list", *_GPU, "--python-version", ""]),
          ("platform", ["arch-list", *_GPU, "--platform="]),
          ("gpu", ["arch-list", "--gpu", ""]),
          ("output", [*_LOCK, "-o", ""]),
          ("cache-dir", ["gpus", "--cache-dir", ""]),
          ("compat", ["gpus", "--compat", ""]),
          ("index-url", [*_LOCK, "-i", ""])]
_INSTALL = ["install", "--from", "requirements.txt", "--dry-run", "--python", sys.executable]
EVIL = "https://evil.example.org/simple"
CASES = [
    *(Case(f"flag-empty-{name}", argv, codes=(2,), check=_first_line("an empty value")) for name, argv in _EMPTY),
    Case("flag-empty-driver-json", ["arch-list", "--gpu", "8.0", "--driver", "", "--json"], codes=(2,),
         check=lambda r, t: _assert("an empty value" in json.loads(r.stdout)["error"]["message"])),
    *(Case(f"host-file-cc-mismatch-{gpu.replace(' ', '-')}", ["arch-list", "--host", "{tmp}/h.json"],
           setup=_host(gpu, cc), codes=(1,), check=_first_line("invalid-input", "compute capability", cc))
      for gpu, cc in (("A100", "6.1"), ("RTX 4090", "8.0"), ("NVIDIA H100 80GB HBM3", "7.0"))),
    Case("host-file-cc-agrees", ["arch-list", "--host", "{tmp}/h.json"], setup=_host("A100", "8.0"), codes=(0,)),
    *(Case(f"output-names-folder-{n}", [*_LOCK, "-o", path], setup=setup, codes=(1,),
           check=_no_file(path, "invalid-input", "folder"))
      for n, path, setup in (("new", "newdir/", None), ("dot-slash", "./out/", None),
                             ("existing", "locks/", _existing_folder))),
    Case("version-json", ["--version", "--json"], codes=(0,), check=_version_json),
    Case("version-json-before", ["--json", "-V"], codes=(0,), check=_version_json),
    Case("version-json-after-command", ["lock", "--version", "--json"], codes=(0,), check=_version_json),
    Case("version-text", ["--version"], codes=(0,), check=lambda r, t: _assert(r.stdout.startswith("cudaresolve "))),
    *(Case(f"requirements-two-index-lines-{n}", _INSTALL, setup=_reqs(body), codes=(1,),
           check=_first_line("invalid-lockfile", "second --index-url"))
      for n, body in (("after-pins", f"--index-url {INDEX}\n{PIN}--index-url {EVIL}\n"),
                      ("short-form", f"-i {INDEX}\n{PIN}-i {EVIL}\n"),
                      ("equals-form", f"--index-url={INDEX}\n--index-url={EVIL}\n{PIN}"))),
]


def _assert(condition: bool) -> None:
    assert condition
