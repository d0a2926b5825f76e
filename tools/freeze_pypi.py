# /// script
# requires-python = ">=3.11"
# dependencies = ["httpx>=0.27", "packaging>=24"]
# ///
# Run from the repository with the project installed (it reads METADATA with cudaresolve's lazy wheel reader).
"""Freeze a trimmed local copy of real PyPI pages for one project's closure. Does I/O: network, files, uv.

Online once (PyPI must be reachable; nothing else is asked), then the copy serves benches offline
(``bench/pypi_frozen.py`` serves it on 127.0.0.1). Not run in CI.

    python tools/freeze_pypi.py torch torchvision torchaudio transformers accelerate datasets numpy pandas
    python tools/freeze_pypi.py --out /tmp/frozen --releases 15 -r requirements.in

1. The closure: ``uv pip compile`` of the requirements against https://pypi.org/simple for the
   target (``--python-version 3.11 --python-platform x86_64-manylinux_2_28`` by default).
2. For every project in it, the PEP 691 JSON page from PyPI, trimmed: the newest ``--releases``
   final releases plus the pinned one, and of those only the wheels whose tags install on the
   target (cp311 / abi3 / py3, manylinux_2_28 x86_64 or older manylinux). Each kept file keeps its
   sha256, size, requires-python, yanked, upload-time and core-metadata; its URL becomes
   ``/files/<filename>`` on whatever server serves the copy.
3. The ``.metadata`` file of every kept wheel: PyPI's PEP 658 file, or, when PyPI has none, the
   wheel's ``*.dist-info/METADATA`` read with HTTP range requests (the end of the zip, then the one
   member), as pip's lazy wheel does. Its sha256 is written into the page's ``core-metadata``.

The wheels themselves are not copied (torch's are ~900 MB): the tools under test resolve from
metadata only (``uv pip compile``, ``pip install --dry-run --report``, ``cudaresolve lock``).
Layout under ``--out``: ``simple/index.json``, ``simple/<project>/index.json``,
``files/<wheel>.metadata``, ``manifest.json`` (request, target, pins, date, counts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import httpx
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from cudaresolve.errors import IndexUnavailable

PYPI: Final = "https://pypi.org/simple"
ACCEPT: Final = "application/vnd.pypi.simple.v1+json"
DEFAULT_OUT: Final = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "cudaresolve-bench" / "pypi"
USER_AGENT: Final = "cudaresolve-bench-freeze/1 (+https://github.com/; one-off snapshot)"


def target_tags(python: str, glibc: str, arch: str) -> set[Tag]:
    """Every tag a CPython ``python`` on manylinux ``glibc`` ``arch`` installs (as uv's --python-platform)."""
    major, minor = (int(x) for x in python.split("."))
    glibc_minor = int(glibc.split(".")[1])
    platforms = [f"manylinux_2_{m}_{arch}" for m in range(glibc_minor, 4, -1)]
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    platforms += [f"{name}_{arch}" for m, name in legacy.items() if m <= glibc_minor]
    tags = set(cpython_tags((major, minor), platforms=platforms))
    tags |= set(compatible_tags((major, minor), f"cp{major}{minor}", platforms=platforms))
    return tags


def closure(requirements: list[str], python: str, platform: str, uv: str) -> dict[str, str]:
    """``uv pip compile`` against PyPI: project -> pinned version."""
    with tempfile.TemporaryDirectory() as tmp:
        req = Path(tmp) / "req.in"
        req.write_text("\n".join(requirements) + "\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_"))}
        argv = [uv, "pip", "compile", str(req), "--no-config", "--quiet", "--no-header", "--no-annotate"]
        argv += ["--index-url", PYPI, "--python-version", python, "--python-platform", platform]
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
    if done.returncode != 0:
        raise SystemExit(f"uv pip compile failed:\n{done.stderr}")
    pins = {}
    for line in done.stdout.splitlines():
        name, sep, version = line.strip().partition("==")
        if sep and not line.startswith("#"):
            pins[str(canonicalize_name(name.split("[")[0]))] = version.split(";")[0].strip()
    return pins


def _version(filename: str) -> Version | None:
    try:
        return parse_wheel_filename(filename)[1]
    except (ValueError, InvalidVersion):
        return None


def trim_page(page: dict[str, Any], pinned: set[str], tags: set[Tag], releases: int) -> list[dict[str, Any]]:
    """The page's wheels that fit ``tags``, of the newest ``releases`` final versions plus the ``pinned`` ones."""
    fitting: dict[Version, list[dict[str, Any]]] = {}
    for file in page["files"]:
        name = file["filename"]
        if not name.endswith(".whl"):
            continue
        try:
            _, version, _, wheel_tags = parse_wheel_filename(name)
        except (ValueError, InvalidVersion):
            continue
        if wheel_tags & tags:
            fitting.setdefault(version, []).append(file)
    finals = sorted((v for v in fitting if not v.is_prerelease and not v.is_devrelease), reverse=True)
    keep = set(finals[:releases]) | {Version(v) for v in pinned}
    return [f for v in sorted(keep, reverse=True) for f in fitting.get(v, [])]


def remote_metadata(client: httpx.Client, url: str) -> bytes:
    """``*.dist-info/METADATA`` of a remote wheel, by range requests (cudaresolve's own lazy wheel reader)."""
    from cudaresolve.index.client import IndexClient
    from cudaresolve.index.lazy_wheel import read_remote_metadata

    return read_remote_metadata(IndexClient(client), url, "", "").encode("utf-8")


