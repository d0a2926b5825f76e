"""The in-process installer (``install.unpack``, ``install.link``): real wheels unpacked into a cache and linked
into real venvs, then imported and run there by the venv's own interpreter."""

from __future__ import annotations

import base64
import csv
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from cudaresolve.core.files import remove_tree
from cudaresolve.errors import InvalidBinary
from cudaresolve.install.environment import read_target
from cudaresolve.install.link import Scheme, install_tree
from cudaresolve.install.uninstall import remove
from cudaresolve.install.unpack import forget, prune, unpacked
from wheelfiles import write_wheel


def _wheel(folder: Path, name: str = "demo", version: str = "1.0", extra: dict[str, bytes] | None = None,
           purelib: bool = True) -> tuple[Path, str]:
    """A wheel of ``name`` with a module, a ``.data`` script, data file and header, and two entry points."""
    info = f"{name}-{version}.dist-info"
    data = f"{name}-{version}.data"
    files = {
        f"{name}/__init__.py": (f"VERSION = {version!r}\n"
                                "def main():\n    print('hello from', __name__, VERSION)\n").encode(),
        f"{name}/sub/deep.py": b"X = 1\n",
        f"{data}/scripts/{name}-tool": b"#!python\nimport sys\nprint('tool on', sys.executable)\n",
        f"{data}/data/share/{name}/notes.txt": b"notes\n",
        f"{data}/headers/{name}.h": b"int x;\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nRoot-Is-Purelib: {str(purelib).lower()}\nTag: py3-none-any\n".encode(),
        f"{info}/entry_points.txt": (f"[console_scripts]\n{name}-hello = {name}:main\n../escape = {name}:main\n"
                                     f"bad-target = os; rm -rf /\n").encode(),
        **(extra or {}),
    }
    path = folder / f"{name}-{version}-py3-none-any.whl"
    return path, write_wheel(path, files, info)


@pytest.fixture(scope="module")
def base_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("venvs")


def _venv(root: Path, name: str) -> tuple[Path, Scheme]:
    folder = root / name
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = str(folder / "bin" / "python")
    found = read_target(python, cache=root / f"probe-{name}")
    return folder, Scheme(**dict(found.scheme), python=python)


def test_a_linked_wheel_imports_runs_and_records_every_file(base_venv: Path, tmp_path: Path) -> None:
    venv, scheme = _venv(base_venv, "one")
    wheel, sha = _wheel(tmp_path)
    tree = unpacked(tmp_path / "cache", sha, wheel)
    meta = Path(install_tree(tree, scheme, url=wheel.as_uri(), sha256=sha))
    python = str(venv / "bin" / "python")

    ran = subprocess.run([python, "-c", "import demo, demo.sub.deep; demo.main()"], capture_output=True, text=True)
    assert ran.stdout.strip() == "hello from demo 1.0", ran.stderr
    hello = subprocess.run([str(venv / "bin" / "demo-hello")], capture_output=True, text=True)  # entry point
    assert hello.stdout.strip() == "hello from demo 1.0", hello.stderr
    tool = subprocess.run([str(venv / "bin" / "demo-tool")], capture_output=True, text=True)  # #!python rewritten
    assert tool.stdout.strip() == f"tool on {python}", tool.stderr
    assert not (venv / "bin" / "escape").exists() and not (venv / "escape").exists()  # an unsafe name: no launcher
    assert not (venv / "bin" / "bad-target").exists()
    assert (venv / "share" / "demo" / "notes.txt").read_text() == "notes\n"
    assert any(venv.glob("include/site/python*/demo/demo.h"))
    # a hard link to the cached copy, not a copy
    installed = Path(scheme.purelib) / "demo" / "__init__.py"
    assert os.stat(tree / "demo" / "__init__.py").st_ino == os.stat(installed).st_ino
    # RECORD: every file there, with its real hash and size; importlib.metadata reads it
    site = Path(scheme.purelib)
    for row in csv.reader((meta / "RECORD").read_text().splitlines()):
        path = (site / row[0]).resolve()
        assert path.is_file(), row
        if row[1]:
            body = path.read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
            assert row[1:] == [f"sha256={digest}", str(len(body))], row
    listed = subprocess.run([python, "-c", "import importlib.metadata as m; d = m.distribution('demo'); "
                             "print(d.version, d.read_text('INSTALLER').strip(), len(d.files))"],
                            capture_output=True, text=True, check=True)
    assert listed.stdout.split() == ["1.0", "cudaresolve", str(len((meta / "RECORD").read_text().splitlines()))]


def test_platlib_wheels_go_to_platlib(base_venv: Path, tmp_path: Path) -> None:
    _, scheme = _venv(base_venv, "plat")
    scheme = Scheme(purelib=str(tmp_path / "pure"), platlib=scheme.platlib, scripts=scheme.scripts, data=scheme.data,
                    headers=scheme.headers, python=scheme.python)
    wheel, sha = _wheel(tmp_path, purelib=False)
    install_tree(unpacked(tmp_path / "cache", sha, wheel), scheme, url=wheel.as_uri(), sha256=sha)
    assert (Path(scheme.platlib) / "demo" / "__init__.py").is_file() and not (tmp_path / "pure").exists()


def test_headers_go_to_the_folder_pip_and_uv_name_by_the_normalized_project(base_venv: Path, tmp_path: Path) -> None:
    # a wheel's .data/headers/ land in include/site/pythonX.Y/<name>/ where <name> is the project's normalized name
    # (my-demo), as pip and uv place them; not the .dist-info's escaped stem (my_demo)
    venv, scheme = _venv(base_venv, "headers")
    wheel, sha = _wheel(tmp_path, name="my_demo")
    meta = Path(install_tree(unpacked(tmp_path / "cache", sha, wheel), scheme, url=wheel.as_uri(), sha256=sha))
    found = sorted(p.relative_to(venv).as_posix() for p in venv.glob("include/site/python*/*/*.h"))
    assert found == [f"include/site/python{sys.version_info[0]}.{sys.version_info[1]}/my-demo/my_demo.h"]
    listed = [row[0] for row in csv.reader((meta / "RECORD").read_text().splitlines()) if row[0].endswith(".h")]
    assert [(Path(scheme.purelib) / p).resolve() for p in listed] == [(venv / found[0]).resolve()]


