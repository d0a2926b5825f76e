"""A warm ``install --from`` loads no database: the few facts it needs are kept in the user cache
(``install.facts``), and the doctor pass (which needs the database) runs only when the environment holds
something it checks (``install.install.doctor_has_work``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from cudaresolve.cli import main
from cudaresolve.db import database
from cudaresolve.install.facts import FACTS, InstallFacts, facts_of, install_facts
from cudaresolve.install.install import doctor_has_work
from cudaresolve.lock.lockfile import write_lock
from cudaresolve.resolve.model import LockedPackage
from test_install_exactly_the_lock import (  # noqa: F401 (fixtures)
    Served,
    clean_pip,
    pip_list,
    pristine,
    served,
    venv,
)

if TYPE_CHECKING:
    from cudaresolve.db.database import CompatDB

MINI = Path(__file__).parent / "fixtures" / "compat-mini.toml"


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """Every later ``load_compat`` call, recorded (and still made)."""
    calls: list[str | None] = []
    real = database.load_compat

    def load(path: str | None = None, **kwargs: object) -> CompatDB:
        calls.append(path)
        return real(path, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(database, "load_compat", load)
    return calls


def test_the_facts_are_the_databases_and_kept_so_the_next_run_loads_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counting(monkeypatch)
    first = install_facts(cache=tmp_path)
    assert calls == [None]
    assert first == facts_of(database.load_compat())
    assert "torch" in first.package_kinds and first.default_index.startswith("https://")
    calls.clear()
    assert install_facts(cache=tmp_path) == first
    assert calls == []  # read from the kept entry
    (entry,) = (tmp_path / FACTS).glob("*.json")
    assert entry.stat().st_mode & 0o077 == 0  # private, as every cache entry
    entry.write_text("{not json")  # a damaged entry: the database is loaded and the entry written anew
    assert install_facts(cache=tmp_path) == first
    assert calls == [None]
    assert json.loads(entry.read_text())["default_index"] == first.default_index
    entry.write_text(json.dumps({"default_index": 1, "pytorch_index_root": "x", "package_kinds": []}))
    assert install_facts(cache=tmp_path) == first  # not this module's shape: loaded again


def test_a_compat_file_is_always_read_and_never_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _counting(monkeypatch)
    mini = install_facts(str(MINI), cache=tmp_path)
    assert calls == [str(MINI)]
    assert mini == facts_of(database.load_compat(str(MINI)))
    assert not (tmp_path / FACTS).exists()


def _package(name: str) -> LockedPackage:
    return LockedPackage(name=name, version="1.0", index="https://example.invalid/simple")


@pytest.mark.parametrize(
    ("locked", "others", "work"),
    [
        (["numpy", "demo"], [], False),
        (["numpy", "Torch"], [], True),  # a package of one of the database's tables, by its normal name
        (["numpy"], ["nvidia-cublas-cu12"], True),  # a CUDA package left installed beside the lock
        (["nvidia_cudnn_cu12"], [], True),
        (["numpy"], ["einops"], False),
    ],
)
def test_the_doctor_pass_has_work_only_for_what_it_checks(locked: list[str], others: list[str], work: bool) -> None:
    facts = InstallFacts(default_index="https://pypi.org/simple", pytorch_index_root="https://x/whl",
                         package_kinds=("torch", "xformers"))
    assert doctor_has_work([_package(n) for n in locked], others, facts) is work


@pytest.mark.skipif(sys.platform == "win32", reason="uses the POSIX venv layout (bin/python)")
def test_a_lock_without_gpu_packages_installs_without_loading_the_database(
    served: Served, venv: Path, tmp_path: Path, clean_pip: None, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    install_facts()  # as a first run leaves the user cache
    calls = _counting(monkeypatch)
    write_lock(tmp_path / "pylock.toml", served.lock("late"))
    code = main(["install", "--from", str(tmp_path / "pylock.toml"), "--python", str(venv), "--cpu", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0, data
    assert data["installed"] == [{"name": "late", "reason": "missing"}]
    assert data["doctor"] is None  # nothing it checks is installed
    assert calls == []
    assert pip_list(venv) == {"late": "1.0"}
