"""Extension wheels on per-torch find-links pages: PyG's torch-scatter/pyg-lib and OpenMMLab's mmcv.

The [[wheel-page]] rows expand into one build per (torch release, variant) page; the solver takes
the file of the page whose local version is the page's (``+pt28cu128``), never a wheel built for
another torch. The CLI tests serve the pages on 127.0.0.1 (the database's page URLs mapped there
with --index-mirror, or the user's own --find-links copy) with real-shaped tiny wheels: real file
names, and the real Requires-Dist (PyG's wheels declare none; mmcv's is its requirements/runtime.txt
at v2.2.0).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from local_index import LocalIndex
from packaging.version import Version

from cudaresolve.core.decode import loads_toml
from cudaresolve.db.database import CompatDB, load_compat, shipped_path
from cudaresolve.db.pages import PAGE
from cudaresolve.errors import InvalidCompatData, NoSolution
from cudaresolve.index.flat import is_page_url
from test_cuda_major import CU12, PROJECTS, TorchSource
from test_prebuilt import box, lock
from test_whole_env_lock import run_cli

if TYPE_CHECKING:
    from pathlib import Path

PYG = "https://data.pyg.org/whl"
MMCV = "https://download.openmmlab.com/mmcv/dist"
BOX = ["--gpu", "RTX 3090", "--driver", "570.133.07", "--python-version", "3.11", "--platform", "linux_x86_64"]
TAG = "cp311-cp311-linux_x86_64"
MMCV_REQUIRES = ["addict", "mmengine>=0.3.0", "numpy", "packaging", "Pillow", "pyyaml",
                 "regex; sys_platform == 'win32'", "yapf"]  # fmt: skip


@pytest.fixture(scope="module")
def db() -> CompatDB:
    return load_compat(None)


def test_each_page_is_a_build_tied_to_its_torch_minor_and_variant(db: CompatDB) -> None:
    (scatter,) = db.packages("torch-scatter")
    page = {(b.variant, b.local): b for b in scatter.builds if b.channel == PAGE}
    build = page[("cu121", "+pt24cu121")]
    assert build.url == f"{PYG}/torch-2.4.0+cu121.html"
    assert [str(r) for r in build.requires] == ["torch==2.4.*"]  # the 2.4.0 page serves every 2.4.z
    assert "sm_86" in [a.name for a in build.sass]  # the workflow's TORCH_CUDA_ARCH_LIST for cu121
    assert ("cu124", "+pt23cu124") not in page  # the workflow excluded torch 2.3 on cu124
    mmcv = next(r for r in db.packages("mmcv") if r.version == Version("2.2.0"))
    build = next(b for b in mmcv.builds if b.channel == PAGE and b.variant == "cu121" and "2.4" in str(b.requires[0]))
    assert build.url == f"{MMCV}/cu121/torch2.4/index.html" and build.local == ""  # the page alone tells the torch
    assert build.sass  # no published list: the torch build's own


def test_a_row_whose_page_lacks_the_variant_field_is_refused() -> None:
    data = loads_toml(shipped_path().read_text(encoding="utf-8"))
    data["wheel-page"][0] = {**data["wheel-page"][0], "page": "https://data.pyg.org/whl/torch-{torch}.html"}
    data["wheel-page"][1] = {**data["wheel-page"][1], "local": "+pt{nope}"}
    with pytest.raises(InvalidCompatData) as caught:
        CompatDB.from_dict(data)
    assert {p for p, _ in caught.value.problems} >= {"wheel-page[0]", "wheel-page[1]"}


@pytest.mark.parametrize("page", [
    "http://localhost@192.0.2.2:8000/whl/torch-{torch}+{variant}.html",  # the host is 192.0.2.2: plain http there
    "http://127.0.0.1.evil.example/whl/torch-{torch}+{variant}.html",
    "http://192.0.2.2/whl/torch-{torch}+{variant}.html",
])
def test_a_plain_http_page_is_taken_only_for_this_machine_by_its_host(page: str) -> None:
    data = loads_toml(shipped_path().read_text(encoding="utf-8"))
    data["wheel-page"][0] = {**data["wheel-page"][0], "page": page}
    with pytest.raises(InvalidCompatData) as caught:
        CompatDB.from_dict(data)
    assert "wheel-page[0]" in {p for p, _ in caught.value.problems}
    data["wheel-page"][0]["page"] = "http://localhost:8000/whl/torch-{torch}+{variant}.html"  # a test's copy
    CompatDB.from_dict(data)


@pytest.mark.parametrize(("url", "page"), [
    (f"{PYG}/torch-2.4.0+cu121.html", True), (f"{MMCV}/cu121/torch2.4/index.html", True),
    ("https://pypi.org/simple", False), ("http://127.0.0.1:8000/release/", False),
])  # fmt: skip
def test_a_url_naming_a_page_file_is_a_page_of_links(url: str, page: bool) -> None:
    assert is_page_url(url) is page


def test_rtx_3090_gets_the_wheels_matching_torch_release_and_variant(db: CompatDB) -> None:
    pins = lock(db, ["torch", "torch-scatter", "pyg-lib"], box(db, "RTX 3090"))
    torch = Version(str(pins["torch"].version))  # type: ignore[attr-defined]
    local = f"pt{torch.major}{torch.minor}{pins['<variant>']}"
    assert Version(pins["torch-scatter"].version).local == local  # type: ignore[attr-defined]
    assert Version(pins["pyg-lib"].version).local == local  # type: ignore[attr-defined]


@pytest.mark.parametrize("gpu", ["RTX 3090", "A100"])
def test_the_whole_pyg_stack_comes_from_one_page(db: CompatDB, gpu: str) -> None:
    names = ["torch-scatter", "torch-sparse", "torch-cluster", "torch-spline-conv", "pyg-lib"]
    pins = lock(db, ["torch", *names], box(db, gpu))
    torch = Version(str(pins["torch"].version))  # type: ignore[attr-defined]
    assert (torch.major, torch.minor) == (2, 7)  # torch-sparse/-cluster/-spline-conv have no page past 2.7
    assert {Version(pins[n].version).local for n in names} == {f"pt27{pins['<variant>']}"}  # type: ignore[attr-defined]
    assert not [w for w in pins["<warnings>"] if w.code == "source-build"]  # type: ignore[attr-defined]


def test_the_sdist_only_where_no_page_serves_the_torch_asked(db: CompatDB) -> None:
    pins = lock(db, ["torch==2.9.*", "torch-scatter"], box(db, "RTX 3090"))
    assert pins["torch-scatter"].version == "2.1.2"  # type: ignore[attr-defined]
    (warning,) = [w for w in pins["<warnings>"] if w.code == "source-build"]  # type: ignore[attr-defined]
    assert 'TORCH_CUDA_ARCH_LIST="8.6"' in warning.message
    pins = lock(db, ["torch==2.8.*", "torch-scatter"], box(db, "RTX 3090"))
    assert not [w for w in pins["<warnings>"] if w.code == "source-build"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("package", ["pyg-lib", "torch-scatter"])
def test_a_torch_without_a_page_names_the_torch_releases_that_have_one(db: CompatDB, package: str) -> None:
    source = TorchSource(db, PROJECTS)
    source.unbuildable = {f"{package} {r.version}" for r in db.packages(package)}  # no source build either
    torch = "torch==2.4.*" if package == "pyg-lib" else "torch==2.10.*"
    with pytest.raises(NoSolution) as caught:
        lock(db, [torch, package], box(db, "RTX 3090"), source)
    first = caught.value.findings[0]
    assert (first.code, first.package, first.required) == ("no-wheel-page", package, torch)
    assert first.found is not None and "2.8" in first.found.split(", ")
    assert "2.4" not in first.found.split(", ") if package == "pyg-lib" else "2.10" not in first.found


def _pypi(root: Path, torch: str) -> LocalIndex:
    index = LocalIndex(root)
    index.add("pypi", "torch", torch, tag="cp311-cp311-manylinux_2_28_x86_64", requires=[CU12])
    index.add("pypi", "nvidia-cuda-runtime-cu12", "12.8.90", tag="py3-none-manylinux_2_27_x86_64")
    return index


def _page(index: LocalIndex, page: Path, wheels: list[tuple[str, str]], folder: str = "") -> list[str]:
    """A page of links to new wheels ``(name, version)`` in ``folder`` beside it (PyG's layout: relative links
    under ``torch-2.8.0+cu128/``), without hashes, as PyG's and OpenMMLab's pages have none."""
    names = []
    for name, version in wheels:
        wheel = index.add("assets", name, version, tag=TAG, requires=MMCV_REQUIRES if name == "mmcv" else [])
        target = page.parent / folder / wheel.filename
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((index.root / "files" / wheel.filename).read_bytes())
        names.append(wheel.filename)
    href = f"{folder.replace('+', '%2B')}/" if folder else ""
    page.write_text("".join(f'<a href="{href}{n.replace("+", "%2B")}">{n}</a><br/>\n' for n in names))
    return names


def _lock(args: list[str], tmp_path: Path) -> dict[str, dict[str, str]]:
    result = run_cli(["lock", *args, *BOX, "--gpu-source", "pypi", "--json"], tmp_path, tmp_path / "cache")
    assert result.returncode == 0, result.stdout + result.stderr
    out = json.loads(result.stdout)
    return {p["name"]: p for p in out["packages"]} | {"<warnings>": out["warnings"]}


def test_lock_reads_the_pyg_page_of_torchs_release_and_variant(tmp_path: Path) -> None:
    index = _pypi(tmp_path / "index", "2.8.0")  # PyPI's torch 2.8.0 is its cu128 build
    root = tmp_path / "index" / "whl"
    _page(index, root / "torch-2.8.0+cu128.html", [("torch_scatter", "2.1.2+pt28cu128"),
          ("pyg_lib", "0.6.0+pt28cu128"), ("pyg_lib", "0.5.0+pt28cu128")], "torch-2.8.0+cu128")  # fmt: skip
    _page(index, root / "torch-2.8.0+cu126.html", [("torch_scatter", "2.1.2+pt28cu126")], "torch-2.8.0+cu126")
    with index.serve() as base:
        got = _lock(["torch", "torch-scatter", "pyg-lib", f"--index-mirror=https://pypi.org/simple={base}/pypi/simple",
                     f"--index-mirror={PYG}={base}/whl"], tmp_path)  # fmt: skip
        downloads = index.requests["/whl/torch-2.8.0%2Bcu128/torch_scatter-2.1.2%2Bpt28cu128-" + TAG + ".whl"]
    assert got["torch"]["version"] == "2.8.0"
    scatter, pyg = got["torch-scatter"], got["pyg-lib"]
    assert (scatter["version"], pyg["version"]) == ("2.1.2+pt28cu128", "0.6.0+pt28cu128")
    assert scatter["url"] == f"{base}/whl/torch-2.8.0%2Bcu128/torch_scatter-2.1.2%2Bpt28cu128-{TAG}.whl"
    assert scatter["kind"] == "archive" and scatter["index"] is None  # by URL and hash: no index lists it
    wheel = next(e.wheel for e in index.entries["assets"]["torch-scatter"] if "pt28cu128" in e.wheel.filename)
    assert scatter["sha256"] == wheel.sha256 and downloads == 1  # read once to hash it: the page gives no hash
    assert not [w for w in got["<warnings>"] if w["code"] == "source-build"]


def test_lock_takes_only_the_matching_wheel_from_a_find_links_copy(tmp_path: Path) -> None:
    index = _pypi(tmp_path / "index", "2.8.0")
    _page(index, tmp_path / "index" / "copy" / "index.html", [
        ("torch_scatter", f"2.1.2+{local}") for local in ("pt27cu128", "pt28cu126", "pt28cpu", "pt28cu128")
    ])  # fmt: skip
    with index.serve() as base:
        got = _lock(["torch", "torch-scatter", f"--index-mirror=https://pypi.org/simple={base}/pypi/simple",
                     "-f", f"{base}/copy"], tmp_path)  # fmt: skip
    assert got["torch-scatter"]["version"] == "2.1.2+pt28cu128"
    assert got["torch-scatter"]["url"] == f"{base}/copy/torch_scatter-2.1.2%2Bpt28cu128-{TAG}.whl"


def test_lock_takes_mmcv_from_the_openmmlab_page_of_torchs_cuda_and_minor(tmp_path: Path) -> None:
    index = _pypi(tmp_path / "index", "2.4.1")  # PyPI's torch 2.4.1 is its cu121 build
    for name in ("addict", "numpy", "packaging", "pillow", "pyyaml", "yapf"):
        index.add("pypi", name, "1.0")
    index.add("pypi", "mmengine", "0.10.7", requires=["addict", "numpy", "pyyaml", "yapf"])
    root = tmp_path / "index" / "mmcv"
    _page(index, root / "cu121" / "torch2.4" / "index.html", [("mmcv", "2.2.0")])
    with index.serve() as base:
        got = _lock(["torch", "mmcv", f"--index-mirror=https://pypi.org/simple={base}/pypi/simple",
                     f"--index-mirror={MMCV}={base}/mmcv"], tmp_path)  # fmt: skip
    assert got["torch"]["version"] == "2.4.1"
    assert got["mmcv"]["version"] == "2.2.0"
    assert got["mmcv"]["url"] == f"{base}/mmcv/cu121/torch2.4/mmcv-2.2.0-{TAG}.whl"
    assert {"mmengine", "addict", "yapf"} <= set(got)  # its Requires-Dist, read from the wheel
    assert "regex" not in got  # Windows only


def test_lock_without_a_page_for_the_torch_asked_says_so(tmp_path: Path) -> None:
    index = _pypi(tmp_path / "index", "2.4.1")
    with index.serve() as base:
        result = run_cli(["lock", "torch==2.4.*", "pyg-lib", *BOX, "--gpu-source", "pypi", "--json",
                          f"--index-mirror=https://pypi.org/simple={base}/pypi/simple"], tmp_path, tmp_path / "cache")
    assert result.returncode == 1, result.stdout + result.stderr
    codes = [f["code"] for f in json.loads(result.stdout)["error"]["findings"]]
    assert codes[0] == "no-wheel-page"


@pytest.mark.parametrize(("log", "package"), [
    # https://github.com/rusty1s/pytorch_scatter/issues/462
    ("OSError: /usr/local/lib/python3.10/dist-packages/torch_scatter/_version_cuda.so: undefined symbol: "
     "_ZN5torch3jit17parseSchemaOrNameERKSsb", "torch-scatter"),
    # https://github.com/LMMMEng/OverLoCK/issues/17
    ("ImportError: /opt/conda/envs/MC/lib/python3.8/site-packages/mmcv/_ext.cpython-38-x86_64-linux-gnu.so: "
     "undefined symbol: _ZN2at4_ops10zeros_like4callERKNS_6TensorEN3c108optionalINS5_10ScalarTypeEEENS6_INS5_"
     "6LayoutEEENS6_INS5_6DeviceEEENS6_IbEENS6_INS5_12MemoryFormatEEE", "mmcv"),
])  # fmt: skip
def test_explain_error_names_the_page_package_and_the_lock_that_pairs_it(
    capsys: pytest.CaptureFixture[str], log: str, package: str
) -> None:
    from cudaresolve.cli import main

    assert main(["explain-error", log, "--gpu", "RTX 3090", "--driver", "570.133.07", "--json"]) == 0
    (match,) = json.loads(capsys.readouterr().out)["matches"]
    assert match["code"] == "abi-mismatch" and match["cause"].startswith(f"{package} is a compiled extension")
    assert f"'cudaresolve lock torch {package}'" in match["fixes"][0]


@pytest.mark.parametrize("local", ["x y", "+compute_", "sm_90a"])
def test_a_wheel_page_local_tag_that_makes_no_version_is_reported_by_db_check(local: str) -> None:
    """Found by the adversarial hunt: a ``[[wheel-page]]`` row's ``local = "x y"`` passed ``db check`` and then made
    ``why-not`` end in an internal error (``InvalidVersion: '1.6.3x y'``)."""
    data = loads_toml(shipped_path().read_text(encoding="utf-8"))
    data["wheel-page"][0]["local"] = local
    with pytest.raises(InvalidCompatData) as caught:
        CompatDB.from_dict(data)
    assert "wheel-page[0]" in str(caught.value.problems)


def test_a_page_that_cannot_be_read_is_named_as_the_cause_not_the_pytorch_index(tmp_path: Path) -> None:
    """PyTorch's index and PyG's pages both down: torch is still on PyPI, torch-scatter has no build left (its sdist
    cannot be built), so the failure the lock names is torch-scatter's page, not a torch build passed over for
    PyPI's (which a search again without the pairings blames)."""
    index = _pypi(tmp_path / "index", "2.8.0")
    index.add_sdist("pypi", "torch_scatter", "2.1.2", dynamic=["Requires-Dist"], backend_error="needs torch")
    with index.serve() as base:
        result = run_cli(["lock", "torch", "torch-scatter", *BOX, "--json",
                          f"--index-mirror=https://pypi.org/simple={base}/pypi/simple",
                          "--index-mirror=https://download.pytorch.org/whl=http://127.0.0.1:9/whl",
                          f"--index-mirror={PYG}=http://localhost:9/pyg"], tmp_path, tmp_path / "cache")  # fmt: skip
    out = json.loads(result.stdout)
    assert out["complete"] is False and not (tmp_path / "pylock.toml").exists()
    (why,) = [w["message"] for w in out["warnings"] if w["code"] == "incomplete-lock"]
    assert "torch-scatter: could not reach http://localhost:9/pyg/torch-2.8.0+cu128.html: " in why, why
    assert "torch: " not in why
