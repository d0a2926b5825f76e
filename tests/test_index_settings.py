"""The default index as pip and uv are told it (issue 13, item 2): settings order, files, mirrors, credentials.

The pure part reads pip's and uv's configuration and the environment into one ``IndexSetting``;
the end-to-end part runs ``cudaresolve lock`` with ``PIP_INDEX_URL``, a pip configuration file, a
``uv.toml``, ``[tool.cudaresolve] index-url`` and ``--index-url`` pointing PyPI's traffic at a
127.0.0.1 index of tiny real wheels, and a flat directory of wheels standing in for a mirror of
the PyTorch index.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from local_index import LocalIndex

from cudaresolve.core.urls import redact, strip_credentials
from cudaresolve.errors import InvalidInput
from cudaresolve.index.settings import (
    MAX_CONFIG_BYTES,
    default_index,
    pip_config_files,
    pip_index,
    uv_index,
)
from cudaresolve.text.catalogue import format_text

SRC = os.path.join(os.path.dirname(__file__), "..", "src")
PYPI = "https://pypi.org/simple"
TARGET = ["--gpu", "H100", "--driver", "580.65.06", "--python-version", "3.11", "--platform", "linux_x86_64"]
TAG = "cp311-cp311-manylinux_2_28_x86_64"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _find(tmp_path: Path, environ: dict[str, str], **kw: Any) -> tuple[str, str] | None:
    found = default_index(environ, home=tmp_path / "home", cwd=tmp_path / "project", **kw)
    return None if found is None else (found.url, found.origin)


# --- the readers ---------------------------------------------------------------------------------


def test_pip_file_install_section_over_global() -> None:
    text = "[global]\nindex-url = https://g.example/simple\n[install]\nindex-url = https://i.example/simple/\n"
    found = pip_index(text, "pip.conf")
    assert found is not None and found.url == "https://i.example/simple"
    assert found.origin == "pip.conf [install] index-url"
    assert pip_index("[global]\ntimeout = 3\n", "pip.conf") is None


def test_uv_settings_default_index_then_index_url_then_pip_table() -> None:
    both = {"index": [{"url": "https://a.example/simple"}, {"url": "https://d.example/simple", "default": True}],
            "index-url": "https://old.example/simple"}
    found = uv_index(both, "uv.toml")
    assert found is not None and found.url == "https://d.example/simple" and "[[index]]" in found.origin
    found = uv_index({"index-url": "https://old.example/simple"}, "uv.toml")
    assert found is not None and found.url == "https://old.example/simple"
    found = uv_index({"pip": {"index-url": "https://p.example/simple"}}, "uv.toml")
    assert found is not None and found.url == "https://p.example/simple"
    assert uv_index({"index": [{"url": "https://a.example/simple"}]}, "uv.toml") is None  # not the default


@pytest.mark.parametrize("value", ["ftp://x.example/simple", "not a url", "https://", 7])
def test_a_bad_default_index_is_one_coded_line_naming_where_it_was_set(value: object) -> None:
    with pytest.raises(InvalidInput) as info:
        uv_index({"index-url": value}, "/p/uv.toml")
    message = format_text(info.value.text)
    assert "/p/uv.toml index-url" in message and "\n" not in message


def test_pip_file_order_and_the_null_device(tmp_path: Path) -> None:
    home = tmp_path / "home"
    files = pip_config_files({"VIRTUAL_ENV": "/venv", "PIP_CONFIG_FILE": "/named.conf"}, home)
    assert files[-2:] == [Path("/venv/pip.conf"), Path("/named.conf")]  # as pip: the site's, then the named one wins
    assert files.index(Path("/etc/pip.conf")) < files.index(home / ".pip" / "pip.conf")
    assert files.index(home / ".pip" / "pip.conf") < files.index(home / ".config" / "pip" / "pip.conf")
    named = tmp_path / "named.conf"
    named.write_text("[global]\n")
    files = pip_config_files({"PIP_CONFIG_FILE": str(named)}, home)  # a named file that exists: no user file
    assert files[-1] == named and home / ".pip" / "pip.conf" not in files
    assert home / ".config" / "pip" / "pip.conf" not in files
    assert pip_config_files({"PIP_CONFIG_FILE": "/dev/null"}, home) == []
    for odd in ("/" + "x" * 5000, "a\0b"):  # a name no file can have: not there, as pip's os.path.exists says
        assert home / ".pip" / "pip.conf" in pip_config_files({"PIP_CONFIG_FILE": odd}, home)


def test_pip_config_file_wins_over_the_users_files_and_hides_them_as_in_pip(tmp_path: Path) -> None:
    """``PIP_CONFIG_FILE`` overrides the global, user and site files; when it exists pip loads no user file."""
    env: dict[str, str] = {"XDG_CONFIG_DIRS": str(tmp_path / "none"), "VIRTUAL_ENV": str(tmp_path / "venv")}
    user = _write(tmp_path / "home" / ".config" / "pip" / "pip.conf", "[global]\nindex-url = https://user.example/s\n")
    _write(tmp_path / "venv" / "pip.conf", "[global]\nindex-url = https://site.example/s\n")
    named = _write(tmp_path / "named.conf", "[global]\nindex-url = https://named.example/s\n")
    env["PIP_CONFIG_FILE"] = str(named)
    assert _find(tmp_path, env) == ("https://named.example/s", f"{named} [global] index-url")
    named.write_text("[global]\ntimeout = 5\n")  # it sets no index: the site's file does, the user's is not read
    assert _find(tmp_path, env) == ("https://site.example/s", f"{tmp_path}/venv/pip.conf [global] index-url")
    del env["VIRTUAL_ENV"]
    found = _find(tmp_path, env)
    assert found is None or found[1].startswith("/etc/pip.conf")  # the host's global file at most, never the user's
    env["PIP_CONFIG_FILE"] = str(tmp_path / "absent.conf")  # named but absent: the user's file is read
    assert _find(tmp_path, env) == ("https://user.example/s", f"{user} [global] index-url")
    for odd in ("/" + "x" * 5000, "a\0b"):  # a name no file can have: absent, as pip's os.path.exists says
        env["PIP_CONFIG_FILE"] = odd
        assert _find(tmp_path, env) == ("https://user.example/s", f"{user} [global] index-url")
        assert _find(tmp_path, {**env, "XDG_CONFIG_DIRS": odd})[0] == "https://user.example/s"  # type: ignore[index]


def test_settings_order_weakest_to_strongest(tmp_path: Path) -> None:
    """pip's files < PIP_INDEX_URL < uv's files < UV_INDEX_URL < UV_DEFAULT_INDEX < the project < --index-url."""
    env: dict[str, str] = {"XDG_CONFIG_DIRS": str(tmp_path / "none"), "PIP_CONFIG_FILE": str(tmp_path / "no.conf")}
    assert _find(tmp_path, env) is None or not _find(tmp_path, env)[0].startswith("https://")  # type: ignore[index]
    _write(tmp_path / "home" / ".config" / "pip" / "pip.conf", "[global]\nindex-url = https://user-pip.example/simple\n")
    assert _find(tmp_path, env) == ("https://user-pip.example/simple", f"{tmp_path}/home/.config/pip/pip.conf"
                                    " [global] index-url")
    _write(tmp_path / "venv" / "pip.conf", "[global]\nindex-url = https://site-pip.example/simple\n")
    env["VIRTUAL_ENV"] = str(tmp_path / "venv")
    assert _find(tmp_path, env)[0] == "https://site-pip.example/simple"  # type: ignore[index]
    env["PIP_INDEX_URL"] = "https://env-pip.example/simple"
    assert _find(tmp_path, env) == ("https://env-pip.example/simple", "PIP_INDEX_URL")
    _write(tmp_path / "home" / ".config" / "uv" / "uv.toml", 'index-url = "https://user-uv.example/simple"\n')
    assert _find(tmp_path, env)[0] == "https://user-uv.example/simple"  # type: ignore[index]
    _write(tmp_path / "pyproject.toml", '[tool.uv]\n[[tool.uv.index]]\nurl = "https://proj-uv.example/simple"\n'
           "default = true\n")
    assert _find(tmp_path, env)[0] == "https://proj-uv.example/simple"  # type: ignore[index] # found walking up
    env["UV_INDEX_URL"] = "https://uv-old.example/simple"
    assert _find(tmp_path, env)[0] == "https://uv-old.example/simple"  # type: ignore[index]
    env["UV_DEFAULT_INDEX"] = "https://uv-new.example/simple"
    assert _find(tmp_path, env) == ("https://uv-new.example/simple", "UV_DEFAULT_INDEX")
    from cudaresolve.index.settings import IndexSetting

    project = IndexSetting("https://project.example/simple", "pyproject.toml [tool.cudaresolve] index-url")
    assert _find(tmp_path, env, project=project)[0] == "https://project.example/simple"  # type: ignore[index]
    assert _find(tmp_path, env, project=project, flag="https://flag.example/simple") == (
        "https://flag.example/simple", "--index-url")
    env.pop("UV_DEFAULT_INDEX"), env.pop("UV_INDEX_URL")
    env["UV_NO_CONFIG"] = "1"  # uv's files off: PIP_INDEX_URL is next
    assert _find(tmp_path, env)[0] == "https://env-pip.example/simple"  # type: ignore[index]


@pytest.mark.parametrize("body", ["[global\nindex-url = x\n", "x" * (MAX_CONFIG_BYTES + 10)])
def test_a_broken_or_huge_config_file_is_one_coded_error(tmp_path: Path, body: str) -> None:
    conf = _write(tmp_path / "pip.conf", body)
    with pytest.raises(InvalidInput) as info:
        _find(tmp_path, {"PIP_CONFIG_FILE": str(conf), "XDG_CONFIG_DIRS": str(tmp_path / "none")})
    assert str(conf) in format_text(info.value.text)


def test_a_large_project_file_is_read_to_the_projects_own_bound(tmp_path: Path) -> None:
    """Found by the adversarial hunt: a valid pyproject.toml over 1 MiB (the bound on pip's and uv's own files)
    made every lock in its folder fail with a hint about configuration files, though the project reader takes
    64 MiB. Its ``[tool.uv]`` is read to that bound; a uv.toml keeps the 1 MiB one."""
    padding = "# " + "x" * 100 + "\n"
    body = '[tool.uv]\nindex-url = "https://proj-uv.example/simple"\n' + padding * (MAX_CONFIG_BYTES // 100)
    assert len(body) > MAX_CONFIG_BYTES
    _write(tmp_path / "pyproject.toml", body)
    env = {"XDG_CONFIG_DIRS": str(tmp_path / "none"), "PIP_CONFIG_FILE": str(tmp_path / "no.conf")}
    assert _find(tmp_path, env)[0] == "https://proj-uv.example/simple"  # type: ignore[index]
    (tmp_path / "pyproject.toml").unlink()
    _write(tmp_path / "uv.toml", body.replace("[tool.uv]\n", ""))
    with pytest.raises(InvalidInput):
        _find(tmp_path, env)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX FIFOs")
@pytest.mark.parametrize("variable", ["PIP_CONFIG_FILE", "UV_CONFIG_FILE"])
def test_a_fifo_as_a_config_file_is_refused_unread(tmp_path: Path, variable: str) -> None:
    """A FIFO would block the read for ever (no writer): it is refused before anything is read, as host files and
    requirement files are."""
    fifo = tmp_path / "conf"
    os.mkfifo(fifo)
    with pytest.raises(InvalidInput) as info:
        _find(tmp_path, {variable: str(fifo), "XDG_CONFIG_DIRS": str(tmp_path / "none")})
    shown = format_text(info.value.text)
    assert str(fifo) in shown and "not a regular file" in shown


def test_credentials_are_stripped_from_output_and_hidden_in_messages() -> None:
    url = "https://bob:s3cret@mirror.example/simple/torch/"
    assert strip_credentials(url) == "https://mirror.example/simple/torch/"
    assert redact(url) == "https://bob:****@mirror.example/simple/torch/"
    assert redact("https://tok@mirror.example/x") == "https://****@mirror.example/x"
    from cudaresolve.text.model import Text

    shown = format_text(Text.of("index.could-not-reach", url=url, reason="ConnectError"))
    assert "s3cret" not in shown and "bob:****@mirror.example" in shown


# --- end to end: a lock as a user runs it ------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """PyPI's stand-in (numpy, filelock) and a flat directory of one variant's wheels (a PyTorch-index mirror)."""
    root = tmp_path_factory.mktemp("indexes")
    index = LocalIndex(root)
    index.add("pypi", "numpy", "1.26.4", tag=TAG)
    index.add("pypi", "filelock", "3.16.1")
    torch = index.add("unused", "torch", "2.11.0+cu128", tag=TAG, requires=["filelock"], origin="flat")
    flat = root / "flat" / "cu128"
    flat.mkdir(parents=True)
    shutil.copy(root / "files" / torch.filename, flat / torch.filename)
    href = torch.filename.replace("+", "%2B")
    _write(flat / "index.html", f'<html><body><a href="{href}#sha256={torch.sha256}">{torch.filename}</a>\n'
           '<a href="unrelated-1.0-py3-none-any.whl">unrelated-1.0-py3-none-any.whl</a></body></html>\n')
    (root / "empty" / "cu128").mkdir(parents=True)
    _write(root / "empty" / "cu128" / "index.html", "<html><body>nothing here</body></html>\n")
    with index.serve() as base:
        yield base


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": os.path.abspath(SRC), "CUDARESOLVE_CACHE_DIR": str(cwd / "cache"), **env}
    return subprocess.run([sys.executable, "-m", "cudaresolve", *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=120)


def _numpy_url(cwd: Path, out: str = "pylock.toml") -> str:
    lock = tomllib.loads((cwd / out).read_text())
    numpy = next(p for p in lock["packages"] if p["name"] == "numpy")
    url = str(numpy["wheels"][0]["url"])
    # the lock names the index (the mirror) that really served it, never with its credentials
    assert numpy["index"] != PYPI and "@" not in numpy["index"] and numpy["index"].split("/")[2] == url.split("/")[2]
    return url


@pytest.mark.parametrize("how", ["PIP_INDEX_URL", "pip.conf", "UV_DEFAULT_INDEX", "uv.toml", "pyproject", "flag"])
def test_each_setting_sends_pypi_traffic_to_the_mirror(served: str, tmp_path: Path, how: str) -> None:
    mirror = f"{served}/pypi/simple"
    env: dict[str, str] = {}
    args = ["lock", "numpy", *TARGET]
    if how == "PIP_INDEX_URL":
        env["PIP_INDEX_URL"] = mirror
    elif how == "pip.conf":
        env["PIP_CONFIG_FILE"] = str(_write(tmp_path / "my-pip.conf", f"[global]\nindex-url = {mirror}\n"))
    elif how == "UV_DEFAULT_INDEX":
        env["UV_DEFAULT_INDEX"] = mirror
    elif how == "uv.toml":
        env["UV_NO_CONFIG"] = ""
        _write(tmp_path / "uv.toml", f'[[index]]\nurl = "{mirror}"\ndefault = true\n')
    elif how == "pyproject":
        _write(tmp_path / "pyproject.toml", f'[tool.cudaresolve]\nindex-url = "{mirror}"\n')
    else:
        args.append(f"--index-url={mirror}")
    result = _run(args, tmp_path, **env)
    assert result.returncode == 0, result.stderr
    assert _numpy_url(tmp_path).startswith(f"{served}/files/numpy-1.26.4")


def test_the_flag_wins_over_the_environment(served: str, tmp_path: Path) -> None:
    result = _run(["lock", "numpy", *TARGET, "-i", f"{served}/pypi/simple"], tmp_path,
                  PIP_INDEX_URL="http://127.0.0.1:9/simple", UV_DEFAULT_INDEX="http://127.0.0.1:9/simple")
    assert result.returncode == 0, result.stderr
    assert _numpy_url(tmp_path).startswith(served)


def test_credentials_reach_the_mirror_but_never_the_lock_or_the_screen(served: str, tmp_path: Path) -> None:
    secret = "hunter2-token"
    authed = served.replace("http://", f"http://ci-bot:{secret}@") + "/pypi/simple"
    result = _run(["lock", "numpy", *TARGET, "--json"], tmp_path, PIP_INDEX_URL=authed)
    assert result.returncode == 0, result.stderr
    assert secret not in result.stdout + result.stderr
    assert secret not in (tmp_path / "pylock.toml").read_text()
    assert _numpy_url(tmp_path).startswith(f"{served}/files/")  # the same file, without the credentials
    down = authed.replace(served.rsplit(":", 1)[1].split("/")[0], "9")  # the same credentials, a closed port
    failed = _run(["lock", "numpy", *TARGET, "-o", "pylock.down.toml"], tmp_path, PIP_INDEX_URL=down)
    assert failed.returncode == 2 and secret not in failed.stdout + failed.stderr
    assert "ci-bot:****@127.0.0.1:9" in failed.stderr


def test_a_bad_setting_is_refused_with_its_origin(tmp_path: Path) -> None:
    result = _run(["lock", "numpy", *TARGET], tmp_path, PIP_INDEX_URL="file:///opt/simple")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: invalid-input: PIP_INDEX_URL sets the default index")
    _write(tmp_path / "pyproject.toml", '[tool.cudaresolve]\nindex-url = ["x"]\n')
    result = _run(["lock", "numpy", *TARGET], tmp_path)
    assert result.returncode == 1 and "[tool.cudaresolve] index-url" in result.stderr


INSTALL = ["install", "--from", "requirements.txt", "--dry-run", "--json", "--python", sys.executable]


def test_install_keeps_the_users_mirror(served: str, tmp_path: Path) -> None:
    """A lock names PyPI; ``install`` fetches through the user's mirror, never from PyPI itself."""
    mirror = f"{served}/pypi/simple"
    assert _run(["lock", "numpy", *TARGET, "-i", mirror, "--format", "requirements"], tmp_path).returncode == 0
    result = _run([*INSTALL, *TARGET], tmp_path,
                  PIP_INDEX_URL=mirror)
    assert result.returncode == 0, result.stderr
    assert {p["index"] for p in json.loads(result.stdout)["packages"]} == {mirror}
    assert f"--index-url {mirror} " in result.stderr and "pypi.org" not in result.stderr  # the pip commands
    authed = mirror.replace("http://", "http://ci-bot:hunter2@")
    result = _run([*INSTALL, *TARGET], tmp_path,
                  PIP_INDEX_URL=authed)
    assert result.returncode == 0 and "hunter2" not in result.stdout + result.stderr
    assert "ci-bot:****@127.0.0.1" in result.stderr  # the table and the pip lines, credentials hidden


