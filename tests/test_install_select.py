"""install.select: the packages of a lock the chosen extras, groups and interpreter take (PEP 751 markers)."""

from __future__ import annotations

import pytest

from cudaresolve.errors import InvalidInput, InvalidLockfile
from cudaresolve.install.select import chosen_features, select_packages
from cudaresolve.lock.features import Selection
from cudaresolve.lock.model import Lock
from cudaresolve.resolve.model import LockedPackage

PYPI = "https://pypi.org/simple"
LINUX = {"sys_platform": "linux", "python_version": "3.11", "python_full_version": "3.11.9",
         "platform_machine": "x86_64"}  # fmt: skip


def _package(name: str, marker: str | None = None, version: str = "1.0") -> LockedPackage:
    return LockedPackage(name=name, version=version, index=PYPI, url=f"{PYPI}/{name}.whl", sha256="a" * 64,
                         marker=marker)  # fmt: skip


LOCK = Lock(
    packages=(
        _package("app"),
        _package("gpu-kernels", "'cuda' in extras"),
        _package("pytest", "'dev' in dependency_groups or 'test' in dependency_groups"),
        _package("sphinx", "'docs' in dependency_groups"),
        _package("winonly", "sys_platform == 'win32' and 'cuda' in extras"),
        _package("numpy", "python_version < '3.10'", version="1.26.4"),
        _package("numpy", "python_version >= '3.10'", version="2.3.0"),
    ),
    extras=("cuda",),
    groups=("dev", "docs", "test"),
    default_groups=("dev",),
    features=True,
)


def _names(selection: Selection) -> list[tuple[str, str]]:
    return [(p.name, p.version) for p in select_packages(LOCK, selection, LINUX, source="pylock.toml").packages]


def test_defaults_install_the_default_groups_and_no_extra() -> None:
    assert _names(Selection()) == [("app", "1.0"), ("pytest", "1.0"), ("numpy", "2.3.0")]


@pytest.mark.parametrize(
    ("selection", "extras", "groups"),
    [
        (Selection(extras=("CUDA",)), {"cuda"}, {"dev"}),
        (Selection(all_extras=True, groups=("docs",), no_dev=True), {"cuda"}, {"docs"}),
        (Selection(all_groups=True, no_groups=("dev", "docs")), set(), {"test"}),
        (Selection(no_default_groups=True, groups=("Test",)), set(), {"test"}),
    ],
)
def test_flags_choose_as_uv_sync(selection: Selection, extras: set[str], groups: set[str]) -> None:
    assert chosen_features(LOCK, selection, source="pylock.toml") == (extras, groups)


def test_markers_combine_features_with_the_environment() -> None:
    picked = _names(Selection(extras=("cuda",), no_dev=True))
    assert picked == [("app", "1.0"), ("gpu-kernels", "1.0"), ("numpy", "2.3.0")]  # winonly: not on linux
    on_windows = select_packages(LOCK, Selection(extras=("cuda",)), {**LINUX, "sys_platform": "win32"}, source="x")
    assert "winonly" in [p.name for p in on_windows.packages]
    old = select_packages(LOCK, Selection(), {**LINUX, "python_version": "3.9"}, source="x")
    assert [p.version for p in old.packages if p.name == "numpy"] == ["1.26.4"]  # one entry of two remains


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        (Selection(extras=("rocm",)), "pylock.toml holds no extra named 'rocm' (it holds: cuda)"),
        (Selection(groups=("lint",)), "pylock.toml holds no group named 'lint' (it holds: dev, docs, test)"),
        (Selection(no_groups=("lint",)), "pylock.toml holds no group named 'lint'"),
    ],
)
def test_a_name_the_lock_does_not_hold_is_a_coded_error(selection: Selection, message: str) -> None:
    with pytest.raises(InvalidInput) as info:
        select_packages(LOCK, selection, LINUX, source="pylock.toml")
    assert message in info.value.message


def test_a_lock_without_features_takes_no_extra() -> None:
    plain = Lock(packages=(_package("app"),))
    assert select_packages(plain, Selection(), LINUX, source="x") == plain
    with pytest.raises(InvalidInput, match="holds no extra named 'cuda' \\(it holds: none\\)"):
        select_packages(plain, Selection(extras=("cuda",)), LINUX, source="x")


def test_a_marker_a_lock_cannot_evaluate_is_a_coded_error() -> None:
    foreign = Lock(packages=(_package("app", "extra == 'cuda'"),))  # a metadata marker, not a lock file's
    with pytest.raises(InvalidLockfile, match=r"pylock.toml: packages\[0\].marker cannot be evaluated"):
        select_packages(foreign, Selection(), LINUX, source="pylock.toml")


def test_markers_round_trip_and_a_bad_one_is_refused() -> None:
    again = Lock.from_dict(LOCK.to_dict())
    assert [p.marker for p in again.packages] == [p.marker for p in LOCK.packages]
    assert (again.extras, again.groups, again.default_groups) == (("cuda",), ("dev", "docs", "test"), ("dev",))
    data = LOCK.to_dict()
    data["packages"][1]["marker"] = "'cuda' in"
    with pytest.raises(InvalidLockfile, match=r"packages\[1\].marker is not a valid environment marker"):
        Lock.from_dict(data)


def test_a_lock_whose_markers_leave_out_every_package_says_so() -> None:
    """Found by the hostile-input audit: such a lock was refused as 'pylock.toml locks no packages', which it does."""
    gated = Lock(packages=(_package("app", "sys_platform == 'win32'"), _package("gpu", "'cuda' in extras")),
                 extras=("cuda",), features=True)
    with pytest.raises(InvalidLockfile) as info:
        select_packages(gated, Selection(), LINUX, source="pylock.toml")
    assert "pylock.toml locks 2 package(s), and the marker of every one leaves it out" in info.value.message
    assert [p.name for p in select_packages(gated, Selection(extras=("cuda",)), LINUX, source="x").packages] == ["gpu"]
