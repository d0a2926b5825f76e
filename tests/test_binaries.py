"""binaries: files, wheels read in place, directories, installed distributions; the inspect CLI."""

# The Chinese expectations use full-width punctuation on purpose.
# ruff: noqa: RUF001

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from rich.console import Console

from cudaresolve.binaries.inspect import (
    find_distribution,
    inspect_directory,
    inspect_file,
    inspect_path,
    inspect_paths,
)
from cudaresolve.binaries.report import BinaryReport, FileError
from cudaresolve.binaries.scan import is_candidate, read_wheel
from cudaresolve.cli import main
from cudaresolve.core import archive as binaries
from cudaresolve.core.archive import open_zip_member
from cudaresolve.core.archs import Arch, ComputeCapability
from cudaresolve.core.files import remove_tree
from cudaresolve.errors import InvalidBinary, InvalidInput
from cudaresolve.render import plain
from cudaresolve.render.inspect import format_details, render_inspect
from cudaresolve.text.catalogue import format_text as words
from cudaresolve.text.model import Text, literal

FIXTURES = Path(__file__).parent / "fixtures" / "cuda"
LINKER_SCRIPT = b"/* GNU ld script */\nGROUP ( libc.so.6 libc_nonshared.a )\n"


def make_wheel(path: Path) -> Path:
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.write(FIXTURES / "multi.so", "pkg/lib/libmulti.so", compress_type=zipfile.ZIP_DEFLATED)
        wheel.write(FIXTURES / "family.so", "pkg/lib/libfamily.so.1", compress_type=zipfile.ZIP_STORED)
        wheel.write(FIXTURES / "nogpu.so", "pkg/_host.cpython-311-x86_64-linux-gnu.so")
        wheel.writestr("pkg/libc.so", LINKER_SCRIPT)
        wheel.writestr("pkg/__init__.py", "")
        wheel.writestr("pkg-1.0.dist-info/RECORD", "")
    return path


def make_site(root: Path) -> Path:
    """A site-packages with one distribution 'Fake_Pkg' whose RECORD lists a .so and a missing file."""
    (root / "fake_pkg" / "lib").mkdir(parents=True)
    shutil.copy(FIXTURES / "multi.so", root / "fake_pkg" / "lib" / "libk.so")
    shutil.copy(FIXTURES / "nogpu.so", root / "fake_pkg" / "_host.so")
    (root / "fake_pkg" / "__init__.py").write_text("")
    info = root / "fake_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: Fake_Pkg\nVersion: 1.0\n")
    (info / "RECORD").write_text(
        "fake_pkg/__init__.py,,\nfake_pkg/lib/libk.so,,\nfake_pkg/_host.so,,\nfake_pkg/gone.so,,\n"
        "fake_pkg-1.0.dist-info/RECORD,,\n"
    )
    return root


def test_is_candidate() -> None:
    assert [is_candidate(n) for n in ("a/libx.so", "libcudart.so.12", "k.cubin", "k.fatbin", "x.o")] == [True] * 5
    assert [is_candidate(n) for n in ("a.py", "so/readme", "x.soy", "a.so.d/b.txt")] == [False] * 4


def test_one_file() -> None:
    (report,) = inspect_path(FIXTURES / "multi.so")
    assert (report.path, report.format, report.sass, report.ptx, report.lto) == (
        str(FIXTURES / "multi.so"), "elf", ("sm_75", "sm_86", "sm_90a", "sm_100a"), ("compute_90",), ())
    assert report.archs == (
        Arch(ComputeCapability(7, 5)), Arch(ComputeCapability(8, 6)), Arch(ComputeCapability(9, 0), ptx=True),
        Arch(ComputeCapability(9, 0), "a"), Arch(ComputeCapability(10, 0), "a"))
    assert report.error is None and report.has_device_code


