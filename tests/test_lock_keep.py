"""A lock that still answers the request is kept without solving (issue 23, item 1; uv's rule).

The lock carries a stamp of the inputs it answers; a repeat with the same inputs checks that stamp and that
every locked file is still on its index, and solves nothing. Anything else (an edit, other requirements, a
file gone or yanked from its page, ``-U``) solves again, keeping the pins that still fit.
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import threading
import time
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import pytest
from local_index import LocalIndex, serving

from cudaresolve.lock import flow
from cudaresolve.lock.keep import PLACEHOLDER, inputs_key, kept_lock, stamp
from cudaresolve.lock.previous import read_existing
from cudaresolve.lock.request import LockRequest
from cudaresolve.target.options import TargetOptions
from test_direct_e2e import run_cli

if TYPE_CHECKING:
    from pathlib import Path

TARGET = TargetOptions(cpu=True, python="3.11", platform="linux_x86_64")
FLAGS = ["--cpu", "--python-version", "3.11", "--platform", "linux_x86_64"]


@pytest.fixture
def index(tmp_path: Path) -> Any:
    index = LocalIndex(tmp_path / "index")
    for version in ("1.0", "1.1"):
        index.add("pypi", "numpyish", version)
    index.add("pypi", "helper", "3.0")
    index.add("pypi", "app", "1.0", requires=["helper"])
    with index.serve() as base:
        yield index, base


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working folder and cache for in-process locks."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(tmp_path / "cache"))
    return work


def _request(base: str, *requirements: str, **changes: Any) -> LockRequest:
    mirror = f"https://pypi.org/simple={base}/pypi/simple"
    return LockRequest(requirements=requirements, target=TARGET, mirrors=(mirror,), environ={}, **changes)


def _solves(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the solves the lock flow runs from now on."""
    calls: list[int] = []
    real = flow.resolve_inputs

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(flow, "resolve_inputs", counted)
    return calls


def _republish(index: LocalIndex) -> None:
    """Write the pages again, dated later than any copy a cache holds (a revalidation sees the change)."""
    index.write()
    later = time.time() + 30
    for page in (index.root / "pypi" / "simple").glob("*/index.html"):
        os.utime(page, (later, later))


@pytest.mark.parametrize(("fmt", "name"), [("pylock", "pylock.toml"), ("requirements", "requirements.txt")])
def test_the_same_request_again_keeps_the_lock_and_solves_nothing(
    index: Any, project: Path, monkeypatch: pytest.MonkeyPatch, fmt: Any, name: str
) -> None:
    _, base = index
    first = flow.lock(_request(base, "app", "numpyish"), output=name, fmt=fmt)
    text = (project / name).read_text()
    assert not first.unchanged and text.count('inputs = "sha256:') == 1
    before = os.stat(project / name)
    solves = _solves(monkeypatch)
    again = flow.lock(_request(base, "app", "numpyish"), output=name, fmt=fmt)
    assert solves == [] and again.unchanged
    assert again.to_dict() == {**first.to_dict(), "unchanged": True}  # the same answer, every field
    after = os.stat(project / name)
    assert (project / name).read_text() == text and after.st_mtime_ns == before.st_mtime_ns


