# /// script
# requires-python = ">=3.11"
# dependencies = ["httpx>=0.27", "packaging>=24.2"]
# ///
"""Check data/compat.toml against what PyPI hosts. Does I/O: PyPI simple JSON, wheel METADATA.

Run by hand (not in CI), e.g. ``uv run tools/check_pypi.py`` or
``.venv/bin/python tools/check_pypi.py [--compat data/compat.toml] [--kind torch] [-v]``.

For every package row of the database whose project PyPI hosts, it checks:

* the version exists on PyPI (rows that PyPI should carry: a ``pypi-variant``, a
  ``channel = "pypi"`` build, or no builds at all), and is not yanked;
* every final release on PyPI at or above the oldest row is in the database;
* the CPython tags of the Linux x86_64 (or pure-Python) wheels against the row's ``python``:
  ``cpXY`` tags as an exact set (free-threaded ``cpXYt`` ignored); ``pyXY``, ``abi3`` and ``py3``
  tags as a floor that, with Requires-Python, fixes the row's lowest Python;
* the wheel's own ``Requires-Dist`` (METADATA) against the row's ``metadata-requires``: every
  recorded requirement must be there, and every pin on a tracked name (torch, triton,
  fbgemm-gpu, the CUDA runtime, the flashinfer packages) must be recorded;
* for torch, the variant implied by the CUDA runtime pin against ``pypi-variant``.

METADATA comes from the PEP 658 ``<wheel>.metadata`` file where PyPI serves one, else from
HTTP range reads of the wheel's zip (tail, central directory entry, one member), so a
1 GB torch wheel costs tens of kilobytes. Fetched METADATA is cached by file name.
Prints a report of disagreements; exits 1 if there is any, 2 on network failure.
"""

from __future__ import annotations

import argparse
import json
import re
import struct
import sys
import tomllib
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path
from typing import Any, Final

import httpx
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

SIMPLE: Final = "https://pypi.org/simple/{name}/"
ACCEPT_JSON: Final = "application/vnd.pypi.simple.v1+json"  # PEP 691
PACKAGE_KINDS: Final = (
    "torch",
    "torchvision",
    "torchaudio",
    "fbgemm-gpu",
    "torchrec",
    "xformers",
    "flashinfer-python",
    "flashinfer",
    "flashinfer-cubin",
    "flashinfer-jit-cache",
)
# Requirements whose pins matter to the database; a METADATA pin on one of these that the
# row does not record is a disagreement.
TRACKED: Final = frozenset(
    {
        "torch",
        "triton",
        "pytorch-triton",
        "fbgemm-gpu",
        "fbgemm-gpu-genai",
        "cuda-toolkit",
        "nvidia-cuda-runtime-cu11",
        "nvidia-cuda-runtime-cu12",
        "nvidia-cuda-runtime",
        "flashinfer-python",
        "flashinfer-cubin",
        "flashinfer-jit-cache",
    }
)
TAIL_BYTES: Final = 32 * 1024  # the end record and, in most wheels, the .dist-info entries
CD_SIG: Final = b"PK\x01\x02"
EOCD_SIG: Final = b"PK\x05\x06"
ZIP64_LOCATOR_SIG: Final = b"PK\x06\x07"
_METADATA_MEMBER = re.compile(r"^[^/]+\.dist-info/METADATA$")


@dataclass(frozen=True, slots=True, kw_only=True)
class WheelFile:
    filename: str
    url: str
    version: Version
    build: tuple[int, str] | tuple[()]
    interpreters: frozenset[str]  # "cp312", "cp313t", "abi3:cp39", "py310", "py3"
    platforms: frozenset[str]
    requires_python: str | None
    yanked: bool


@dataclass(slots=True)
class Report:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    sdist_only: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def problem(self, kind: str, version: str, text: str) -> None:
        self.problems.append(f"{kind} {version}: {text}")

    def note(self, kind: str, version: str, text: str) -> None:
        self.notes.append(f"{kind} {version}: {text}")


# --------------------------------------------------------------------------- PyPI listing