def test_to_dict_has_the_contract_keys_first() -> None:
    data = inspect_file(FIXTURES / "rdc.so").to_dict()
    assert list(data)[:3] == ["path", "sass", "ptx"]
    keys = ("sass", "ptx", "lto", "format", "containers", "entries", "compressed", "sections")
    assert {k: data[k] for k in keys} == {
        "sass": ["sm_86"], "ptx": [], "lto": [], "format": "elf", "containers": 2, "entries": 3, "compressed": 2,
        "sections": [".nv_fatbin", "__nv_relfatbin"]}
    assert "error" not in data and "aoti" not in data


def test_explicit_non_binary_file_is_an_error_report() -> None:
    (report,) = inspect_path(FIXTURES / "kernel.cu")
    assert report.error == FileError(code="invalid-binary", text=Text("binaries.unknown-format"),
                                     hint=report.error.hint if report.error else None)
    assert words(report.error.text) == "not an ELF file, fatbin or cubin"
    assert report.listing is None and report.sass == () and report.format == ""


def test_missing_path_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such file, directory or installed distribution") as info:
        inspect_path(tmp_path / "nope.so")
    assert info.value.hint
    with pytest.raises(InvalidInput, match=f"installed distribution in {tmp_path}: surely-not-installed"):
        inspect_path("surely-not-installed", site_packages=[tmp_path])


def test_directory_walk_skips_host_only_files_unless_asked() -> None:
    names = [Path(r.path).name for r in inspect_directory(FIXTURES)]
    assert names == ["compress-size.so", "compress-speed.so", "embedded.so", "family.so", "kernel.fatbin",
                     "libkernels.a", "lto.o", "multi.so", "rdc.o", "rdc.so", "sm_100.cubin", "sm_100f.cubin",
                     "sm_90a.cubin", "uncompressed.so", "windows.pyd"]
    everything = [Path(r.path).name for r in inspect_directory(FIXTURES, include_empty=True)]
    assert everything == sorted([*names, "nogpu.so"])


def test_a_directory_nested_past_the_recursion_limit_is_walked(tmp_path: Path) -> None:
    """Found by the adversarial hunt: ``inspect`` of a folder 1,200 levels deep raised RecursionError from Python
    3.11's recursive os.walk, an internal error. The walk keeps a stack; the deepest library is found."""
    deep = tmp_path
    for _ in range(1200):  # one level at a time: pathlib's mkdir(parents=True) recurses too
        deep = deep / "d"
        deep.mkdir()
    shutil.copy(FIXTURES / "family.so", deep / "family.so")
    assert [r.path for r in inspect_directory(tmp_path)] == [str(deep / "family.so")]
    remove_tree(tmp_path / "d")  # pytest's own cleanup is shutil.rmtree, which recurses too


def test_directory_walk_skips_symlinks_and_linker_scripts(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "family.so", tmp_path / "libf.so.1")
    (tmp_path / "libf.so").symlink_to(tmp_path / "libf.so.1")
    (tmp_path / "libc.so").write_bytes(LINKER_SCRIPT)
    assert [r.path for r in inspect_directory(tmp_path, include_empty=True)] == [str(tmp_path / "libf.so.1")]


def test_wheel_members_are_read_in_place(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / "pkg-1.0-py3-none-linux_x86_64.whl")
    reports = inspect_path(wheel)
    assert [(r.path, r.sass, r.ptx) for r in reports] == [
        (f"{wheel}!pkg/lib/libfamily.so.1", ("sm_100f",), ("compute_120f",)),
        (f"{wheel}!pkg/lib/libmulti.so", ("sm_75", "sm_86", "sm_90a", "sm_100a"), ("compute_90",)),
    ]
    assert [Path(p).name for p in tmp_path.iterdir()] == [wheel.name]  # nothing extracted
    everything = read_wheel(wheel, include_empty=True)
    assert [r.path.split("!")[1] for r in everything] == [
        "pkg/_host.cpython-311-x86_64-linux-gnu.so", "pkg/lib/libfamily.so.1", "pkg/lib/libmulti.so"]


def test_stored_member_reads_only_headers(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / "w.whl")
    with zipfile.ZipFile(wheel) as archive:
        info = archive.getinfo("pkg/lib/libfamily.so.1")
        with open_zip_member(archive, info) as stream:
            assert stream.read(4) == b"\x7fELF"
            assert stream.seek(0, 2) == info.file_size
            assert stream.read(10) == b""