def test_a_flat_directory_mirror_of_the_pytorch_index_serves_a_lock(served: str, tmp_path: Path) -> None:
    flat = ["--gpu-source", "pytorch", f"--index-mirror=https://download.pytorch.org/whl={served}/flat",
            "-i", f"{served}/pypi/simple", "--json"]
    result = _run(["lock", "torch==2.11.0", *TARGET[:2], "--driver", "575.51.03", *TARGET[4:], *flat], tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    torch = next(p for p in out["packages"] if p["name"] == "torch")
    assert (torch["version"], torch["index"]) == ("2.11.0+cu128", "https://download.pytorch.org/whl/cu128")
    assert torch["url"].startswith(f"{served}/flat/cu128/torch-2.11.0") and len(torch["sha256"]) == 64
    assert out["complete"] is True


def test_a_mirror_without_the_wheel_is_named_as_the_mirror(served: str, tmp_path: Path) -> None:
    flat = ["--gpu-source", "pytorch", f"--index-mirror=https://download.pytorch.org/whl={served}/empty",
            "-i", f"{served}/pypi/simple", "--json", "--format", "requirements"]
    result = _run(["lock", "torch==2.11.0", *TARGET[:2], "--driver", "575.51.03", *TARGET[4:], *flat], tmp_path)
    out = json.loads(result.stdout)
    messages = [w["message"] for w in out.get("warnings", [])]
    assert any(f"the mirror {served}/empty/cu128 (for https://download.pytorch.org/whl/cu128)" in m
               for m in messages), messages
