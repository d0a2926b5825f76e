"""lockfile: Lock <-> pylock.toml / requirements, validation, atomic writes."""

from __future__ import annotations

import os
import stat
import tomllib
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest
from packaging.markers import default_environment
from packaging.pylock import PackageWheel, Pylock
from packaging.tags import Tag

from cudaresolve.core.archs import parse_cc
from cudaresolve.core.files import write_text_atomic
from cudaresolve.core.versions import parse_cuda_version, parse_driver
from cudaresolve.errors import InvalidInput, InvalidLockfile
from cudaresolve.lock.lockfile import (
    dumps_pylock,
    loads_pylock,
    pylock_blocker,
    pylock_problem,
    read_lock,
    write_lock,
)
from cudaresolve.lock.model import Lock, index_groups, lock_from_solution
from cudaresolve.lock.requirements import dumps_requirements, loads_requirements
from cudaresolve.resolve.model import LockedPackage, Solution
from cudaresolve.target.model import Gpu, Target
from cudaresolve.text.catalogue import format_text
from cudaresolve.text.findings import Notice
from cudaresolve.text.model import Text, literal

if TYPE_CHECKING:
    from pathlib import Path

CU118 = "https://download.pytorch.org/whl/cu118"
PYPI = "https://pypi.org/simple"
H_TORCH = "a" * 64
H_FBGEMM = "b" * 64
H_FLASH = "c" * 64
TORCH_URL = f"{CU118}/torch-2.7.1%2Bcu118-cp311-cp311-manylinux_2_28_x86_64.whl"
FBGEMM_URL = f"{CU118}/fbgemm_gpu-1.2.0%2Bcu118-cp311-cp311-manylinux_2_28_x86_64.whl"
FLASH_URL = "https://files.pythonhosted.org/packages/ab/cd/flashinfer_python-0.2.5-py3-none-any.whl"


def _solution(*, hashes: bool = True) -> Solution:
    target = Target(
        gpus=(Gpu(name="NVIDIA A100-SXM4-80GB", cc=parse_cc("8.0"), memory_mib=81920, datacenter=True),),
        driver=parse_driver("535.104.05"),
        cuda_driver_max=parse_cuda_version("12.2"),
        python="3.11",
    )
    return Solution(
        target=target,
        variant="cu118",
        index_url=CU118,
        packages=(
            LockedPackage(
                name="torch",
                version="2.7.1+cu118",
                index=CU118,
                url=TORCH_URL,
                sha256=H_TORCH.upper() if hashes else None,
                requires_python=">=3.9.0",
            ),
            LockedPackage(name="flashinfer_python", version="0.2.5", index=PYPI, url=FLASH_URL, sha256=H_FLASH),
            LockedPackage(
                name="fbgemm-gpu",
                version="1.2.0+cu118",
                index=CU118,
                url=FBGEMM_URL,
                sha256=H_FBGEMM if hashes else None,
            ),
        ),
        warnings=(Notice(code="ptx-jit-only", text=literal("sm_120 runs torch only through PTX JIT")),),
    )


@pytest.fixture
def lock() -> Lock:
    return lock_from_solution(_solution())


# --- Lock ------------------------------------------------------------------------------------


def test_lock_from_solution_normalizes_sorts_and_describes_the_target(lock: Lock) -> None:
    assert [p.name for p in lock.packages] == ["fbgemm-gpu", "flashinfer-python", "torch"]
    torch = lock.packages[2]
    assert torch.filename == "torch-2.7.1+cu118-cp311-cp311-manylinux_2_28_x86_64.whl"  # %2B decoded
    assert torch.sha256 == H_TORCH  # lower-cased
    assert lock.requires_python == "==3.11.*"
    assert lock.environments == ("sys_platform == 'linux' and platform_machine == 'x86_64'",)
    assert lock.variant == "cu118"
    assert lock.index_url == CU118
    assert lock.target == {  # None values dropped: TOML has no null
        "gpus": [{"name": "NVIDIA A100-SXM4-80GB", "cc": "8.0", "memory_mib": 81920, "datacenter": True}],
        "driver": "535.104.05",
        "cuda_driver_max": "12.2",
        "platform": "linux_x86_64",
        "python": "3.11",
        "source": "flags",
    }