def test_large_deflated_member_is_spooled_to_a_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binaries, "_IN_MEMORY_MEMBER", 0)
    wheel = make_wheel(tmp_path / "w.whl")
    (multi,) = [r for r in read_wheel(wheel) if r.path.endswith("libmulti.so")]
    assert multi.sass == ("sm_75", "sm_86", "sm_90a", "sm_100a")


def test_damaged_wheel_member_is_a_per_file_error(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / "w.whl")
    data = bytearray(wheel.read_bytes())
    with zipfile.ZipFile(wheel) as archive:
        info = archive.getinfo("pkg/lib/libmulti.so")
        start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + 100:start + 400] = b"\xff" * 300
    wheel.write_bytes(bytes(data))
    reports = {r.path.split("!")[1]: r for r in read_wheel(wheel)}
    assert reports["pkg/lib/libfamily.so.1"].error is None
    bad = reports["pkg/lib/libmulti.so"]
    assert bad.error is not None and bad.error.code == "invalid-binary"
    assert words(bad.error.text).startswith("cannot read member:")


def test_not_a_zip_wheel_is_one_error_report(tmp_path: Path) -> None:
    wheel = tmp_path / "broken-1.0-py3-none-any.whl"
    wheel.write_bytes(b"not a zip")
    (report,) = inspect_path(wheel)
    assert report.error is not None and words(report.error.text).startswith("cannot read wheel:")


def test_zip_member_with_implausible_size_is_refused(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / "w.whl")
    with zipfile.ZipFile(wheel) as archive:
        info = archive.getinfo("pkg/lib/libmulti.so")
        info.file_size = info.compress_size * 5000
        with pytest.raises(InvalidBinary, match="implausible size"):
            open_zip_member(archive, info)


def test_installed_distribution_by_name(tmp_path: Path) -> None:
    site = make_site(tmp_path)
    dist = find_distribution("fake-pkg", [site])
    assert dist is not None and dist.metadata["Name"] == "Fake_Pkg"
    reports = inspect_path("FAKE.PKG", site_packages=[site])
    assert [(Path(r.path).name, r.sass, words(r.error.text) if r.error else None) for r in reports] == [
        ("gone.so", (), "listed in RECORD but missing"),
        ("libk.so", ("sm_75", "sm_86", "sm_90a", "sm_100a"), None),
    ]
    assert len(inspect_path("fake_pkg", site_packages=[site], include_empty=True)) == 3


def test_inspect_paths_keeps_order() -> None:
    reports = inspect_paths([FIXTURES / "lto.o", FIXTURES / "kernel.fatbin"])
    assert [(Path(r.path).name, r.lto, r.sass) for r in reports] == [
        ("lto.o", ("lto_90", "lto_100a"), ()), ("kernel.fatbin", (), ("sm_75",))]


# --- the CLI and the human view ----------------------------------------------------------

def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(FIXTURES / "family.so"), str(FIXTURES / "sm_90a.cubin"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["schema"] == 1
    assert [{k: f[k] for k in ("path", "sass", "ptx")} for f in out["files"]] == [
        {"path": str(FIXTURES / "family.so"), "sass": ["sm_100f"], "ptx": ["compute_120f"]},
        {"path": str(FIXTURES / "sm_90a.cubin"), "sass": ["sm_90a"], "ptx": []},
    ]
    assert out["files"][0]["ptx_isa"] == {"compute_120f": "9.0"}


def test_cli_bad_path_is_exit_1_with_one_json_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(tmp_path / "missing.so"), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["error"]["code"] == "invalid-input" and out["error"]["hint"]


def test_cli_corrupt_file_is_exit_1_with_the_file_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(FIXTURES / "kernel.cu"), "--json"]) == 1
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    assert entry["error"]["code"] == "invalid-binary" and entry["sass"] == []


def test_cli_human_table_goes_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(FIXTURES / "multi.so")]) == 0
    out = capsys.readouterr().out
    assert "sm_90a" in out and "compute_90" in out