def fetch_project(client: httpx.Client, name: str) -> dict[Version, list[WheelFile]] | None:
    """Wheel files per version from PEP 691 JSON; None when PyPI does not host the project."""
    response = client.get(SIMPLE.format(name=canonicalize_name(name)), headers={"Accept": ACCEPT_JSON})
    if response.status_code == 404:
        return None
    response.raise_for_status()
    files: dict[Version, list[WheelFile]] = defaultdict(list)
    for entry in response.json()["files"]:
        filename: str = entry["filename"]
        if filename.endswith(".whl"):
            _, version, build, tags = parse_wheel_filename(filename)
            interpreters = set()
            for tag in tags:
                if tag.abi == "abi3":
                    interpreters.add(f"abi3:{tag.interpreter}")
                elif tag.abi.endswith("t") and tag.abi.startswith("cp"):
                    interpreters.add(tag.abi)  # free-threaded, "cp313t"
                else:
                    interpreters.add(tag.interpreter)
            platforms = frozenset(tag.platform for tag in tags)
        else:
            sdist_version = _sdist_version(filename)
            if sdist_version is None:
                continue
            version, build, interpreters, platforms = sdist_version, (), {"sdist"}, frozenset({"sdist"})
        files[version].append(
            WheelFile(
                filename=filename,
                url=entry["url"],
                version=version,
                build=build,
                interpreters=frozenset(interpreters),
                platforms=platforms,
                requires_python=entry.get("requires-python"),
                yanked=bool(entry.get("yanked")),
            )
        )
    return dict(files)


def _sdist_version(filename: str) -> Version | None:
    match = re.match(r"^(.+?)-([^-]+)\.(tar\.gz|zip)$", filename)
    if not match:
        return None
    try:
        return Version(match.group(2))
    except InvalidVersion:
        return None


def _is_linux_x86_64(platform: str) -> bool:
    return platform.endswith("x86_64") and ("linux" in platform)


def linux_or_pure(files: list[WheelFile]) -> list[WheelFile]:
    """The Linux x86_64 wheels, or the pure-Python ones when there are none."""
    linux = [f for f in files if any(_is_linux_x86_64(p) for p in f.platforms)]
    return linux or [f for f in files if "any" in f.platforms]


# --------------------------------------------------------------------------- METADATA


def fetch_metadata(client: httpx.Client, wheel: WheelFile, cache: Path | None) -> str:
    """The wheel's METADATA text (PEP 658 file, else ranged zip reads); cached by file name."""
    cached = cache / f"{wheel.filename}.METADATA" if cache else None
    if cached and cached.exists():
        return cached.read_text(encoding="utf-8")
    response = client.get(wheel.url + ".metadata")
    text = response.text if response.status_code == 200 else _metadata_from_zip(client, wheel.url)
    if cached:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(text, encoding="utf-8")
    return text


def _get_range(client: httpx.Client, url: str, spec: str) -> tuple[bytes, int, int]:
    """(body, first byte offset, total size) of a ranged GET; ``spec`` like ``-32768`` or ``10-99``."""
    response = client.get(url, headers={"Range": f"bytes={spec}"})
    if response.status_code != 206:
        raise RuntimeError(f"range request not honoured ({response.status_code}) for {url}")
    match = re.match(r"bytes (\d+)-(\d+)/(\d+)", response.headers.get("content-range", ""))
    if not match:
        raise RuntimeError(f"no Content-Range in reply for {url}")
    return response.content, int(match.group(1)), int(match.group(3))


def _metadata_from_zip(client: httpx.Client, url: str) -> str:
    tail, tail_start, total = _get_range(client, url, f"-{TAIL_BYTES}")
    entry = _find_cd_entry(tail)
    if entry is None:  # older torch wheels list .dist-info first: try the directory's head, then all of it
        cd_offset, cd_size = _central_directory(client, url, tail, tail_start)
        head_end = cd_offset + min(cd_size, TAIL_BYTES) - 1
        for end in (head_end, cd_offset + cd_size - 1):
            directory, _, _ = _get_range(client, url, f"{cd_offset}-{end}")
            entry = _find_cd_entry(directory)
            if entry is not None:
                break
        else:
            raise RuntimeError(f"no .dist-info/METADATA in {url}")
    method, comp_size, local_offset = entry
    want = 30 + 512 + comp_size
    chunk, _, _ = _get_range(client, url, f"{local_offset}-{min(local_offset + want, total) - 1}")
    if chunk[:4] != b"PK\x03\x04":
        raise RuntimeError(f"bad local header in {url}")
    name_len, extra_len = struct.unpack("<HH", chunk[26:30])
    start = 30 + name_len + extra_len
    if start + comp_size > len(chunk):
        chunk, _, _ = _get_range(client, url, f"{local_offset}-{local_offset + start + comp_size - 1}")
    data = chunk[start : start + comp_size]
    raw = zlib.decompress(data, -15) if method == 8 else data
    return raw.decode("utf-8")


