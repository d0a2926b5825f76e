"""More indexes, as requirement files from the wild name them (issue 22, item 5): --extra-index-url and
--find-links with uv's first-index rule, a file's -i and --trusted-host, the PyTorch variant indexes."""

from __future__ import annotations

import json
import tomllib
from typing import TYPE_CHECKING, Any

import pytest
from local_index import LocalIndex

from cudaresolve.errors import InvalidInput
from cudaresolve.index.extra import extra_sources
from cudaresolve.lock.reqfiles import read_requirement_files
from test_direct_e2e import run_cli

if TYPE_CHECKING:
    from pathlib import Path

TARGET = ["--cpu", "--python-version", "3.11", "--platform", "linux_x86_64"]
PYTORCH = "https://download.pytorch.org/whl"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("extra")
    index = LocalIndex(root)
    index.add("private", "secret", "1.0", requires=["shared"])
    index.add("pypi", "secret", "9.9")  # the same name on the public index: never taken (dependency confusion)
    index.add("pypi", "shared", "2.0")
    linked = index.add("links", "linked", "1.5")  # listed only on a find-links page
    with index.serve() as base:
        links = root / "flat" / "index.html"
        links.parent.mkdir(parents=True, exist_ok=True)
        links.write_text(f'<a href="{base}/files/{linked.filename}#sha256={linked.sha256}">{linked.filename}</a>\n')
        yield base


def _lock(base: str, args: list[str], cwd: Path) -> Any:
    mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
    return run_cli(["lock", *args, *TARGET, mirror, "--json"], cwd, cwd / "cache")


def test_each_package_comes_from_the_first_index_that_lists_it(served: Any, tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        f"--extra-index-url {served}/private\n-f {served}/flat\n"
        f"--extra-index-url {PYTORCH}/cu121\nsecret\nlinked\n"
    )
    result = _lock(served, ["-r", "requirements.txt"], tmp_path)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    where = {p["name"]: (p["version"], p["index"]) for p in out["packages"]}
    assert where == {
        "secret": ("1.0", f"{served}/private"),  # not PyPI's 9.9
        "shared": ("2.0", "https://pypi.org/simple"),  # the private index does not list it
        "linked": ("1.5", f"{served}/flat"),
    }
    (note,) = [w["message"] for w in out["warnings"] if w["code"] == "extra-index-pytorch"]
    assert note.startswith(f"{PYTORCH}/cu121 is a variant index of the PyTorch index")
    lock = tomllib.loads((tmp_path / "pylock.toml").read_text())
    assert {p["name"]: p["wheels"][0]["url"].startswith(served) for p in lock["packages"]} == {
        "linked": True, "secret": True, "shared": True
    }  # fmt: skip


def test_the_same_flags_on_the_command_line(served: Any, tmp_path: Path) -> None:
    result = _lock(served, ["secret", "--extra-index-url", f"{served}/private"], tmp_path)
    assert [(p["name"], p["version"]) for p in json.loads(result.stdout)["packages"]] == [
        ("secret", "1.0"), ("shared", "2.0")
    ]  # fmt: skip


def test_index_options_of_a_requirement_file(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text(
        "-i https://mirror.example/simple\n--index-url=https://mirror.example/simple\n"
        "--trusted-host mirror.example\n--find-links=https://links.example/\ntorch\n"
    )
    files = read_requirement_files([str(tmp_path / "r.txt")])
    assert files.requirements == ("torch",) and files.index_url == "https://mirror.example/simple"
    assert files.find_links == ("https://links.example/",) and files.trusted_hosts == ("mirror.example",)
    (tmp_path / "two.txt").write_text("-i https://a.example/simple\n-i https://b.example/simple\n")
    with pytest.raises(InvalidInput) as info:
        read_requirement_files([str(tmp_path / "two.txt")])
    assert "two.txt:2: a second, different --index-url" in info.value.message
    (tmp_path / "e.txt").write_text("-e .\n")
    with pytest.raises(InvalidInput) as info:
        read_requirement_files([str(tmp_path / "e.txt")])
    assert "e.txt:1: -e . is not a folder whose pyproject.toml names its project" in info.value.message


def test_extra_index_urls_are_checked_and_taken_from_the_environment() -> None:
    found = extra_sources(
        ["https://a.example/simple/"], ["http://127.0.0.1:9/links"], trusted_hosts=["plain.example"],
        environ={"PIP_EXTRA_INDEX_URL": "https://b.example/simple http://plain.example/simple"},
        pytorch_root=PYTORCH,
    )  # fmt: skip
    assert found.indexes == ("https://a.example/simple", "https://b.example/simple", "http://plain.example/simple")
    assert found.find_links == ("http://127.0.0.1:9/links",) and found.notices == ()
    for bad in ("http://evil.example/simple", "ftp://x.example/", "not a url", "https://x.example/simple?token=t"):
        with pytest.raises(InvalidInput):
            extra_sources([bad], [], trusted_hosts=[], environ={}, pytorch_root=PYTORCH)
