"""The cache of the built shipped database (db/cache.py): in the cache dir only, bounded, old entries
removed, and a pickle loaded only when this user alone could have written it."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from cudaresolve.core.files import CACHE_MARK, make_cache_dir, seal, unseal
from cudaresolve.db import cache
from cudaresolve.db.database import CompatDB, load_compat, shipped_path

CODE = "c0de"


def _build_counting(source: Path, calls: list[str]) -> dict[str, str]:
    text = source.read_text()
    calls.append(text)
    return {"text": text}


def _cached(source: Path, folder: Path, calls: list[str], code: str = CODE) -> dict[str, str]:
    return cache.cached_build(source, folder, lambda: _build_counting(source, calls), expect=dict, code=code)


def test_entry_is_written_once_then_read(tmp_path: Path) -> None:
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    calls: list[str] = []
    first = _cached(source, tmp_path / "c", calls)
    second = _cached(source, tmp_path / "c", calls)
    assert first == second == {"text": "a = 1\n"}
    assert calls == ["a = 1\n"]  # the second read came from the entry
    made = sorted(p.name for p in (tmp_path / "c" / cache.SUBDIR).iterdir())
    assert made == sorted([cache.entry_name(source, CODE), CACHE_MARK])


def test_an_edited_file_or_other_code_is_built_anew(tmp_path: Path) -> None:
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    calls: list[str] = []
    _cached(source, tmp_path, calls)
    source.write_text("a = 22\n")
    assert _cached(source, tmp_path, calls) == {"text": "a = 22\n"}
    assert _cached(source, tmp_path, calls, code="other") == {"text": "a = 22\n"}
    assert calls == ["a = 1\n", "a = 22\n", "a = 22\n"]


def test_the_code_key_follows_the_modules(tmp_path: Path) -> None:
    (tmp_path / "rows.py").write_text("x = 1\n")
    before = cache.code_key([tmp_path])
    assert cache.code_key([tmp_path]) == before
    (tmp_path / "rows.py").write_text("x = 22\n")  # another size
    assert cache.code_key([tmp_path]) != before


def test_the_folder_keeps_only_the_newest_entries(tmp_path: Path) -> None:
    folder = tmp_path / cache.SUBDIR
    make_cache_dir(folder)
    for age in range(6):  # six stale entries, the oldest first
        stale = folder / _stale(age)
        stale.write_bytes(b"")
        os.utime(stale, ns=(1_000_000_000 * age, 1_000_000_000 * age))
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    _cached(source, tmp_path, [])
    kept = sorted(p.name for p in folder.iterdir() if p.name != CACHE_MARK)
    assert len(kept) == cache.KEEP
    assert kept == sorted([cache.entry_name(source, CODE), _stale(5), _stale(4)])


def _stale(age: int) -> str:
    """A name ``entry_name`` could have given, for another file (``age`` is its size)."""
    return f"0badcafe-{age}-{age}000-c0de-v{cache.FORMAT}.pickle"


@pytest.mark.parametrize(
    "layout",
    ["existing-folder", "link-to-user-folder", "user-names-in-marked-folder"],
)
def test_pruning_never_removes_the_users_files(tmp_path: Path, layout: str) -> None:
    """Only names the tool gives, in a folder it made, not through a link: ``--cache-dir .`` over a folder of
    the user's, a cache subfolder that is a link to one, and a user's own files beside the entries all stay."""
    user = tmp_path / "mine"
    user.mkdir(mode=0o755)
    names = [_stale(age) for age in range(5)] + ["notes.json", "model.pickle"]
    folder = tmp_path / "cache" / cache.SUBDIR
    if layout == "existing-folder":
        user = folder
        user.mkdir(parents=True, mode=0o755)
    elif layout == "link-to-user-folder":
        folder.parent.mkdir()
        folder.symlink_to(user)
        (user / CACHE_MARK).write_text("planted mark: a link is still not followed\n")
    else:
        make_cache_dir(folder)
        user = folder
        names = ["notes.json", "model.pickle", "0badcafe.pickle", f"{_stale(1)}.bak"]
    for name in names:
        (user / name).write_bytes(b"user data")
    mode = user.stat().st_mode
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    for _ in range(2):
        source.write_text(source.read_text() + "b = 2\n")  # a new entry each time: each write prunes
        _cached(source, tmp_path / "cache", [])
    assert all((user / name).read_bytes() == b"user data" for name in names)
    assert user.stat().st_mode == mode  # a folder it did not make is never chmod-ed


_STALE = {"text": "stale"}  # of the expected type: loaded, were the seal not checked


@pytest.mark.parametrize(
    "content",
    [
        b"not a pickle", b"", seal(pickle.dumps(["a", "list"])),  # not an entry; another type
        pickle.dumps(_STALE),  # no seal: a version-2 entry
        seal(pickle.dumps(_STALE))[:-3],  # cut short, as a crash may leave an entry never synced
        seal(pickle.dumps(_STALE)).replace(b"stale", b"state"),  # edited
    ],
)  # fmt: skip
def test_a_damaged_or_foreign_entry_is_rebuilt_and_replaced(tmp_path: Path, content: bytes) -> None:
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    entry = tmp_path / cache.SUBDIR / cache.entry_name(source, CODE)
    entry.parent.mkdir(mode=0o700)
    entry.write_bytes(content)
    calls: list[str] = []
    assert _cached(source, tmp_path, calls) == {"text": "a = 1\n"}
    assert calls == ["a = 1\n"] and pickle.loads(unseal(entry.read_bytes()) or b"") == {"text": "a = 1\n"}


def test_an_entry_is_stored_without_a_sync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache entry is written atomically, not synced: a sync waits for everything else pending on the disk."""
    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    assert _cached(source, tmp_path / "c", []) == {"text": "a = 1\n"}
    entry = tmp_path / "c" / cache.SUBDIR / cache.entry_name(source, CODE)
    written = unseal(entry.read_bytes())
    assert synced == [] and written == pickle.dumps({"text": "a = 1\n"}, protocol=pickle.HIGHEST_PROTOCOL)


