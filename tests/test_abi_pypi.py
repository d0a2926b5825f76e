"""The ABI check on real wheels from PyPI (network): fbgemm-gpu against the torch it is paired with, and
a fbgemm-gpu built for another torch. About 1.5 GB is downloaded into a temporary folder.

Which fbgemm-gpu release pairs with the torch is the shipped database's fact (``requires``); the
wheels are the cp311 manylinux x86_64 files PyPI's JSON API lists for each release.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urljoin

import httpx
import pytest
from packaging.version import Version

from cudaresolve.binaries.linkage import check_paths
from cudaresolve.db.database import load_compat

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.network

TORCH = "2.11.0"
_TAG = "-cp311-cp311-manylinux_2_28_x86_64.whl"


def _download(client: httpx.Client, project: str, version: str, folder: Path) -> Path:
    api = f"https://pypi.org/pypi/{project}/json"
    files = client.get(api).raise_for_status().json()["releases"][version]
    (entry,) = [u for u in files if u["filename"].endswith(_TAG) and u["filename"].count("-") == 4]
    path = folder / entry["filename"]
    with client.stream("GET", urljoin(api, entry["url"])) as response, path.open("wb") as out:
        response.raise_for_status()
        for chunk in response.iter_bytes(1 << 20):
            out.write(chunk)
    return path


def _releases_for(torch: str) -> tuple[str, str]:
    """(the fbgemm-gpu release the database pairs with ``torch``, one paired with a torch two minors older)."""
    db = load_compat()
    have = Version(torch)
    older = Version(f"{have.major}.{have.minor - 2}.0")
    releases = db.packages("fbgemm-gpu")

    def paired(version: Version) -> str:
        return next(str(r.version) for r in releases
                    if any(q.name == "torch" and q.specifier.contains(version) for q in r.requires))

    return paired(have), paired(older)


def test_real_fbgemm_gpu_wheels_against_a_real_torch_wheel(tmp_path: Path) -> None:
    matching, other = _releases_for(TORCH)
    with httpx.Client(timeout=120, follow_redirects=True) as client:
        torch = _download(client, "torch", TORCH, tmp_path)
        good = _download(client, "fbgemm-gpu", matching, tmp_path)
        bad = _download(client, "fbgemm-gpu", other, tmp_path)
    check = check_paths([torch, good, bad])  # torch's wheel is read once for both
    assert check.torch == TORCH and check.extensions >= 2
    mismatches = [f for f in check.findings if f.code == "abi-mismatch"]
    assert [f.path.startswith(f"{good}!") for f in check.findings] == [False] * len(check.findings)
    (caught,) = [f for f in mismatches if f.path.startswith(f"{bad}!")]
    assert (caught.package, caught.version) == ("fbgemm-gpu", other)
    assert caught.missing > 0 and caught.symbols and caught.symbols[0].demangled
    print(f"\nfbgemm-gpu {matching} beside torch {TORCH}: no finding; fbgemm-gpu {other}: {caught.missing} missing "
          f"symbols in {len(caught.files)} libraries, such as {caught.symbols[0].demangled}; other findings: "
          f"{[(f.code, f.libraries) for f in check.findings if f is not caught]}; {check.extensions} extension "
          f"modules, {check.bytes_read} bytes read")
