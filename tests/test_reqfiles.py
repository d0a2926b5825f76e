"""``-r FILE`` and ``-c FILE``: pip's requirement-file subset, its bounds, and what constraints do to a lock."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import pytest

from cudaresolve.cli import main
from cudaresolve.errors import InvalidInput
from cudaresolve.lock.reqfiles import MAX_DEPTH, MAX_FILE_BYTES, RequirementFiles, check_lines, read_requirement_files

if TYPE_CHECKING:
    from pathlib import Path

A800 = ["--gpu", "A800", "--driver", "535.104.05", "--python-version", "3.11", "--platform", "linux_x86_64"]


def test_comments_continuations_nesting_and_variables(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "more.txt").write_text("fbgemm-gpu  # the pairing\n")
    (tmp_path / "sub" / "pins.txt").write_text("torch<2.6\n-r nested.txt\n")
    (tmp_path / "sub" / "nested.txt").write_text("numpy<2  # a constraint too: read through -c\n")
    (tmp_path / "req.txt").write_text(
        "# the stack\n"
        "\n"
        "torch \\\n"
        "  >=2.0\n"
        "${EXTRA_PKG}; sys_platform == 'linux'\n"
        "-r sub/more.txt\n"
        "--constraint=sub/pins.txt\n"
    )
    files = read_requirement_files([str(tmp_path / "req.txt")], environ={"EXTRA_PKG": "torchrec"})
    assert files.requirements == ("torch   >=2.0", "torchrec; sys_platform == 'linux'", "fbgemm-gpu")
    assert files.constraints == ("torch<2.6", "numpy<2")


def test_a_bare_url_naming_its_project_by_egg_is_a_url_requirement(tmp_path: Path) -> None:
    """pip's older form, ``URL#egg=NAME``: ``NAME @ URL``, the egg taken out of the fragment and the rest kept; a URL
    without an egg stays as written (and is no requirement)."""
    wheel = "https://host.example/six-1.17.0-py2.py3-none-any.whl"
    (tmp_path / "req.txt").write_text(
        f"git+https://github.com/psf/requests#egg=requests\n{wheel}#egg=six&sha256=abc\n{wheel}#sha256=abc\n"
    )
    files = read_requirement_files([str(tmp_path / "req.txt")])
    assert files.requirements == (
        "requests @ git+https://github.com/psf/requests", f"six @ {wheel}#sha256=abc", f"{wheel}#sha256=abc"
    )


def _checked(*paths: list[str], environ: dict[str, str] | None = None) -> RequirementFiles:
    """The files read, then their lines checked as a solve checks them."""
    files = read_requirement_files(*paths, environ=environ)
    check_lines(files.lines)
    return files


def test_an_unset_variable_is_left_as_written(tmp_path: Path) -> None:
    (tmp_path / "r.txt").write_text("torch${UNSET_SUFFIX}\n")
    files = read_requirement_files([str(tmp_path / "r.txt")], environ={})  # read as text; checked before a solve
    assert files.lines == ((f"{tmp_path / 'r.txt'}:1", "torch${UNSET_SUFFIX}", False),)
    with pytest.raises(InvalidInput, match=r"r.txt:1: not a PEP 508 requirement: 'torch\$\{UNSET_SUFFIX\}'"):
        _checked([str(tmp_path / "r.txt")], environ={})


@pytest.mark.parametrize(
    ("line", "option"),
    [
        ("--no-binary :all:", "--no-binary"),
        ("--pre", "--pre"),
        ("--extra-index-url", "--extra-index-url"),  # no URL
        ("torch==2.7.1 --hash=sha256:00", "--hash=sha256:00"),
        ("-r", "-r"),
    ],
)
def test_options_are_refused_with_file_and_line(tmp_path: Path, line: str, option: str) -> None:
    (tmp_path / "r.txt").write_text(f"torch\n\n{line}\n")
    with pytest.raises(InvalidInput) as info:
        read_requirement_files([str(tmp_path / "r.txt")])
    assert info.value.message == f"{tmp_path / 'r.txt'}:3: option {option} is not supported in a requirement file"


def test_bounds_cycles_urls_and_odd_files(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("-r b.txt\n")
    (tmp_path / "b.txt").write_text("-c a.txt\n")
    with pytest.raises(InvalidInput, match="includes itself"):
        read_requirement_files([str(tmp_path / "a.txt")])
    for i in range(MAX_DEPTH + 1):
        (tmp_path / f"d{i}.txt").write_text(f"-r d{i + 1}.txt\n")
    (tmp_path / f"d{MAX_DEPTH + 1}.txt").write_text("torch\n")
    with pytest.raises(InvalidInput, match=f"nested more than {MAX_DEPTH} deep"):
        read_requirement_files([str(tmp_path / "d0.txt")])
    (tmp_path / "big.txt").write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    with pytest.raises(InvalidInput, match=f"larger than {MAX_FILE_BYTES} bytes"):
        read_requirement_files([str(tmp_path / "big.txt")])
    with pytest.raises(InvalidInput, match="not a URL"):
        read_requirement_files(["https://example.org/requirements.txt"])
    with pytest.raises(InvalidInput, match="cannot read"):
        read_requirement_files([str(tmp_path / "absent.txt")])
    with pytest.raises(InvalidInput, match="not a regular file"):
        read_requirement_files([str(tmp_path)])
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "fifo")
        with pytest.raises(InvalidInput, match="not a regular file"):  # refused unread: no hang
            read_requirement_files([str(tmp_path / "fifo")])
    (tmp_path / "c.txt").write_text("transformers[torch]<5\n")
    with pytest.raises(InvalidInput, match=r"c\.txt:1: a constraint cannot name extras"):
        _checked([], [str(tmp_path / "c.txt")])
    (tmp_path / "u.txt").write_text("torch @ https://example.org/torch-2.7.1-cp311-cp311-linux_x86_64.whl\n")
    with pytest.raises(InvalidInput, match=r"u\.txt:1: a constraint cannot name a URL"):
        _checked([], [str(tmp_path / "u.txt")])
    assert _checked([str(tmp_path / "u.txt")]).requirements == (  # judged later, with the others
        "torch @ https://example.org/torch-2.7.1-cp311-cp311-linux_x86_64.whl",
    )


def _lock(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object]]:
    code = main(["lock", *argv, *A800, "--offline", "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_lock_reads_r_and_c(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "req.txt").write_text("torch\n")
    (tmp_path / "cons.txt").write_text("torch<2.6\nnumpy<2  # never requested: no effect, nothing added\n")
    code, free = _lock(capsys, "-r", str(tmp_path / "req.txt"))
    assert code == 0
    code, held = _lock(capsys, "-r", str(tmp_path / "req.txt"), "-c", str(tmp_path / "cons.txt"))
    assert code == 0
    versions = {p["name"]: p["version"] for p in held["packages"]}  # type: ignore[union-attr,index]
    assert list(versions) == ["torch"]
    assert versions["torch"].startswith("2.5.")
    assert [p["version"] for p in free["packages"]] != [versions["torch"]]  # type: ignore[union-attr,index]


def test_a_constraint_that_excludes_everything_is_no_solution(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cons.txt").write_text("torch<1\n")
    code, answer = _lock(capsys, "torch", "-c", str(tmp_path / "cons.txt"))
    assert code == 1
    assert answer["error"]["code"] == "no-solution"  # type: ignore[index]


def test_an_empty_requirement_file_is_an_error_not_the_project(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\ndependencies = ["torch"]\n')
    (tmp_path / "empty.txt").write_text("# nothing\n")
    code, answer = _lock(capsys, "-r", "empty.txt")
    assert (code, answer["error"]["message"]) == (1, "the requirement files name no requirement")  # type: ignore[index]


def test_why_not_reads_r(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "req.txt").write_text("torch\nfbgemm-gpu\n")
    code = main(["why-not", "cu121", "-r", str(tmp_path / "req.txt"), *A800, "--json"])
    answer = json.loads(capsys.readouterr().out)
    assert code == 0 and answer["possible"] is True
    assert {p["name"] for p in answer["solution"]["packages"]} == {"torch", "fbgemm-gpu"}


def test_why_not_reads_c(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cons.txt").write_text("torch<2.6\n")
    code = main(["why-not", "cu121", "torch", "-c", str(tmp_path / "cons.txt"), *A800, "--json"])
    answer = json.loads(capsys.readouterr().out)
    assert code == 0
    assert answer["solution"]["packages"][0]["version"].startswith("2.5.")
    old_driver = [*A800[:2], "--driver", "470.129.06", *A800[4:]]  # cu121 impossible: the ways out obey -c too
    (tmp_path / "older.txt").write_text("torch<2.5\n")
    for extra, torch in (([], "2.7.1+cu118"), (["-c", str(tmp_path / "older.txt")], "2.4.1+cu118")):
        assert main(["why-not", "cu121", "torch", *extra, *old_driver, "--json"]) == 1
        ways = json.loads(capsys.readouterr().out)["alternatives"]
        assert ways[0]["spec"] == "cu118" and f"torch {torch} " in ways[0]["message"]


def test_install_from_a_lock_refuses_c(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cons.txt").write_text("torch<2.6\n")
    code = main(["install", "--from", "pylock.toml", "-c", str(tmp_path / "cons.txt")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: usage: -c/--constraint and -r/--requirement resolve; --from installs a lock")


def test_install_from_a_lock_refuses_requirements_beside_it(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["install", "--from", "pylock.toml", "torch", "numpy"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: usage: requirements given beside --from (torch, numpy) would not be installed")


def test_a_line_that_is_no_requirement_is_named_by_every_command_that_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "r.txt"
    bad.write_text("torch\ntorch>=>2\n")
    out = tmp_path / "pylock.toml"
    for argv in (["lock", "-r", str(bad), "-o", str(out)], ["lock", "-r", str(bad), "-o", str(out), "-U"],
                 ["why-not", "cu118", "-r", str(bad)]):  # fmt: skip
        assert main([*argv, *A800, "--offline", "--json"]) == 1
        error = json.loads(capsys.readouterr().out)["error"]
        assert error["code"] == "invalid-input"
        assert error["message"] == f"{bad}:2: not a PEP 508 requirement: 'torch>=>2'"
    assert not out.exists()


def test_a_requirement_file_that_is_a_symlink_loop_is_one_coded_line(tmp_path: Path) -> None:
    (tmp_path / "a.txt").symlink_to(tmp_path / "b.txt")
    (tmp_path / "b.txt").symlink_to(tmp_path / "a.txt")
    loop = [str(tmp_path / "a.txt")]
    for given in ((loop, []), ([], loop)):  # as -r, then as -c
        with pytest.raises(InvalidInput, match="cannot read"):
            read_requirement_files(*given)
