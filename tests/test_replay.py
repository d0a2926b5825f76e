"""A repeated lock answered from its record (lock.replay, core.journal): only while every input is unchanged."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from local_index import CountingHandler, cpu_torch_index

import cudaresolve.lock.flow as flow
from cudaresolve.cli import main
from cudaresolve.core import journal
from cudaresolve.index.http_cache import NOT_FOUND_LIFETIME, CachedResponse
from cudaresolve.target.detect import NvmlUnavailable, Sources, detect_host

if TYPE_CHECKING:
    from collections.abc import Iterator

TARGET = ["--gpu", "H100", "--driver", "580.65.06", "--python-version", "3.11", "--platform", "linux_x86_64"]


@pytest.fixture
def solves(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the locks really solved (``lock.flow.lock`` calls); a replayed run adds none."""
    calls: list[int] = []
    real = flow.lock

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(flow, "lock", counted)
    return calls


def _records() -> list[Path]:
    return sorted((Path(os.environ["CUDARESOLVE_CACHE_DIR"]) / "answers-v1").glob("*.json"))


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def offline_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reqs.txt").write_text("torch\n")
    return ["lock", "-r", "reqs.txt", *TARGET, "--offline", "--format", "requirements", "-o", "out.txt", "--json"]


def test_a_repeat_is_answered_from_the_record_with_the_same_output(
    offline_lock: list[str], solves: list[int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    first = _run(offline_lock, capsys)
    assert first[0] == 0 and len(solves) == 1
    assert len(_records()) == 1
    written = (tmp_path / "out.txt").stat()
    second = _run(offline_lock, capsys)
    assert second == first and len(solves) == 1  # printed the same, solved nothing
    assert json.loads(second[1])["packages"][0]["name"] == "torch"
    after = (tmp_path / "out.txt").stat()
    assert (after.st_mtime_ns, after.st_ino) == (written.st_mtime_ns, written.st_ino)  # not rewritten


def test_an_edited_input_file_means_a_full_run(
    offline_lock: list[str], solves: list[int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _run(offline_lock, capsys)
    (tmp_path / "reqs.txt").write_text("torch\ntorchvision\n")
    code, out, _ = _run(offline_lock, capsys)
    assert code == 0 and len(solves) == 2
    assert {p["name"] for p in json.loads(out)["packages"]} >= {"torch", "torchvision"}
    _run(offline_lock, capsys)
    assert len(solves) == 2  # the new record holds


def test_a_lock_file_changed_since_is_written_again(
    offline_lock: list[str], solves: list[int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _run(offline_lock, capsys)
    original = (tmp_path / "out.txt").read_text()
    (tmp_path / "out.txt").write_text(original + "# edited\n")
    _run(offline_lock, capsys)
    assert len(solves) == 2 and (tmp_path / "out.txt").read_text() == original
    (tmp_path / "out.txt").unlink()
    _run(offline_lock, capsys)
    assert len(solves) == 3 and (tmp_path / "out.txt").read_text() == original


def test_a_new_file_where_the_lock_looked_means_a_full_run(
    offline_lock: list[str], solves: list[int], capsys: pytest.CaptureFixture[str], tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.delenv("UV_NO_CONFIG")  # uv's settings are read, so a uv.toml in the folder is looked for
    _run(offline_lock, capsys)
    _run(offline_lock, capsys)
    assert len(solves) == 1
    (tmp_path / "uv.toml").write_text('index-url = "https://mirror.example/simple"\n')  # absent before: probed
    _run(offline_lock, capsys)
    assert len(solves) == 2


def test_other_flags_or_environment_are_another_record(
    offline_lock: list[str], solves: list[int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _run(offline_lock, capsys)
    _run([*offline_lock, "-q"], capsys)
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.example/simple")
    _run(offline_lock, capsys)
    assert len(solves) == 3 and len(_records()) == 3


def test_no_cache_neither_reads_nor_writes_records(
    offline_lock: list[str], solves: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    _run(offline_lock, capsys)
    _run([*offline_lock, "--no-cache"], capsys)
    _run([*offline_lock, "--no-cache"], capsys)
    assert len(solves) == 3 and len(_records()) == 1


@pytest.mark.parametrize("damage", ["junk", "group-writable", "stale", "wrong-shape", "exit-2", "other-key", "folder"])
def test_a_damaged_planted_or_expired_record_is_ignored(
    offline_lock: list[str], solves: list[int], capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    first = _run(offline_lock, capsys)
    (record,) = _records()
    data = json.loads(record.read_text())
    if damage == "junk":
        record.write_bytes(b"\x00not json")
    elif damage == "group-writable":
        data["stdout"] = "planted\n"
        record.write_text(json.dumps(data))
        record.chmod(0o664)
    elif damage == "stale":
        data["fresh_until"] = time.time() - 1
        record.write_text(json.dumps(data))
    elif damage == "exit-2":  # a record only ever holds 0 or 1
        data["code"] = 2
        record.write_text(json.dumps(data))
    elif damage == "other-key":  # another command's record renamed to this one's key
        data["key"] = "0" * 64
        record.write_text(json.dumps(data))
    elif damage == "folder":  # a records folder others may write into: a record there proves nothing
        record.parent.chmod(0o777)
    else:
        data["read"] = "everything"
        record.write_text(json.dumps(data))
    assert _run(offline_lock, capsys) == first
    assert len(solves) == 2


def test_an_error_is_replayed_with_its_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, solves: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["lock", "torch", "torchaudio", "torch>=99", *TARGET, "--offline", "--format", "requirements"]
    first = _run(argv, capsys)
    assert first[0] == 1 and "torch" in first[2]
    assert _run(argv, capsys) == first and len(solves) == 1


def test_a_detected_gpu_makes_the_run_volatile() -> None:
    def no_nvml() -> Any:
        raise NvmlUnavailable("none")

    nothing = Sources(nvml=no_nvml, nvidia_smi=lambda args: None, proc_dir=Path("/nonexistent"))
    with journal.recording() as record:
        detect_host({}, sources=nothing)
    assert record.volatile == ["hardware detected"]


def test_the_journal_notes_reads_listings_and_probes_not_writes(tmp_path: Path) -> None:
    read, written, listed = tmp_path / "read.txt", tmp_path / "written.txt", tmp_path / "folder"
    read.write_text("x")
    listed.mkdir()
    with journal.recording() as record:
        read.read_text()
        written.write_text("y")
        os.listdir(listed)
        journal.probed(tmp_path / "absent.toml")
        journal.fresh_until(time.time() + 50)
        journal.fresh_until(time.time() + 500)
    read.read_text()  # after the block: not noted
    assert {str(read), str(listed), str(tmp_path / "absent.toml")} <= record.read.keys()
    assert str(written) not in record.read
    assert record.read[str(tmp_path / "absent.toml")] is None
    assert record.fresh_until < time.time() + 60
    inputs = dict(record.inputs() or [])
    assert str(Path(journal.__file__)) in inputs  # the code itself is an input
    assert inputs[str(read)] == journal.signature(str(read))


def test_a_file_changed_while_the_run_read_it_leaves_no_inputs_unless_the_run_put_it_there(tmp_path: Path) -> None:
    theirs, ours = tmp_path / "theirs.toml", tmp_path / "ours.json"
    theirs.write_text("a = 1\n")
    with journal.recording() as record:
        theirs.read_text()
        theirs.write_text("a = 2\n")  # another process edits it mid-run
    assert record.inputs() is None
    with journal.recording() as record:
        journal.probed(ours)
        (tmp_path / "tmp").write_text("{}")
        os.replace(tmp_path / "tmp", ours)  # the run's own atomic write (a cache entry)
    inputs = dict(record.inputs() or [])
    assert inputs[str(ours)] == journal.signature(str(ours)) is not None


# --- online: a record lives as long as the pages it used ----------------------------------------------


@pytest.fixture
def cpu_index(tmp_path: Path) -> Iterator[str]:
    with cpu_torch_index(tmp_path / "site") as base:
        yield base


@pytest.mark.parametrize(("max_age", "recorded"), [(600, True), (0, False)])
def test_an_online_record_lasts_as_long_as_its_pages(
    cpu_index: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, solves: list[int],
    capsys: pytest.CaptureFixture[str], max_age: int, recorded: bool,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    argv = ["lock", "torch", "--cpu", "--python-version", python, "--platform", "linux_x86_64",
            "--index-mirror", f"https://download.pytorch.org/whl={cpu_index}", "--format", "requirements"]  # fmt: skip
    CountingHandler.max_age = max_age
    before = time.time()
    first = _run(argv, capsys)
    assert first[0] == 0 and "--hash=sha256:" in (tmp_path / "requirements.txt").read_text()
    assert len(_records()) == int(recorded)
    if recorded:
        until = json.loads(_records()[0].read_text())["fresh_until"]
        assert before + max_age - 5 < until <= time.time() + max_age
    CountingHandler.seen = []
    assert _run(argv, capsys) == first
    assert len(solves) == (1 if recorded else 2)
    assert len(CountingHandler.seen) == (0 if recorded else 1)  # max-age=0: the full run revalidates the page


def test_a_bare_404_is_fresh_for_a_while_and_an_explicit_lifetime_wins() -> None:
    now = time.time()
    bare = CachedResponse(url="https://x.example/simple/a/", status=404, body="", fetched_at=now)
    assert bare.is_fresh(now + NOT_FOUND_LIFETIME - 1) and not bare.is_fresh(now + NOT_FOUND_LIFETIME + 1)
    assert bare.fresh_until() == pytest.approx(now + NOT_FOUND_LIFETIME)
    for control in ("max-age=0", "no-cache"):
        told = CachedResponse(url=bare.url, status=404, body="", fetched_at=now, cache_control=control)
        assert not told.is_fresh(now + 1)
    page = CachedResponse(url=bare.url, status=200, body="x", fetched_at=now)  # a bare 200: revalidated as before
    assert not page.is_fresh(now + 1)


def test_a_usage_error_is_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["lock", "torch", *TARGET, "--offline", "--format", "requirements", "--json", "-o", "-"]
    assert _run(argv, capsys)[0] == 2  # --json and the lock both on stdout: refused
    assert _records() == []


def test_new_files_beside_the_lock_keep_the_record_but_a_module_that_could_shadow_one_does_not(
    tmp_path: Path,
) -> None:
    import subprocess

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "CUDARESOLVE_CACHE_DIR": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "cudaresolve", "lock", "torch", *TARGET, "--offline", "--format", "requirements",
            "-o", "out.txt"]  # fmt: skip
    work = tmp_path / "project"
    work.mkdir()

    def run() -> tuple[int, int]:
        done = subprocess.run(argv, cwd=work, env=env, capture_output=True, timeout=120, check=False)
        (record,) = (tmp_path / "cache" / "answers-v1").glob("*.json")
        return done.returncode, record.stat().st_mtime_ns  # a full run writes the record anew; a replay leaves it

    first = run()
    assert first[0] == 0
    (work / "notes.txt").write_text("x")  # python -m imports from the working folder: only importable names count
    (work / "build-output").mkdir()
    assert run() == first
    (work / "rich.py").write_text("")  # shadows rich: the full run it forces fails, as it would with no record
    assert run()[0] != 0


def test_an_input_written_just_before_the_run_is_also_checked_by_content(
    offline_lock: list[str], solves: list[int], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    _run(offline_lock, capsys)  # reqs.txt was written a moment ago: recorded with its SHA-256 too
    (record,) = _records()
    data = json.loads(record.read_text())
    (entry,) = [e for e in data["read"] if e[0] == str(tmp_path / "reqs.txt")]
    assert len(entry) == 3
    (tmp_path / "reqs.txt").write_text("numpy\n")  # the same size: on coarse timestamps the same signature
    entry[1] = list(journal.signature(str(tmp_path / "reqs.txt")) or ())  # as such a file system would show it
    record.write_text(json.dumps(data))
    record.chmod(0o600)
    _run(offline_lock, capsys)
    assert len(solves) == 2  # the content told: a full run


def test_a_lock_written_over_its_own_requirement_file_is_not_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "reqs.txt").write_text("torch\n")
    argv = ["lock", "-r", "reqs.txt", *TARGET, "--offline", "--format", "requirements", "-o", "reqs.txt"]
    assert _run(argv, capsys)[0] == 0
    assert _records() == []  # it read what it then wrote: the next run reads the lock, so must run in full
    code, _, err = _run(argv, capsys)
    assert code == 1 and "reqs.txt" in err  # the full run reads its own lock as requirements, and says so


def test_output_appended_to_the_lock_file_is_never_replayed(tmp_path: Path) -> None:
    import subprocess

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root / "src"), "CUDARESOLVE_CACHE_DIR": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "cudaresolve", "lock", "torch", *TARGET, "--offline", "--format", "requirements",
            "-o", "out.txt"]  # fmt: skip
    subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, timeout=120, check=True)
    with (tmp_path / "out.txt").open("a") as lock_file:  # 2>> out.txt: a full run replaces the lock first
        done = subprocess.run(argv, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=lock_file,
                              timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0
    assert "wrote out.txt" not in (tmp_path / "out.txt").read_text()  # the summary went to the old file


def test_a_link_to_nothing_and_an_unreadable_path_are_not_absent(tmp_path: Path) -> None:
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert journal.signature(str(tmp_path / "absent")) is None
    assert journal.signature(str(tmp_path / "dangling")) == ("link", str(tmp_path / "nowhere"))
    assert journal.signature(str(tmp_path / "loop"))[0] == "error"  # type: ignore[index]


def test_only_the_newest_records_are_kept(
    offline_lock: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import cudaresolve.lock.replay as replay

    monkeypatch.setattr(replay, "MAX_RECORDS", 2)
    for quiet in ([], ["-q"], ["-qq"]):  # three commands, three records
        _run([*offline_lock, *quiet], capsys)
        time.sleep(0.01)
    cache = Path(os.environ["CUDARESOLVE_CACHE_DIR"])
    kept = [replay.record_path(cache, [*offline_lock, *q], os.environ).exists() for q in ([], ["-q"], ["-qq"])]
    assert kept == [False, True, True]  # the oldest went