def test_an_edited_lock_is_solved_again_and_written_back(
    index: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, base = index
    flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
    path = project / "pylock.toml"
    good = path.read_text()
    path.write_text(good.replace('version = "1.1"', 'version = "1.0"', 1))  # a pin moved by hand
    solves = _solves(monkeypatch)
    result = flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
    assert solves == [1] and result.changes == ()  # the new lock prefers the edited pin: it still fits
    assert 'version = "1.0"' in path.read_text() and path.read_text().count('inputs = "sha256:') == 1
    path.write_text(good + "\n# a comment\n")  # any byte: the stamp covers the whole text
    assert kept_lock(path.read_text(), "pylock", _key(base, "numpyish"), source=str(path)) is None


def test_other_requirements_solve_and_then_are_kept(index: Any, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, base = index
    flow.lock(_request(base, "numpyish==1.0", "app"), output="pylock.toml", fmt="pylock")
    stamped = (project / "pylock.toml").read_text()
    solves = _solves(monkeypatch)
    relaxed = flow.lock(_request(base, "numpyish", "app"), output="pylock.toml", fmt="pylock")
    assert solves == [1] and relaxed.unchanged  # the same pins: only the stamp is brought up to date
    assert (project / "pylock.toml").read_text() != stamped
    assert {p.name: p.version for p in relaxed.solution.packages}["numpyish"] == "1.0"
    flow.lock(_request(base, "numpyish", "app"), output="pylock.toml", fmt="pylock")
    assert solves == [1]  # the third run is kept
    flow.lock(_request(base, "numpyish", "app", upgrade=True), output="pylock.toml", fmt="pylock")
    assert solves == [1, 1]  # -U always solves, and moves the pin
    assert json.loads(json.dumps(flow.lock(_request(base, "numpyish", "app"), output="pylock.toml",
                                           fmt="pylock").to_dict()))["unchanged"] is True  # fmt: skip


def test_another_target_or_mirror_is_another_request(index: Any, project: Path) -> None:
    _, base = index
    request = _request(base, "numpyish")
    inputs = flow.prepare(request)
    key = _key(base, "numpyish")
    assert key == inputs_key(inputs, fmt="pylock", editables=())
    other = flow.prepare(replace(request, target=replace(TARGET, python="3.12")))
    assert inputs_key(other, fmt="pylock", editables=()) != key
    assert inputs_key(inputs, fmt="requirements", editables=()) != key
    assert inputs_key(inputs, fmt="pylock", editables=("numpyish",)) != key
    mirrored = flow.prepare(replace(request, mirrors=(f"https://pypi.org/simple={base}/other/simple",)))
    assert inputs_key(mirrored, fmt="pylock", editables=()) != key


def test_a_stamp_is_checked_not_trusted(index: Any, project: Path) -> None:
    _, base = index
    flow.lock(_request(base, "numpyish"), output="requirements.txt", fmt="requirements")
    path = project / "requirements.txt"
    text = path.read_text()
    key = _key(base, "numpyish", fmt="requirements")
    assert kept_lock(path.read_text(), "requirements", key, source=str(path)) is not None
    assert kept_lock(path.read_text(), "requirements", "0" * 64, source=str(path)) is None  # made for another request
    line = next(line for line in text.splitlines() if "inputs =" in line)
    path.write_text(text + line + "\n")  # two stamps: neither is taken
    assert kept_lock(path.read_text(), "requirements", key, source=str(path)) is None
    path.write_text(text.replace(line, line.replace("sha256:", "sha256:" + "0" * 64)[: len(line)]))
    assert kept_lock(path.read_text(), "requirements", key, source=str(path)) is None
    assert stamp(f"a {PLACEHOLDER} b {PLACEHOLDER}", key) is None  # the value it covers must be there once
    os.mkfifo(project / "fifo.txt")
    assert read_existing(str(project / "fifo.txt")) is None  # never blocks on a FIFO


def test_a_lock_with_a_direct_url_is_never_kept(index: Any, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served, base = index
    wheel = served.add("pypi", "direct", "1.0")
    served.write()
    url = (served.root / "files" / wheel.filename).as_uri()
    flow.lock(_request(base, f"direct @ {url}"), output="pylock.toml", fmt="pylock")
    assert "inputs =" not in (project / "pylock.toml").read_text()  # its file can change under the same URL
    solves = _solves(monkeypatch)
    assert flow.lock(_request(base, f"direct @ {url}"), output="pylock.toml", fmt="pylock").unchanged
    assert solves == [1]


def test_the_command_line_says_the_lock_is_unchanged(index: Any, tmp_path: Path) -> None:
    _, base = index
    mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
    args = ["lock", "app", *FLAGS, mirror, "--format", "requirements", "-o", "req.txt"]
    assert run_cli(args, tmp_path, tmp_path / "cache").returncode == 0
    again = run_cli(args, tmp_path, tmp_path / "cache")
    assert again.returncode == 0, again.stderr
    assert "req.txt is unchanged: the lock there already holds these 2 packages" in again.stdout + again.stderr


def _key(base: str, *requirements: str, fmt: str = "pylock") -> str:
    key = inputs_key(flow.prepare(_request(base, *requirements)), fmt=fmt, editables=())
    assert key is not None
    return key


def test_a_kept_lock_with_warnings_is_solved_again_in_another_language(
    index: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cudaresolve.text.findings import warning

    _, base = index
    real = flow.resolve_inputs
    solves: list[str] = []

    def warned(*args: Any, **kwargs: Any) -> Any:  # a solve whose answer carries a warning, as a GPU stack may
        solves.append("solve")
        solution = real(*args, **kwargs)
        return replace(solution, warnings=(warning("driver-unknown", "warn.driver-unknown"),))

    monkeypatch.setattr(flow, "resolve_inputs", warned)
    first = flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
    assert "driver-unknown" in (project / "pylock.toml").read_text()
    kept = flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock", lang="en")
    assert solves == ["solve"] and kept.unchanged
    assert [w.message for w in kept.solution.warnings] == [w.message for w in first.solution.warnings]
    chinese = flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock", lang="zh")
    assert solves == ["solve", "solve"] and chinese.unchanged  # said again from the catalogue, not the file
    assert chinese.solution.warnings[0].text.key == "warn.driver-unknown"


@pytest.mark.parametrize(("fmt", "name"), [("pylock", "pylock.toml"), ("requirements", "requirements.txt")])
@pytest.mark.parametrize("failed", [True, False])
def test_a_lock_made_while_an_index_failed_keeps_its_pins_but_the_gpu_stacks(
    index: Any, project: Path, monkeypatch: pytest.MonkeyPatch, fmt: Any, name: str, failed: bool
) -> None:
    """The GPU stack's set is what the other indexes could give: kept as preferences, the repeat would hold on to it
    and never take the failed index's builds again (found on real PyPI: the PyTorch index down once, never asked
    again), so its pins go (``test_stable_lock``); the other packages' pins stay, so that a re-lock on a network
    that never reaches the PyTorch index does not move every pin."""
    from cudaresolve.text.findings import warning

    _, base = index
    real = flow.resolve_inputs
    asked: list[dict[str, str]] = []

    def answered(*args: Any, **kwargs: Any) -> Any:
        asked.append(dict(kwargs["preferences"]))
        solution = real(*args, **kwargs)
        if not failed:
            return solution
        notice = warning(
            "index-unreachable-pypi-set", "lock.pypi-set-instead", best="torch 2.0.0+cu118 (cu118)",
            index="https://download.pytorch.org/whl/cu118", reason="ConnectError", chosen="torch 2.0.0 (cu121)",
            default="https://pypi.org/simple",
        )  # fmt: skip
        return replace(solution, warnings=(notice,))

    monkeypatch.setattr(flow, "resolve_inputs", answered)
    flow.lock(_request(base, "app", "numpyish"), output=name, fmt=fmt)
    assert ("index-unreachable-pypi-set" in (project / name).read_text()) is failed
    flow.lock(_request(base, "app", "numpyish", upgrade_packages=("helper",)), output=name, fmt=fmt)
    assert asked[0] == {}
    assert asked[1] == {"app": "1.0", "numpyish": "1.1"}


class _Switchable(http.server.SimpleHTTPRequestHandler):
    """A local index that can be taken down (503 to everything) and brought back at the same address."""

    down = False

    def send_head(self) -> Any:
        if type(self).down:
            self.send_error(503)
            return None
        return super().send_head()

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "max-age=0" if "/simple/" in self.path else "max-age=31536000, immutable")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_lock_made_while_its_index_failed_is_never_kept(tmp_path: Path, project: Path) -> None:
    served = LocalIndex(tmp_path / "switchable")
    served.add("pypi", "numpyish", "1.0")
    served.write()
    handler = type("Handler", (_Switchable,), {})
    with serving(partial(handler, directory=str(served.root))) as base:
        flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
        handler.down = True  # the index fails: the lock is made from the stale copy, with a warning
        stale = flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
        assert [w.code for w in stale.solution.warnings] == ["index-stale-cache"]
        assert "inputs =" not in (project / "pylock.toml").read_text()  # such an answer gets no stamp
        handler.down = False
        back = flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
        assert back.solution.warnings == () and "index-stale-cache" not in (project / "pylock.toml").read_text()
        assert (project / "pylock.toml").read_text().count('inputs = "sha256:') == 1


def _relink(index: LocalIndex, wheel: str, folder: str) -> None:
    """The page of ``numpyish`` linking ``wheel`` from ``/folder/`` (the same file, the same hash)."""
    (index.root / folder).mkdir(exist_ok=True)
    for name in (wheel, f"{wheel}.metadata"):
        shutil.copy(index.root / "files" / name, index.root / folder / name)
    page = index.root / "pypi" / "simple" / "numpyish" / "index.html"
    page.write_text(page.read_text().replace(f'"/files/{wheel}', f'"/{folder}/{wheel}'))
    later = time.time() + 30
    os.utime(page, (later, later))


@pytest.mark.parametrize("change", ["yanked", "removed", "url", "requires-python"])
def test_a_locked_file_gone_or_listed_otherwise_is_solved_again(
    index: Any, project: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    served, base = index
    flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
    entries = served.entries["pypi"]["numpyish"]
    newest = entries.pop()
    if change == "removed":
        (served.root / "files" / newest.wheel.filename).unlink()
    elif change == "url":  # the same file (the same hash) now linked from another folder
        entries.append(newest)
        _relink(served, newest.wheel.filename, "files2")
    else:  # yanked, or the index now says it needs a later Python than the target's
        entries.append(replace(newest, yanked="broken") if change == "yanked" else
                       replace(newest, requires_python=">=3.12"))  # fmt: skip
    if change != "url":
        _republish(served)
    solves = _solves(monkeypatch)
    result = flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
    assert solves == [1]
    if change == "url":
        assert result.unchanged is False and "/files2/" in (project / "pylock.toml").read_text()
        assert "/files2/" in (result.solution.packages[0].url or "")
    else:
        assert [c.to_dict() for c in result.changes] == [{"name": "numpyish", "from": "1.1", "to": "1.0"}]


def test_a_lock_moved_to_another_folder_or_machine_keeps_its_stamp(
    index: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, base = index
    flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
    elsewhere = project.parent / "clone"
    elsewhere.mkdir()
    shutil.copy(project / "pylock.toml", elsewhere / "pylock.toml")
    monkeypatch.chdir(elsewhere)
    solves = _solves(monkeypatch)
    assert flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock").unchanged and solves == []
    assert (elsewhere / "pylock.toml").read_text() == (project / "pylock.toml").read_text()


def test_a_lock_without_a_stamp_and_the_same_pins_is_unchanged_and_gains_one(index: Any, project: Path) -> None:
    _, base = index
    flow.lock(_request(base, "numpyish"), output="requirements.txt", fmt="requirements")
    path = project / "requirements.txt"
    stamped = path.read_text()
    path.write_text("".join(line for line in stamped.splitlines(keepends=True) if "inputs =" not in line))
    again = flow.lock(_request(base, "numpyish"), output="requirements.txt", fmt="requirements")
    assert again.unchanged and path.read_text() == stamped  # as an older cudaresolve wrote it


def test_a_lock_of_an_sdist_is_kept(index: Any, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served, base = index
    served.add_sdist("pypi", "sdonly", "1.0")
    served.write()
    flow.lock(_request(base, "sdonly"), output="pylock.toml", fmt="pylock")
    solves = _solves(monkeypatch)
    assert flow.lock(_request(base, "sdonly"), output="pylock.toml", fmt="pylock").unchanged and solves == []


def test_the_index_a_kept_lock_names_is_the_configured_one_under_nested_mirrors() -> None:
    from cudaresolve.lock.keep import _configured

    base = "http://127.0.0.1:1/x"
    nested = {"https://pypi.org/simple": base, "https://download.pytorch.org/whl": f"{base}/whl"}
    for mirrors in (nested, dict(reversed(list(nested.items())))):
        assert _configured(f"{base}/whl/cpu", mirrors, {}) == "https://download.pytorch.org/whl/cpu"
        assert _configured(base, mirrors, {}) == "https://pypi.org/simple"
    extra = f"{base}/extra"  # an extra index that lies under a mirror's folder is itself
    assert _configured(extra, nested, {extra: extra}) == extra
    private = "http://u:p@127.0.0.1:1/private"  # a lock names it without its credentials; they are asked with
    assert _configured("http://127.0.0.1:1/private", nested, {"http://127.0.0.1:1/private": private}) == private


def test_a_fifo_at_the_default_output_path_is_refused_not_waited_on(project: Path) -> None:
    from cudaresolve.errors import InvalidInput
    from cudaresolve.lock.output import check_default_free

    os.mkfifo(project / "pylock.toml")
    outcome: list[object] = []
    worker = threading.Thread(target=lambda: outcome.append(_raised(check_default_free, "pylock.toml")), daemon=True)
    worker.start()
    worker.join(10)
    assert outcome and isinstance(outcome[0], InvalidInput)


def _raised(function: Any, *args: Any) -> object:
    try:
        function(*args)
    except Exception as e:
        return e
    return None


def test_a_wheel_published_since_for_a_locked_sdist_is_taken(
    index: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served, base = index
    served.add_sdist("pypi", "late", "1.0")
    served.write()
    flow.lock(_request(base, "late"), output="pylock.toml", fmt="pylock")
    assert "late-1.0.tar.gz" in (project / "pylock.toml").read_text()
    served.add("pypi", "late", "1.0")  # the project's CI uploads the wheel hours after the sdist
    _republish(served)
    solves = _solves(monkeypatch)
    result = flow.lock(_request(base, "late"), output="pylock.toml", fmt="pylock")
    assert solves == [1] and not result.unchanged
    assert "late-1.0-py3-none-any.whl" in (project / "pylock.toml").read_text()


def test_a_field_the_index_lists_since_is_written_by_a_new_solve(
    index: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served, base = index
    flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
    assert 'requires-python = ">=3.8"' not in (project / "pylock.toml").read_text()
    entries = served.entries["pypi"]["numpyish"]
    entries[-1] = replace(entries[-1], requires_python=">=3.8")  # still for the target's 3.11
    _republish(served)
    solves = _solves(monkeypatch)
    flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
    assert solves == [1] and 'requires-python = ">=3.8"' in (project / "pylock.toml").read_text()


def test_a_project_whose_files_keep_a_dot_in_their_name_is_kept(
    index: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served, base = index
    wheel = served.add("pypi", "dotted.pkg", "1.0")
    served.write()
    flow.lock(_request(base, "dotted.pkg"), output="pylock.toml", fmt="pylock")
    assert wheel.filename.startswith("dotted") and wheel.filename in (project / "pylock.toml").read_text()
    solves = _solves(monkeypatch)
    assert flow.lock(_request(base, "dotted.pkg"), output="pylock.toml", fmt="pylock").unchanged and solves == []


def test_an_answer_made_while_something_failed_gets_no_stamp(
    index: Any, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, base = index
    real = flow.resolve_inputs

    def passed_over(*args: Any, **kwargs: Any) -> Any:  # as a release whose sdist build timed out once
        return replace(real(*args, **kwargs), failed=("sdist-unusable: xdyn 1.0",))

    monkeypatch.setattr(flow, "resolve_inputs", passed_over)
    flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
    assert "inputs =" not in (project / "pylock.toml").read_text()


def _fresh_index(tmp_path: Path, max_age: int) -> Any:
    """The ``index`` fixture's projects, served with pages fresh for ``max_age`` seconds (as PyPI: 600)."""
    served = LocalIndex(tmp_path / "fresh-index")
    for version in ("1.0", "1.1"):
        served.add("pypi", "numpyish", version)
    served.add("pypi", "helper", "3.0")
    served.add("pypi", "app", "1.0", requires=["helper"])
    return served, served.serve(max_age=max_age)


def _kept_once(base: str, cache: Path, *requirements: str) -> tuple[Any, Path]:
    """The first lock of ``requirements``, once a repeat has kept it, and the one verdict that repeat kept."""
    first = flow.lock(_request(base, *requirements), output="pylock.toml", fmt="pylock")
    assert flow.lock(_request(base, *requirements), output="pylock.toml", fmt="pylock").unchanged
    (memo,) = (cache / "kept-v2").glob("*.json")  # the verdict, kept with the keys of the pages it was checked on
    return first, memo


def _no_page_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on, reading a page's files fails the test: the check must not need them."""
    import cudaresolve.index.listings as listings

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the lock's pages were read again")

    monkeypatch.setattr(listings, "fetch_listings", refuse)


def test_a_verdict_on_fresh_pages_is_read_back_not_worked_out_again(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cudaresolve.index.listings as listings

    served, serving_ = _fresh_index(tmp_path, 600)
    with serving_ as base:
        first, memo = _kept_once(base, tmp_path / "cache", "app", "numpyish")
        asked = sum(served.requests.values())
        fetch_listings = listings.fetch_listings
        _no_page_read(monkeypatch)
        solves = _solves(monkeypatch)
        again = flow.lock(_request(base, "app", "numpyish"), output="pylock.toml", fmt="pylock")
        assert solves == [] and again.unchanged and sum(served.requests.values()) == asked  # nothing asked
        assert again.to_dict() == {**first.to_dict(), "unchanged": True}
        memo.write_text(memo.read_text().replace("numpyish", "numpyisH"))  # damaged: never trusted
        monkeypatch.setattr(listings, "fetch_listings", fetch_listings)  # the pages are read again, and still hold
        assert flow.lock(_request(base, "app", "numpyish"), output="pylock.toml", fmt="pylock").to_dict() == {
            **first.to_dict(), "unchanged": True}  # fmt: skip


def test_while_its_pages_entries_are_the_files_checked_a_verdict_reads_none_of_them(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cudaresolve.index.http_cache import HttpCache

    _, serving_ = _fresh_index(tmp_path, 600)
    with serving_ as base:
        first, memo = _kept_once(base, tmp_path / "cache", "app", "numpyish")
        data = json.loads(memo.read_text().partition("\n")[2])
        assert len(data["files"]) == len(data["pages"]) == 3 and data["until"] > time.time() + 500
        heads: list[str] = []
        real_get = HttpCache.get

        def counted(self: HttpCache, url: str, **kwargs: Any) -> Any:
            heads.append(url)
            return real_get(self, url, **kwargs)

        monkeypatch.setattr(HttpCache, "get", counted)
        _no_page_read(monkeypatch)
        solves = _solves(monkeypatch)
        kept = flow.lock(_request(base, "app", "numpyish"), output="pylock.toml", fmt="pylock")
        assert (kept.to_dict(), solves, heads) == ({**first.to_dict(), "unchanged": True}, [], [])  # nothing read
        entry = HttpCache(tmp_path / "cache").path_for(f"{base}/pypi/simple/numpyish/")
        entry.write_bytes(entry.read_bytes())  # the same head and body, in another file
        kept = flow.lock(_request(base, "app", "numpyish"), output="pylock.toml", fmt="pylock")
        assert kept.unchanged and solves == [] and len(heads) == 3  # each head read once: the keys held


def test_a_page_that_changed_since_the_verdict_is_checked_again(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served, serving_ = _fresh_index(tmp_path, 2)
    with serving_ as base:
        flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
        assert flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock").unchanged  # a verdict
        entries = served.entries["pypi"]["numpyish"]
        entries.append(replace(entries.pop(), yanked="broken"))
        _republish(served)
        time.sleep(2.1)  # stale; another lock on the same cache reads the page anew: fresh again, another body
        flow.lock(_request(base, "numpyish==1.0"), output="pylock.other.toml", fmt="pylock")
        solves = _solves(monkeypatch)
        result = flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
        assert solves == [1] and [c.to_dict() for c in result.changes] == [
            {"name": "numpyish", "from": "1.1", "to": "1.0"}]  # fmt: skip


def test_no_verdict_is_kept_for_a_lock_from_a_private_index(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    served = LocalIndex(tmp_path / "private")
    served.add("pypi", "numpyish", "1.0")
    with served.serve(auth="user:secret", max_age=600) as base:
        request = _request(base.replace("http://", "http://user:secret@"), "numpyish")
        flow.lock(request, output="pylock.toml", fmt="pylock")
        assert flow.lock(request, output="pylock.toml", fmt="pylock").unchanged
        assert flow.lock(request, output="pylock.toml", fmt="pylock").unchanged
    assert not (tmp_path / "cache" / "kept-v2").exists()  # its URLs carry credentials: checked every time
    assert "secret" not in "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))


def test_a_verdict_names_the_pages_it_was_reached_on(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another run sharing the cache may store a newer page while this one checks: the verdict is kept with the
    keys of the pages this run read, so the newer page (the locked file yanked there) is checked, not trusted."""
    import cudaresolve.index.listings as listings
    from cudaresolve.index.http_cache import HttpCache

    served, serving_ = _fresh_index(tmp_path, 2)
    with serving_ as base:
        flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
        time.sleep(2.1)  # stale: the repeat checks the lock on the pages it reads anew
        real = listings.fetch_listings

        def and_meanwhile_another_run(client: Any, wanted: Any, policy: Any, **kwargs: Any) -> Any:
            read = real(client, wanted, policy, **kwargs)
            entries = served.entries["pypi"]["numpyish"]
            entries.append(replace(entries.pop(), yanked="broken"))
            _republish(served)
            HttpCache(tmp_path / "cache").path_for(f"{base}/pypi/simple/numpyish/").unlink()
            real(client, wanted, replace(policy, deadline=None))  # stores the page as it is now
            return read

        monkeypatch.setattr(listings, "fetch_listings", and_meanwhile_another_run)
        assert flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock").unchanged
        monkeypatch.setattr(listings, "fetch_listings", real)
        solves = _solves(monkeypatch)
        result = flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
        assert solves == [1] and [c.to_dict() for c in result.changes] == [
            {"name": "numpyish", "from": "1.1", "to": "1.0"}]  # fmt: skip


@pytest.mark.parametrize("planted", ["other-version", "wrong-type", "no-rows"])
def test_a_verdict_that_is_not_of_the_lock_files_is_not_taken(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch, planted: str
) -> None:
    import hashlib

    _, serving_ = _fresh_index(tmp_path, 600)
    with serving_ as base:
        first, memo = _kept_once(base, tmp_path / "cache", "numpyish")
        data = json.loads(memo.read_text().partition("\n")[2])
        if planted == "other-version":
            data["packages"][0][1] = "1.0"
        elif planted == "wrong-type":
            data["packages"][0][0] = 7
        else:
            data["packages"] = []
        payload = json.dumps(data)  # a well-formed file: its digest matches, its content does not fit the lock
        memo.write_text(f"{hashlib.sha256(payload.encode()).hexdigest()}\n{payload}")
        again = flow.lock(_request(base, "numpyish"), output="pylock.toml", fmt="pylock")
        assert again.to_dict() == {**first.to_dict(), "unchanged": True}  # checked whole, as without a verdict
