"""Issue 12, items 5 and 7: ASCII-only numbers in targets; explain-error's work bounded by its input cap.

The bounds are structural, not timings: every signature pattern has a finite width of at most
``MAX_PATTERN_WIDTH`` (so one ``search`` over n characters costs O(n * width)), nested repeats
exist only where they cannot overlap, and no more than ``MAX_TEXT_CHARS`` characters are ever
scanned or read from stdin.
"""

from __future__ import annotations

import io
import json
import re
import re._parser as sre_parse  # the stdlib's own parser of pattern syntax (getwidth)
from typing import TYPE_CHECKING, Any

import pytest

from cudaresolve.cli import main
from cudaresolve.core.archs import parse_arch, parse_arch_list, parse_cc
from cudaresolve.core.versions import parse_cuda_version, parse_driver, parse_python_version
from cudaresolve.errorlog.explain import explain_log
from cudaresolve.errorlog.signatures import MAX_PATTERN_WIDTH, MAX_TEXT_CHARS, SIGNATURES, match_errors
from cudaresolve.errors import DetectionError, InvalidInput, NoKnownError
from cudaresolve.target.readings import parse_cuda_visible_devices, parse_nvidia_smi_csv

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

NKI = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
#: Digits of other scripts that str.isdigit, \d and int() accept: Arabic-Indic, Devanagari, full-width.
FOREIGN_DIGITS = ("\u0664\u0667\u0660", "\u096a\u096d\u096e", "\uff14\uff17\uff10")


def _patterns() -> Iterator[tuple[str, re.Pattern[str]]]:
    for sig in SIGNATURES:
        for pattern in (*sig.patterns, *sig.extra, *((sig.context,) if sig.context else ())):
            yield sig.code, pattern


def _repeat_depth(items: Any, depth: int = 0) -> int:
    """How deeply repeats of more than one item nest (0: none, 1: no such repeat inside another); ``?`` is not one."""
    deepest = depth
    for op, arg in items:
        if op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT):
            deepest = max(deepest, _repeat_depth(arg[2], depth + (arg[1] > 1)))
        elif op is sre_parse.SUBPATTERN:
            deepest = max(deepest, _repeat_depth(arg[3], depth))
        elif op is sre_parse.BRANCH:
            deepest = max(deepest, *(_repeat_depth(b, depth) for b in arg[1]))
    return deepest


PATTERNS = list(_patterns())


@pytest.mark.parametrize(("code", "pattern"), PATTERNS, ids=[f"{c}-{i}" for i, (c, _) in enumerate(PATTERNS)])
def test_every_pattern_has_a_bounded_width(code: str, pattern: re.Pattern[str]) -> None:
    """No ``*``, ``+`` or ``{n,}``: an attempt at one position spans at most MAX_PATTERN_WIDTH characters."""
    _, widest = sre_parse.parse(pattern.pattern, pattern.flags).getwidth()
    assert widest <= MAX_PATTERN_WIDTH, (code, pattern.pattern)
    assert pattern.flags & re.ASCII, (code, pattern.pattern)


def test_only_two_patterns_nest_repeats_and_their_items_cannot_overlap() -> None:
    """Each repeated item starts with a literal its inner repeat cannot match (``sm``/``compute``,
    ``.``), so a text splits into items one way only and backtracking stays within the width."""
    nested = [p.pattern for _, p in _patterns() if _repeat_depth(sre_parse.parse(p.pattern, p.flags)) > 1]
    assert [re.findall(r"\(\?:[^()]*(?:\([^()]*\)[^()]*)*\)\{\d+,\d+\}", p) for p in nested] == [
        [r"(?:(?:sm|compute)_\d{1,4}[af]? ?){1,64}"],
        [r"(?:\.\d{1,6}){0,4}"],
    ]


def test_only_the_first_max_text_chars_are_scanned() -> None:
    before = "x" * (MAX_TEXT_CHARS - len(NKI)) + NKI
    assert [m.code for m in match_errors(before)] == ["no-kernel-image"]
    after = "x" * MAX_TEXT_CHARS + NKI
    assert match_errors(after) == []


def test_explain_log_says_when_it_cut_the_text() -> None:
    text = NKI + "\n" + "y" * (3 * MAX_TEXT_CHARS)
    result = explain_log(text, None, None)
    assert (result.scanned, result.truncated) == (MAX_TEXT_CHARS, True)
    assert [n.code for n in result.notices] == ["input-truncated"]
    assert result.notices[0].message == (
        f"the text is longer than {MAX_TEXT_CHARS} characters; only the first {MAX_TEXT_CHARS} were read"
    )
    short = explain_log(NKI, None, None)
    assert (short.scanned, short.truncated, short.notices) == (len(NKI), False, ())
    with pytest.raises(NoKnownError) as info:
        explain_log("z" * (MAX_TEXT_CHARS + 1), None, None)
    assert info.value.message == (
        f"no known CUDA error in the first {MAX_TEXT_CHARS} characters of the text (the rest was not read)"
    )