def test_format_details() -> None:
    assert format_details(inspect_file(FIXTURES / "rdc.so")) == (
        "3 entries, 2 containers, 2 compressed, has -rdc copies")
    assert format_details(inspect_file(FIXTURES / "multi.so")) == (
        "5 entries, 1 container, 1 compressed, PTX ISA 9.0")
    broken = BinaryReport(path="x", error=FileError(code="invalid-binary", text=literal("truncated")))
    assert format_details(broken) == "error: invalid-binary"  # the whole error follows the table


def test_format_details_and_errors_in_chinese() -> None:
    assert format_details(inspect_file(FIXTURES / "rdc.so"), "zh") == "3 个条目、2 个容器、2 个已压缩、含 -rdc 副本"
    report = inspect_file(FIXTURES / "kernel.cu")
    assert format_details(report, "zh") == "错误：invalid-binary"
    error = plain(report.to_dict(), "zh")["error"]
    assert error == {"code": "invalid-binary", "message": "不是 ELF 文件、fatbin 或 cubin",
                     "hint": "文件不完整，或者不是 CUDA/ELF 二进制文件；请重新安装它所属的软件包"}


def test_render_inspect_in_chinese() -> None:
    buffer = io.StringIO()
    render_inspect([inspect_file(FIXTURES / "multi.so")], Console(file=buffer, width=200, color_system=None),
                   lang="zh")
    lines = buffer.getvalue().splitlines()
    assert lines[0].split() == ["文件", "SASS", "PTX", "LTO", "详情"]
    assert lines[1].endswith("5 个条目、1 个容器、1 个已压缩、PTX ISA 9.0")
    empty = io.StringIO()
    render_inspect([], Console(file=empty, width=200, color_system=None), lang="zh")
    assert empty.getvalue() == "没有找到 GPU 代码（用 --all 列出所有二进制文件）\n"


def test_render_inspect() -> None:
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, color_system=None)
    render_inspect([inspect_file(FIXTURES / "embedded.so")], console)
    lines = buffer.getvalue().splitlines()
    assert lines[0].split() == ["file", "SASS", "PTX", "LTO", "details"]
    assert lines[1].split()[:5] == [str(FIXTURES / "embedded.so"), "sm_75", "sm_90a", "compute_120", "-"]
    empty = io.StringIO()
    render_inspect([], Console(file=empty, width=200, color_system=None))
    assert empty.getvalue() == "no GPU code found (use --all to list every binary)\n"


def test_cli_distribution_name_with_site_packages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    site = make_site(tmp_path)
    assert main(["inspect", "fake-pkg", "--site-packages", str(site), "--json"]) == 1  # gone.so is an error
    files = json.loads(capsys.readouterr().out)["files"]
    assert [(Path(f["path"]).name, f["sass"], "error" in f) for f in files] == [
        ("gone.so", [], True), ("libk.so", ["sm_75", "sm_86", "sm_90a", "sm_100a"], False)]


def test_a_file_error_is_one_line_with_its_hint(tmp_path: Path) -> None:
    """A fatbin whose first entry claims 2**40 bytes: the table names the code, then the error and hint follow whole."""
    data = bytearray((FIXTURES / "kernel.fatbin").read_bytes())
    data[24:32] = (1 << 40).to_bytes(8, "little")  # the first entry's payload size
    path = tmp_path / "huge.fatbin"
    path.write_bytes(data)
    report = inspect_file(path)
    assert report.error is not None and report.error.hint is not None
    for lang, hint in (("en", " (hint: the file is truncated"), ("zh", "（提示：文件不完整")):
        buffer = io.StringIO()
        render_inspect([report], Console(file=buffer, width=80, color_system=None), lang=lang)
        lines = buffer.getvalue().splitlines()
        assert any("invalid-binary" in line for line in lines[1:-1])  # the details cell: the code only
        assert [i for i, line in enumerate(lines) if "1099511627776" in line] == [len(lines) - 1]
        assert lines[-1].startswith(("error: invalid-binary: ", "错误：invalid-binary：")) and str(path) in lines[-1]
        assert hint in lines[-1]
