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
import sys
import tomllib
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import httpx
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version
from wheel_metadata import WheelFile, fetch_metadata, requires_dist  # tools/wheel_metadata.py, beside this script

ACCEPT_JSON: Final = "application/vnd.pypi.simple.v1+json"  # PEP 691
# Requirements whose pins matter to the database (one list, shared with the wheel scan); a
# METADATA pin on one of these that the row does not record is a disagreement.
from wheel_compare import TRACKED  # noqa: E402  (tools/ is on the path when run as a script)


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


def fetch_project(client: httpx.Client, index: str, name: str) -> dict[Version, list[WheelFile]] | None:
    """Wheel files per version from PEP 691 JSON on ``index``; None when it does not host the project."""
    response = client.get(f"{index}/{canonicalize_name(name)}/", headers={"Accept": ACCEPT_JSON})
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
    client: httpx.Client,
    index: str,
    kind: str,
    rows: list[dict[str, Any]],
    cache: Path | None,
    report: Report,
    verbose: bool,
) -> None:
    listing = fetch_project(client, index, kind)
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


def load_rows(path: Path) -> tuple[str, dict[str, list[dict[str, Any]]]]:
    """The default index (``[index] default``) and the rows of every package table (``[packages] tables``)."""
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    kinds = data["packages"]["tables"]
    return data["index"]["default"].rstrip("/"), {kind: data[kind] for kind in kinds if data.get(kind)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--compat", type=Path, default=root / "src" / "cudaresolve" / "data" / "compat.toml")
    parser.add_argument("--kind", action="append", help="check only this package table (repeatable)")
    parser.add_argument(
        "--cache",
        default=str(Path.home() / ".cache" / "cudaresolve-check-pypi"),
        help="where fetched METADATA is kept ('' for none)",
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    index, rows = load_rows(args.compat)
    unknown = sorted(set(args.kind or ()) - set(rows))
    if unknown:
        parser.error(f"--kind: not a package table with rows in {args.compat}: {', '.join(unknown)}")
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
                check_kind(client, index, kind, kind_rows, cache, report, args.verbose)
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