def test_remove_takes_what_record_lists_inside_the_environment_only(base_venv: Path, tmp_path: Path) -> None:
    venv, scheme = _venv(base_venv, "rm")
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    wheel, sha = _wheel(tmp_path)
    meta = install_tree(unpacked(tmp_path / "cache", sha, wheel), scheme, url=wheel.as_uri(), sha256=sha)
    pyc = Path(scheme.purelib) / "demo" / "__pycache__"
    pyc.mkdir()
    (pyc / "__init__.cpython-311.pyc").write_bytes(b"")
    record = Path(meta, "RECORD").read_text() + f"{os.path.relpath(outside, scheme.purelib)},,\n"
    remove(meta, record, scheme.folders)
    assert outside.read_text() == "keep me"  # a RECORD row pointing outside the environment is not followed
    assert not (Path(scheme.purelib) / "demo").exists() and not Path(meta).exists()
    assert not (venv / "bin" / "demo-hello").exists() and not (venv / "share" / "demo").exists()
    assert (venv / "bin" / "python").exists() and Path(scheme.purelib).is_dir()  # the folders of the venv stay


def test_remove_never_takes_the_environments_own_files(base_venv: Path, tmp_path: Path) -> None:
    """A stray distribution's RECORD (written by hand) listing bin/python, bin/activate and pyvenv.cfg: install
    --exact removed them; no wheel may write them, so no RECORD may take them away."""
    venv, scheme = _venv(base_venv, "own")
    wheel, sha = _wheel(tmp_path)
    meta = install_tree(unpacked(tmp_path / "cache", sha, wheel), scheme, url=wheel.as_uri(), sha256=sha)
    own = [venv / "bin" / "python", venv / "bin" / "activate", venv / "pyvenv.cfg"]
    record = Path(meta, "RECORD").read_text() + "".join(f"{os.path.relpath(p, scheme.purelib)},,\n" for p in own)
    remove(meta, record, scheme.folders)
    assert not (Path(scheme.purelib) / "demo").exists() and not Path(meta).exists()  # its own files went
    assert all(p.exists() or p.is_symlink() for p in own)
    assert subprocess.run([str(venv / "bin" / "python"), "-c", "pass"], check=False).returncode == 0


def test_a_new_version_replaces_the_old_through_sync(base_venv: Path, tmp_path: Path) -> None:
    from cudaresolve.install.inprocess import link_wheels, remove_dists
    from cudaresolve.install.installed import read_installed
    from cudaresolve.resolve.model import LockedPackage

    venv, scheme = _venv(base_venv, "replace")
    python = str(venv / "bin" / "python")
    old, old_sha = _wheel(tmp_path, version="1.0", extra={"demo/old_only.py": b""})
    (tmp_path / "new").mkdir()
    new, new_sha = _wheel(tmp_path / "new", version="2.0")
    paths = read_target(python, cache=tmp_path / "probe").sys_path
    for wheel, sha, version in ((old, old_sha, "1.0"), (new, new_sha, "2.0")):
        package = LockedPackage(name="demo", version=version, index="", sha256=sha, url=wheel.as_uri(),
                                filename=wheel.name)
        link_wheels([(package, wheel)], scheme, read_installed(python, records=["demo"], paths=paths),
                    tmp_path / "cache")
    found = read_installed(python, records=["demo"], paths=paths)
    assert found["demo"].version == "2.0" and not (Path(scheme.purelib) / "demo" / "old_only.py").exists()
    assert [p.name for p in Path(scheme.purelib).glob("demo-*.dist-info")] == ["demo-2.0.dist-info"]
    remove_dists(found, ["demo"], scheme)
    assert read_installed(python, paths=paths) == {}


@pytest.mark.parametrize("member", ["../evil.py", "/abs/evil.py", "a/../../evil.py", "a\\..\\evil.py", "C:/evil.py"])
def test_a_member_that_leaves_its_folder_is_refused_before_anything_is_written(tmp_path: Path, member: str) -> None:
    from cudaresolve.install.wheel_members import check_wheel_files

    wheel, sha = _wheel(tmp_path, extra={member: b"boom"})
    with pytest.raises(InvalidBinary) as caught:
        unpacked(tmp_path / "cache", sha, wheel)
    assert caught.value.text.key == "lock.install.unsafe-member"
    with pytest.raises(InvalidBinary) as caught:  # found by the hostile-input audit: uv was handed it, and left the
        check_wheel_files([(wheel, "demo", "1.0")])  # member out where pip and this process refuse the wheel
    assert caught.value.text.key == "lock.install.unsafe-member"
    assert not (tmp_path / "evil.py").exists() and not (tmp_path / "cache" / sha).exists()
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name != ".cudaresolve-cache"]  # no half-made folder


@pytest.mark.parametrize("extra", [
    {"demo/x": b"file", "demo/x/y.py": b"under the file"},  # a file and a folder of one name
    {"demo/x/y.py": b"", "demo/x": b"file over the folder"},
    {"demo/" + "a" * 300 + ".py": b""},  # a name no file system takes
])  # fmt: skip
def test_a_wheel_whose_names_cannot_be_a_tree_is_a_bad_wheel_not_a_disk_problem(
    tmp_path: Path, extra: dict[str, bytes]
) -> None:
    """Found by the hostile-input audit: these were 'invalid-input: demo could not be installed: <cache>/.tmp/...:
    Not a directory' with the hint to check the environment's folders and the disk, which are fine."""
    wheel, sha = _wheel(tmp_path, extra=extra)
    with pytest.raises(InvalidBinary) as caught:
        unpacked(tmp_path / "cache", sha, wheel)
    assert caught.value.text.key == "lock.install.bad-wheel" and "demo/" in str(caught.value.text.fields)
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name != ".cudaresolve-cache"]  # no half-made folder


