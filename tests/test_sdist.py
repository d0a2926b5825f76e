"""Releases with only an sdist, without a network: PKG-INFO read from hostile archives under bounds, PEP 643's
static test, the file chosen per release, the lock and the pip runs. End to end: ``test_sdist_e2e.py``."""

from __future__ import annotations

import gzip
import io
import tarfile
import tomllib
import zipfile
from typing import TYPE_CHECKING

import pytest
from packaging.tags import parse_tag
from tiny_wheels import build_sdist

from cudaresolve.errors import IndexUnavailable
from cudaresolve.index.metadata import parse_core_metadata, static_problem
from cudaresolve.index.pages import ProjectPage
from cudaresolve.index.sdist import pkg_info
from cudaresolve.index.simple import dist_file
from cudaresolve.index.source import IndexSource
from cudaresolve.install.pip import download_commands, install_commands
from cudaresolve.lock.lockfile import dumps_pylock, loads_pylock
from cudaresolve.lock.model import Lock
from cudaresolve.lock.requirements import dumps_requirements, loads_requirements
from cudaresolve.resolve.model import FileKind, LockedPackage
from cudaresolve.text.catalogue import format_text

if TYPE_CHECKING:
    from pathlib import Path

URL = "https://files.example.org/demo-1.0.tar.gz"
PYPI = "https://pypi.org/simple"
HASH = "c" * 64


# --- PKG-INFO out of the archive, under bounds ------------------------------------------------------