def test_cpu_target_has_no_driver_key() -> None:
    solution = replace(_solution(), target=Target(python="3.12", platform="win_amd64"))
    lock = lock_from_solution(solution)
    assert lock.target == {"gpus": [], "platform": "win_amd64", "python": "3.12", "source": "flags"}
    assert lock.environments == ("sys_platform == 'win32' and platform_machine == 'AMD64'",)
    assert lock.requires_python == "==3.12.*"


@pytest.mark.parametrize("hashes", [True, False])
def test_dict_round_trip(hashes: bool) -> None:
    lock = lock_from_solution(_solution(hashes=hashes))
    assert Lock.from_dict(lock.to_dict()) == lock


def test_round_trip_of_a_bare_lock() -> None:
    lock = Lock(packages=(LockedPackage(name="torch", version="2.7.1", index=PYPI),))
    assert lock.to_dict() == {
        "lock-version": "1.0",
        "created-by": "cudaresolve",
        "packages": [{"name": "torch", "version": "2.7.1", "index": PYPI}],
    }
    assert Lock.from_dict(lock.to_dict()) == lock


def test_index_groups_put_the_lock_index_first_and_ignore_trailing_slashes(lock: Lock) -> None:
    slashed = replace(
        lock, packages=(*lock.packages, LockedPackage(name="xformers", version="0.0.31", index=CU118 + "/"))
    )
    assert [(index, [p.name for p in members]) for index, members in index_groups(slashed)] == [
        (CU118, ["fbgemm-gpu", "torch", "xformers"]),
        (PYPI, ["flashinfer-python"]),
    ]


# --- pylock.toml -----------------------------------------------------------------------------

EXPECTED_PYLOCK = f"""\
# This file is @generated by cudaresolve for one target; do not edit.
# Install it with `cudaresolve install --from pylock.toml`.
lock-version = "1.0"
environments = ["sys_platform == 'linux' and platform_machine == 'x86_64'"]
requires-python = "==3.11.*"
created-by = "cudaresolve"

[[packages]]
name = "fbgemm-gpu"
version = "1.2.0+cu118"
index = "{CU118}"

[[packages.wheels]]
name = "fbgemm_gpu-1.2.0+cu118-cp311-cp311-manylinux_2_28_x86_64.whl"
url = "{FBGEMM_URL}"
hashes = {{sha256 = "{H_FBGEMM}"}}

[[packages]]
name = "flashinfer-python"
version = "0.2.5"
index = "{PYPI}"

[[packages.wheels]]
name = "flashinfer_python-0.2.5-py3-none-any.whl"
url = "{FLASH_URL}"
hashes = {{sha256 = "{H_FLASH}"}}

[[packages]]
name = "torch"
version = "2.7.1+cu118"
requires-python = ">=3.9.0"
index = "{CU118}"

[[packages.wheels]]
name = "torch-2.7.1+cu118-cp311-cp311-manylinux_2_28_x86_64.whl"
url = "{TORCH_URL}"
hashes = {{sha256 = "{H_TORCH}"}}

[tool.cudaresolve]
variant = "cu118"
index-url = "{CU118}"

[[tool.cudaresolve.warnings]]
code = "ptx-jit-only"
message = "sm_120 runs torch only through PTX JIT"

[tool.cudaresolve.target]
driver = "535.104.05"
cuda_driver_max = "12.2"
platform = "linux_x86_64"
python = "3.11"
source = "flags"
[[tool.cudaresolve.target.gpus]]
name = "NVIDIA A100-SXM4-80GB"
cc = "8.0"
memory_mib = 81920
datacenter = true
"""


def test_dumps_pylock_exact_text(lock: Lock) -> None:
    assert dumps_pylock(lock) == EXPECTED_PYLOCK


