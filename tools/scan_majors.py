# /// script
# requires-python = ">=3.11"
# dependencies = ["httpx>=0.27", "packaging>=24.2"]
# ///
"""Read the CUDA and cuDNN majors of a project's PyPI wheels and compare them with the [[cuda-major]] and
[[cudnn-major]] rows. Does I/O: PyPI's simple JSON, ranged reads of one wheel per release.

Run by hand with the network (not in CI), from the repository root:
``PYTHONPATH=src python tools/scan_majors.py onnxruntime-gpu --member 'providers_cuda\\.so$'``.

For every release (pre-releases and yanked files left out) it picks the manylinux x86_64 wheel of the
lowest CPython and reads two things: METADATA's Requires-Dist (``nvidia-cudnn-cu13~=9.0; extra ==
"cudnn"`` says cuDNN 9 and CUDA 13; ``nvidia-cuda-runtime-cu12`` says CUDA 12), and the names
``libcudart.so.N`` / ``libcudnn.so.N`` in the binary ``--member`` names (its ``.dynstr``: the
libraries it links), inflated forward in chunks and never kept. A release's major is the one its
binary names; else the one its metadata names. It then prints, per release, what was found and what
the database's rows say (``db.cudamajor.major_of``), and the disagreements: a row that ties a release
to another major, or a release the wheel ties that no row covers (reported, not an error: rows may
stop at the releases that were read).
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from pathlib import Path

import httpx
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wheel_reader import RemoteZip  # a sibling script, not a package

from cudaresolve.db.cudamajor import major_of
from cudaresolve.db.database import load_compat

_LINKED = re.compile(rb"lib(cudart|cudnn)\.so\.(\d{1,2})\b")
_LIBRARY = {"cudart": "cuda", "cudnn": "cudnn"}
_CUDNN_PIN = re.compile(r"^nvidia-cudnn-cu(\d{2})$")
_CUDA_PIN = re.compile(r"^nvidia-cuda-runtime-cu(\d{2})$")
_OVERLAP = 64


def wheels(client: httpx.Client, project: str) -> dict[Version, dict[str, str]]:
    """One manylinux x86_64 wheel per final release (the lowest CPython's): version -> simple-JSON file entry."""
    accept = {"Accept": "application/vnd.pypi.simple.v1+json"}
    reply = client.get(f"https://pypi.org/simple/{project}/", headers=accept)
    reply.raise_for_status()
    found: dict[Version, dict[str, str]] = {}
    for entry in reply.json()["files"]:
        name = entry["filename"]
        if not name.endswith(".whl") or entry.get("yanked") or "x86_64" not in name or "linux" not in name:
            continue
        try:
            _, version, _, tags = parse_wheel_filename(name)
        except (ValueError, InvalidVersion):
            continue
        if version.is_prerelease:
            continue
        cps = [t.interpreter for t in tags if t.interpreter.startswith("cp") and t.interpreter[2:].isdigit()]
        rank = min((int(c[2:]) for c in cps), default=99)
        if version not in found or rank < found[version]["rank"]:  # type: ignore[operator]
            found[version] = {**entry, "rank": rank}
    return dict(sorted(found.items()))


def read_wheel(client: httpx.Client, url: str, member: re.Pattern[str], stats: collections.Counter[str]) -> dict:
    """Requires-Dist and the majors the binary links (``{"cuda": {12}, "cudnn": {9}}``)."""
    archive = RemoteZip(client, url, stats)
    wanted = [m for m in archive.members if m.name.endswith(".dist-info/METADATA")]
    wanted += [m for m in archive.members if member.search(m.name)][:1]
    requires: list[str] = []
    linked: dict[str, set[int]] = {"cuda": set(), "cudnn": set()}
    for entry, reader in archive.read_members(wanted):
        if entry.name.endswith("METADATA"):
            text = b"".join(reader.chunks()).decode("utf-8", "replace")
            requires = [line[15:] for line in text.splitlines() if line.startswith("Requires-Dist: ")]
            continue
        tail = b""
        for chunk in reader.chunks():
            window = tail + chunk
            for lib, major in _LINKED.findall(window):
                linked[_LIBRARY[lib.decode()]].add(int(major))
            tail = window[-_OVERLAP:]
            if all(linked.values()):
                break  # both named: the rest of the binary is not read (its .dynstr comes early, mostly)
    return {"requires": requires, "linked": linked}


def from_metadata(requires: list[str]) -> dict[str, set[int]]:
    """The majors named by nvidia-cudnn-cuNN (its version's major: cuDNN; NN: CUDA) and nvidia-cuda-runtime-cuNN."""
    out: dict[str, set[int]] = {"cuda": set(), "cudnn": set()}
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        if match := _CUDNN_PIN.match(name):
            out["cuda"].add(int(match.group(1)))
            majors = {int(s.version.split(".")[0]) for s in req.specifier if s.version.split(".")[0].isdigit()}
            out["cudnn"] |= majors
        elif match := _CUDA_PIN.match(name):
            out["cuda"].add(int(match.group(1)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project")
    parser.add_argument("--member", required=True, help="regular expression naming the binary to read")
    parser.add_argument("--version", action="append", help="only this release (repeatable)")
    args = parser.parse_args(argv)
    db = load_compat(None)
    member = re.compile(args.member)
    stats: collections.Counter[str] = collections.Counter()
    disagreements = 0
    with httpx.Client(timeout=60, follow_redirects=True) as client:
        for version, entry in wheels(client, args.project).items():
            if args.version and str(version) not in args.version:
                continue
            facts = read_wheel(client, entry["url"], member, stats)
            meta = from_metadata(facts["requires"])
            line = [str(version)]
            for library in ("cuda", "cudnn"):
                seen = facts["linked"][library] or meta[library]
                how = "linked" if facts["linked"][library] else ("metadata" if meta[library] else "none")
                row = major_of(db.cuda_majors, args.project, version, library=library)
                # a row agrees when the binary names its major (it may name others: messages, fallbacks)
                # and the metadata, when it names one, names it too
                agrees = row is not None and row in seen and (not meta[library] or row in meta[library])
                wrong = not agrees and (row is not None or bool(seen))
                disagreements += bool(wrong and row is not None)
                line.append(
                    f"{library} {sorted(seen) or '-'} ({how}), row {row if row is not None else '-'}"
                    + ("  <-- DISAGREES" if wrong and row is not None else "  (no row)" if wrong else "")
                )
            print("  ".join(line), flush=True)
    print(f"{disagreements} disagreement(s); {stats['bytes'] / 1e9:.2f} GB in {stats['requests']} requests")
    return 1 if disagreements else 0


if __name__ == "__main__":
    raise SystemExit(main())
