"""Direct references end to end: wheels served on 127.0.0.1, locked by URL, installed with real pip and uv.

One server (``tools/local_index.py``) holds a PyPI stand-in (``/pypi/simple``: idna, and
``needs-new-demo``, which wants a demo-pkg the URL does not give) and a folder of files named by
URL (``/direct/``): demo-pkg 1.0 (it requires idna from the index), a Windows-only wheel, an sdist.
Each module records where it came from in ``ORIGIN``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from typing import TYPE_CHECKING, Any

import pytest
from local_index import LocalIndex, find_uv, fresh_venv, printed_by, uv_synced_venv
from tiny_wheels import TinyWheel, build_wheel

if TYPE_CHECKING:
    from pathlib import Path

TARGET = ["--cpu", "--python-version", "3.11", "--platform", "linux_x86_64"]
SRC = os.path.join(os.path.dirname(__file__), "..", "src")
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX venv layout")


def run_cli(args: list[str], cwd: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PYTHONPATH=os.path.abspath(SRC), CUDARESOLVE_CACHE_DIR=str(cache), PIP_CONFIG_FILE=os.devnull,
               PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return subprocess.run(
        [sys.executable, "-m", "cudaresolve", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


class Served:
    def __init__(self, root: Path, base: str, index: LocalIndex, demo: TinyWheel, windows: TinyWheel) -> None:
        self.root, self.base, self.index, self.demo, self.windows = root, base, index, demo, windows

    def url(self, wheel: TinyWheel, *, hashed: bool = True, creds: str = "") -> str:
        base = self.base.replace("http://", f"http://{creds}") if creds else self.base
        return f"{base}/direct/{wheel.filename}" + (f"#sha256={wheel.sha256}" if hashed else "")

    def lock(self, args: list[str], cwd: Path, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
        mirror = f"--index-mirror=https://pypi.org/simple={self.base}/pypi/simple"
        return run_cli(["lock", *args, *TARGET, mirror], cwd, cache or cwd / "cache")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("direct")
    index = LocalIndex(root)
    index.add("pypi", "idna", "3.10")
    index.add("pypi", "needs-new-demo", "1.0", requires=["demo-pkg>=2"])
    index.add("pypi", "demo-pkg", "9.0")  # bait: the index's demo-pkg is never taken over the URL's
    demo = build_wheel(root / "direct", "demo-pkg", "1.0", "py3-none-any", requires=["idna>=3"], origin="direct")
    windows = build_wheel(root / "direct", "winonly", "1.0", "cp311-cp311-win_amd64")
    (root / "direct" / "demo_pkg-1.0.tar.gz").write_bytes(b"not really")
    (root / "direct" / "broken-1.0-py3-none-any.whl").write_bytes(b"PK\x03\x04 not really a zip")
    with index.serve() as base:
        yield Served(root, base, index, demo, windows)


def test_a_url_with_its_hash_is_locked_as_an_archive_with_dependencies_from_the_index(
    served: Served, tmp_path: Path
) -> None:
    result = served.lock([f"demo-pkg @ {served.url(served.demo)}", "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["complete"] is True and out["warnings"] == []
    packages = {p["name"]: p for p in out["packages"]}
    assert packages["demo-pkg"] == {
        "name": "demo-pkg", "version": "1.0", "index": None, "url": served.url(served.demo, hashed=False),
        "sha256": served.demo.sha256, "kind": "archive",
    }  # fmt: skip
    assert packages["idna"]["kind"] == "wheel" and packages["idna"]["index"] == "https://pypi.org/simple"
    lock = tomllib.loads((tmp_path / "pylock.toml").read_text())
    entry = next(p for p in lock["packages"] if p["name"] == "demo-pkg")
    size = (served.root / "direct" / served.demo.filename).stat().st_size
    assert entry == {
        "name": "demo-pkg", "version": "1.0",
        "archive": {"url": served.url(served.demo, hashed=False), "size": size,
                    "hashes": {"sha256": served.demo.sha256}},
    }  # fmt: skip


def test_a_verified_file_is_not_fetched_again_and_locks_offline(served: Served, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    args = [f"demo-pkg @ {served.url(served.demo)}", "-o", "pylock.first.toml"]
    assert served.lock(args, tmp_path, cache).returncode == 0
    path = f"/direct/{served.demo.filename}"
    before = served.index.requests[path]
    again = served.lock([*args[:-1], "pylock.again.toml", "--offline"], tmp_path, cache)
    assert again.returncode == 0, again.stderr
    assert served.index.requests[path] == before
    assert (tmp_path / "pylock.first.toml").read_text() == (tmp_path / "pylock.again.toml").read_text()


def test_without_a_hash_the_file_is_hashed_and_the_user_told(served: Served, tmp_path: Path) -> None:
    result = served.lock([f"demo-pkg @ {served.url(served.demo, hashed=False)}", "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert [w["code"] for w in out["warnings"]] == ["direct-unhashed"]
    assert f"#sha256={served.demo.sha256}" in out["warnings"][0]["message"]
    demo = next(p for p in out["packages"] if p["name"] == "demo-pkg")
    assert demo["sha256"] == served.demo.sha256


def test_a_hash_that_differs_is_a_coded_error_naming_the_url(served: Served, tmp_path: Path) -> None:
    url = served.url(served.demo, hashed=False)
    result = served.lock([f"demo-pkg @ {url}#sha256={'0' * 64}"], tmp_path)
    assert result.returncode == 1 and not (tmp_path / "pylock.toml").exists()
    assert result.stderr.startswith(f"error: hash-mismatch: the file at {url} is not the one its hash names")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("requirement", "start"),
    [
        ("winonly @ {windows}", "error: no-solution: winonly-1.0-cp311-cp311-win_amd64.whl does not install on the"
                                " target, CPython 3.11 on linux_x86_64"),
        ("demo-pkg @ {base}/direct/demo_pkg-1.0.tar.gz", "error: unsupported-reference: a direct reference to a"
                                                         " source distribution is not supported"),
        ("demo-pkg @ git+https://github.com/example/demo", "error: unsupported-reference: VCS URLs are not supported"),
        ("broken @ {base}/direct/broken-1.0-py3-none-any.whl", "error: no-solution: broken is given by URL, and its"
                                                               " file could not be read: the core metadata at"),
        ("broken @ {base}/direct/broken-2.0-py3-none-any.whl", "error: no-solution: broken is given by URL, and its"
                                                               " file could not be read: {base}/direct/broken-2.0"),
        ("demo-pkg @ {base}/direct/", "error: unsupported-reference: a direct reference to a directory"),
        ("demo-pkg @ {demo}\ndemo-pkg @ {base}/elsewhere/demo_pkg-1.0-py3-none-any.whl",
         "error: invalid-input: demo-pkg is given two different URLs"),
        ("demo-pkg @ {demo}\nneeds-new-demo", "error: no-solution: no set of packages fits this target: needs-new-demo"
                                              " 1.0 requires demo-pkg>=2, but demo-pkg==1.0 is chosen"),
    ],
)
def test_what_cannot_be_locked_is_a_coded_error(served: Served, tmp_path: Path, requirement: str, start: str) -> None:
    lines = requirement.format(base=served.base, demo=served.url(served.demo), windows=served.url(served.windows))
    (tmp_path / "req.txt").write_text(lines + "\n")
    result = served.lock(["-r", "req.txt"], tmp_path)
    assert result.returncode == 1, result.stdout
    assert result.stderr.startswith(start.format(base=served.base)), result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "pylock.toml").exists()


def test_credentials_in_the_url_fetch_the_file_but_are_never_written_or_shown(served: Served, tmp_path: Path) -> None:
    url = served.url(served.demo, creds="me:s3cret-token@")
    result = served.lock([f"demo-pkg @ {url}", "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "s3cret" not in result.stdout + result.stderr + (tmp_path / "pylock.toml").read_text()
    assert f'url = "{served.url(served.demo, hashed=False)}"' in (tmp_path / "pylock.toml").read_text()
    mismatch = served.lock([f"demo-pkg @ {url.split('#')[0]}#sha256={'0' * 64}"], tmp_path)
    assert mismatch.returncode == 1 and "s3cret" not in mismatch.stderr


def test_pyproject_dependencies_take_a_direct_reference(served: Served, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "app"\nversion = "0"\ndependencies = ["demo-pkg @ {served.url(served.demo)}"]\n'
    )
    result = served.lock(["--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert {p["name"]: p["kind"] for p in json.loads(result.stdout)["packages"]} == {
        "demo-pkg": "archive", "idna": "wheel"
    }  # fmt: skip


def _origin(python: Path) -> str:
    return printed_by(python, "import demo_pkg, idna; print(demo_pkg.ORIGIN, demo_pkg.__version__)")


def test_the_lock_installs_with_pip_and_with_uv(served: Served, tmp_path: Path) -> None:
    mirror = f"--index-mirror=https://pypi.org/simple={served.base}/pypi/simple"
    assert served.lock([f"demo-pkg @ {served.url(served.demo)}"], tmp_path).returncode == 0
    assert served.lock([f"demo-pkg @ {served.url(served.demo)}", "--format", "requirements", "-o", "r.txt"],
                       tmp_path).returncode == 0
    for lock in ("pylock.toml", "r.txt"):
        python = fresh_venv(tmp_path / f"pip-{lock}")
        installed = run_cli(["install", "--from", lock, "--python", str(python), mirror], tmp_path, tmp_path / "c")
        assert installed.returncode == 0, installed.stderr + installed.stdout
        assert _origin(python) == "direct 1.0"
    uv = find_uv()
    if uv is None:
        pytest.skip("uv is not installed")
    python = uv_synced_venv(uv, tmp_path, tmp_path / "uv-venv")
    assert _origin(python) == "direct 1.0"


def test_a_local_wheel_by_file_url_locks_and_installs(served: Served, tmp_path: Path) -> None:
    wheel = served.root / "direct" / served.demo.filename
    url = f"file://{wheel}"
    result = served.lock([f"demo-pkg @ {url}", "--json"], tmp_path)
    assert result.returncode == 0, result.stderr
    demo = next(p for p in json.loads(result.stdout)["packages"] if p["name"] == "demo-pkg")
    assert (demo["url"], demo["sha256"]) == (url, served.demo.sha256)
    python = fresh_venv(tmp_path / "venv")
    mirror = f"--index-mirror=https://pypi.org/simple={served.base}/pypi/simple"
    installed = run_cli(["install", "--from", "pylock.toml", "--python", str(python), mirror], tmp_path, tmp_path / "c")
    assert installed.returncode == 0, installed.stderr + installed.stdout
    assert _origin(python) == "direct 1.0"