def test_pylock_is_valid_for_packaging_and_selects_every_wheel(lock: Lock) -> None:
    pylock = Pylock.from_dict(tomllib.loads(dumps_pylock(lock)))
    environment = dict(default_environment())
    environment.update(
        sys_platform="linux", platform_machine="x86_64", python_version="3.11", python_full_version="3.11.7"
    )
    tags = [Tag("cp311", "cp311", "manylinux_2_28_x86_64"), Tag("py3", "none", "any")]
    selected = list(pylock.select(environment=environment, tags=tags))  # type: ignore[arg-type]
    assert all(isinstance(dist, PackageWheel) for _, dist in selected)
    assert [(package.name, dist.filename) for package, dist in selected] == [  # type: ignore[union-attr]
        ("fbgemm-gpu", "fbgemm_gpu-1.2.0+cu118-cp311-cp311-manylinux_2_28_x86_64.whl"),
        ("flashinfer-python", "flashinfer_python-0.2.5-py3-none-any.whl"),
        ("torch", "torch-2.7.1+cu118-cp311-cp311-manylinux_2_28_x86_64.whl"),
    ]


def test_loads_pylock_round_trip(lock: Lock) -> None:
    assert loads_pylock(dumps_pylock(lock)) == lock


def test_pylock_needs_every_hash() -> None:
    lock = lock_from_solution(_solution(hashes=False))
    message = (
        "pylock.toml needs a sha256 for every wheel (PEP 751), and 2 packages have none: "
        f"fbgemm-gpu 1.2.0+cu118 from {FBGEMM_URL}, torch 2.7.1+cu118 from {TORCH_URL}"
    )
    assert format_text(pylock_problem(lock)) == message  # type: ignore[arg-type]
    with pytest.raises(InvalidLockfile) as info:
        dumps_pylock(lock)
    assert info.value.message == message
    assert info.value.hint == "without them, write requirements instead: --format requirements"


def test_a_file_given_only_by_another_hash_is_refused_never_taken_unchecked(lock: Lock) -> None:
    """PEP 751 allows any algorithm; a file whose sha256 is not there could only be installed unchecked."""
    text = dumps_pylock(lock)
    sha = lock.packages[0].sha256
    assert sha is not None and f'sha256 = "{sha}"' in text
    other = text.replace(f'sha256 = "{sha}"', 'sha512 = "' + "ab" * 64 + '"', 1)
    with pytest.raises(InvalidLockfile) as info:
        loads_pylock(other)
    assert "sha512" in info.value.message and "sha256" in info.value.message


def test_pylock_problem_singular_and_missing_url(lock: Lock) -> None:
    assert pylock_problem(lock) is None
    one = replace(lock, packages=(replace(lock.packages[0], sha256=None), *lock.packages[1:]))
    assert format_text(pylock_problem(one)) == (  # type: ignore[arg-type]
        f"pylock.toml needs a sha256 for every wheel (PEP 751), and fbgemm-gpu 1.2.0+cu118 from {FBGEMM_URL} has none"
    )
    no_url = replace(lock, packages=(replace(lock.packages[0], url=None), *lock.packages[1:]))
    assert format_text(pylock_problem(no_url)) == (  # type: ignore[arg-type]
        f"pylock.toml needs a URL for every wheel (PEP 751), and fbgemm-gpu 1.2.0+cu118 from {CU118} has none"
    )
    unread = Notice(code="incomplete-lock", text=Text.of("lock.incomplete", reason=literal("torch: page 404")))
    assert format_text(pylock_blocker(one, whole=False, warnings=(unread,))) == (  # type: ignore[arg-type]
        "a pylock.toml must list every dependency, and the index metadata it needs is missing: torch: page 404 "
        "(run once online; --format requirements writes the GPU stack's pins)"
    )  # the package and page that could not be read, not the packages it left without files
    assert pylock_blocker(one, whole=False) == pylock_problem(one)  # whole, but a file is not listed: that one
    assert pylock_blocker(lock, whole=True) is None