def test_a_record_of_more_rows_than_a_wheel_may_hold_is_refused(base_venv: Path, tmp_path: Path) -> None:
    """Found by the hostile-input audit: a 10 MB wheel whose RECORD had 4 million short rows was linked after
    35 s with 2.2 GB resident (every row kept as a list); the rows past what any archive may hold are a lie."""
    from cudaresolve.core.archive import MAX_ARCHIVE_MEMBERS
    from cudaresolve.install.inprocess import link_wheels

    _, scheme = _venv(base_venv, "long-record")
    wheel, _ = _wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    members["demo-1.0.dist-info/RECORD"] += "".join(f"x{i},sha256=a,1\n" for i in range(MAX_ARCHIVE_MEMBERS)).encode()
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in members.items():
            archive.writestr(name, body)
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    with pytest.raises(InvalidBinary, match="its RECORD lists more than"):
        link_wheels([(_package(wheel, sha), wheel)], scheme, {}, tmp_path / "cache")
    assert not list(Path(scheme.purelib).glob("*.dist-info"))


def test_a_wheel_past_the_archive_bounds_is_named_in_the_error(tmp_path: Path) -> None:
    """Found by the hostile-input audit: install said 'the archive's members inflate to N bytes, more than M' (or
    that two share bytes), naming no wheel of the lock's."""
    from cudaresolve.install.wheel_members import check_wheel_files
    from cudaresolve.text.catalogue import format_text
    from hostile.zip_craft import shared_offsets

    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    wheel.write_bytes(shared_offsets(b"\x7fELF" + bytes(4096), 20))  # entries sharing one member's bytes
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    attempts = (lambda: unpacked(tmp_path / "cache", sha, wheel), lambda: check_wheel_files([(wheel, "demo", None)]))
    for attempt in attempts:  # the in-process linker's unpacking, and the check before uv or pip
        with pytest.raises(InvalidBinary) as caught:
            attempt()
        said = format_text(caught.value.text, "en")
        assert "demo-1.0-py3-none-any.whl" in said and "share bytes" in said, said


def test_a_wheel_asking_for_more_launchers_than_the_bound_is_refused(base_venv: Path, tmp_path: Path) -> None:
    """Found by the hostile-input audit: a 700 KB wheel whose entry_points.txt named 300,000 console scripts had
    a launcher written for each into the venv's bin (96 s); a 10 MB one would write millions."""
    from cudaresolve.install.inprocess import link_wheels

    _, scheme = _venv(base_venv, "launchers")
    scripts = "[console_scripts]\n" + "".join(f"s{i} = demo:main\n" for i in range(10_001))  # the bound: 10,000
    wheel, sha = _wheel(tmp_path, extra={"demo-1.0.dist-info/entry_points.txt": scripts.encode()})
    with pytest.raises(InvalidBinary, match="names more than 10,000 scripts"):
        link_wheels([(_package(wheel, sha), wheel)], scheme, {}, tmp_path / "cache")
    assert not (Path(scheme.scripts) / "s0").exists()


def test_a_wheel_whose_members_nest_past_the_recursion_limit_is_installed(base_venv: Path, tmp_path: Path) -> None:
    """Found by the adversarial hunt: a member 1,200 folders deep (2.4 KB of path, within every bound) made
    Python 3.11's os.walk, which recurses per level, raise RecursionError while the tree was planned: an
    internal error. The tree is walked with a stack (``core.files.walk``)."""
    deep = "/".join(["d"] * 1200)
    wheel, sha = _wheel(tmp_path, extra={f"demo/{deep}/leaf.py": b"X = 1\n"})
    _, scheme = _venv(base_venv, "deep")
    install_tree(unpacked(tmp_path / "cache", sha, wheel), scheme, url=wheel.as_uri(), sha256=sha)
    assert (Path(scheme.purelib) / "demo" / deep / "leaf.py").read_bytes() == b"X = 1\n"
    forget(tmp_path / "cache", sha)  # removed as deep as it was made (shutil.rmtree recurses too)
    assert not (tmp_path / "cache" / sha).exists()
    remove_tree(Path(scheme.purelib) / "demo")  # pytest's own cleanup is shutil.rmtree


def test_a_dist_info_nested_past_the_recursion_limit_is_removed(base_venv: Path, tmp_path: Path) -> None:
    """Found by the adversarial hunt: a wheel may put files deep in its ``.dist-info``; removing it (a new version,
    ``install --exact``) ran shutil.rmtree, which recursed per level into a RecursionError, an internal error."""
    deep = "/".join(["d"] * 1200)
    wheel, sha = _wheel(tmp_path, extra={f"demo-1.0.dist-info/{deep}/x.txt": b"x"})
    _, scheme = _venv(base_venv, "deepinfo")
    meta = install_tree(unpacked(tmp_path / "cache", sha, wheel), scheme, url=wheel.as_uri(), sha256=sha)
    remove(meta, Path(meta, "RECORD").read_text(), scheme.folders)
    assert not Path(meta).exists()
    forget(tmp_path / "cache", sha)


def test_the_cache_is_made_once_pruned_with_the_file_cache_and_forgotten_on_demand(tmp_path: Path) -> None:
    wheel, sha = _wheel(tmp_path)
    first = unpacked(tmp_path / "cache", sha, wheel)
    marker = first / "demo" / "__init__.py"
    mtime = marker.stat().st_mtime_ns
    assert unpacked(tmp_path / "cache", sha, wheel) == first and marker.stat().st_mtime_ns == mtime  # not made again
    prune(tmp_path / "cache", {sha})
    assert first.is_dir()
    prune(tmp_path / "cache", set())
    assert not first.exists()
    unpacked(tmp_path / "cache", sha, wheel)
    forget(tmp_path / "cache", sha)
    assert not first.exists()


