"""The user's path end to end: ``cudaresolve lock`` online, then ``cudaresolve install --from``.

A PEP 503 copy of the PyTorch index is served on 127.0.0.1 and named as a mirror of
https://download.pytorch.org/whl, so ``lock`` fetches real pages, adds each wheel's URL and
sha256 and writes a pylock.toml; ``install`` then runs real pip into a fresh venv from it.
The wheels are tiny zips with this interpreter's tag, named and versioned like the real ones.
"""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
import tomllib
from functools import partial
from typing import TYPE_CHECKING

import pytest
from tiny_wheels import build_wheel

from cudaresolve.cli import main
from cudaresolve.db.database import load_compat
from test_install_e2e import _installed, _pip_env, _QuietHandler


class _LoggingHandler(_QuietHandler):
    """Serves files and records each request's path in the server's ``seen`` list."""

    def do_GET(self) -> None:
        self.server.seen.append(self.path)  # type: ignore[attr-defined]
        super().do_GET()

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses the POSIX venv layout (bin/python)")


def _this_tag() -> str:
    from packaging.tags import sys_tags

    tag = next(iter(sys_tags()))
    return f"{tag.interpreter}-{tag.abi}-{tag.platform}"


def _newest_cpu_torch(python: str) -> str:
    for release in load_compat().packages("torch"):
        if python in release.python and any(b.variant == "cpu" for b in release.builds):
            return f"{release.version}+cpu"
    raise AssertionError("no cpu torch")


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[tuple[str, dict[str, str], list[str]]]:
    """A /whl/cpu/<project>/ tree on 127.0.0.1 holding the torch the solver will pick, plus a decoy."""
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    version = _newest_cpu_torch(python)
    root = tmp_path / "site"
    files = root / "whl" / "files"
    wanted = build_wheel(files, "torch", version, _this_tag(), origin="mirror")
    decoy = build_wheel(files, "torch", "2.0.0+cpu", _this_tag(), origin="decoy")
    page = root / "whl" / "cpu" / "torch" / "index.html"
    page.parent.mkdir(parents=True)
    page.write_text(
        "<!DOCTYPE html><html><body>\n"
        + "".join(
            f'<a href="/whl/files/{w.filename.replace("+", "%2B")}#sha256={w.sha256}" '
            f'data-requires-python="&gt;=3.9">{w.filename}</a><br>\n'
            for w in (decoy, wanted)
        )
        + "</body></html>\n"
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(_LoggingHandler, directory=str(root)))
    seen: list[str] = []
    server.seen = seen  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/whl", {"torch": version, "sha256": wanted.sha256,
                                                            "file": wanted.filename}, seen
    finally:
        server.shutdown()
        server.server_close()


def test_lock_online_through_a_mirror_then_install_into_a_fresh_venv(
    mirror: tuple[str, dict[str, str], list[str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base, expected, seen = mirror
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CUDARESOLVE_CACHE_DIR", str(tmp_path / "cache"))
    target = ["--cpu", "--python-version", python, "--platform", "linux_x86_64"]

    code = main(["lock", "torch", *target, "--index-mirror", f"https://download.pytorch.org/whl={base}", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0, result
    assert result["format"] == "pylock"
    (torch,) = result["packages"]
    assert torch["version"] == expected["torch"]
    assert torch["sha256"] == expected["sha256"]
    lock = tomllib.loads((tmp_path / "pylock.toml").read_text())
    assert lock["lock-version"] == "1.0"
    assert lock["tool"]["cudaresolve"]["variant"] == "cpu"
    assert lock["packages"][0]["wheels"][0]["hashes"] == {"sha256": expected["sha256"]}

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=_pip_env(os.devnull))
    for key in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    # the lock's file URLs are the mirror's: install fetches them there with no flag, and nothing elsewhere
    assert lock["packages"][0]["wheels"][0]["url"].startswith(f"{base}/")
    seen.clear()
    code = main(["install", "--from", "pylock.toml", "--python", str(venv / "bin" / "python"), *target])
    assert code == 0
    assert _installed(venv / "bin" / "python") == {"torch": (expected["torch"], "mirror")}
    assert seen == [f"/whl/files/{expected['file'].replace('+', '%2B')}"]
    # a second fresh venv installs from the shared cache: nothing is fetched at all
    other = tmp_path / "venv2"
    subprocess.run([sys.executable, "-m", "venv", str(other)], check=True, env=_pip_env(os.devnull))
    assert main(["install", "--from", "pylock.toml", "--python", str(other / "bin" / "python"), *target]) == 0
    assert seen == [f"/whl/files/{expected['file'].replace('+', '%2B')}"]
    assert _installed(other / "bin" / "python") == {"torch": (expected["torch"], "mirror")}
