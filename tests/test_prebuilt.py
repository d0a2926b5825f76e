"""Prebuilt extension wheels keyed on torch X.Y + CUDA major + C++ ABI + Python: flash-attn's release assets.

The [[prebuilt]] rows expand into builds the solver treats like any other; the wheel comes from the
user's find-links copy of the release page, else from the release URL, downloaded once to hash it;
the sdist only where no wheel fits, with a warning. The CLI tests serve real-shaped tiny wheels (the
release's file names, its Requires-Dist) on 127.0.0.1.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from local_index import LocalIndex
from packaging.version import Version

from cudaresolve.db.database import CompatDB, load_compat, shipped_path
from cudaresolve.db.prebuilt import prebuilt_url
from cudaresolve.errors import InvalidCompatData, NoSolution
from cudaresolve.resolve.solve import solve
from cudaresolve.target.build import TargetOptions, build_target
from test_cuda_major import CU12, PROJECTS, TorchSource
from test_whole_env_lock import run_cli

if TYPE_CHECKING:
    from pathlib import Path

    from cudaresolve.target.model import Target

RELEASE = "https://github.com/Dao-AILab/flash-attention/releases/download"
FILES = {**PROJECTS, "einops": [("0.8.1", [], False)]}
ARGS = ["--gpu", "H100", "--driver", "580.65.06", "--python-version", "3.11", "--platform", "linux_x86_64"]


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(None)


def box(db: CompatDB, *gpus: str, python: str = "3.11") -> Target:
    options = TargetOptions(gpus=gpus or ("H100",), driver="580.65.06", python=python, platform="linux_x86_64")
    return build_target(options, db)


def lock(db: CompatDB, requests: list[str], target: Target, source: TorchSource | None = None) -> dict[str, object]:
    solution = solve(requests, db, target, source=source or TorchSource(db, FILES)).solution
    found: dict[str, object] = {p.name: p for p in solution.packages}
    return found | {"<variant>": solution.variant, "<warnings>": solution.warnings}


def test_rows_expand_into_builds_per_torch_minor_variant_and_abi(db: CompatDB) -> None:
    release = next(r for r in db.packages("flash-attn") if r.version == Version("2.8.3"))
    builds = {(b.variant, b.local) for b in release.builds if b.channel == "prebuilt"}
    assert ("cu128", "+cu12torch2.8cxx11abiTRUE") in builds
    assert ("cu126", "+cu12torch2.6cxx11abiTRUE") in builds  # 2.6's cu126 builds use the C++11 ABI ...
    assert ("cu124", "+cu12torch2.6cxx11abiFALSE") in builds  # ... its cu124 ones do not
    assert not any(local.endswith("torch2.8cxx11abiFALSE") for _, local in builds)  # no 2.8 torch has the old ABI
    assert not any(v in ("cu118", "cu130") for v, _ in builds)  # CUDA 12 wheels only
    wheel = next(b for b in release.builds if b.local == "+cu12torch2.8cxx11abiTRUE")
    assert prebuilt_url(wheel, "3.10") == (
        f"{RELEASE}/v2.8.3/flash_attn-2.8.3+cu12torch2.8cxx11abiTRUE-cp310-cp310-linux_x86_64.whl"
    )
    assert [a.name for a in wheel.sass] == ["sm_80", "sm_90", "sm_100", "sm_120"] and not wheel.ptx
    old = next(r for r in db.packages("flash-attn") if r.version == Version("2.7.4.post1"))
    assert {a.name for b in old.builds for a in b.sass} == {"sm_80", "sm_90"}  # nvcc 12.4 builds no sm_100


def test_a_row_without_the_url_fields_is_refused() -> None:
    from cudaresolve.core.decode import loads_toml

    data = loads_toml(shipped_path().read_text(encoding="utf-8"))
    data["prebuilt"][0] = {**data["prebuilt"][0], "url": "https://example.org/flash_attn-{version}.whl"}
    with pytest.raises(InvalidCompatData) as caught:
        CompatDB.from_dict(data)
    assert "prebuilt[0]" in str(caught.value.problems)


def test_h100_gets_the_wheel_matching_torch_cuda_abi_and_python(db: CompatDB) -> None:
    pins = lock(db, ["torch", "flash-attn"], box(db))
    torch, flash = pins["torch"], pins["flash-attn"]
    minor = ".".join(Version(torch.version).public.split(".")[:2])  # type: ignore[attr-defined]
    assert minor == "2.8" and str(pins["<variant>"]).startswith("cu12")
    assert flash.kind.value == "archive"  # type: ignore[attr-defined]
    assert flash.url == (  # type: ignore[attr-defined]
        f"{RELEASE}/v2.8.3.post1/flash_attn-2.8.3.post1+cu12torch2.8cxx11abiTRUE-cp311-cp311-linux_x86_64.whl"
    )
    assert "einops" in pins  # its Requires-Dist, read from the wheel


@pytest.mark.parametrize(("torch", "abi"), [("2.6.0+cu126", "TRUE"), ("2.6.0+cu124", "FALSE")])
def test_the_abi_follows_the_torch_build(db: CompatDB, torch: str, abi: str) -> None:
    flash = lock(db, [f"torch=={torch}", "flash-attn"], box(db, python="3.12"))["flash-attn"]
    assert flash.url.endswith(f"+cu12torch2.6cxx11abi{abi}-cp312-cp312-linux_x86_64.whl")  # type: ignore[attr-defined]


def test_no_wheel_for_the_torch_asked_builds_the_sdist_with_a_warning(db: CompatDB) -> None:
    pins = lock(db, ["torch==2.9.*", "flash-attn"], box(db, "H100", "A100"))
    flash = pins["flash-attn"]
    assert flash.version == "2.8.3.post1"  # type: ignore[attr-defined]
    (warning,) = [w for w in pins["<warnings>"] if w.code == "source-build"]  # type: ignore[attr-defined]
    assert 'FLASH_ATTN_CUDA_ARCHS="80;90"' in warning.message and 'TORCH_CUDA_ARCH_LIST="8.0;9.0"' in warning.message


def test_the_sdist_is_never_taken_where_a_wheel_fits(db: CompatDB) -> None:
    pins = lock(db, ["torch", "flash-attn"], box(db))
    assert not [w for w in pins["<warnings>"] if w.code == "source-build"]  # type: ignore[attr-defined]


def test_the_sdist_when_building_is_not_allowed_is_the_reason(db: CompatDB) -> None:
    source = TorchSource(db, FILES)
    source.unbuildable = {f"flash-attn {r.version}" for r in db.packages("flash-attn")}
    with pytest.raises(NoSolution) as caught:
        lock(db, ["torch==2.9.*", "flash-attn"], box(db), source)
    assert "sdist-unusable" in [f.code for f in caught.value.findings]


def test_a_gpu_older_than_every_wheel_is_named(db: CompatDB) -> None:
    with pytest.raises(NoSolution) as caught:
        lock(db, ["flash-attn"], box(db, "T4"))
    assert caught.value.findings[0].code == "gpu-too-old"


def _torch_index(root: Path, db: CompatDB) -> tuple[LocalIndex, str]:
    """PyPI's side: torch 2.8.0 (its PyPI wheel is cu128), the CUDA runtime it pins, einops."""
    index = LocalIndex(root)
    torch = next(r for r in db.packages("torch") if r.version == Version("2.8.0"))
    assert torch.pypi_variant == "cu128"
    index.add("pypi", "torch", "2.8.0", tag="cp311-cp311-manylinux_2_28_x86_64", requires=[CU12])
    index.add("pypi", "torch", "2.9.1", tag="cp311-cp311-manylinux_2_28_x86_64", requires=[CU12])  # no wheel fits
    index.add("pypi", "nvidia-cuda-runtime-cu12", "12.8.90", tag="py3-none-manylinux_2_27_x86_64")
    index.add("pypi", "einops", "0.8.1")
    return index, "2.8.3.post1"