def test_a_file_the_index_does_not_list_blocks_the_lock_with_where_it_was_looked_for(lock: Lock) -> None:
    """``lock torch --index-mirror ...=MIRROR -o pylock.toml`` whose mirror lacks the wheel said only "torch
    2.15.0+cpu from https://mirror/cpu has none" (a sha256), with the hint to run online: the ``wheel-not-listed``
    warning, which says the mirror lists no such wheel and to check its URL and layout, was never shown."""
    one = replace(lock, packages=(replace(lock.packages[0], sha256=None, url=None), *lock.packages[1:]))
    fields = {"package": "fbgemm-gpu", "version": "1.2.0+cu118", "python": "3.11", "platform": "linux_x86_64"}
    absent = Notice(code="wheel-not-listed", text=Text.of("lock.wheel-not-on-mirror", mirror="https://m.example/cu118",
                                                             index=CU118, **fields))  # fmt: skip
    assert pylock_blocker(one, whole=False, warnings=(absent,)) == absent.text
    assert pylock_blocker(one, whole=False) == pylock_problem(one)


FOREIGN = """\
lock-version = "1.0"
created-by = "pip"
[[packages]]
name = "torch"
version = "2.7.1"
[[packages.wheels]]
url = "https://files.pythonhosted.org/torch-2.7.1-cp311-cp311-manylinux_2_28_x86_64.whl"
"""
HASHES = f'hashes = {{sha256 = "{H_TORCH}"}}\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x = [", "pylock.toml is not valid TOML: Invalid value (at end of document)"),
        (FOREIGN, "pylock.toml is not a valid PEP 751 lock: Missing required value in 'packages[0].wheels[0].hashes'"),
        (
            FOREIGN.replace('"1.0"', '"2.0"') + HASHES,
            "pylock.toml is not a valid PEP 751 lock: pylock version 2.0 is not supported",
        ),
        (FOREIGN + HASHES, "pylock.toml: packages[0] (torch) names no index"),
        (
            FOREIGN.replace('version = "2.7.1"\n', f'version = "2.7.1"\nindex = "{PYPI}"\n')
            + HASHES
            + "[[packages.wheels]]\n"
            'url = "https://x/torch-2.7.1-cp312-cp312-manylinux_2_28_x86_64.whl"\n' + HASHES,
            "pylock.toml: packages[0] (torch) has 2 wheels; a cudaresolve lock pins one wheel per package",
        ),
    ],
)
def test_loads_pylock_rejects(text: str, message: str) -> None:
    with pytest.raises(InvalidLockfile) as info:
        loads_pylock(text)
    assert info.value.message == message
    assert info.value.hint


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"created-by": "x", "packages": []}, "lock-version is missing"),
        ({"lock-version": "2.0", "created-by": "x", "packages": []}, "lock-version '2.0' is not supported"),
        ({"lock-version": "1.0", "created-by": "x", "packages": {}}, "packages should be an array"),
        (
            {
                "lock-version": "1.0",
                "created-by": "x",
                "packages": [{"name": "t", "version": "1", "index": PYPI, "vcs": {}}],
            },
            "packages[0] (t) has 'vcs'; cudaresolve installs a wheel or an sdist from an index, a wheel by URL, "
            "or a local project folder",
        ),
        (
            {
                "lock-version": "1.0",
                "created-by": "x",
                "packages": [{"name": "t", "archive": {"url": "https://x/t-1.tar.gz", "hashes": {}}}],
            },
            "packages[0].archive (t) is not a wheel by URL; an archive entry cudaresolve installs is a .whl URL",
        ),
    ],
)
def test_from_dict_rejects(data: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidLockfile) as info:
        Lock.from_dict(data)
    assert info.value.message == message


# --- requirements ----------------------------------------------------------------------------