def _central_directory(client: httpx.Client, url: str, tail: bytes, tail_start: int) -> tuple[int, int]:
    """(offset, size) of the central directory, from the (zip64) end record."""
    at = tail.rfind(EOCD_SIG)
    if at < 0:
        raise RuntimeError(f"no zip end record in the tail of {url}")
    cd_size, cd_offset = struct.unpack("<II", tail[at + 12 : at + 20])
    if cd_offset != 0xFFFFFFFF and cd_size != 0xFFFFFFFF:
        return cd_offset, cd_size
    locator = tail.rfind(ZIP64_LOCATOR_SIG, 0, at)
    (record_offset,) = struct.unpack("<Q", tail[locator + 8 : locator + 16])
    if record_offset >= tail_start:
        record = tail[record_offset - tail_start :]
    else:
        record, _, _ = _get_range(client, url, f"{record_offset}-{record_offset + 55}")
    cd_size64, cd_offset64 = struct.unpack("<QQ", record[40:56])
    return cd_offset64, cd_size64


def _find_cd_entry(buffer: bytes) -> tuple[int, int, int] | None:
    """(method, compressed size, local header offset) of the METADATA entry found in ``buffer``."""
    at = buffer.find(CD_SIG)
    while 0 <= at <= len(buffer) - 46:
        (method,) = struct.unpack("<H", buffer[at + 10 : at + 12])
        comp_size, size = struct.unpack("<II", buffer[at + 20 : at + 28])
        name_len, extra_len, _comment_len = struct.unpack("<HHH", buffer[at + 28 : at + 34])
        (local_offset,) = struct.unpack("<I", buffer[at + 42 : at + 46])
        name = buffer[at + 46 : at + 46 + name_len].decode("utf-8", "replace")
        if _METADATA_MEMBER.match(name):
            extra = buffer[at + 46 + name_len : at + 46 + name_len + extra_len]
            comp_size, local_offset = _zip64_fix(extra, comp_size, size, local_offset)
            return method, comp_size, local_offset
        at = buffer.find(CD_SIG, at + 4)
    return None