def test_where_linking_fails_the_file_is_copied(
    base_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, scheme = _venv(base_venv, "copy")

    def cross_device(source: str, target: str) -> None:
        raise OSError(18, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    wheel, sha = _wheel(tmp_path)
    tree = unpacked(tmp_path / "cache", sha, wheel)
    install_tree(tree, scheme, url=wheel.as_uri(), sha256=sha)
    installed = Path(scheme.purelib) / "demo" / "__init__.py"
    assert installed.read_bytes() == (tree / "demo" / "__init__.py").read_bytes()
    assert os.stat(installed).st_ino != os.stat(tree / "demo" / "__init__.py").st_ino


def test_a_long_interpreter_path_gets_a_launcher_that_still_runs(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60) / "with space"
    venv, scheme = _venv(deep.parent, deep.name)
    assert len(scheme.python) > 127 and " " in scheme.python
    wheel, sha = _wheel(tmp_path)
    install_tree(unpacked(tmp_path / "cache", sha, wheel), scheme, url=wheel.as_uri(), sha256=sha)
    hello = subprocess.run([str(venv / "bin" / "demo-hello")], capture_output=True, text=True)
    assert hello.stdout.strip() == "hello from demo 1.0", hello.stderr
    tool = subprocess.run([str(venv / "bin" / "demo-tool")], capture_output=True, text=True)
    assert tool.stdout.strip() == f"tool on {scheme.python}", tool.stderr


def test_a_kept_file_changed_through_a_hard_link_is_unpacked_again(base_venv: Path, tmp_path: Path) -> None:
    from cudaresolve.install.inprocess import link_wheels
    from cudaresolve.install.link import StaleTree
    from cudaresolve.resolve.model import LockedPackage

    _, scheme = _venv(base_venv, "edited")
    wheel, sha = _wheel(tmp_path)
    tree = unpacked(tmp_path / "cache", sha, wheel)
    install_tree(tree, scheme, url=wheel.as_uri(), sha256=sha)
    with (Path(scheme.purelib) / "demo" / "__init__.py").open("a") as edited:  # the user patches the installed copy
        edited.write("raise SystemExit('patched')\n")
    _, other = _venv(base_venv, "next")
    with pytest.raises(StaleTree):  # the kept copy changed with it: nothing is linked from it
        install_tree(tree, other, url=wheel.as_uri(), sha256=sha)
    assert not (Path(other.purelib) / "demo").exists()
    package = LockedPackage(name="demo", version="1.0", index="", sha256=sha, url=wheel.as_uri(), filename=wheel.name)
    link_wheels([(package, wheel)], other, {}, tmp_path / "cache")
    ran = subprocess.run([other.python, "-c", "import demo; demo.main()"], capture_output=True, text=True)
    assert ran.stdout.strip() == "hello from demo 1.0", ran.stderr  # from the wheel, unpacked again


def test_one_bad_wheel_among_several_installs_none_of_them(base_venv: Path, tmp_path: Path) -> None:
    from cudaresolve.install.inprocess import link_wheels
    from cudaresolve.resolve.model import LockedPackage

    _, scheme = _venv(base_venv, "several")
    pairs = []
    for name, extra in (("good", {}), ("bad", {"../../evil.py": b"boom"}), ("fine", {})):
        (tmp_path / name).mkdir()
        wheel, sha = _wheel(tmp_path / name, name=name, extra=extra)
        pairs.append((LockedPackage(name=name, version="1.0", index="", sha256=sha, url=wheel.as_uri(),
                                    filename=wheel.name), wheel))
    with pytest.raises(InvalidBinary):
        link_wheels(pairs, scheme, {}, tmp_path / "cache")
    assert not list(Path(scheme.purelib).glob("*.dist-info"))  # unpacked side by side first: nothing linked


def _package(wheel: Path, sha: str, name: str = "demo", version: str = "1.0") -> Any:
    from cudaresolve.resolve.model import LockedPackage

    return LockedPackage(name=name, version=version, index="", sha256=sha, url=wheel.as_uri(), filename=wheel.name)


def _installed(scheme: Scheme) -> dict[str, Any]:
    from cudaresolve.install.installed import read_installed

    return read_installed(scheme.python, records=["aaa", "zzz", "demo", "alpha"], paths=[scheme.purelib])


def test_a_file_that_moves_to_another_package_survives_the_upgrade(base_venv: Path, tmp_path: Path) -> None:
    from cudaresolve.install.inprocess import link_wheels

    _, scheme = _venv(base_venv, "moved")
    made = {}
    for name, version, extra in (("aaa", "1.0", {}), ("zzz", "1.0", {"common/shared.py": b"WHO = 'zzz'\n"}),
                                 ("aaa", "2.0", {"common/shared.py": b"WHO = 'aaa'\n"}), ("zzz", "2.0", {})):
        folder = tmp_path / f"{name}{version}"
        folder.mkdir()
        made[name, version] = _wheel(folder, name=name, version=version, extra=extra)
    for version in ("1.0", "2.0"):
        pairs = [(_package(*made[n, version], name=n, version=version), made[n, version][0]) for n in ("aaa", "zzz")]
        link_wheels(pairs, scheme, _installed(scheme), tmp_path / "cache")
    ran = subprocess.run([scheme.python, "-c", "import common.shared as s; print(s.WHO)"], capture_output=True,
                         text=True)
    assert ran.stdout.strip() == "aaa", ran.stderr


def test_a_wheel_that_fails_while_linked_leaves_the_others_linked_and_says_what_is_missing(
    base_venv: Path, tmp_path: Path
) -> None:
    """Found by the hostile-input audit: a lock of aaa 2.0 and zzz, whose file common/x was another installed
    package's folder, removed aaa 1.0, failed on zzz first and stopped: aaa was in neither version, and the error
    named only zzz, with the hint to check the disk."""
    from cudaresolve.errors import InvalidInput
    from cudaresolve.install.inprocess import link_wheels

    _, scheme = _venv(base_venv, "partly")
    made = {}
    for name, version, extra in (("aaa", "1.0", {}), ("aaa", "2.0", {}), ("mmm", "1.0", {"common/x/y.py": b""}),
                                 ("zzz", "1.0", {"common/x": b"a file where mmm has a folder\n",
                                                 **{f"zzz/m{i}.py": b"" for i in range(5)}})):
        folder = tmp_path / f"{name}{version}"
        folder.mkdir()
        made[name, version] = _wheel(folder, name=name, version=version, extra=extra)

    def pairs(*names: tuple[str, str]) -> list[tuple[Any, Path]]:
        return [(_package(*made[n, v], name=n, version=v), made[n, v][0]) for n, v in names]

    link_wheels(pairs(("aaa", "1.0"), ("mmm", "1.0")), scheme, {}, tmp_path / "cache")
    with pytest.raises(InvalidInput) as caught:
        link_wheels(pairs(("aaa", "2.0"), ("zzz", "1.0")), scheme, _installed(scheme), tmp_path / "cache")
    assert "zzz could not be installed" in caught.value.message and "1 of the 2 packages" in caught.value.message
    installed = _installed(scheme)
    assert installed["aaa"].version == "2.0" and "zzz" not in installed  # zzz's own files were taken back


def test_a_new_version_that_cannot_install_leaves_the_old_one(base_venv: Path, tmp_path: Path) -> None:
    from cudaresolve.install.inprocess import link_wheels

    _, scheme = _venv(base_venv, "keepold")
    old = _wheel(tmp_path, version="1.0")
    (tmp_path / "new").mkdir()
    new = _wheel(tmp_path / "new", version="2.0", extra={"demo-2.0.data/unknown/x": b""})
    link_wheels([(_package(*old), old[0])], scheme, {}, tmp_path / "cache")
    with pytest.raises(InvalidBinary) as caught:
        link_wheels([(_package(*new, version="2.0"), new[0])], scheme, _installed(scheme), tmp_path / "cache")
    assert "demo-2.0-py3-none-any.whl" in caught.value.message  # the wheel is named, not its cache folder
    assert _installed(scheme)["demo"].version == "1.0"  # checked before anything was removed


@pytest.mark.parametrize("script", [".data", "entry point"])
def test_a_script_named_like_the_interpreter_is_refused(base_venv: Path, tmp_path: Path, script: str) -> None:
    from cudaresolve.install.inprocess import link_wheels

    _, scheme = _venv(base_venv, f"python-{script.replace(' ', '-')}")
    extra = ({"demo-1.0.data/scripts/python3": b"#!python\nprint(1)\n"} if script == ".data" else
             {"demo-1.0.dist-info/entry_points.txt": b"[console_scripts]\npython = demo:main\n"})
    wheel, sha = _wheel(tmp_path, extra=extra)
    with pytest.raises(InvalidBinary):
        link_wheels([(_package(wheel, sha), wheel)], scheme, {}, tmp_path / "cache")
    assert subprocess.run([scheme.python, "-c", "pass"], check=False).returncode == 0  # the venv still runs


def test_pips_own_scripts_are_not_reserved(base_venv: Path, tmp_path: Path) -> None:
    from cudaresolve.install.inprocess import link_wheels

    _, scheme = _venv(base_venv, "pip-scripts")  # a lock may pin pip itself: its pip, pip3, pip3.11 go in
    points = b"[console_scripts]\npip = demo:main\npip3 = demo:main\npip3.11 = demo:main\n"
    wheel, sha = _wheel(tmp_path, extra={"demo-1.0.dist-info/entry_points.txt": points})
    link_wheels([(_package(wheel, sha), wheel)], scheme, {}, tmp_path / "cache")
    ran = subprocess.run([str(Path(scheme.scripts) / "pip3.11")], capture_output=True, text=True)
    assert ran.stdout.strip() == "hello from demo 1.0", ran.stderr


def test_removing_skips_rows_it_cannot_remove_and_every_copy_of_the_project_goes(
    base_venv: Path, tmp_path: Path
) -> None:
    from cudaresolve.install.inprocess import link_wheels

    _, scheme = _venv(base_venv, "copies")
    site = Path(scheme.purelib)
    for version in ("0.8", "0.9"):  # two copies of one project, one with a RECORD row under a file
        info = site / f"demo-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: demo\nVersion: {version}\n")
        (site / f"old_{version[-1]}.py").write_text("")
        (info / "RECORD").write_text(f"old_{version[-1]}.py/oops,,\nold_{version[-1]}.py,,\n"
                                     f"demo-{version}.dist-info/METADATA,,\n")
    wheel, sha = _wheel(tmp_path)
    link_wheels([(_package(wheel, sha), wheel)], scheme, _installed(scheme), tmp_path / "cache")
    assert sorted(p.name for p in site.glob("demo-*.dist-info")) == ["demo-1.0.dist-info"]
    assert not (site / "old_8.py").exists() and not (site / "old_9.py").exists()


def test_a_damaged_member_and_a_missing_kept_file(base_venv: Path, tmp_path: Path) -> None:
    from cudaresolve.install.inprocess import link_wheels

    wheel, sha = _wheel(tmp_path)
    body = wheel.read_bytes()
    damaged = tmp_path / "damaged" / wheel.name
    damaged.parent.mkdir()
    damaged.write_bytes(body.replace(b"print('hello from'", b"print('HELLO from'"))  # same size, CRC wrong
    with pytest.raises(InvalidBinary):
        unpacked(tmp_path / "cache-a", sha, damaged)
    _, scheme = _venv(base_venv, "missing")
    tree = unpacked(tmp_path / "cache", sha, wheel)
    (tree / "demo" / "sub" / "deep.py").unlink()  # a cleaner took one kept file
    link_wheels([(_package(wheel, sha), wheel)], scheme, {}, tmp_path / "cache")
    assert (Path(scheme.purelib) / "demo" / "sub" / "deep.py").is_file()  # unpacked again from the wheel


def test_exact_removes_a_foreign_copy_before_the_locked_one_is_linked(base_venv: Path, tmp_path: Path) -> None:
    from cudaresolve.install.inprocess import link_wheels
    from cudaresolve.install.sync import sync_environment
    from cudaresolve.lock.model import Lock

    _, scheme = _venv(base_venv, "exact")
    made = {}
    for name in ("full", "headless"):  # two builds of one module under two names (opencv-python and -headless)
        (tmp_path / name).mkdir()
        made[name] = _wheel(tmp_path / name, name=name, extra={"cv/__init__.py": f"WHO = {name!r}\n".encode()})
    link_wheels([(_package(*made["full"], name="full"), made["full"][0])], scheme, {}, tmp_path / "cache")
    lock = Lock(packages=(_package(*made["headless"], name="headless"),))
    found = read_target(scheme.python, cache=tmp_path / "probe")
    result = sync_environment(lock, python=scheme.python, exact=True, paths=found.sys_path, prefix=found.prefix,
                              scheme=found.scheme, record_cache=tmp_path / "records", file_cache=tmp_path / "files")
    assert result.returncode == 0 and result.removed == ("full",)
    ran = subprocess.run([scheme.python, "-c", "import cv; print(cv.WHO)"], capture_output=True, text=True)
    assert ran.stdout.strip() == "headless", ran.stderr


def test_many_files_are_linked_side_by_side_with_the_same_result(
    base_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cudaresolve.install import inprocess

    monkeypatch.setattr(inprocess, "_MANY_FILES", 1)  # the threaded path for a few small wheels
    _, scheme = _venv(base_venv, "threads")
    pairs = []
    for name in ("one", "two", "three"):
        (tmp_path / name).mkdir()
        wheel, sha = _wheel(tmp_path / name, name=name)
        pairs.append((_package(wheel, sha, name=name), wheel))
    inprocess.link_wheels(pairs, scheme, {}, tmp_path / "cache")
    ran = subprocess.run([scheme.python, "-c", "import one, two, three; one.main(); three.main()"],
                         capture_output=True, text=True)
    assert ran.stdout.split("\n")[:2] == ["hello from one 1.0", "hello from three 1.0"], ran.stderr
    assert sorted(p.name for p in Path(scheme.purelib).glob("*.dist-info")) == [
        "one-1.0.dist-info", "three-1.0.dist-info", "two-1.0.dist-info"]


def test_a_lock_of_many_files_goes_to_uv_when_it_is_at_hand(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from cudaresolve.install import inprocess, installer

    wheel, sha = _wheel(tmp_path)
    rows = {sha: "a,b,1\n" * 2000}
    packages = [_package(wheel, sha), _package(wheel, sha, name="other")]  # 4,000 files in all
    monkeypatch.setattr(installer, "find_uv", lambda env=None: "/usr/bin/uv")
    assert inprocess.hand_to_uv(packages, rows.get, {})
    assert not inprocess.hand_to_uv(packages[:1], rows.get, {})  # 2,000: linked here
    assert not inprocess.hand_to_uv(packages, rows.get, {"CUDARESOLVE_INSTALLER": "cudaresolve"})
    monkeypatch.setattr(installer, "find_uv", lambda env=None: None)
    assert not inprocess.hand_to_uv(packages, rows.get, {})  # no uv: linked here whatever the count


def test_files_the_wheel_records_are_not_read_again(
    base_venv: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cudaresolve.install import link

    def no_hashing(path: str) -> tuple[str, str]:
        raise AssertionError(f"{path} was hashed: its row is in the wheel's RECORD")

    monkeypatch.setattr(link, "_hashed", no_hashing)  # .data files too: looked up by their path in the wheel
    _, scheme = _venv(base_venv, "nohash")
    wheel, sha = _wheel(tmp_path)
    install_tree(unpacked(tmp_path / "cache", sha, wheel), scheme, url=wheel.as_uri(), sha256=sha)
    record = (Path(scheme.purelib) / "demo-1.0.dist-info" / "RECORD").read_text()
    assert "share/demo/notes.txt,sha256=" in record and "include/site/python" in record


def test_a_wheel_of_another_project_than_the_locked_name_is_refused(base_venv: Path, tmp_path: Path) -> None:
    from cudaresolve.install.inprocess import link_wheels

    _, scheme = _venv(base_venv, "renamed")
    wheel, sha = _wheel(tmp_path, name="gamma")
    with pytest.raises(InvalidBinary) as caught:  # pip and uv refuse it too
        link_wheels([(_package(wheel, sha, name="omega"), wheel)], scheme, {}, tmp_path / "cache")
    assert "another project than omega" in str(caught.value.text.fields)
    assert not list(Path(scheme.purelib).glob("*.dist-info"))
    link_wheels([(_package(wheel, sha, name="Gamma"), wheel)], scheme, {}, tmp_path / "cache")  # the same project
    assert [p.name for p in Path(scheme.purelib).glob("*.dist-info")] == ["gamma-1.0.dist-info"]


@pytest.mark.parametrize(("metadata", "locked", "said"), [
    ("Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n", "1.0", "its METADATA names 'evil', not demo"),
    ("Metadata-Version: 2.1\nName: demo\nVersion: 9.9\n", "1.0", "its METADATA says version '9.9', not 1.0"),
    ("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n", "1.3", "its folder says version '1.0', not 1.3"),
    ("Metadata-Version: 2.1\rName: evil\rVersion: 1.0\r", "1.0", "its METADATA names 'evil', not demo"),  # lone \r
    ("Metadata-Version: 2.1\nSummary: " + "x" * 70000 + "\nName: evil\nVersion: 1.0\n", "1.0", "names 'evil'"),
    ("Metadata-Version: 2.1\nVersion: 1.0\n", "1.0", "its METADATA names nothing, not demo"),
    ("Metadata-Version: 2.1\nName: demo\nName: evil\nVersion: 1.0\n", "1.0", "names 'demo', 'evil', not demo"),
])
def test_a_wheel_naming_another_distribution_inside_is_refused(
    base_venv: Path, tmp_path: Path, metadata: str, locked: str, said: str
) -> None:
    """The hash matches the lock, the ``.dist-info`` folder names the locked project, but what the wheel installs
    (its METADATA's Name and Version, or its folder's version) is another distribution: nothing is installed."""
    from cudaresolve.install.inprocess import link_wheels

    _, scheme = _venv(base_venv, f"inside-{len(said)}")
    wheel, sha = _wheel(tmp_path, extra={"demo-1.0.dist-info/METADATA": metadata.encode()})
    with pytest.raises(InvalidBinary) as caught:
        link_wheels([(_package(wheel, sha, version=locked), wheel)], scheme, {}, tmp_path / "cache")
    assert said in str(caught.value.text.fields)
    assert not list(Path(scheme.purelib).glob("*.dist-info"))


def test_a_locked_version_is_compared_as_pep_440_reads_it(base_venv: Path, tmp_path: Path) -> None:
    from cudaresolve.install.inprocess import link_wheels

    _, scheme = _venv(base_venv, "normalized")
    wheel, sha = _wheel(tmp_path)
    link_wheels([(_package(wheel, sha, version="1.0.0"), wheel)], scheme, {}, tmp_path / "cache")  # 1.0.0 == 1.0
    assert [p.name for p in Path(scheme.purelib).glob("*.dist-info")] == ["demo-1.0.dist-info"]


@pytest.mark.parametrize(("member", "said"), [
    ("demo-1.0.data/purelib/smuggled-6.6.dist-info/METADATA", "the metadata of another distribution"),
    ("demo-1.0.data/platlib/smuggled.egg-info/PKG-INFO", "the metadata of another distribution"),
    ("smuggled.egg-info/PKG-INFO", "the metadata of another distribution"),
    ("smuggled-6.6.egg-info", "the metadata of another distribution"),  # a file: importlib reads it too
    ("demo-1.0.data/purelib/smuggled.egg-info", "the metadata of another distribution"),
    ("demo-1.0.data/data/lib/python3.11/site-packages/smuggled-6.6.dist-info/METADATA", "another distribution"),
    # a venv's lib64 is a link to its lib; Debian's site folder is dist-packages
    ("demo-1.0.data/data/lib64/python3.11/site-packages/smuggled-6.6.dist-info/METADATA", "another distribution"),
    ("demo-1.0.data/data/local/lib/python3.11/dist-packages/smuggled-6.6.dist-info/METADATA", "another distribution"),
    ("demo-1.0.data/data/pyvenv.cfg", "would replace the environment's own pyvenv.cfg"),
    ("demo-1.0.data/data/bin/python3", "would replace the environment's own python3"),
    ("demo-1.0.data/data/bin/activate", "would replace the environment's own activate"),
    ("demo-1.0.data/scripts/activate_this.py", "the script activate_this.py would replace"),  # uv's venvs have one
])  # fmt: skip
def test_a_wheel_that_would_install_another_distribution_or_the_venvs_files_is_refused(
    base_venv: Path, tmp_path: Path, member: str, said: str
) -> None:
    """Found by this stop's hostile-input hunt: a locked wheel put a second distribution, not in the lock, into
    site-packages from its .data/purelib, and its .data/data replaced the venv's bin/python and pyvenv.cfg."""
    from cudaresolve.install.inprocess import link_wheels

    _, scheme = _venv(base_venv, f"smuggle-{abs(hash(member)) % 10**8}")
    wheel, sha = _wheel(tmp_path, extra={member: b"Metadata-Version: 2.1\nName: smuggled\nVersion: 6.6\n"})
    with pytest.raises(InvalidBinary) as caught:
        link_wheels([(_package(wheel, sha), wheel)], scheme, {}, tmp_path / "cache")
    assert said in str(caught.value.text.fields)
    assert not list(Path(scheme.purelib).glob("*.dist-info")) and not list(Path(scheme.purelib).glob("*.egg-info"))
    assert subprocess.run([scheme.python, "-c", "pass"], check=False).returncode == 0  # the venv still runs


def test_the_names_rules_hold_for_a_wheel_handed_to_uv_too(tmp_path: Path) -> None:
    from cudaresolve.install.wheel_members import check_wheel_files, wheel_problem

    assert wheel_problem(["demo/__init__.py", "demo-1.0.dist-info/METADATA", "demo-1.0.data/scripts/demo"]) is None
    assert wheel_problem(["demo/__init__.py"]) == "0 .dist-info folders"
    wheel, _ = _wheel(tmp_path, extra={"demo-1.0.data/scripts/activate": b"echo\n"})
    with pytest.raises(InvalidBinary, match="the script activate would replace"):
        check_wheel_files([(wheel, "demo", "1.0")])


@pytest.mark.parametrize(("metadata", "locked", "said"), [
    ("Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n", ("demo", "1.0"), "its METADATA names 'evil', not demo"),
    ("Metadata-Version: 2.1\nName: demo\nVersion: 9.9\n", ("demo", "1.0"), "its METADATA says version '9.9'"),
    ("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n", ("demo", "1.3"), "its folder says version '1.0', not 1.3"),
    ("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n", ("other", "1.0"), "another project than other"),
])
def test_a_wheel_handed_to_uv_or_pip_must_be_the_locked_distribution(
    tmp_path: Path, metadata: str, locked: tuple[str, str], said: str
) -> None:
    """Found by the hostile-input audit: the in-process linker refused a wheel whose hash matched the lock but whose
    METADATA named another distribution; one handed to uv or pip (``CUDARESOLVE_INSTALLER``, a large lock) was
    installed as whatever it named. The same check now runs before uv or pip is asked."""
    from cudaresolve.install.wheel_members import check_wheel_files

    wheel, _ = _wheel(tmp_path, extra={"demo-1.0.dist-info/METADATA": metadata.encode()})
    with pytest.raises(InvalidBinary) as caught:
        check_wheel_files([(wheel, *locked)])
    assert said in str(caught.value.text.fields)
    (tmp_path / "plain").mkdir()
    plain, _ = _wheel(tmp_path / "plain")
    check_wheel_files([(plain, "Demo", "1.0.0")])  # the same project and version, spelled otherwise


@pytest.mark.parametrize(("tags", "refused"), [
    ("Tag: cp27-cp27m-win32\n", True),  # a Windows build under a py3-none-any name
    ("Tag: cp311-cp311-macosx_11_0_arm64\n", True),
    ("Tag: py3-none-any\n", False),
    ("Tag: cp311-cp311-linux_x86_64\n", True),  # the name claims any platform
])  # fmt: skip
def test_a_wheel_whose_tags_are_not_its_names_is_refused(
    base_venv: Path, tmp_path: Path, tags: str, refused: bool
) -> None:
    """Found by this stop's hostile-input hunt: install checked the lock's file name against the interpreter, and
    linked a cp27-win32 wheel served under a py3-none-any name into a Linux venv."""
    from cudaresolve.install.inprocess import link_wheels

    _, scheme = _venv(base_venv, f"tags-{abs(hash(tags)) % 10**8}")
    wheel, sha = _wheel(tmp_path, extra={"demo-1.0.dist-info/WHEEL": f"Wheel-Version: 1.0\n{tags}".encode()})
    if refused:
        with pytest.raises(InvalidBinary, match="its WHEEL file says it is for"):
            link_wheels([(_package(wheel, sha), wheel)], scheme, {}, tmp_path / "cache")
    else:
        link_wheels([(_package(wheel, sha), wheel)], scheme, {}, tmp_path / "cache")


@pytest.mark.parametrize(("wheel_file", "said"), [
    (None, "has no readable WHEEL file"),
    (b"Root-Is-Purelib: true\nTag: py3-none-any\n", "has no Wheel-Version"),
    (b"Wheel-Version: 2.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n", "Wheel-Version '2.0'"),
    (b"Wheel-Version: 1.9\nRoot-Is-Purelib: true\nTag: py3-none-any\n", None),  # a newer minor: taken, as pip does
])  # fmt: skip
def test_a_wheel_without_a_version_1_wheel_file_is_refused(
    base_venv: Path, tmp_path: Path, wheel_file: bytes | None, said: str | None
) -> None:
    """Found by the hostile-input audit: a wheel with no WHEEL file, or one saying Wheel-Version 9.0, was linked
    into the venv; pip and uv refuse both (PEP 427: an installer must fail on a newer major version)."""
    from cudaresolve.install.inprocess import link_wheels
    from cudaresolve.install.wheel_members import check_wheel_files

    _, scheme = _venv(base_venv, f"wheelfile-{abs(hash(wheel_file)) % 10**8}")
    wheel, _ = _wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        members = {n: archive.read(n) for n in archive.namelist() if not n.endswith(("/WHEEL", "/RECORD"))}
    if wheel_file is not None:
        members["demo-1.0.dist-info/WHEEL"] = wheel_file
    sha = write_wheel(wheel, members, "demo-1.0.dist-info")
    if said is None:
        link_wheels([(_package(wheel, sha), wheel)], scheme, {}, tmp_path / "cache")
        check_wheel_files([(wheel, "demo", "1.0")])
        return
    with pytest.raises(InvalidBinary, match=said):
        link_wheels([(_package(wheel, sha), wheel)], scheme, {}, tmp_path / "cache")
    with pytest.raises(InvalidBinary, match=said):  # the same before uv or pip is handed the wheel
        check_wheel_files([(wheel, "demo", "1.0")])
    assert not list(Path(scheme.purelib).glob("*.dist-info"))


def test_a_glibc_rename_or_a_pure_wheel_renamed_for_a_platform_is_taken(tmp_path: Path) -> None:
    from cudaresolve.install.wheel_members import tag_problem

    wheel = tmp_path / "WHEEL"
    wheel.write_text("Wheel-Version: 1.0\nTag: cp311-cp311-linux_x86_64\n")  # PyTorch's builds say this
    assert tag_problem(wheel, "torch-2.7.1+cu118-cp311-cp311-manylinux_2_28_x86_64.whl") is None
    wheel.write_text("Wheel-Version: 1.0\nTag: py3-none-any\n")
    assert tag_problem(wheel, "cmake-3.30-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl") is None
    assert tag_problem(wheel, "x-1.0-cp311-cp311-win_amd64.whl") is None
    wheel.write_text("Wheel-Version: 1.0\nTag: cp311-cp311-manylinux_2_28_aarch64\n")
    assert tag_problem(wheel, "x-1.0-cp311-cp311-manylinux_2_28_x86_64.whl") is not None


def test_a_lock_whose_recorded_target_does_not_read_says_so_after_its_install(
    base_venv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by the hostile-input audit: a pylock.toml whose [tool.cudaresolve] target had cc = "abc" was installed,
    then the doctor pass failed with a bare 'invalid-arch: not a compute capability or arch: 'abc'', naming neither
    the lock nor that its packages were installed."""
    from cudaresolve.cli import main

    venv, _ = _venv(base_venv, "bad-target")
    wheel, sha = _wheel(tmp_path, name="torch", version="2.7.1+cu128")
    lock = tmp_path / "pylock.toml"
    lock.write_text(f'lock-version = "1.0"\ncreated-by = "x"\n[[packages]]\nname = "torch"\nversion = "2.7.1+cu128"\n'
                    f'[packages.archive]\nurl = "{wheel.as_uri()}"\nhashes = {{sha256 = "{sha}"}}\n'
                    '[tool.cudaresolve]\nvariant = "cu128"\n'
                    '[tool.cudaresolve.target]\ngpus = [{name = "X", cc = "abc"}]\n')
    code = main(["install", "--from", str(lock), "--python", str(venv / "bin" / "python"), "--cache-dir",
                 str(tmp_path / "cache"), "--color", "never"])
    err = capsys.readouterr().err
    assert code == 1 and "invalid-lockfile" in err and "its packages were installed" in err and str(lock) in err, err
    assert [p.name for p in (venv / "lib").glob("python*/site-packages/torch-*.dist-info")] == [
        "torch-2.7.1+cu128.dist-info"]