HEADER = """\
# This file is @generated by cudaresolve for one target; do not edit.
# Install it with `cudaresolve install --from FILE`: one pip run per index, the pinned wheels
# with --no-deps (and --require-hashes where hashes are known); no dependency is followed.
# Plain `pip install -r FILE` sees only the first index, and with hashes it needs --no-deps.
# cudaresolve: variant = "cu118"
# cudaresolve: index-url = "https://download.pytorch.org/whl/cu118"
# cudaresolve: requires-python = "==3.11.*"
# cudaresolve: environments = ["sys_platform == 'linux' and platform_machine == 'x86_64'"]
# cudaresolve: target = {"gpus": [{"name": "NVIDIA A100-SXM4-80GB", "cc": "8.0", "memory_mib": 81920, \
"datacenter": true}], "driver": "535.104.05", "cuda_driver_max": "12.2", "platform": "linux_x86_64", \
"python": "3.11", "source": "flags"}
# cudaresolve: warnings = [{"code": "ptx-jit-only", "message": "sm_120 runs torch only through PTX JIT"}]
"""
SECOND_INDEX = f"""\
# pip takes one --index-url per run, so these packages from another index are
# comments to pip; `cudaresolve install --from FILE` installs them in their own run.
#> --index-url {PYPI}
#> flashinfer-python==0.2.5 --hash=sha256:{H_FLASH}
"""


def test_dumps_requirements_exact_text_with_hashes(lock: Lock) -> None:
    assert (
        dumps_requirements(lock)
        == HEADER
        + f"""
--index-url {CU118}
fbgemm-gpu==1.2.0+cu118 --hash=sha256:{H_FBGEMM}
torch==2.7.1+cu118 --hash=sha256:{H_TORCH}

"""
        + SECOND_INDEX
    )


def test_dumps_requirements_accepts_a_solution(lock: Lock) -> None:
    assert dumps_requirements(_solution()) == dumps_requirements(lock)


def test_dumps_requirements_without_hashes() -> None:
    lock = lock_from_solution(_solution(hashes=False))
    assert (
        dumps_requirements(lock)
        == "# NOT A COMPLETE LOCK: 2 of 3 pins have no hash (written offline or without the index); "
        "pip cannot check them\n"
        + HEADER
        + f"""
--index-url {CU118}
fbgemm-gpu==1.2.0+cu118
torch==2.7.1+cu118

"""
        + SECOND_INDEX
    )


def test_partial_hashes_become_comments_since_pip_checks_all_or_none(lock: Lock) -> None:
    partial = replace(lock, packages=(replace(lock.packages[0], sha256=None), *lock.packages[1:]))
    assert (
        dumps_requirements(partial)
        == "# NOT A COMPLETE LOCK: 1 of 3 pins have no hash (written offline or without the index); "
        "pip cannot check them\n"
        + HEADER
        + f"""
# sha256 as comments: pip checks hashes all-or-nothing and 1 of 2 packages here have none
--index-url {CU118}
fbgemm-gpu==1.2.0+cu118
torch==2.7.1+cu118  # sha256:{H_TORCH}

"""
        + SECOND_INDEX
    )


@pytest.mark.parametrize("hashes", ["all", "some", "none"])
def test_requirements_round_trip_keeps_pins_indexes_hashes_and_target(lock: Lock, hashes: str) -> None:
    if hashes != "all":
        cut = 1 if hashes == "some" else 3
        lock = replace(
            lock, packages=tuple(replace(p, sha256=None) if i < cut else p for i, p in enumerate(lock.packages))
        )
    # url, file name and per-package requires-python are pylock-only facts
    expected = replace(
        lock, packages=tuple(replace(p, url=None, filename=None, requires_python=None) for p in lock.packages)
    )
    assert loads_requirements(dumps_requirements(lock)) == expected