def _plant(tmp_path: Path, source: Path) -> Path:
    """An entry whose loading would run code: it records that it ran."""
    entry = tmp_path / cache.SUBDIR / cache.entry_name(source, CODE)
    entry.parent.mkdir(mode=0o700, exist_ok=True)
    marker = tmp_path / "ran"
    entry.write_bytes(seal(pickle.dumps(_Ran(str(marker)))))
    os.chmod(entry, 0o600)
    return marker


class _Ran:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (_touch, (self.path, "ran"))


def _touch(path: str, text: str) -> dict[str, str]:
    Path(path).write_text(text)
    return {"text": "planted"}


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
@pytest.mark.parametrize("where", ["entry", "folder"])
def test_an_entry_others_could_write_is_never_loaded(tmp_path: Path, where: str) -> None:
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    marker = _plant(tmp_path, source)
    target = tmp_path / cache.SUBDIR if where == "folder" else tmp_path / cache.SUBDIR / cache.entry_name(source, CODE)
    os.chmod(target, (0o777 if where == "folder" else 0o666))
    calls: list[str] = []
    assert _cached(source, tmp_path, calls) == {"text": "a = 1\n"}
    assert not marker.exists() and calls == ["a = 1\n"]
    # rebuilt and the entry stored privately; the folder, not made by this call, keeps the mode it was given
    assert (tmp_path / cache.SUBDIR / cache.entry_name(source, CODE)).stat().st_mode & 0o077 == 0
    assert (tmp_path / cache.SUBDIR).stat().st_mode & 0o777 == (0o777 if where == "folder" else 0o700)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
def test_a_symbolic_link_is_never_loaded(tmp_path: Path) -> None:
    """A link in the cache folder to a file elsewhere (private or not) is not followed; the rebuilt entry
    replaces the link, and the file it pointed to is left as it was."""
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    marker = _plant(tmp_path, source)
    entry = tmp_path / cache.SUBDIR / cache.entry_name(source, CODE)
    elsewhere = tmp_path / "elsewhere.pickle"
    entry.rename(elsewhere)
    entry.symlink_to(elsewhere)
    planted = elsewhere.read_bytes()
    calls: list[str] = []
    assert _cached(source, tmp_path, calls) == {"text": "a = 1\n"}
    assert not marker.exists() and calls == ["a = 1\n"]
    assert not entry.is_symlink() and elsewhere.read_bytes() == planted


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
def test_a_private_entry_is_loaded(tmp_path: Path) -> None:
    """The counterpart of the test above: the same planted entry, private, is what the cache returns."""
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    marker = _plant(tmp_path, source)
    assert _cached(source, tmp_path, []) == {"text": "planted"} and marker.exists()


def test_an_oversized_entry_is_not_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    _cached(source, tmp_path, [])
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 4)
    calls: list[str] = []
    assert _cached(source, tmp_path, calls) == {"text": "a = 1\n"} and calls == ["a = 1\n"]


def test_an_unwritable_cache_is_skipped(tmp_path: Path) -> None:
    source = tmp_path / "compat.toml"
    source.write_text("a = 1\n")
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    assert _cached(source, blocked, []) == {"text": "a = 1\n"}


def test_loading_the_shipped_file_writes_only_under_the_cache_dir(tmp_path: Path) -> None:
    before = {p.name for p in shipped_path().parent.iterdir()}
    built = load_compat(cache_dir=tmp_path / "cache")
    written = [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) == 2 and all(w.startswith(f"cache/{cache.SUBDIR}/") for w in written)
    assert f"cache/{cache.SUBDIR}/{CACHE_MARK}" in written
    assert {p.name for p in shipped_path().parent.iterdir()} == before
    again = load_compat(cache_dir=tmp_path / "cache")  # from the entry: the same database
    assert isinstance(again, CompatDB) and again == built and again is not built
    # the derived lookups (fields kept out of equality) came back too
    assert again.find_gpu("RTX 4090") == built.find_gpu("RTX 4090") is not None
    assert again.packages("torch") == built.packages("torch") != ()
    assert again.summary() == built.summary()
