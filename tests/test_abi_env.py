"""The ABI check on fake environments and wheels: ``doctor`` and ``inspect`` through ``main(argv)``.

The site-packages are laid out as pip leaves them (``test_doctor.make_dist``), with the g++-built
libraries of ``tests/fixtures/abi`` as torch's ``torch/lib`` and as extension modules.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
import tomlkit

from cudaresolve.binaries import linkage
from cudaresolve.binaries.linkage import check_environment, check_paths
from cudaresolve.cli import main
from test_doctor import DB_DATA, make_dist

ABI = Path(__file__).parent / "fixtures" / "abi"
TOOLS = Path(__file__).parents[1] / "tools"
TARGET = ["--gpu", "A100", "--driver", "580.65.06", "--python-version", "3.11", "--platform", "linux_x86_64"]
LEGACY = "_ZN2at6native10legacy_addEii"


def torch_lib(release: str, root: Path = ABI) -> dict[str, str | Path]:
    return {f"torch/lib/{name}": root / f"torch-{release}" / name for name in ("libc10.so", "libtorch_cpu.so")}


def env(tmp_path: Path, release: str, *, ext: str = "myext", version: str = "1.0", requires: str = "",
        root: Path = ABI) -> Path:
    site = tmp_path / f"site-{release}"
    make_dist(site, "torch", "2.11.0", torch_lib(release, root))
    info = make_dist(site, ext, version, {f"{ext.replace('-', '_')}/_C.so": root / "extension.so"})
    if requires:
        with (info / "METADATA").open("a") as metadata:
            metadata.write(f"Requires-Dist: {requires}\n")
    return site


def codes(check: linkage.AbiCheck) -> list[tuple[str, str]]:
    return [(f.code, f.package) for f in check.findings]


def test_extension_built_for_another_torch_is_named_with_its_symbol(tmp_path: Path) -> None:
    site = env(tmp_path, "new", version="1.0+cu126torch2.10")
    check = check_environment([site], environ={})
    assert codes(check) == [("abi-mismatch", "myext")]
    (finding,) = check.findings
    assert (finding.torch, finding.built_for, finding.missing, finding.checked) == ("2.11.0", "2.10", 1, 5)
    assert [(s.mangled, s.demangled) for s in finding.symbols] == [(LEGACY, "at::native::legacy_add(int, int)")]
    assert finding.path == str(site / "myext" / "_C.so")
    assert (check.torch, check.extensions) == ("2.11.0", 1)


def test_extension_beside_the_torch_it_was_built_for_passes(tmp_path: Path) -> None:
    check = check_environment([env(tmp_path, "old")], environ={})
    assert (check.findings, check.torch, check.extensions) == ((), "2.11.0", 1)


def test_the_torch_release_comes_from_a_pin_when_the_version_has_no_local_tag(tmp_path: Path) -> None:
    check = check_environment([env(tmp_path, "new", requires="torch==2.10.0")], environ={})
    assert [f.built_for for f in check.findings] == ["2.10.0"]
    check = check_environment([env(tmp_path / "b", "new", requires="torch>=2.0")], environ={})
    assert [f.built_for for f in check.findings] == [None]


def test_no_torch_in_the_environment_means_no_symbol_check(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "myext", "1.0", {"myext/_C.so": ABI / "extension.so"})
    check = check_environment([site], environ={})
    assert (check.findings, check.torch_found, check.extensions) == ((), False, 1)


def cuda_env(tmp_path: Path, *, provider: str | None = None) -> Path:
    site = tmp_path / "site"
    make_dist(site, "torch", "2.11.0", torch_lib("new"))
    make_dist(site, "cudaext", "0.3", {"cudaext/_ops.so": ABI / "cuda_user.so"})
    if provider is not None:
        make_dist(site, "nvidia-cuda-runtime", "13.0.96", {provider: ABI / "libcudart.so.13"})
    return site


def test_a_cuda_library_no_package_provides_is_named(tmp_path: Path) -> None:
    check = check_environment([cuda_env(tmp_path, provider="nvidia/cuda_runtime/lib/libcudart.so.12")], environ={})
    assert codes(check) == [("missing-cuda-library", "cudaext")]
    assert check.findings[0].libraries == ("libcudart.so.13",)


@pytest.mark.parametrize("where", ["nvidia/cu13/lib/libcudart.so.13", "nvidia/cuda_runtime/lib/libcudart.so.13",
                                   "torch/lib/libcudart.so.13", "cudaext/libcudart.so.13"])
def test_a_cuda_library_a_package_provides_is_found(tmp_path: Path, where: str) -> None:
    assert check_environment([cuda_env(tmp_path, provider=where)], environ={}).findings == ()


def test_ld_library_path_and_torch_own_needs_count_as_provided(tmp_path: Path) -> None:
    site = cuda_env(tmp_path)
    folder = tmp_path / "system-cuda"
    folder.mkdir()
    shutil.copy(ABI / "libcudart.so.13", folder)
    assert check_environment([site], environ={"LD_LIBRARY_PATH": f"/nonexistent:{folder}"}).findings == ()
    # a torch library that itself needs libcudart.so.13 has it loaded before any extension
    other = tmp_path / "other"
    make_dist(other, "torch", "2.11.0", {**torch_lib("new"), "torch/lib/libtorch_cuda.so": ABI / "cuda_user.so"})
    make_dist(other, "cudaext", "0.3", {"cudaext/_ops.so": ABI / "cuda_user.so"})
    assert check_environment([other], environ={}).findings == ()


def test_the_check_is_bounded_in_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = env(tmp_path, "new")
    for name in ("second", "third"):
        make_dist(site, name, "1.0", {f"{name}/_C.so": ABI / "extension.so"})
    assert len(check_environment([site], environ={}).findings) == 3
    monkeypatch.setattr(linkage, "MAX_FILES", 1)
    check = check_environment([site], environ={})
    assert check.stopped
    assert len(check.findings) == 1  # checked between files: the first extension is read whole, then it stops


def test_a_damaged_extension_is_skipped_not_fatal(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "torch", "2.11.0", torch_lib("new"))
    make_dist(site, "broken", "1.0", {"broken/_C.so": "\x7fELF\x02\x01\x01 truncated"})
    assert check_environment([site], environ={}).findings == ()


# -- doctor ------------------------------------------------------------------------------------


@pytest.fixture
def compat(tmp_path: Path) -> list[str]:
    path = tmp_path / "compat.toml"
    path.write_text(tomlkit.dumps(DB_DATA))
    return ["--compat", str(path)]


def doctor_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["doctor", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_doctor_names_the_symbol_under_the_package_it_lists(
    capsys: pytest.CaptureFixture[str], compat: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    site = env(tmp_path, "new", ext="xformers", version="0.0.31")  # a package the database lists
    code, data = doctor_json(capsys, "--site-packages", str(site), *TARGET, *compat)
    assert code == 1
    xformers = next(p for p in data["packages"] if p["name"] == "xformers")
    problem = next(p for p in xformers["problems"] if p["code"] == "abi-mismatch" and "symbols" in p)
    assert problem["symbols"] == [{"mangled": LEGACY, "demangled": "at::native::legacy_add(int, int)"}]
    assert problem["found"] == "torch 2.11.0"
    assert problem["libraries"] == [str(site / "xformers" / "_C.so")]
    assert "at::native::legacy_add(int, int) (_ZN2at6native10legacy_addEii)" in problem["message"]


def test_doctor_puts_a_package_it_does_not_list_among_the_environment_problems(
    capsys: pytest.CaptureFixture[str], compat: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    site = env(tmp_path, "new", ext="torch-scatter", version="2.1.2+pt210cu128")
    code, data = doctor_json(capsys, "--site-packages", str(site), *TARGET, *compat)
    assert code == 1
    (problem,) = [p for p in data["problems"] if p["code"] == "abi-mismatch"]
    assert (problem["package"], problem["required"], problem["found"]) == ("torch-scatter", "torch 2.10",
                                                                          "torch 2.11.0")
    assert problem["message"] == (
        "torch-scatter 2.1.2+pt210cu128 was built for torch 2.10, but torch 2.11.0 is installed: torch_scatter/_C.so "
        "needs 1 symbol(s) that it does not export, such as at::native::legacy_add(int, int) "
        "(_ZN2at6native10legacy_addEii); importing it fails with 'undefined symbol'")
    assert problem["fixes"][0] == (
        "Install the torch-scatter build made for torch 2.11.0: 'cudaresolve lock torch==2.11.0 torch-scatter' "
        "picks it where one is published.")
    main(["doctor", "--site-packages", str(site), *TARGET, *compat, "--lang", "zh"])
    assert "torch-scatter 2.1.2+pt210cu128 是针对 torch 2.10 构建的" in capsys.readouterr().out
    code, data = doctor_json(capsys, "--site-packages", str(env(tmp_path / "ok", "old", ext="torch-scatter")),
                             *TARGET, *compat)
    assert [p["code"] for p in data["problems"]] == []


# -- inspect -----------------------------------------------------------------------------------


def wheel(folder: Path, filename: str, members: dict[str, Path | str]) -> Path:
    path = folder / filename
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, source in members.items():
            if isinstance(source, Path):
                archive.write(source, name)
            else:
                archive.writestr(name, source)
    return path


def ext_wheel(folder: Path, version: str = "1.0", metadata: str = "") -> Path:
    dist = f"myext-{version}.dist-info"
    return wheel(folder, f"myext-{version}-cp311-cp311-linux_x86_64.whl", {
        "myext/_C.so": ABI / "extension.so",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: myext\nVersion: {version}\n{metadata}"})


def test_inspect_checks_an_extension_wheel_against_a_torch_wheel(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    new = wheel(tmp_path, "torch-2.11.0-cp311-cp311-linux_x86_64.whl", torch_lib("new"))
    ext = ext_wheel(tmp_path, metadata="Requires-Dist: torch==2.10.0\n")
    assert main(["inspect", str(new), str(ext), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    (problem,) = data["problems"]
    assert (problem["code"], problem["package"], problem["built_for"], problem["torch"]) == (
        "abi-mismatch", "myext", "2.10.0", "2.11.0")
    assert problem["path"] == f"{ext}!myext/_C.so"
    assert data["abi"]["extensions"] == 1
    assert main(["inspect", str(new), str(ext)]) == 1
    out = capsys.readouterr().out
    assert "✗ abi-mismatch: myext 1.0 was built for torch 2.10.0" in out
    assert "checked 1 extension module(s) against torch 2.11.0: 1 problem(s)" in out


def test_inspect_passes_a_matching_pair_and_says_when_no_torch_is_found(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    old = wheel(tmp_path, "torch-2.10.0-cp311-cp311-linux_x86_64.whl", torch_lib("old"))
    ext = ext_wheel(tmp_path)
    assert main(["inspect", str(old), str(ext), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["problems"] == []
    empty = tmp_path / "empty-site"
    empty.mkdir()
    assert main(["inspect", str(ABI / "extension.so"), "--site-packages", str(empty)]) == 0
    assert "1 extension module(s) link torch, but no torch libraries were found" in capsys.readouterr().out


def test_inspect_of_a_library_file_uses_the_named_site_packages(
    capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    site = env(tmp_path, "new")
    check = check_paths([ABI / "extension.so"], site_packages=[site])
    assert [(f.code, f.package, f.symbols[0].mangled) for f in check.findings] == [
        ("abi-mismatch", "extension.so", LEGACY)]


def test_inspect_holds_cuda_libraries_against_the_named_environment(tmp_path: Path) -> None:
    cuda_user = tmp_path / "cuda_user.so"  # not beside the fixtures' libcudart.so.13
    shutil.copy(ABI / "cuda_user.so", cuda_user)
    lacking = check_paths([cuda_user], site_packages=[cuda_env(tmp_path / "a")])
    assert [(f.code, f.libraries) for f in lacking.findings] == [("missing-cuda-library", ("libcudart.so.13",))]
    provided = cuda_env(tmp_path / "b", provider="nvidia/cu13/lib/libcudart.so.13")
    assert check_paths([cuda_user], site_packages=[provided]).findings == ()
    no_torch = tmp_path / "c"
    no_torch.mkdir()
    assert check_paths([cuda_user], site_packages=[no_torch]).findings == ()  # nothing to hold it against


def test_a_torch_wheel_alone_is_not_read(tmp_path: Path) -> None:
    new = wheel(tmp_path, "torch-2.11.0-cp311-cp311-linux_x86_64.whl", torch_lib("new"))
    check = check_paths([new])
    assert (check.findings, check.files, check.torch_found) == ((), 0, False)


@pytest.mark.skipif(shutil.which("g++") is None or shutil.which("gcc") is None, reason="needs g++ and gcc")
def test_fixtures_rebuilt_by_this_machines_compiler_give_the_same_answer(tmp_path: Path) -> None:
    built = tmp_path / "built"
    subprocess.run(["bash", str(TOOLS / "build_abi_fixtures.sh"), str(built)], check=True, capture_output=True)
    for name in ("torch_api.cpp", "extension.cpp", "cuda_user.cpp", "cudart_stub.c"):
        assert (built / name).exists() or (ABI / name).exists()
    bad = check_environment([env(tmp_path / "a", "new", root=built)], environ={})
    assert [(f.code, f.symbols[0].demangled) for f in bad.findings] == [
        ("abi-mismatch", "at::native::legacy_add(int, int)")]
    assert check_environment([env(tmp_path / "b", "old", root=built)], environ={}).findings == ()