def _tar(members: list[tuple[str, bytes, bytes]]) -> io.BytesIO:
    """A .tar.gz of (name, data, type) members; type is a tarfile type (REGTYPE, SYMTYPE ...)."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for name, data, kind in members:
            info = tarfile.TarInfo(name)
            info.type, info.size = kind, len(data) if kind == tarfile.REGTYPE else 0
            if kind == tarfile.SYMTYPE:
                info.linkname = "../../etc/passwd"
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    raw.seek(0)
    return raw


PKG = b"Metadata-Version: 2.2\nName: demo\nVersion: 1.0\nRequires-Dist: idna\n"


def test_pkg_info_is_read_from_a_tar_gz_and_a_zip_without_extracting(tmp_path: Path) -> None:
    for zip_format in (False, True):
        sdist = build_sdist(tmp_path, "demo", "1.0", requires=["idna"], zip_format=zip_format)
        with (tmp_path / sdist.filename).open("rb") as archive:
            assert pkg_info(archive, sdist.filename, URL) == sdist.pkg_info
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo-1.0.tar.gz", "demo-1.0.zip"]  # nothing unpacked
    nested = _tar([("demo-1.0/src/demo.egg-info/PKG-INFO", b"x", tarfile.REGTYPE), ("./demo-1.0/PKG-INFO", PKG,
                   tarfile.REGTYPE)])
    assert pkg_info(nested, "demo-1.0.tar.gz", URL) == PKG.decode()  # one directory deep, ./ allowed


def _bomb() -> io.BytesIO:
    """A .tar.gz whose first member unpacks to 64 MiB of zeros before PKG-INFO (about 64 KiB on the wire)."""
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb") as packed, tarfile.open(fileobj=packed, mode="w|") as tar:
        info = tarfile.TarInfo("demo-1.0/zeros")
        info.size = 64 * 1024 * 1024
        tar.addfile(info, io.BytesIO(b"\0" * info.size))
        info = tarfile.TarInfo("demo-1.0/PKG-INFO")
        info.size = len(PKG)
        tar.addfile(info, io.BytesIO(PKG))
    raw.seek(0)
    return raw


def _many_zip(count: int) -> io.BytesIO:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as archive:
        for i in range(count):
            archive.writestr(f"demo-1.0/f{i}", "")
        archive.writestr("demo-1.0/PKG-INFO", PKG)
    raw.seek(0)
    return raw


@pytest.mark.parametrize(
    ("archive", "filename", "bounds", "why"),
    [
        (io.BytesIO(b"\x1f\x8b not gzip at all"), "demo-1.0.tar.gz", {}, "not a readable sdist (BadGzipFile)"),
        (io.BytesIO(gzip.compress(b"not a tar")), "demo-1.0.tar.gz", {}, "not a readable sdist (ReadError)"),
        (io.BytesIO(b"PK\x03\x04 broken"), "demo-1.0.zip", {}, "more than 50000 members"),  # no end record
        (_bomb(), "demo-1.0.tar.gz", {"unpacked": 1024 * 1024}, "more than 1048576 bytes unpacked before its"),
        (_tar([(f"demo-1.0/f{i}", b"", tarfile.REGTYPE) for i in range(30)]), "demo-1.0.tar.gz", {"members": 20},
         "more than 20 members before its PKG-INFO"),
        (_many_zip(30), "demo-1.0.zip", {"members": 20}, "more than 20 members"),
        (_tar([("demo-1.0/PKG-INFO", b"", tarfile.SYMTYPE)]), "demo-1.0.tar.gz", {}, "is not a regular file"),
        (_tar([("demo-1.0/PKG-INFO", b"", tarfile.LNKTYPE)]), "demo-1.0.tar.gz", {}, "is not a regular file"),
        (_tar([("../PKG-INFO", PKG, tarfile.REGTYPE), ("/PKG-INFO", PKG, tarfile.REGTYPE), ("PKG-INFO", PKG,
               tarfile.REGTYPE)]), "demo-1.0.tar.gz", {}, "no PKG-INFO in its top directory"),
        (_tar([("demo-1.0/PKG-INFO", PKG * 100, tarfile.REGTYPE)]), "demo-1.0.tar.gz", {"size": 1000},
         f"a PKG-INFO of {len(PKG) * 100} bytes"),
        (io.BytesIO(_tar([("demo-1.0/PKG-INFO", PKG, tarfile.REGTYPE)]).getvalue()[:40]), "demo-1.0.tar.gz", {},
         "not a readable sdist"),
    ],
)
def test_a_hostile_sdist_is_a_coded_error_naming_it(
    archive: io.BytesIO, filename: str, bounds: dict[str, int], why: str
) -> None:
    with pytest.raises(IndexUnavailable) as info:
        pkg_info(archive, filename, URL, **bounds)
    assert info.value.code == "index-unavailable"
    assert info.value.message.startswith(f"the core metadata at {URL} cannot be used: ")
    assert why in info.value.message


# --- PEP 643: when PKG-INFO may stand for the wheel ----------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "problem"),
    [
        ("Metadata-Version: 2.2\n", None),
        ("Metadata-Version: 2.4\nDynamic: Description\nDynamic: License\n", None),
        ("Metadata-Version: 2.1\n", "its PKG-INFO is Metadata-Version 2.1, which does not promise static metadata"
                                    " (PEP 643 needs 2.2 or newer)"),
        ("", "its PKG-INFO is Metadata-Version none"),
        ("Metadata-Version: 2.2\nDynamic: Requires-Dist\n", "its PKG-INFO marks Requires-Dist as dynamic"),
        ("Metadata-Version: 2.3\ndynamic: requires-python\n", "its PKG-INFO marks Requires-Python as dynamic"),
        ("Metadata-Version: 2.2\nDynamic: Version\n", "its PKG-INFO marks Version as dynamic, which PEP 643 forbids"),
        ("Metadata-Version: 2.4\nDynamic: name\n", "its PKG-INFO marks Name as dynamic, which PEP 643 forbids"),
    ],
)
def test_static_means_metadata_2_2_and_dependencies_not_dynamic(headers: str, problem: str | None) -> None:
    meta = parse_core_metadata(f"{headers}Name: demo\nVersion: 1.0\n", source=URL)
    found = static_problem(meta)
    assert (found is None) if problem is None else (found is not None and format_text(found).startswith(problem))


# --- which file a release is locked from --------------------------------------------------------------


class _Pages:
    offline = True
    cache = None

    def __init__(self, page: ProjectPage) -> None:
        self.page = page

    def fetch_page(self, index: str, name: str) -> ProjectPage:
        return self.page


def test_a_wheel_is_preferred_within_a_release_and_an_sdist_only_release_is_a_candidate() -> None:
    files = [
        dist_file("demo-2.0.tar.gz", f"{PYPI}/demo-2.0.tar.gz", sha256=HASH),
        dist_file("demo-1.0.tar.gz", f"{PYPI}/demo-1.0.tar.gz"),
        dist_file("demo-1.0-py3-none-any.whl", f"{PYPI}/demo-1.0-py3-none-any.whl"),
        dist_file("demo-3.0.zip", f"{PYPI}/demo-3.0.zip", requires_python=">=3.12"),  # not for this Python
    ]
    page = ProjectPage(project="demo", index_url=PYPI, served_from=PYPI, url=f"{PYPI}/demo/",  # type: ignore[arg-type]
                       files=tuple(f for f in files if f is not None))
    source = IndexSource(_Pages(page), default_index=PYPI, tags=tuple(parse_tag("py3-none-any")),  # type: ignore[arg-type]
                         python="3.11")
    releases = source.releases("demo")
    assert [(str(r.version), r.artifact.filename, r.artifact.kind) for r in releases] == [
        ("2.0", "demo-2.0.tar.gz", FileKind.SDIST),
        ("1.0", "demo-1.0-py3-none-any.whl", FileKind.WHEEL),
    ]


# --- locked and installed ----------------------------------------------------------------------------


def _sdist_lock() -> Lock:
    return Lock(packages=(
        LockedPackage(name="demo", version="1.0", index=PYPI, url=URL, sha256=HASH, filename="demo-1.0.tar.gz",
                      size=345, kind=FileKind.SDIST),
        LockedPackage(name="idna", version="3.10", index=PYPI, sha256="2" * 64, filename="idna-3.10-py3-none-any.whl",
                      url="https://files.example.org/idna-3.10-py3-none-any.whl"),
    ))  # fmt: skip


def test_pylock_writes_an_sdist_table_and_reads_it_back() -> None:
    text = dumps_pylock(_sdist_lock())  # validated with packaging.pylock on the way
    entry = tomllib.loads(text)["packages"][0]
    assert entry == {"name": "demo", "version": "1.0", "index": PYPI,
                     "sdist": {"name": "demo-1.0.tar.gz", "url": URL, "size": 345, "hashes": {"sha256": HASH}}}
    assert loads_pylock(text).packages == _sdist_lock().packages


def test_requirements_say_which_pins_are_sdists() -> None:
    text = dumps_requirements(_sdist_lock())
    assert '# cudaresolve: sdists = ["demo"]' in text and f"demo==1.0 --hash=sha256:{HASH}" in text
    assert [(p.name, p.kind) for p in loads_requirements(text).packages] == [
        ("demo", FileKind.SDIST), ("idna", FileKind.WHEEL)
    ]  # fmt: skip


def test_pip_builds_the_sdist_hash_checked_then_installs_the_wheel_it_built() -> None:
    commands = download_commands(_sdist_lock(), python="py", workdir="/w")
    build = commands[-1]
    assert build.argv == ("py", "-m", "pip", "wheel", "--no-deps", "--no-binary", "demo", "--index-url", PYPI, "-w",
                          "/w/wheels", "--require-hashes", "-r", "/w/index-1-sdists.txt")  # fmt: skip
    assert build.files == (("/w/index-1-sdists.txt", f"demo==1.0 --hash=sha256:{HASH}\n"),)
    install = install_commands(_sdist_lock(), python="py", workdir="/w")
    assert install[0].argv[-2:] == ("-r", "/w/install.txt") and "demo" not in install[0].files[0][1]
    assert install[1].argv[-1] == "demo==1.0"  # the built wheel is not the locked file: no hash to require
