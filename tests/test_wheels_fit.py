"""``install --from``: every locked wheel it installs must fit the interpreter, one wheel per package included.

Found by the adversarial hunt: a ``[packages.archive]`` of a ``cp311-cp311-win_amd64`` wheel was linked into a
Linux environment (exit 0). A lock of several wheels per package already took the one that fits; one wheel alone
was never judged. Pure: the interpreter is given, not probed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from cudaresolve.errors import InvalidLockfile
from cudaresolve.install.install import _check_wheels
from cudaresolve.lock.model import Lock
from cudaresolve.resolve.model import FileKind, LockedPackage
from cudaresolve.target.interpreter import Interpreter

if TYPE_CHECKING:
    from pathlib import Path

LINUX = Interpreter(path="/x/bin/python", python="3.11", platform="linux_x86_64", glibc="2.36",
                    markers={"sys_platform": "linux", "platform_machine": "x86_64"})


def _lock(*names: str) -> Lock:
    return Lock(packages=tuple(
        LockedPackage(name=n.split("-")[0], version=n.split("-")[1], index="", url=f"file:///w/{n}", sha256="0" * 64,
                      filename=n, kind=FileKind.ARCHIVE)
        for n in names
    ))  # fmt: skip


@pytest.mark.parametrize("cached", [True, False])
def test_a_wheel_for_another_platform_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cached: bool) -> None:
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(tmp_path / "cache"))
    good = _lock("six-1.4-py3-none-any.whl", "numpy-2.1.0-cp311-cp311-manylinux_2_17_x86_64.whl")
    for _ in range(2 if cached else 1):  # the second time from the verdict kept in the cache
        _check_wheels(good, "pylock.toml", LINUX)
    with pytest.raises(InvalidLockfile) as caught:
        _check_wheels(_lock("six-1.4-py3-none-any.whl", "evil-1.0-cp311-cp311-win_amd64.whl"), "pylock.toml", LINUX)
    assert "evil-1.0-cp311-cp311-win_amd64.whl" in str(caught.value.text.fields)
    with pytest.raises(InvalidLockfile):  # a newer glibc than the interpreter's
        _check_wheels(_lock("numpy-2.1.0-cp311-cp311-manylinux_2_39_x86_64.whl"), "pylock.toml", LINUX)