def _wheel(index: LocalIndex, version: str, local: str) -> str:
    tag = "cp311-cp311-linux_x86_64"
    return index.add("assets", "flash-attn", f"{version}+{local}", tag=tag, requires=["torch", "einops"]).filename


@pytest.mark.parametrize("hashed", [True, False])
def test_lock_takes_the_wheel_from_a_find_links_copy_of_the_release_page(
    db: CompatDB, tmp_path: Path, hashed: bool
) -> None:
    index, version = _torch_index(tmp_path / "index", db)
    names = [_wheel(index, version, f"cu12torch{t}cxx11abi{a}") for t in ("2.7", "2.8") for a in ("TRUE", "FALSE")]
    wanted = f"flash_attn-{version}+cu12torch2.8cxx11abiTRUE-cp311-cp311-linux_x86_64.whl"
    assert wanted in names
    with index.serve() as base:
        page = tmp_path / "index" / "release" / "index.html"
        page.parent.mkdir(parents=True)
        sha = {e.wheel.filename: e.wheel.sha256 for e in index.entries["assets"]["flash-attn"]}
        page.write_text("".join(
            f'<a href="{base}/files/{n.replace("+", "%2B")}{"#sha256=" + sha[n] if hashed else ""}">{n}</a>\n'
            for n in names
        ))  # fmt: skip
        mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
        result = run_cli(["lock", "torch", "flash-attn", *ARGS, mirror, "-f", f"{base}/release", "--gpu-source",
                          "pypi", "--json"], tmp_path, tmp_path / "cache")  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    out = json.loads(result.stdout)
    got = {p["name"]: p for p in out["packages"]}
    assert got["torch"]["version"] == "2.8.0"  # the newest torch a wheel serves, not 2.9.1
    assert got["flash-attn"]["url"].endswith(wanted.replace("+", "%2B")) or got["flash-attn"]["url"].endswith(wanted)
    flash = next(e.wheel for e in index.entries["assets"]["flash-attn"] if e.wheel.filename == wanted)
    assert got["flash-attn"]["sha256"] == flash.sha256  # without a hash on the page, the file was read to hash it
    assert got["flash-attn"]["kind"] == "archive" and got["flash-attn"]["index"] is None  # by URL: no index lists it
    assert got["flash-attn"]["url"].startswith(f"{base}/files/")  # the mirror's copy, not the release URL
    assert not [w for w in out["warnings"] if w["code"] == "source-build"]