def test_loads_requirements_by_hand_with_continuations() -> None:
    text = f"-i {PYPI}\n\n# a comment\nTorch==2.7.1 \\\n    --hash sha256:{H_TORCH.upper()} \\\n    --hash=md5:00\n"
    assert loads_requirements(text) == Lock(
        packages=(LockedPackage(name="torch", version="2.7.1", index=PYPI, sha256=H_TORCH),)
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            f"--index-url {PYPI}\n--extra-index-url https://evil.example/simple\n",
            "line 2: --extra-index-url is not allowed in a cudaresolve lock",
        ),
        ("-f /opt/wheels\n", "line 1: -f is not allowed in a cudaresolve lock"),
        ("torch==2.7.1\n", "line 1: torch==2.7.1 comes before any --index-url"),
        (
            f"--index-url {PYPI}\ntorch>=2.4\n",
            "line 2: 'torch>=2.4' is not an exact pin; a lock holds name==version only",
        ),
        (
            f"--index-url {PYPI}\ntorch==2.*\n",
            "line 2: 'torch==2.*' is not an exact pin; a lock holds name==version only",
        ),
        (f"--index-url {PYPI}\ntorch==2.7.1 --hash=sha256:zz\n", "line 2: not a sha256 digest: 'zz'"),
        (f"--index-url {PYPI}\ntorch==2.7.1 --no-deps\n", "line 2: unexpected '--no-deps' after a pin"),
        (f"--index-url {PYPI}\n!!\n", "line 2: not a requirement: '!!'"),
        ("--index-url\n", "line 1: --index-url needs exactly one URL"),
        ("# cudaresolve: variant = cu118\n", "line 1: unreadable cudaresolve metadata: 'cu118'"),
    ],
)
def test_loads_requirements_rejects(text: str, message: str) -> None:
    with pytest.raises(InvalidLockfile) as info:
        loads_requirements(text, source="req.txt")
    assert info.value.message == f"req.txt, {message}"
    assert info.value.hint


# --- files -----------------------------------------------------------------------------------


def test_read_lock_by_suffix(lock: Lock, tmp_path: Path) -> None:
    write_lock(tmp_path / "pylock.toml", lock)
    write_lock(tmp_path / "requirements.txt", lock, fmt="requirements")
    assert read_lock(tmp_path / "pylock.toml") == lock
    assert read_lock(tmp_path / "requirements.txt") == loads_requirements(dumps_requirements(lock))
    assert (tmp_path / "requirements.txt").read_text() == dumps_requirements(lock)


def test_read_lock_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidLockfile) as info:
        read_lock(tmp_path / "missing.txt")
    assert info.value.message == f"cannot read lock file {tmp_path / 'missing.txt'}: No such file or directory"
    (tmp_path / "pylock.toml").write_text("lock-version = [\n")
    with pytest.raises(InvalidLockfile) as info:
        read_lock(tmp_path / "pylock.toml")
    assert info.value.message.startswith(f"{tmp_path / 'pylock.toml'} is not valid TOML: ")


def test_write_lock_checks_the_pep_751_file_name(lock: Lock, tmp_path: Path) -> None:
    write_lock(tmp_path / "pylock.gpu.toml", lock)
    with pytest.raises(InvalidInput) as info:
        write_lock(tmp_path / "lock.toml", lock)
    assert info.value.message == "a PEP 751 lock must be named pylock.toml or pylock.NAME.toml, not 'lock.toml'"
    assert not (tmp_path / "lock.toml").exists()
    from cudaresolve.lock.lockfile import check_output_name

    for path in (".", "/"):  # a path with no file name is named as given, never as ''
        with pytest.raises(InvalidInput) as info:
            check_output_name(path, "pylock")
        assert info.value.message.endswith(f"not {path!r}")


def test_a_requirements_lock_is_never_given_a_pep_751_name() -> None:
    """Read back by its name, a pylock.toml holding requirements text failed as invalid TOML: refused before any
    work, as a pylock under another name is."""
    from cudaresolve.lock.lockfile import check_output_name

    for name in ("pylock.toml", "out/pylock.gpu.toml"):
        with pytest.raises(InvalidInput, match="is a PEP 751 lock's name"):
            check_output_name(name, "requirements")
    for name in ("requirements.txt", "-", "pylock.txt"):
        check_output_name(name, "requirements")


