"""Target and log input (issue 12, items 5, 7, 11 and the --host tracebacks): foreign digits, host
files that do not say what they are, blocking or huge or deep host files, explain-error blow-ups.

Bounds checked without timings: a host file is refused by what it is (not a regular file, over
``HOST_FILE_MAX_BYTES``) before it is read, and explain-error says it read only the first
``MAX_TEXT_CHARS`` characters (the unit tests count the characters read and the pattern widths).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from hostile.case import Case

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from hostile.case import Result

HOST_FILE_MAX_BYTES = 1024 * 1024  # target.build.HOST_FILE_MAX_BYTES
MAX_TEXT_CHARS = 1024 * 1024  # errorlog.signatures.MAX_TEXT_CHARS
NKI = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
ARABIC_DRIVER = "\u0664\u0667\u0660.\u0661\u0662\u0669.\u0660\u0666"  # 470.129.06
ARABIC_CC = "\u0668.\u0660"  # 8.0
FULLWIDTH_CC = "\uff18.\uff10"
DEVANAGARI_DRIVER = "\u096b\u0969\u096b.\u0967\u0966\u096a.\u0966\u096b"  # 535.104.05
GOOD = ["--gpu", "8.0", "--driver", "535.104.05"]


def _error(code: str, *words: str) -> Callable[[Result, Path], None]:
    """The first stderr line is ``error: <code>: ...`` and holds each of ``words``."""

    def check(result: Result, tmp: Path) -> None:
        first = result.stderr.splitlines()[0]
        assert first.startswith(f"error: {code}: "), first
        for word in words:
            assert word.replace("{tmp}", str(tmp)) in first, (word, first)

    return check


def _write(name: str, content: str | bytes) -> Callable[[Path], None]:
    def setup(tmp: Path) -> None:
        path = tmp / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))

    return setup


def _host(name: str, data: object) -> Case:
    """A host file holding ``data``: refused with a coded error naming what is wrong."""
    return Case(f"input-host-shape-{name}", ["arch-list", "--host", "{tmp}/h.json"],
                setup=_write("h.json", json.dumps(data)), codes=(1,), check=_error("invalid-input", "{tmp}/h.json"))


def _fifo(tmp: Path) -> None:
    os.mkfifo(tmp / "h.json")  # no writer: a blocking open or read would hang


def _sparse(tmp: Path) -> None:
    with (tmp / "h.json").open("wb") as f:
        f.truncate(256 * 1024 * 1024)  # 256 MiB of NULs, no disk used


def _truncated_warning(result: Result, tmp: Path) -> None:
    assert result.stderr.startswith(
        f"warning: input-truncated: the text is longer than {MAX_TEXT_CHARS} characters; "
        f"only the first {MAX_TEXT_CHARS} were read"
    ), result.stderr[:300]
    assert result.stdout.startswith("no-kernel-image"), result.stdout[:300]


def _truncated_json(result: Result, tmp: Path) -> None:
    payload = json.loads(result.stdout)
    assert [w["code"] for w in payload["warnings"]] == ["input-truncated"]


def _nothing_past_the_cap(result: Result, tmp: Path) -> None:
    _error("no-known-error", f"in the first {MAX_TEXT_CHARS} characters")(result, tmp)


def _scanned_whole(result: Result, tmp: Path) -> None:
    """Under the cap: no truncation notice, and the answer is the plain one."""
    assert "input-truncated" not in result.stderr
    _error("no-known-error", "no known CUDA error in the text")(result, tmp)


CASES = [
    # -- item 5: digits of other scripts are not numbers ------------------------------------------
    Case("input-digits-driver-arabic", ["arch-list", "--gpu", "8.0", "--driver", ARABIC_DRIVER], codes=(1,),
         check=_error("invalid-driver")),
    Case("input-digits-driver-devanagari", ["arch-list", "--gpu", "8.0", "--driver", DEVANAGARI_DRIVER], codes=(1,),
         check=_error("invalid-driver")),
    Case("input-digits-gpu-arabic", ["arch-list", "--gpu", ARABIC_CC], codes=(1,), check=_error("unknown-gpu")),
    Case("input-digits-gpu-fullwidth", ["arch-list", "--gpu", FULLWIDTH_CC], codes=(1,), check=_error("unknown-gpu")),
    Case("input-digits-gpu-sm-arabic", ["arch-list", "--gpu", "sm_\u0668\u0660"], codes=(1,),
         check=_error("unknown-gpu")),
    Case("input-digits-python", ["arch-list", *GOOD, "--python-version", "3.\u0661\u0661"], codes=(1,),
         check=_error("invalid-input", "not a Python version")),
    Case("input-digits-env-driver", ["arch-list"], env={"CUDARESOLVE_GPUS": "8.0", "CUDARESOLVE_DRIVER": ARABIC_DRIVER},
         codes=(1,), check=_error("invalid-driver", "CUDARESOLVE_DRIVER")),
    Case("input-digits-env-gpus", ["arch-list"], env={"CUDARESOLVE_GPUS": ARABIC_CC}, codes=(1,),
         check=_error("unknown-gpu")),
    Case("input-digits-host-cc", ["arch-list", "--host", "{tmp}/h.json"],
         setup=_write("h.json", json.dumps({"gpus": [{"cc": ARABIC_CC}], "driver": None})), codes=(1,),
         check=_error("invalid-arch")),
    Case("input-digits-host-driver", ["arch-list", "--host", "{tmp}/h.json"],
         setup=_write("h.json", json.dumps({"gpus": [{"cc": "8.0"}], "driver": ARABIC_DRIVER})), codes=(1,),
         check=_error("invalid-driver")),
    # -- item 5: a host file must say what it is ------------------------------------------------
    _host("empty-object", {}),
    _host("schema-only", {"schema": 1}),
    _host("gpus-without-driver", {"gpus": []}),
    _host("empty-target", {"schema": 1, "target": {}}),
    _host("target-list", {"schema": 1, "target": []}),
    _host("target-string", {"schema": 1, "target": "A100"}),
    _host("target-nested-twice", {"schema": 1, "target": {"target": {"gpus": [{"cc": "8.0"}], "driver": None}}}),
    _host("gpus-string", {"gpus": "A100", "driver": None}),
    _host("gpus-object", {"gpus": {"cc": "8.0"}, "driver": None}),
    _host("cc-number", {"gpus": [{"cc": 8.0}], "driver": None}),
    _host("gpu-list", {"gpus": [["8.0"]], "driver": None}),
    _host("memory-bool", {"gpus": [{"cc": "8.0", "memory_mib": True}], "driver": None}),
    _host("memory-float", {"gpus": [{"cc": "8.0", "memory_mib": 1.5}], "driver": None}),
    _host("name-number", {"gpus": [{"cc": "8.0", "name": 80}], "driver": None}),
    _host("driver-number", {"gpus": [{"cc": "8.0"}], "driver": 535.104}),
    _host("python-number", {"gpus": [], "driver": None, "python": 3.11}),
    _host("schema-2", {"schema": 2, "target": {"gpus": [], "driver": None}}),
    _host("top-list", [{"gpus": [], "driver": None}]),
    _host("top-null", None),
    _host("top-string", "gpus"),
    Case("input-host-shape-cpu-explicit", ["detect", "--host", "{tmp}/h.json", "--json"],
         setup=_write("h.json", json.dumps({"gpus": [], "driver": None})), codes=(0,),
         check=lambda r, t: json.loads(r.stdout)["target"]["gpus"] == []),
    # -- item 11 and the tracebacks: what --host may open and read ----------------------------
    Case("input-host-io-dev-zero", ["arch-list", "--host", "/dev/zero"], codes=(1,),
         check=_error("invalid-input", "/dev/zero is not a regular file")),
    Case("input-host-io-dev-urandom", ["why-not", "cu121", "--host", "/dev/urandom"], codes=(1,),
         check=_error("invalid-input", "is not a regular file")),
    Case("input-host-io-fifo", ["arch-list", "--host", "{tmp}/h.json"], setup=_fifo, codes=(1,),
         check=_error("invalid-input", "{tmp}/h.json is not a regular file")),
    Case("input-host-io-directory", ["arch-list", "--host", "{tmp}"], codes=(1,),
         check=_error("invalid-input", "not a regular file")),
    Case("input-host-io-missing", ["arch-list", "--host", "{tmp}/nope.json"], codes=(1,),
         check=_error("invalid-input", "No such file or directory")),
    Case("input-host-io-huge-sparse", ["arch-list", "--host", "{tmp}/h.json"], setup=_sparse, codes=(1,),
         check=_error("invalid-input", f"larger than {HOST_FILE_MAX_BYTES} bytes")),
    Case("input-host-io-just-over-cap", ["arch-list", "--host", "{tmp}/h.json"],
         setup=_write("h.json", '{"gpus": [], "driver": null}' + " " * HOST_FILE_MAX_BYTES), codes=(1,),
         check=_error("invalid-input", f"larger than {HOST_FILE_MAX_BYTES} bytes")),
    Case("input-host-io-deep-100k", ["arch-list", "--host", "{tmp}/h.json"],
         setup=_write("h.json", "[" * 100_000 + "]" * 100_000), codes=(1,),
         check=_error("invalid-input", "nested too deeply")),
    Case("input-host-io-deep-objects", ["arch-list", "--host", "{tmp}/h.json"],
         setup=_write("h.json", '{"a":' * 100_000 + "1" + "}" * 100_000), codes=(1,),
         check=_error("invalid-input", "nested too deeply")),
    Case("input-host-io-deep-unclosed", ["arch-list", "--host", "{tmp}/h.json"],
         setup=_write("h.json", "[" * 500_000), codes=(1,), check=_error("invalid-input", "{tmp}/h.json")),
    Case("input-host-io-binary", ["arch-list", "--host", "{tmp}/h.json"], setup=_write("h.json", bytes(range(256))),
         codes=(1,), check=_error("invalid-input", "is not valid JSON")),
    Case("input-host-io-huge-int", ["arch-list", "--host", "{tmp}/h.json"],
         setup=_write("h.json", '{"gpus": [], "driver": null, "x": ' + "9" * 5000 + "}"), codes=(1,),
         check=_error("invalid-input", "is not valid JSON")),
    Case("input-host-io-nan", ["arch-list", "--host", "{tmp}/h.json"],
         setup=_write("h.json", '{"gpus": [{"cc": "8.0", "memory_mib": NaN}], "driver": null}'), codes=(1,),
         check=_error("invalid-input", "expected int, got float")),
    # -- item 4: other parsers of target input ----------------------------------------------------
    Case("input-parse-gpu-sm9x", ["arch-list", "--gpu", "sm_9x"], codes=(1,), check=_error("unknown-gpu")),
    Case("input-parse-gpu-5000-digits", ["arch-list", "--gpu", "9" * 5000], codes=(1,), check=_error("unknown-gpu")),
    Case("input-parse-gpu-sm-5000-digits", ["arch-list", "--gpu", "sm_" + "9" * 5000], codes=(1,),
         check=_error("invalid-arch")),
    Case("input-parse-driver-5000-digits", ["arch-list", "--gpu", "8.0", "--driver", "9" * 5000], codes=(1,),
         check=_error("invalid-driver")),
    Case("input-parse-python-5000-digits", ["arch-list", *GOOD, "--python-version", "3." + "1" * 5000], codes=(1,),
         check=_error("invalid-input")),
    Case("input-parse-python-micro-5000", ["arch-list", *GOOD, "--python-version", "3.11." + "1" * 5000], codes=(1,),
         check=_error("invalid-input")),
    Case("input-parse-platform-junk", ["arch-list", *GOOD, "--platform", "\u200b-\u00df"], codes=(1,),
         check=_error("invalid-input")),
    Case("input-parse-gpu-commas", ["arch-list", "--gpu", ",,,"], codes=(1,), check=_error("invalid-input")),
    Case("input-parse-gpu-zero-width", ["arch-list", "--gpu", "A100\u200b"], codes=(0, 1)),  # the database's match
    Case("input-parse-env-gpus-5000", ["arch-list"], env={"CUDARESOLVE_GPUS": "9" * 5000}, codes=(1,),
         check=_error("unknown-gpu")),
    Case("input-parse-env-driver-5000", ["arch-list"],
         env={"CUDARESOLVE_GPUS": "8.0", "CUDARESOLVE_DRIVER": "9" * 5000}, codes=(1,), check=_error("invalid-driver")),
    Case("input-parse-env-gpus-separators", ["arch-list"], env={"CUDARESOLVE_GPUS": " , ;;sm_"}, codes=(1,),
         check=_error("unknown-gpu")),
    # -- item 7: explain-error's work is bounded by its input cap --------------------------------
    Case("input-explain-found-120k", ["explain-error", "-", "--cpu"], stdin="Found " * 20_000, codes=(1,),
         check=_scanned_whole),
    Case("input-explain-xformers-20000", ["explain-error", "-", "--cpu"], stdin="xformers" * 20_000, codes=(1,),
         check=_scanned_whole),
    Case("input-explain-found-gpu-1m", ["explain-error", "-", "--cpu"], stdin="Found GPU0 " * 90_000, codes=(1,),
         check=_scanned_whole),
    Case("input-explain-found-3m", ["explain-error", "-", "--cpu"], stdin="Found " * 500_000, codes=(1,),
         check=_nothing_past_the_cap),
    Case("input-explain-signature-past-cap", ["explain-error", "-", "--cpu"],
         stdin="x" * (3 * MAX_TEXT_CHARS) + NKI, codes=(1,), check=_nothing_past_the_cap),
    Case("input-explain-signature-then-3m", ["explain-error", "-", "--cpu"],
         stdin=NKI + "\n" + "xformers" * (MAX_TEXT_CHARS // 2), codes=(0,), check=_truncated_warning),
    Case("input-explain-signature-then-3m-json", ["explain-error", "-", "--cpu", "--json"],
         stdin=NKI + "\n" + "Found " * 500_000, codes=(0,), check=_truncated_json),
    # a log's decoration (colour codes, per-line stamps) is taken away in bounded work too
    Case("input-explain-bracket-lines-1m", ["explain-error", "-", "--cpu"], stdin="\n[" * 500_000, codes=(1,),
         check=_scanned_whole),
    Case("input-explain-open-escapes-1m", ["explain-error", "-", "--cpu"], stdin="\x1b]" + "a" * 1_000_000,
         codes=(1,), check=_scanned_whole),
    Case("input-explain-stamps-1m", ["explain-error", "-", "--cpu"], stdin="2024-01-01 00:00:00 [x] " * 40_000,
         codes=(1,), check=_scanned_whole),
    Case("input-explain-nul-bytes", ["explain-error", "-", "--cpu"], stdin="\x00" * 100_000, codes=(1,),
         check=_error("no-known-error")),
    Case("input-explain-library-5000-digits", ["explain-error", "-", "--gpu", "8.0", "--driver", "535.104.05"],
         stdin="libcudart.so." + "9" * 5000 + ": cannot open shared object file", codes=(0, 1)),
    Case("input-explain-sm-5000-digits", ["explain-error", "-", "--cpu"],
         stdin="with CUDA capability sm_" + "9" * 5000 + " is not compatible with the current PyTorch installation",
         codes=(0, 1)),
    Case("input-explain-arabic-sm", ["explain-error", "-", "--cpu", "--json"],
         stdin="with CUDA capability sm_\u0661\u0662\u0660 is not compatible with the current PyTorch installation",
         codes=(1,)),
]