def _zip64_fix(extra: bytes, comp_size: int, size: int, offset: int) -> tuple[int, int]:
    """Apply the zip64 extra field (id 1) to 32-bit sentinel values."""
    pos = 0
    while pos + 4 <= len(extra):
        header_id, length = struct.unpack("<HH", extra[pos : pos + 4])
        body = extra[pos + 4 : pos + 4 + length]
        if header_id == 1:
            values = list(struct.unpack(f"<{len(body) // 8}Q", body[: len(body) // 8 * 8]))
            if size == 0xFFFFFFFF and values:
                values.pop(0)
            if comp_size == 0xFFFFFFFF and values:
                comp_size = values.pop(0)
            if offset == 0xFFFFFFFF and values:
                offset = values.pop(0)
        pos += 4 + length
    return comp_size, offset


def requires_dist(metadata: str) -> list[Requirement]:
    headers = HeaderParser().parsestr(metadata)
    return [Requirement(value) for value in headers.get_all("Requires-Dist") or []]


# --------------------------------------------------------------------------- checks


def _norm(req: Requirement) -> tuple[str, str, str, frozenset[str]]:
    return (
        canonicalize_name(req.name),
        str(SpecifierSet(str(req.specifier))),
        str(req.marker) if req.marker else "",
        frozenset(req.extras),
    )


def _py(tag: str) -> str | None:
    """``cp312``/``py312`` -> ``3.12``; anything else None."""
    match = re.match(r"^(?:cp|py)3(\d{1,2})$", tag)
    return f"3.{match.group(1)}" if match else None


def check_python(kind: str, row: dict[str, Any], wheels: list[WheelFile], report: Report) -> None:
    """``cpXY`` wheels must match ``python`` exactly; ``pyXY``, ``py3`` and ``abi3`` wheels set a floor."""
    version = row["version"]
    listed = set(row.get("python", []))
    exact: set[str] = set()
    floors: list[str] = []
    specs = {SpecifierSet(w.requires_python) for w in wheels if w.requires_python}
    for wheel in wheels:
        for interp in wheel.interpreters:
            if re.match(r"^cp3\d+t$", interp):
                report.counts["free-threaded tags ignored"] += 1
            elif interp.startswith("abi3:") or interp.startswith("py"):
                floor = _py(interp.removeprefix("abi3:"))
                floors.append(floor or "3.0")  # bare py3: Requires-Python decides
            elif (py := _py(interp)) is not None:
                exact.add(py)
    if exact and not floors:
        if exact != listed:
            report.problem(kind, version, f"python {_fmt(listed)} but PyPI wheels are for {_fmt(exact)}")
        return
    lowest_floor = min([*floors, *exact], key=Version)

    def allowed(py: str) -> bool:
        return Version(py) >= Version(lowest_floor) and all(s.contains(py + ".0") for s in specs)

    refused = {py for py in listed if not allowed(py)}
    if refused:
        tags = "any 3.x" if lowest_floor == "3.0" else f"{lowest_floor} and up"
        report.problem(
            kind,
            version,
            f"python {_fmt(refused)} not allowed: wheel tags take {tags}, "
            f"Requires-Python {sorted(str(s) for s in specs)}",
        )
    first = next((f"3.{m}" for m in range(0, 30) if allowed(f"3.{m}")), None)
    if listed and first is not None and min(listed, key=Version) != first:
        report.problem(kind, version, f"python starts at {min(listed, key=Version)} but PyPI wheels allow {first}")


def _fmt(versions: set[str]) -> str:
    return "[" + ", ".join(sorted(versions, key=Version)) + "]"


_RUNTIME_PIN = re.compile(r"^(?:nvidia-cuda-runtime(?:-cu1\d)?|cuda-toolkit)$")


def check_requires(kind: str, row: dict[str, Any], metadata: str, report: Report) -> None:
    version = row["version"]
    declared = requires_dist(metadata)
    declared_norm = {_norm(r) for r in declared}
    recorded = [Requirement(text) for text in row.get("metadata-requires", [])]
    for req in recorded:
        if _norm(req) not in declared_norm:
            same = [str(r) for r in declared if canonicalize_name(r.name) == canonicalize_name(req.name)]
            report.problem(
                kind,
                version,
                f"metadata-requires has {str(req)!r}; METADATA declares {same or 'nothing for ' + req.name}",
            )
    recorded_norm = {_norm(r) for r in recorded}
    for req in declared:
        if canonicalize_name(req.name) in TRACKED and _norm(req) not in recorded_norm:
            report.problem(kind, version, f"METADATA declares {str(req)!r}, not recorded in metadata-requires")
    if kind == "torch" and row.get("pypi-variant"):
        implied = _variant_from_runtime(declared)
        if implied and implied != row["pypi-variant"]:
            report.problem(
                kind, version, f"pypi-variant {row['pypi-variant']} but the CUDA runtime pin implies {implied}"
            )


def _variant_from_runtime(declared: list[Requirement]) -> str | None:
    for req in declared:
        if _RUNTIME_PIN.match(canonicalize_name(req.name)):
            for spec in req.specifier:
                if spec.operator == "==":
                    major, minor = spec.version.split(".")[:2]
                    return f"cu{major}{minor}"
    return None


def _on_pypi_expected(row: dict[str, Any]) -> bool:
    builds = row.get("build", [])
    return bool(row.get("pypi-variant")) or not builds or any(b.get("channel") == "pypi" for b in builds)


def _pick(wheels: list[WheelFile]) -> WheelFile | None:
    """The wheel to read METADATA from: newest build tag, cp312 preferred, else the highest tag."""

    def score(w: WheelFile) -> tuple[Any, ...]:
        tags = sorted(w.interpreters)
        return (w.build, "cp312" in w.interpreters, tags)

    real = [w for w in wheels if "sdist" not in w.interpreters]
    return max(real, key=score) if real else None


def check_kind(
    client: httpx.Client, kind: str, rows: list[dict[str, Any]], cache: Path | None, report: Report, verbose: bool
) -> None:
    listing = fetch_project(client, kind)
    if listing is None:
        report.note(kind, "*", f"PyPI does not host {kind}; {len(rows)} rows not checked")
        report.counts["rows skipped (not on PyPI)"] += len(rows)
        return
    known = {Version(row["version"]) for row in rows}
    oldest = min(known, default=None)
    for version, files in listing.items():
        final = not (version.is_prerelease or version.is_devrelease or version.local)
        if final and oldest is not None and version >= oldest and version not in known:
            if all(f.yanked for f in files):
                report.note(kind, str(version), "on PyPI but yanked; not in the database")
            else:
                report.problem(kind, str(version), "on PyPI but missing from the database")
    for row in rows:
        report.counts["rows"] += 1
        files = listing.get(Version(row["version"]), [])
        if not files:
            if _on_pypi_expected(row):
                report.problem(kind, row["version"], "not on PyPI")
            else:
                report.counts["rows not expected on PyPI"] += 1
            continue
        report.counts["rows found on PyPI"] += 1
        if all(f.yanked for f in files):
            report.problem(kind, row["version"], "every file is yanked on PyPI")
        wheels = linux_or_pure(files)
        if not wheels:
            report.sdist_only[kind].append(row["version"])
            report.counts["rows sdist-only"] += 1
            continue
        check_python(kind, row, wheels, report)
        report.counts["python lists checked"] += 1
        wheel = _pick(wheels)
        if wheel is None:
            continue
        try:
            metadata = fetch_metadata(client, wheel, cache)
        except (RuntimeError, zlib.error, UnicodeDecodeError) as exc:
            report.problem(kind, row["version"], f"could not read METADATA of {wheel.filename}: {exc}")
            continue
        check_requires(kind, row, metadata, report)
        report.counts["METADATA files read"] += 1
        if verbose:
            print(f"checked {kind} {row['version']} via {wheel.filename}", file=sys.stderr)
    if report.sdist_only[kind]:
        versions = report.sdist_only[kind]
        report.note(
            kind,
            f"{versions[-1]}..{versions[0]}",
            f"{len(versions)} rows have only an sdist on PyPI "
            "(or no Linux x86_64 / pure wheel): python and METADATA not checked",
        )


def load_rows(path: Path) -> dict[str, list[dict[str, Any]]]:
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    return {kind: data.get(kind, []) for kind in PACKAGE_KINDS if data.get(kind)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--compat", type=Path, default=root / "data" / "compat.toml")
    parser.add_argument("--kind", action="append", choices=PACKAGE_KINDS, help="check only this kind (repeatable)")
    parser.add_argument(
        "--cache",
        default=str(Path.home() / ".cache" / "cudaresolve-check-pypi"),
        help="where fetched METADATA is kept ('' for none)",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    rows = load_rows(args.compat)
    cache = Path(args.cache) if args.cache else None
    report = Report()

    def count(response: httpx.Response) -> None:
        response.read()
        report.counts["HTTP requests"] += 1
        report.counts["bytes downloaded"] += len(response.content)

    try:
        with httpx.Client(
            timeout=60,
            follow_redirects=True,
            headers={"User-Agent": "cudaresolve-check-pypi"},
            event_hooks={"response": [count]},
        ) as client:
            for kind, kind_rows in rows.items():
                if args.kind and kind not in args.kind:
                    continue
                check_kind(client, kind, kind_rows, cache, report, args.verbose)
    except httpx.HTTPError as exc:
        print(f"network error: {exc}", file=sys.stderr)
        return 2
    for line in report.notes:
        print(f"note: {line}")
    for line in report.problems:
        print(f"DISAGREE: {line}")
    print(json.dumps(dict(sorted(report.counts.items())), indent=None))
    print(f"{len(report.problems)} disagreement(s), {len(report.notes)} note(s)")
    return 1 if report.problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
