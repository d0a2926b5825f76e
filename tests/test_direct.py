"""Direct references (``name @ URL``) without a network: judged, resolved over a dict source, locked, installed.

The end-to-end side (files served on 127.0.0.1, real pip and uv) is ``test_direct_e2e.py``.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from cudaresolve.core.archs import parse_cc
from cudaresolve.core.versions import parse_driver
from cudaresolve.db.database import load_compat
from cudaresolve.errors import InvalidInput, InvalidLockfile, NoSolution, UnsupportedReference
from cudaresolve.install.pip import PipCommand, download_commands, install_commands
from cudaresolve.install.verify import check_installable
from cudaresolve.lock.lockfile import dumps_pylock, loads_pylock
from cudaresolve.lock.model import Lock, lock_from_solution
from cudaresolve.lock.requirements import dumps_requirements, loads_requirements
from cudaresolve.resolve.direct import parse_direct
from cudaresolve.resolve.model import FileKind, LockedPackage, Solution
from cudaresolve.resolve.solve import parse_constraints, parse_requests, solve
from cudaresolve.target.model import Gpu, Target
from test_source_solve import PROJECTS, DictSource
from test_source_solve import target as gpu_target

MINI = Path(__file__).parent / "fixtures" / "compat-mini.toml"
FILES = "https://files.example.org/wheels"
LIB = f"{FILES}/lib-1.2-py3-none-any.whl"
HASH = "a" * 64
CU118 = "https://download.pytorch.org/whl/cu118"
TORCH_CU118 = f"{CU118}/torch-2.7.1%2Bcu118-cp311-cp311-linux_x86_64.whl"


# --- what a direct reference may be ------------------------------------------------------------


def test_a_wheel_url_is_read_into_a_reference_without_credentials_shown() -> None:
    ref = parse_direct("Lib", f"https://user:secret@files.example.org/w/lib-1.2-py3-none-any.whl#SHA256={HASH.upper()}")
    assert (ref.name, str(ref.version), ref.filename) == ("lib", "1.2", "lib-1.2-py3-none-any.whl")
    assert ref.hashes == (("sha256", HASH),)
    assert ref.url == "https://user:secret@files.example.org/w/lib-1.2-py3-none-any.whl"  # it fetches the file
    assert ref.shown == "https://files.example.org/w/lib-1.2-py3-none-any.whl"
    local = parse_direct("lib", "file:///srv/wheels/lib-1.2-py3-none-any.whl")
    assert local.path == "/srv/wheels/lib-1.2-py3-none-any.whl" and local.hashes == ()
    assert str(parse_direct("torch", TORCH_CU118).version) == "2.7.1+cu118"  # %2B is the local version's +
    assert parse_direct("lib", f"http://127.0.0.1:8000/lib-1.2-py3-none-any.whl#sha512={'b' * 128}").hashes


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("git+https://github.com/org/lib", "VCS URLs are not supported: git+https://github.com/org/lib"),
        (f"{FILES}/lib-1.2.tar.gz", "a direct reference to a source distribution is not supported"),
        (f"{FILES}/lib-1.2.zip", "a direct reference to a source distribution is not supported"),
        (f"{FILES}/lib/", "a direct reference to a directory is not supported"),
        (f"{FILES}/lib-1.2.exe", "the URL does not name a wheel file"),
        (f"{FILES}/lib.whl", "the URL does not name a wheel file"),
        ("http://files.example.org/lib-1.2-py3-none-any.whl", "plain http is taken only from 127.0.0.1"),
        ("ftp://files.example.org/lib-1.2-py3-none-any.whl", "must be an https:// URL or a file:/// path"),
        ("./dist/lib-1.2-py3-none-any.whl", "must be an https:// URL or a file:/// path"),
        ("file://server/share/lib-1.2-py3-none-any.whl", "a file URL must name an absolute local path"),
    ],
)
def test_anything_but_a_wheel_is_an_unsupported_reference(url: str, message: str) -> None:
    with pytest.raises(UnsupportedReference) as info:
        parse_direct("lib", url)
    assert info.value.code == "unsupported-reference" and message in info.value.message
    assert info.value.hint and "built wheel" in info.value.hint


def test_a_wheel_of_another_package_or_a_weak_hash_is_refused() -> None:
    with pytest.raises(InvalidInput, match=r"lib-1\.2-py3-none-any\.whl is not a wheel of other"):
        parse_direct("other", LIB)
    for fragment in ("md5=0123", f"sha256={HASH[:10]}", "egg=lib", f"sha256={'z' * 64}"):
        with pytest.raises(InvalidInput, match="is not a hash cudaresolve checks"):
            parse_direct("lib", f"{LIB}#{fragment}")


def test_requests_keep_the_url_extras_and_marker_and_refuse_two_urls() -> None:
    env = {"sys_platform": "linux", "python_version": "3.11"}
    needs = parse_requests([f"lib[fast] @ {LIB}", "lib", f"lib @ {LIB}#sha256={HASH}"], env, direct=True)
    assert [(n.key, n.url) for n in needs] == [("lib[fast]", LIB), ("lib", LIB)]  # the same file, hash or not
    assert parse_requests(["app", f"lib @ {LIB} ; sys_platform == 'win32'"], env, direct=True)[0].name == "app"
    with pytest.raises(InvalidInput) as info:
        parse_requests([f"lib @ {LIB}", f"lib @ {FILES}/lib-1.3-py3-none-any.whl"], direct=True)
    assert info.value.message.startswith("lib is given two different URLs: ")
    with pytest.raises(InvalidInput, match="resolved only by lock and install"):
        parse_requests([f"lib @ {LIB}"])  # why-not, plan: nothing reads the file there
    with pytest.raises(UnsupportedReference):  # judged even when its marker is false on the target
        parse_requests(["app", "lib @ git+https://x/y ; sys_platform == 'win32'"], env, direct=True)
    with pytest.raises(InvalidInput, match="a constraint cannot name a URL"):
        parse_constraints([f"lib @ {LIB}"])


# --- resolved: one candidate for the name, whoever asks ----------------------------------------


def _solve(requests: list[str], source: DictSource, host: Target | None = None) -> Solution:
    return solve(requests, load_compat(MINI), host or gpu_target(), source=source).solution


def _pins(solution: Solution) -> dict[str, str]:
    return {p.name: p.version for p in solution.packages}


def test_a_direct_reference_pins_its_package_for_the_dependencies_too() -> None:
    source = DictSource(PROJECTS, direct={"lib": ["winonly"]})
    solution = _solve(["app", f"lib @ {LIB}#sha256={HASH}"], source)
    assert _pins(solution) == {"app": "1.0", "lib": "1.2", "winonly": "1.0"}  # not the index's lib 1.0
    lib = next(p for p in solution.packages if p.name == "lib")
    assert (lib.kind, lib.index, lib.url) == (FileKind.ARCHIVE, "", LIB)
    assert lib.to_dict() == {"name": "lib", "version": "1.2", "index": None, "url": LIB, "sha256": "1" * 64,
                             "kind": "archive"}


def test_extras_of_a_direct_reference_select_from_its_own_metadata() -> None:
    source = DictSource(PROJECTS, direct={"app": ["winonly; extra == 'win'", "lib>=1"]})
    url = f"{FILES}/app-2.0-py3-none-any.whl"
    assert _pins(_solve([f"app[win] @ {url}"], source)) == {"app": "2.0", "winonly": "1.0", "lib": "1.0"}
    assert _pins(_solve([f"app @ {url}"], source)) == {"app": "2.0", "lib": "1.0"}


def test_another_requirement_on_the_name_must_be_met_by_the_file() -> None:
    with pytest.raises(NoSolution) as info:
        _solve([f"lib @ {LIB}", "lib>=2"], DictSource(PROJECTS))
    assert info.value.findings[0].package == "lib"
    old = f"{FILES}/lib-0.5-py3-none-any.whl"
    with pytest.raises(NoSolution) as info:  # app 1.0 requires lib>=1
        _solve(["app", f"lib @ {old}"], DictSource(PROJECTS))
    assert [f.message for f in info.value.findings] == ["app 1.0 requires lib>=1, but lib==0.5 is chosen"]


def test_a_dependency_url_is_followed_only_when_the_user_gives_it() -> None:
    other = f"{FILES}/other-1.0-py3-none-any.whl"
    source = DictSource(PROJECTS, direct={"lib": [f"other @ {other}"], "other": []})
    with pytest.raises(NoSolution) as info:
        _solve([f"lib @ {LIB}"], source)
    assert info.value.message == f"lib 1.2 requires other @ {other}, a URL your requirements do not give"
    assert _pins(_solve([f"lib @ {LIB}", f"other @ {other}#sha256={HASH}"], source)) == {"lib": "1.2", "other": "1.0"}


def test_a_database_package_by_url_keeps_the_hardware_rules_and_its_variant() -> None:
    source = DictSource({"torch": [("2.7.1+cu118", [], False)]})
    solution = _solve([f"torch @ {TORCH_CU118}", "torchrec"], source)
    assert solution.variant == "cu118"  # the file's build decides the set's variant (cu121 would win otherwise)
    assert _pins(solution) == {"torch": "2.7.1+cu118", "fbgemm-gpu": "1.2.0+cu118", "torchrec": "1.2.0"}
    torch = next(p for p in solution.packages if p.name == "torch")
    assert (torch.kind, torch.index, torch.url) == (FileKind.ARCHIVE, "", TORCH_CU118)


def test_a_database_build_the_target_cannot_use_is_refused_with_its_reason() -> None:
    pascal = Target(gpus=(Gpu(name="GTX 1080 Ti", cc=parse_cc("6.1")),), driver=parse_driver("535.104.05"),
                    python="3.11", platform="linux_x86_64")
    url = "https://download.pytorch.org/whl/cu121/torch-2.8.0%2Bcu121-cp311-cp311-linux_x86_64.whl"
    with pytest.raises(NoSolution) as info:
        _solve([f"torch @ {url}"], DictSource({}), pascal)
    assert [f.code for f in info.value.findings] == ["sm-not-covered"]
    assert info.value.hint and "pins torch to a build the target cannot use" in info.value.hint


def test_a_build_the_database_does_not_know_is_refused_not_trusted() -> None:
    url = "https://example.org/torch-2.7.1%2Bcu999-cp311-cp311-linux_x86_64.whl"
    with pytest.raises(NoSolution) as info:
        _solve([f"torch @ {url}"], DictSource({}))
    assert info.value.message == (
        "torch 2.7.1+cu999 (torch-2.7.1+cu999-cp311-cp311-linux_x86_64.whl) is not a build the compatibility"
        " database offers for this target, so its GPU support cannot be checked"
    )


# --- locked and installed ----------------------------------------------------------------------


def _archive_lock() -> Lock:
    packages = (
        LockedPackage(name="idna", version="3.10", index="https://pypi.org/simple", sha256="2" * 64,
                      url="https://files.example.org/idna-3.10-py3-none-any.whl",
                      filename="idna-3.10-py3-none-any.whl"),
        LockedPackage(name="lib", version="1.2", index="", sha256=HASH, url=LIB, filename="lib-1.2-py3-none-any.whl",
                      size=1234, kind=FileKind.ARCHIVE),
    )
    return Lock(packages=packages, variant="cpu", index_url="https://download.pytorch.org/whl/cpu")


def test_pylock_writes_a_direct_reference_as_an_archive_and_reads_it_back() -> None:
    text = dumps_pylock(_archive_lock())  # validated with packaging.pylock on the way
    entry = tomllib.loads(text)["packages"][1]
    assert entry == {"name": "lib", "version": "1.2", "archive": {"url": LIB, "size": 1234, "hashes": {"sha256": HASH}}}
    assert loads_pylock(text).packages == _archive_lock().packages
    pip_style = text.replace('version = "1.2"\n\n[packages.archive]', "[packages.archive]")  # pip writes no version
    assert loads_pylock(pip_style).packages[1].version == "1.2"


def test_requirements_write_a_direct_reference_by_url_with_its_hash() -> None:
    text = dumps_requirements(_archive_lock())
    assert f"lib @ {LIB} --hash=sha256:{HASH}" in text.splitlines()
    back = loads_requirements(text)
    assert [(p.name, p.version, p.kind, p.url, p.sha256) for p in back.packages] == [
        ("idna", "3.10", FileKind.WHEEL, None, "2" * 64),
        ("lib", "1.2", FileKind.ARCHIVE, LIB, HASH),
    ]
    check_installable(back, source="r.txt", requirements=True, mirrors={},
                      environment={"python_full_version": "3.11.7"})  # one index: the archive has none


@pytest.mark.parametrize("editable", [False, True])
def test_requirements_name_a_local_project_folder_by_its_url_and_read_it_back(tmp_path: Path, editable: bool) -> None:
    """A local folder (``name @ file:///dir``, ``-e DIR``) is pip's ``name @ file:///dir`` line in the active group,
    never a ``name==version`` pin on an index of its own that pip reads as a comment; pip hashes no folder, so the
    others' hashes are comments (pip checks all or none), and ``install --from`` takes the file back as it was."""
    folder = tmp_path / "my lib"
    folder.mkdir()
    (folder / "pyproject.toml").write_text('[project]\nname = "my-lib"\nversion = "0.2"\n')
    local = LockedPackage(name="my-lib", version="0.2", index="", url=folder.as_uri(), kind=FileKind.DIRECTORY,
                          editable=editable)
    lock = replace(_archive_lock(), packages=(*_archive_lock().packages, local))
    text = dumps_requirements(lock)
    lines = text.splitlines()
    assert f"my-lib @ {folder.as_uri()}" in lines and not any(line.startswith("#> ") for line in lines)
    assert f"lib @ {LIB}  # sha256:{HASH}" in lines
    back = loads_requirements(text)
    assert [(p.name, p.kind, p.url, p.editable) for p in back.packages if p.index == ""] == [
        ("lib", FileKind.ARCHIVE, LIB, False), ("my-lib", FileKind.DIRECTORY, folder.as_uri(), editable),
    ]
    check_installable(back, source="r.txt", requirements=True, mirrors={},
                      environment={"python_full_version": "3.11.7"})


def test_pip_fetches_a_direct_reference_from_its_url_alone_then_installs_it_by_pin() -> None:
    lock = _archive_lock()
    direct = download_commands(lock, python="py", workdir="/w")[-1]
    assert direct == PipCommand(
        argv=("py", "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--no-index", "-d", "/w/wheels",
              "--require-hashes", "-r", "/w/direct-hashed.txt"),
        index="",
        env=(("PIP_FIND_LINKS", "/w"),),
        files=(("/w/direct-hashed.txt", f"lib @ {LIB} --hash=sha256:{HASH}\n"),),
    )
    install = install_commands(lock, python="py", workdir="/w")
    assert install[0].files[0][1] == f"idna==3.10 --hash=sha256:{'2' * 64}\nlib==1.2 --hash=sha256:{HASH}\n"


def test_install_takes_a_local_wheel_only_as_a_direct_reference() -> None:
    local = LockedPackage(name="lib", version="1.2", index="", sha256=HASH, url="file:///srv/lib-1.2-py3-none-any.whl",
                          kind=FileKind.ARCHIVE)
    env = {"python_full_version": "3.11.7"}
    check_installable(Lock(packages=(local,)), source="pylock.toml", requirements=False, mirrors={}, environment=env)
    indexed = LockedPackage(name="lib", version="1.2", index="file:///srv/simple", sha256=HASH)
    with pytest.raises(InvalidLockfile, match="file:///srv/simple"):
        check_installable(Lock(packages=(indexed,)), source="pylock.toml", requirements=False, mirrors={},
                          environment=env)


def test_the_lock_keeps_the_url_without_credentials() -> None:
    solution = _solve(["lib @ https://user:secret@files.example.org/wheels/lib-1.2-py3-none-any.whl"],
                      DictSource(PROJECTS))
    lib = next(p for p in lock_from_solution(solution).packages if p.name == "lib")
    assert lib.url == LIB
    assert "secret" not in dumps_pylock(lock_from_solution(solution)) + str(solution.to_dict())


def test_a_folders_pyproject_is_read_within_the_bounds_of_every_toml(tmp_path: Path) -> None:
    """A project folder given as a requirement is named by its pyproject.toml, read as every TOML is: a key of more
    dotted parts than ``core.decode.MAX_KEY_PARTS`` (tomllib's work grows with the square of them) or a file that is
    no regular file names no project, as an unreadable one does."""
    from cudaresolve.core.decode import MAX_KEY_PARTS
    from cudaresolve.lock.reqfiles import directory_requirement

    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    assert directory_requirement(str(plain)) == f"demo @ {plain.resolve().as_uri()}"
    deep = tmp_path / "deep"
    deep.mkdir()
    key = ".".join(["a"] * (MAX_KEY_PARTS + 50))
    (deep / "pyproject.toml").write_text(f'[project]\nname = "demo"\n\n[tool]\n{key} = 1\n')
    assert directory_requirement(str(deep)) is None
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "pyproject.toml")
    assert directory_requirement(str(fifo)) is None  # refused at once, not read until a writer comes