BLOW_UPS = ["Found ", "xformers", "Found GPU0 ", "fbgemm_gpu", "kernel a", "torch.cuda.is_available() "]


@pytest.mark.parametrize("unit", BLOW_UPS)
def test_the_reported_blow_ups_finish_within_the_cap(unit: str) -> None:
    """120 KB of "Found " took 54 s and "xformers" * 20000 36 s; now each pattern does one bounded search."""
    text = unit * (MAX_TEXT_CHARS // len(unit) + 1)
    assert match_errors(text) == []


class _CountingStdin(io.StringIO):
    """Records how many characters were asked for and read."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.asked: list[int] = []

    def read(self, size: int | None = -1) -> str:
        self.asked.append(-1 if size is None else size)
        return super().read(size)


def test_cli_reads_one_char_past_the_cap_and_warns(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = _CountingStdin(NKI + "\n" + "y" * (4 * MAX_TEXT_CHARS))
    monkeypatch.setattr("sys.stdin", stdin)
    code = main(["explain-error", "-", "--cpu", "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert stdin.asked == [MAX_TEXT_CHARS + 1]
    assert stdin.tell() == MAX_TEXT_CHARS + 1
    payload = json.loads(out)
    assert [m["code"] for m in payload["matches"]] == ["no-kernel-image"]
    assert [w["code"] for w in payload["warnings"]] == ["input-truncated"]
    monkeypatch.setattr("sys.stdin", io.StringIO(NKI + "\n" + "y" * MAX_TEXT_CHARS))
    assert main(["explain-error", "-", "--cpu"]) == 0
    out, err = capsys.readouterr()
    assert err.startswith("warning: input-truncated: the text is longer than")
    assert out.startswith("no-kernel-image")


def test_short_logs_carry_no_warnings_key(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain-error", NKI, "--cpu", "--json"]) == 0
    assert "warnings" not in json.loads(capsys.readouterr().out)


# -- item 5: ASCII digits only -------------------------------------------------------------------


@pytest.mark.parametrize("digits", FOREIGN_DIGITS)
def test_foreign_digits_are_not_numbers(digits: str) -> None:
    for parse, text in (
        (parse_driver, f"{digits}.129.06"),
        (parse_driver, digits),
        (parse_cc, f"{digits[0]}.0"),
        (parse_cc, f"sm_{digits[:2]}"),
        (parse_arch, f"{digits[0]}.{digits[1]}"),
        (parse_arch_list, f"7.5;{digits[0]}.0"),
        (parse_cuda_version, f"1{digits[0]}.8"),
        (parse_python_version, f"3.1{digits[0]}"),
        (parse_python_version, f"3.11.{digits[0]}"),
    ):
        with pytest.raises(InvalidInput):
            parse(text)


@pytest.mark.parametrize("digits", FOREIGN_DIGITS)
def test_cli_refuses_foreign_digits(capsys: pytest.CaptureFixture[str], digits: str) -> None:
    assert main(["arch-list", "--gpu", "8.0", "--driver", f"{digits}.129.06"]) == 1
    assert capsys.readouterr().err.startswith("error: invalid-driver: ")
    assert main(["arch-list", "--gpu", f"{digits[0]}.0"]) == 1
    assert capsys.readouterr().err.startswith("error: unknown-gpu: ")
    assert main(["arch-list", "--gpu", "8.0", "--python-version", f"3.1{digits[0]}"]) == 1
    assert capsys.readouterr().err.startswith("error: invalid-input: ")


def test_detection_readings_take_ascii_digits_only() -> None:
    assert parse_cuda_visible_devices("0,\u0661", 2) == (0,)  # CUDA stops at the first invalid entry
    assert parse_cuda_visible_devices("9" * 5000, 2) == ()  # not int("9" * 5000): over Python's digit limit
    with pytest.raises(DetectionError):
        parse_nvidia_smi_csv("NVIDIA A100, 8.0, 535.104.05, \u0668\u0660 MiB")


@pytest.mark.parametrize("text", ["3.13t", "3.14t", " 3.15t "])
def test_a_free_threaded_python_is_named_as_such(text: str) -> None:
    """Found by this stop's hardware audit: --python-version 3.13t (uv's name for a free-threaded build) was
    refused as 'not a Python version'."""
    with pytest.raises(InvalidInput) as refused:
        parse_python_version(text)
    assert refused.value.text.key == "core.free-threaded"


def test_the_last_day_a_date_can_name_is_a_cutoff_not_a_crash() -> None:
    """Found by this stop's hostile-input hunt: --exclude-newer 9999-12-31 ended in an OverflowError, since the
    end of that day is the day after it."""
    from datetime import UTC, datetime

    from cudaresolve.core.versions import parse_cutoff

    assert parse_cutoff("9999-12-31") == datetime.max.replace(tzinfo=UTC)
    assert parse_cutoff("2025-06-01") == datetime(2025, 6, 2, tzinfo=UTC)


def test_a_lock_error_quoting_a_huge_value_is_one_short_line() -> None:
    """Found by this stop's hostile-input hunt: a 14 MB marker in a lock was quoted whole by packaging's error,
    with a caret line under it: a 28 MB error line."""
    from cudaresolve.lock.lockfile import _shown_error

    marker = "python_version == '3.11' or " * 500_000
    said = _shown_error(f"Expected end\n    {marker}\n    {' ' * 40}^ in 'packages[0].marker'")
    assert len(said) <= 300 and "\n" not in said and said.endswith("in 'packages[0].marker'")
    plain = "Missing required value in 'packages[0].name'"
    assert _shown_error(plain) == plain


def test_a_locked_wheel_named_by_path_is_refused_not_fetched_from_its_index() -> None:
    """Found by this stop's hostile-input hunt: a [[packages.wheels]] entry with a path and no URL was fetched
    by pip from the package's index instead: another copy than the one locked."""
    from cudaresolve.errors import InvalidLockfile
    from cudaresolve.lock.entries import package_from_dict

    entry = {"name": "local", "version": "1.0", "index": "https://pypi.org/simple",
             "wheels": [{"name": "local-1.0-py3-none-any.whl", "path": "wheels/local-1.0-py3-none-any.whl",
                         "hashes": {"sha256": "a" * 64}}]}  # fmt: skip
    with pytest.raises(InvalidLockfile) as refused:
        package_from_dict(entry, "packages[0]")
    assert refused.value.text.key == "lock.file-by-path"


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_stdout_that_cannot_encode_the_answer_gets_it_escaped(encoding: str) -> None:
    """Found by this stop's hostile-input hunt: with PYTHONIOENCODING=ascii (a non-UTF-8 console) --json ended in
    a traceback, and a Chinese answer in internal-error."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONIOENCODING": encoding}
    done = subprocess.run([sys.executable, "-m", "cudaresolve", "--json", "lock", "\u00e9t\u00e9\u6216"],
                          capture_output=True, text=True, env=env, encoding=encoding, check=False)  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert json.loads(done.stdout)["error"]["code"] == "invalid-input"
    words = subprocess.run([sys.executable, "-m", "cudaresolve", "--lang", "zh", "gpus"], capture_output=True,
                           env=env, check=False)  # fmt: skip
    assert words.returncode == 0 and b"Traceback" not in words.stderr


def test_a_cache_folder_whose_name_the_system_refuses_is_one_coded_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by this stop's hostile-input hunt: a --cache-dir part over NAME_MAX ended in internal-error."""
    from cudaresolve.cli import main

    assert main(["--cache-dir", str(tmp_path / ("a" * 300)), "gpus"]) == 1
    said = capsys.readouterr().err
    assert "cannot be used: File name too long" in said and "internal-error" not in said