def test_a_failing_serializer_leaves_the_old_lock(tmp_path: Path) -> None:
    path = tmp_path / "pylock.toml"
    path.write_text("old\n")
    with pytest.raises(InvalidLockfile):
        write_lock(path, lock_from_solution(_solution(hashes=False)))
    assert path.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["pylock.toml"]


def test_write_text_atomic_replaces_and_keeps_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "requirements.txt"
    path.write_text("old\n")
    path.chmod(0o640)
    write_text_atomic(path, "new\n")
    assert path.read_bytes() == b"new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["requirements.txt"]


@pytest.mark.parametrize("broken", ["replace", "fsync"])
def test_write_text_atomic_failure_keeps_the_old_file_and_removes_the_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: str
) -> None:
    path = tmp_path / "pylock.toml"
    path.write_text("old\n")

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, broken, fail)
    with pytest.raises(OSError, match="No space left on device"):
        write_text_atomic(path, "new\n")
    monkeypatch.undo()
    assert path.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["pylock.toml"]


def test_write_text_atomic_creates_a_new_file(tmp_path: Path) -> None:
    write_text_atomic(tmp_path / "new.txt", "x\n")
    assert (tmp_path / "new.txt").read_text() == "x\n"


def test_a_cache_entry_is_written_atomically_without_fsync_and_a_lock_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cudaresolve.core.files import write_private_atomic

    synced: list[int] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    write_private_atomic(tmp_path / "cache" / "entry.json", b"{}")  # a cache entry: lost in a crash is fine
    assert (tmp_path / "cache" / "entry.json").read_bytes() == b"{}" and synced == []
    write_text_atomic(tmp_path / "pylock.toml", "lock\n")  # the user's file: the data and the rename synced
    assert len(synced) == 2


def test_a_wheels_size_is_recorded_and_read_back(lock: Lock) -> None:
    sized = replace(lock, packages=tuple(replace(p, size=1234 + i) for i, p in enumerate(lock.packages)))
    text = dumps_pylock(sized)
    data = tomllib.loads(text)
    assert [p["wheels"][0]["size"] for p in data["packages"]] == [1234 + i for i in range(len(lock.packages))]
    assert all(w.size is not None for p in Pylock.from_dict(data).packages for w in p.wheels or ())
    assert [p.size for p in loads_pylock(text, source="x").packages] == [p.size for p in sized.packages]


def test_a_files_upload_time_is_recorded_as_a_toml_datetime(lock: Lock) -> None:
    when = "2026-05-18T23:33:29.955928+00:00"
    timed = replace(lock, packages=tuple(replace(p, upload_time=when) for p in lock.packages))
    text = dumps_pylock(timed)
    assert "upload-time = 2026-05-18T23:33:29.955928" in text
    Pylock.from_dict(tomllib.loads(text))  # PEP 751 wants a datetime there
    assert {p.upload_time for p in loads_pylock(text, source="x").packages} == {when}
    with pytest.raises(InvalidLockfile):
        loads_pylock(text.replace("upload-time = 2026-05-18T23:33:29.955928", 'upload-time = "yesterday"#'), source="x")


def test_a_newer_minor_lock_version_is_a_coded_warning_not_a_bare_line(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """PEP 751 asks a tool to warn of a minor version it does not know: packaging's logger printed that as a bare
    line on stderr, outside 'warning: <code>: ...', and only on the first read (a text found valid is not checked
    again). The lock now says it as ``lock-minor-version``, on every read, in either language."""
    from cudaresolve.lock.model import read_notices

    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(tmp_path))
    text = EXPECTED_PYLOCK.replace('lock-version = "1.0"', 'lock-version = "1.3"')
    for _ in range(2):
        lock = loads_pylock(text)
        assert [n.code for n in read_notices(lock)] == ["lock-minor-version"]
        assert "1.3" in format_text(read_notices(lock)[0].text, "en")
    assert not [r for r in caplog.records if r.name.startswith("packaging")]  # no handler: a bare stderr line
    assert read_notices(loads_pylock(EXPECTED_PYLOCK)) == ()
