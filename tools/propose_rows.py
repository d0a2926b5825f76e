# /// script
# requires-python = ">=3.11"
# dependencies = ["httpx>=0.27", "packaging>=24.2"]
# ///
"""List the PyPI releases newer than the database and draft their compat.toml rows. Does I/O: PyPI.

Run by hand (not in CI), from the repository root:
``PYTHONPATH=src python tools/propose_rows.py [--kind torch] [--scan]``.

For every package the database knows, it lists the final, non-yanked releases on PyPI newer
than the newest row, then prints a draft row for each (TOML, ready to paste and edit): version,
python (CPython tags of the Linux x86_64 wheels, or the floor of a pure / abi3 wheel with
Requires-Python), platforms, metadata-requires (the tracked pins of the wheel's METADATA), for
torchvision / torchaudio / xformers ``requires`` = the torch pin, and ``pypi-variant`` from the
wheel's ``version.py`` / CUDA runtime pin. With ``--scan`` it also reads the Linux x86_64 wheel's
GPU code (``tools/scan_wheels.py``) and drafts the PyPI build: variant, sass and ptx (base list).
Keys that no wheel can tell (min-sm, constrains, the index builds, pairings without a pin) are
copied from the newest existing row and marked ``# copied from <version>: check``. Every draft
says ``verified = false``; review it, then run ``cudaresolve db check`` and the scan.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import httpx
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scan_wheels import SCANNED_PLATFORMS, Dist, facts_from_record, fetch_listing, pick, scan_wheel
from wheel_compare import python_problem

from cudaresolve.db.database import load_compat  # the loader; its module may be renamed

if TYPE_CHECKING:
    from cudaresolve.db.database import PackageRelease

TORCH_PAIRED: Final = ("torchvision", "torchaudio", "xformers", "torchrec", "fbgemm-gpu")
COPIED: Final = ("min-sm", "constrains", "index", "index-url")


def newer_releases(listing: dict[Version, list[Dist]], newest: Version | None) -> list[Version]:
    """Final releases above ``newest`` with at least one file that is not yanked, oldest first."""
    out = []
    for version, dists in listing.items():
        if version.is_prerelease or version.is_devrelease or version.local:
            continue
        if newest is not None and version <= newest:
            continue
        if all(d.yanked for d in dists):
            continue
        out.append(version)
    return sorted(out)


def python_list(dists: list[Dist]) -> list[str]:
    """CPython versions of the Linux x86_64 (or pure) wheels: exact cp tags, or 3.x from a floor."""
    linux = [d for d in dists if d.platform == "linux_x86_64"] or [d for d in dists if d.platform == "any"]
    tags = {t for d in linux for t in d.tags}
    exact = sorted({f"3.{t[3:]}" for t in tags if t.startswith("cp3") and not t.endswith("t")}, key=Version)
    if exact and not any(t.startswith(("abi3:", "py")) for t in tags):
        return exact
    spec = next((d.requires_python for d in linux if d.requires_python), None)
    candidates = [f"3.{m}" for m in range(8, 16)]
    return [py for py in candidates if python_problem([py], sorted(tags), spec) is None]


def draft_row(
    kind: str, version: Version, dists: list[Dist], record: dict[str, Any] | None, previous: PackageRelease | None,
    scanned: bool,
) -> str:
    """The TOML text of one draft row (and its build when a scan was made)."""
    lines = [f"[[{kind}]]", f"version = {json.dumps(str(version))}"]
    lines.append(f"python = {_list(python_list(dists))}")
    platforms = sorted({d.platform for d in dists if d.platform != "any"})
    if platforms:
        lines.append(f"platforms = {_list(platforms)}")
    facts = facts_from_record(kind, str(version), "linux_x86_64", record, [], []) if record else None
    if facts is not None:
        torch_pins = [r for r in facts.requires if r.split(";")[0].replace(" ", "").startswith("torch")]
        if kind in TORCH_PAIRED and torch_pins:
            lines.append(f"requires = {_list([torch_pins[0].split(';')[0].strip()])}")
        lines.append(f"metadata-requires = {_list(list(facts.requires))}")
    for key in COPIED:
        value = _previous_value(previous, key)
        if value is not None:
            lines.append(f"{key} = {value}  # copied from {previous.version if previous else '?'}: check")
    variant = facts.variant if facts and facts.variant not in (None, "cpu") else None
    guessed = ""
    if facts is not None and variant is None and facts.cuda_major is not None and previous is not None:
        before = previous.pypi_variant or next((b.variant for b in previous.builds if b.channel == "pypi"), None)
        if before and before.startswith(f"cu{facts.cuda_major}"):
            variant = before
            guessed = f"  # CUDA {facts.cuda_major}.x from the wheel; minor copied from {previous.version}"
    if variant and kind in ("torch", "torchvision", "torchaudio"):
        lines.append(f"pypi-variant = {json.dumps(variant)}")
    lines.append(f"source = {json.dumps(f'https://pypi.org/project/{kind}/{version}/')}")
    lines.append("verified = false")
    today = datetime.date.today().isoformat()
    lines.append(f"note = {json.dumps(f'drafted by tools/propose_rows.py on {today} from PyPI metadata')}")
    if scanned and facts is not None and variant:
        build: dict[str, Any] = {"variant": variant}
        if kind not in ("torch", "torchvision", "torchaudio"):
            build["channel"] = "pypi"
        build["sass"] = list(facts.sass)
        if facts.ptx:
            build["ptx"] = list(facts.ptx)
        build["checked"] = "wheel"  # its Linux x86_64 wheel was just read (provenance, data/compat.toml header)
        build["scanned"] = today
        extras = [s for s in facts.sass_all if s not in facts.sass]
        lines.append(f"build = [\n  {_inline(build)},{guessed}\n]")
        if extras:
            lines.append(f"# per-kernel extra SASS in the wheel (not listed): {', '.join(extras)}")
        if previous is not None and previous.builds:
            lines.append(f"# index builds of {previous.version} for comparison: "
                         + "; ".join(f"{b.variant} {' '.join(a.name for a in b.archs)}" for b in previous.builds))
    return "\n".join(lines)


def _previous_value(previous: PackageRelease | None, key: str) -> str | None:
    if previous is None:
        return None
    if key == "min-sm" and previous.min_sm is not None:
        return json.dumps(str(previous.min_sm))
    if key == "constrains" and previous.constrains:
        return _list([str(r) for r in previous.constrains])
    if key == "index" and previous.index != "pypi":
        return json.dumps(previous.index)
    if key == "index-url" and previous.index_url:
        return json.dumps(previous.index_url)
    return None


def _list(values: list[str]) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def _inline(table: dict[str, Any]) -> str:
    parts = [f"{k} = {_list(v) if isinstance(v, list) else json.dumps(v)}" for k, v in table.items()]
    return "{ " + ", ".join(parts) + " }"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--compat", type=Path, default=root / "src" / "cudaresolve" / "data" / "compat.toml")
    parser.add_argument("--kind", action="append", help="only this package (repeatable)")
    parser.add_argument("--scan", action="store_true", help="also read the Linux x86_64 wheel's GPU code")
    parser.add_argument("--since", help="draft every release above this version instead of the newest row")
    args = parser.parse_args(argv)
    db = load_compat(args.compat)
    stats: Counter[str] = Counter()
    found = 0
    with httpx.Client(timeout=120, follow_redirects=True, headers={"User-Agent": "cudaresolve-propose-rows"}) as client:
        for kind in db.package_names:
            if args.kind and kind not in args.kind:
                continue
            listing = fetch_listing(client, kind)
            if listing is None:
                print(f"# {kind}: not on PyPI", file=sys.stderr)
                continue
            rows = db.packages(kind)
            newest = Version(args.since) if args.since else max((r.version for r in rows), default=None)
            versions = newer_releases(listing, newest)
            print(f"# {kind}: newest in the database {newest}; newer on PyPI: "
                  f"{', '.join(map(str, versions)) or 'none'}", file=sys.stderr)
            for version in versions:
                previous = max((r for r in rows if r.version < version), key=lambda r: r.version, default=None)
                dists = [d for d in listing[version] if not d.yanked]
                target = next((p for p in (*SCANNED_PLATFORMS, "any") if any(d.platform == p for d in dists)), None)
                chosen = pick([d for d in dists if d.platform == target]) if target else None
                binaries = args.scan and bool(previous and previous.builds)
                record = scan_wheel(client, chosen, binaries=binaries, stats=stats) if chosen else None
                print(draft_row(kind, version, dists, record, previous, binaries) + "\n")
                found += 1
    print(f"# {found} release(s) drafted; {stats['bytes'] / 1e6:.1f} MB downloaded", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