def freeze_project(
    client: httpx.Client, out: Path, project: str, pinned: set[str], tags: set[Tag], releases: int
) -> dict[str, Any]:
    reply = client.get(f"{PYPI}/{project}/", headers={"Accept": ACCEPT}, follow_redirects=True)
    reply.raise_for_status()
    page = reply.json()
    kept = trim_page(page, pinned, tags, releases)
    files = []
    ranged = dropped = 0
    for file in kept:
        target = out / "files" / f"{file['filename']}.metadata"
        if not target.exists():
            # PEP 658 file first, also when the page does not advertise it (some PyPI proxies drop
            # the core-metadata key); the wheel's own METADATA by range requests when there is none.
            got = client.get(file["url"] + ".metadata", follow_redirects=True)
            if got.status_code == 200:
                body = got.content
            elif file.get("core-metadata") or file.get("data-dist-info-metadata"):
                got.raise_for_status()
                body = got.content
            else:
                try:
                    body = remote_metadata(client, file["url"])
                except IndexUnavailable:  # a malformed old wheel (two METADATA files): no tool can read it either
                    dropped += 1
                    continue
                ranged += 1
            target.write_bytes(body)
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        entry = {
            "filename": file["filename"],
            "url": "/files/" + file["filename"],
            "hashes": {"sha256": file["hashes"]["sha256"]},
            "requires-python": file.get("requires-python"),
            "size": file.get("size"),
            "upload-time": file.get("upload-time"),
            "yanked": file.get("yanked", False),
            "core-metadata": {"sha256": digest},
            "data-dist-info-metadata": {"sha256": digest},
        }
        files.append(entry)
    versions = sorted({str(v) for f in files if (v := _version(f["filename"])) is not None}, key=Version)
    name = page.get("name", project)
    trimmed = {"meta": {"api-version": "1.1"}, "name": name, "versions": versions, "files": files}
    page_dir = out / "simple" / project
    page_dir.mkdir(parents=True, exist_ok=True)
    (page_dir / "index.json").write_text(json.dumps(trimmed, indent=1) + "\n")
    return {
        "project": project,
        "pinned": sorted(pinned, key=Version),
        "versions": len(versions),
        "wheels": len(files),
        "ranged": ranged,
        "dropped": dropped,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("requirements", nargs="*", help="requirement strings (and/or -r FILE)")
    parser.add_argument("-r", "--requirements-file", type=Path, help="a requirements file")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where to write (default {DEFAULT_OUT})")
    parser.add_argument("--python-version", default="3.11")
    parser.add_argument("--glibc", default="2.28", help="manylinux glibc of the target (default 2.28)")
    parser.add_argument("--arch", default="x86_64")
    parser.add_argument("--releases", type=int, default=15, help="newest final releases kept per project")
    parser.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="REQS",
        help="another requirement set (space-separated) whose closure is frozen too, e.g. what another tool picks",
    )
    parser.add_argument("--uv", default="uv", help="uv executable for the closure")
    parser.add_argument("--jobs", type=int, default=8)
    args = parser.parse_args(argv)
    requirements = list(args.requirements)
    if args.requirements_file:
        requirements += [
            line.strip()
            for line in args.requirements_file.read_text().splitlines()
            if line.strip()[:1] not in ("", "#")
        ]
    if not requirements:
        parser.error("no requirements")
    platform = f"{args.arch}-manylinux_{args.glibc.replace('.', '_')}"
    pins = closure(requirements, args.python_version, platform, args.uv)
    wanted: dict[str, set[str]] = {name: {version} for name, version in pins.items()}
    for extra in args.also:
        for name, version in closure(extra.split(), args.python_version, platform, args.uv).items():
            wanted.setdefault(name, set()).add(version)
    print(f"closure: {len(pins)} projects, {len(wanted)} with --also", file=sys.stderr)
    tags = target_tags(args.python_version, args.glibc, args.arch)
    (args.out / "files").mkdir(parents=True, exist_ok=True)
    limits = httpx.Limits(max_connections=args.jobs * 2)
    with httpx.Client(timeout=60.0, limits=limits, headers={"User-Agent": USER_AGENT}) as client:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            rows = list(
                pool.map(lambda kv: freeze_project(client, args.out, kv[0], kv[1], tags, args.releases), wanted.items())
            )
    index = {
        "meta": {"api-version": "1.1"},
        "projects": [{"name": r["project"]} for r in sorted(rows, key=lambda r: r["project"])],
    }
    (args.out / "simple" / "index.json").write_text(json.dumps(index, indent=1) + "\n")
    manifest = {
        "requirements": requirements,
        "python": args.python_version,
        "platform": platform,
        "releases": args.releases,
        "frozen-at": datetime.now(UTC).isoformat(timespec="seconds"),
        "source": PYPI,
        "pins": pins,
        "also": args.also,
        "projects": rows,
    }
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    wheels = sum(r["wheels"] for r in rows)
    ranged = sum(r["ranged"] for r in rows)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(
        f"wrote {args.out}: {len(rows)} pages, {wheels} wheels' metadata ({ranged} by range requests), "
        f"{size / 1e6:.1f} MB",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