def test_a_pyproject_past_its_bound_is_refused_unread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by this stop's hostile-input hunt: ./pyproject.toml was read whole, unbounded; a 1.7 GB one (sparse)
    ended in MemoryError."""
    from cudaresolve.lock import project

    monkeypatch.setattr(project, "MAX_PROJECT_BYTES", 1000)
    path = tmp_path / "pyproject.toml"
    with open(path, "wb") as f:
        f.truncate(5000)  # sparse: a size, no bytes written
    with pytest.raises(InvalidInput, match="larger than"):
        project.load_project(path, pytorch_root="https://download.pytorch.org/whl")


def test_a_fifo_or_device_where_an_entry_or_metadata_file_is_read_is_never_waited_on(tmp_path: Path) -> None:
    """Cache entries (install facts, probe answers, RECORDs) and an installed distribution's METADATA or RECORD that
    are a FIFO or /dev/zero: no entry (or a damaged distribution), never a hang or a MemoryError."""
    import os

    from cudaresolve.core.files import read_text_or_none, unsafe_member
    from cudaresolve.doctor.environment import read_environment
    from cudaresolve.install.installed import read_installed

    fifo = tmp_path / "entry.json"
    os.mkfifo(fifo)
    assert read_text_or_none(fifo, 1 << 20) is None and read_text_or_none("/dev/zero", 1 << 20) is None
    (tmp_path / "plain.json").write_text("{}")
    assert read_text_or_none(tmp_path / "plain.json", 1 << 20) == "{}"
    site = tmp_path / "site"
    (site / "evil-1.0.dist-info").mkdir(parents=True)
    os.mkfifo(site / "evil-1.0.dist-info" / "METADATA")
    (site / "zero-1.0.dist-info").mkdir()
    (site / "zero-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: zero\nVersion: 1.0\n")
    (site / "zero-1.0.dist-info" / "RECORD").symlink_to("/dev/zero")
    assert unsafe_member(site / "evil-1.0.dist-info", ("METADATA",), 1 << 20) == "METADATA is not a regular file"
    env = read_environment([site], frozenset({"torch"}))
    assert sorted(path.rsplit("/", 1)[-1] for path, _ in env.damaged) == ["evil-1.0.dist-info", "zero-1.0.dist-info"]
    with pytest.raises(InvalidInput, match="a damaged distribution"):
        read_installed(None, paths=[str(site)])