def test_lock_downloads_the_release_asset_once_to_hash_it(db: CompatDB, tmp_path: Path) -> None:
    from cudaresolve.core.decode import loads_toml

    index, version = _torch_index(tmp_path / "index", db)
    wanted = _wheel(index, version, "cu12torch2.8cxx11abiTRUE")
    with index.serve() as base:
        text = shipped_path().read_text(encoding="utf-8")
        data = loads_toml(text)
        pattern = next(r["url"] for r in data["prebuilt"] if r["version"] == version)
        local = pattern.replace(f"{RELEASE}/v{{version}}", f"{base}/files").replace("+", "%2B")
        compat = tmp_path / "compat.toml"
        compat.write_text(text.replace(f'url = "{pattern}"', f'url = "{local}"', 1))
        mirror = f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"
        result = run_cli(["lock", "torch", "flash-attn", *ARGS, mirror, "--compat", str(compat), "--gpu-source",
                          "pypi", "--json"], tmp_path, tmp_path / "cache")  # fmt: skip
        downloads = index.requests[f"/files/{wanted.replace('+', '%2B')}"]
    assert result.returncode == 0, result.stdout + result.stderr
    out = json.loads(result.stdout)
    flash = next(p for p in out["packages"] if p["name"] == "flash-attn")
    assert flash["kind"] == "archive" and flash["url"].endswith(wanted.replace("+", "%2B"))
    assert flash["sha256"] == next(e.wheel.sha256 for e in index.entries["assets"]["flash-attn"])
    assert downloads == 1
    assert "direct-unhashed" in [w["code"] for w in out["warnings"]]
