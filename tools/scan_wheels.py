# /// script
# requires-python = ">=3.11"
# dependencies = ["httpx>=0.27", "packaging>=24.2"]
# ///
"""Read the GPU code, CUDA runtime and metadata of the PyPI wheels the database describes, and compare.
Does I/O: PyPI simple JSON, ranged reads of wheels, one spooled zip member at a time.

Run by hand with the network (not in CI), from the repository root, with the package importable:
``PYTHONPATH=src python tools/scan_wheels.py [--kind torchvision] [--version 0.23.0]``.

For every release row of ``data/compat.toml`` whose wheels PyPI hosts, it picks one wheel per
platform (cp311 where there is one; linux_x86_64, plus win_amd64 / linux_aarch64 where a build
of the row lists them) and records, with the project's own fatbin reader
(``cudaresolve.binaries.fatbin.read_fatbin_archs``):

* SASS and PTX of every CUDA library (ELF ``.so``; a Windows DLL/PYD's ``.nv_fatb`` section is
  handed to the same reader), their union, and the base list of the main library (targets in at
  least half of its containers; the per-kernel extras are kept apart);
* the CUDA runtime: ``libcudart.so.N`` in a library's ``.dynstr`` or a bundled copy,
  ``cudart64_N.dll`` imports, ``nvidia-*``/``cuda-toolkit`` pins, ``version.py``'s ``cuda``,
  xformers' ``cpp_lib.json``;
* Requires-Dist, Requires-Python, the interpreter tags and platforms PyPI lists.

Nothing is kept but the results: the zip directory and the wanted members come by HTTP range
requests; members are read in one forward pass per request, and a binary is inflated into one
temporary file, listed, and deleted before the next. Results go to a JSON-lines cache, keyed by
wheel file name, so an interrupted scan continues where it stopped. Then the records are
compared with the database (``tools/wheel_compare.py``): a readable report, ``--json`` for the
machine-readable one, ``--fixture`` to write the compact regression fixture.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import struct
import sys
import time
import zlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import httpx
from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wheel_compare import (  # a sibling script, not a package
    PYPI_KINDS,
    Disagreement,
    MissingWheel,
    WheelFacts,
    compare,
    format_report,
    pypi_platforms,
    tracked_requires,
)
from wheel_reader import LibraryCode, RemoteZip, sort_archs, spool_and_list

from cudaresolve.db.database import load_compat  # the loader; its module may be renamed

if TYPE_CHECKING:
    from cudaresolve.db.database import CompatDB, PackageRelease

SIMPLE: Final = "https://pypi.org/simple/{name}/"
ACCEPT_JSON: Final = "application/vnd.pypi.simple.v1+json"  # PEP 691
SCANNED_PLATFORMS: Final = ("linux_x86_64", "win_amd64", "linux_aarch64")
_BINARY_SUFFIX = re.compile(r"(\.so(\.[\d.]+)?|\.pyd|\.dll|\.cubin|\.fatbin)$")
_TEXT_MEMBER = re.compile(r"^[^/]+\.dist-info/METADATA$|^[^/]+(/[^/]+)?/version\.py$|^xformers/cpp_lib\.json$")
_RUNTIME_PIN = re.compile(r"^(?:nvidia-cuda-runtime(?:-cu1\d)?|cuda-toolkit|nvidia-cuda-runtime-cu13)$")
RECORD_FORMAT: Final = 2  # cache lines of an older format are read again


# --------------------------------------------------------------------------- PyPI listing


@dataclass(frozen=True, slots=True, kw_only=True)
class Dist:
    filename: str
    url: str
    version: Version
    build: tuple[int, str] | tuple[()]
    tags: tuple[str, ...]  # interpreter tags: cp311, cp313t, abi3:cp39, py3
    platform: str  # normalised: linux_x86_64, linux_aarch64, win_amd64, macosx_arm64, any
    size: int
    requires_python: str | None
    yanked: bool


def normalise_platform(tag: str) -> str:
    """``manylinux_2_28_x86_64`` -> ``linux_x86_64``; ``macosx_11_0_arm64`` -> ``macosx_arm64``."""
    if "linux" in tag:
        for arch in ("x86_64", "aarch64", "ppc64le", "s390x", "armv7l", "i686"):
            if tag.endswith(arch):
                return f"linux_{arch}"
    if tag.startswith("macosx"):
        return "macosx_" + ("arm64" if tag.endswith("arm64") else "x86_64")
    return tag


def fetch_listing(client: httpx.Client, name: str) -> dict[Version, list[Dist]] | None:
    """Wheels per version from PEP 691 JSON; None when PyPI does not host the project."""
    response = client.get(SIMPLE.format(name=canonicalize_name(name)), headers={"Accept": ACCEPT_JSON})
    if response.status_code == 404:
        return None
    response.raise_for_status()
    out: dict[Version, list[Dist]] = defaultdict(list)
    for entry in response.json()["files"]:
        filename: str = entry["filename"]
        if not filename.endswith(".whl"):
            continue
        _, version, build, tags = parse_wheel_filename(filename)
        interpreters = sorted({_interp(t.interpreter, t.abi) for t in tags})
        platforms = {t.platform for t in tags}
        platform = normalise_platform(sorted(platforms)[0])
        out[version].append(Dist(
            filename=filename, url=entry["url"], version=version, build=build, tags=tuple(interpreters),
            platform=platform, size=int(entry.get("size") or 0), requires_python=entry.get("requires-python"),
            yanked=bool(entry.get("yanked")),
        ))
    return dict(out)


def _interp(interpreter: str, abi: str) -> str:
    if abi == "abi3":
        return f"abi3:{interpreter}"
    if abi.startswith("cp") and abi.endswith("t"):
        return abi  # free-threaded
    return interpreter


def pick(dists: list[Dist]) -> Dist | None:
    """One wheel to read: not yanked, newest build tag, cp311 if present, else the highest tag."""
    usable = [d for d in dists if not d.yanked] or dists

    def score(d: Dist) -> tuple[Any, ...]:
        plain = [t for t in d.tags if not t.endswith("t")]
        return (d.build, "cp311" in d.tags, bool(plain), sorted(d.tags))

    return max(usable, key=score) if usable else None


# --------------------------------------------------------------------------- one wheel


def scan_wheel(
    client: httpx.Client, dist: Dist, *, binaries: bool, stats: Counter[str], log: Any = None
) -> dict[str, Any]:
    """Everything the scan records about one wheel (a JSON-able dict; the cache's line)."""
    before = stats["bytes"]
    started = time.monotonic()
    archive = RemoteZip(client, dist.url, stats)
    texts: dict[str, str] = {}
    libraries: dict[str, LibraryCode] = {}
    bundled: set[int] = set()
    wanted = [m for m in archive.members if _TEXT_MEMBER.match(m.name)]
    if binaries:
        wanted += [m for m in archive.members if _BINARY_SUFFIX.search(m.name) and m.size >= 64]
    for member in archive.members:
        if match := re.search(r"libcudart(?:-[0-9a-f]+)?\.so\.(\d+)", member.name):
            bundled.add(int(match.group(1)))
    for member, reader in archive.read_members(wanted):
        if _TEXT_MEMBER.match(member.name):
            texts[member.name] = b"".join(reader.chunks()).decode("utf-8", "replace")
            continue
        code = spool_and_list(reader, member)
        if code is not None and (code.containers or code.cudart or code.error):
            libraries[member.name] = code
        if log:
            log(f"    {member.name}: {member.size / 1e6:.0f} MB"
                + (f", {code.containers} containers" if code and code.containers else ""))
    record = _record(dist, texts, libraries, bundled, binaries=binaries)
    record["odd_members"] = [m.name for m in archive.members if m.name.rsplit("/", 1)[-1] in ("so", "pyd", "dll")]
    record["bytes_downloaded"] = stats["bytes"] - before
    record["seconds"] = round(time.monotonic() - started, 1)
    return record


def _record(
    dist: Dist, texts: dict[str, str], libraries: dict[str, LibraryCode], bundled: set[int], *, binaries: bool
) -> dict[str, Any]:
    """The raw observations; what they mean (variant, base list) is derived later, in ``facts_from_record``."""
    metadata = next((t for n, t in texts.items() if n.endswith(".dist-info/METADATA")), "")
    headers = HeaderParser().parsestr(metadata)
    majors = set(bundled)
    for code in libraries.values():
        majors |= code.cudart
    return {
        "format": RECORD_FORMAT,
        "file": dist.filename,
        "url": dist.url,
        "size": dist.size,
        "platform": dist.platform,
        "requires_dist": [str(r) for r in headers.get_all("Requires-Dist") or []],
        "requires_python": headers.get("Requires-Python"),
        "texts": {n: t[:4096] for n, t in sorted(texts.items()) if not n.endswith("METADATA")},
        "cudart_majors": sorted(majors),
        "binaries_scanned": binaries,
        "libraries": {name: code.to_dict() for name, code in sorted(libraries.items())},
        "scanned": datetime.date.today().isoformat(),
    }


def odd_members(record: dict[str, Any]) -> list[str]:
    """Members whose name is only an extension (xformers 0.0.31's Windows wheel ships ``xformers/pyd``)."""
    return [f"member {name!r} has no module name: Python cannot import it, its GPU code is not counted"
            for name in record.get("odd_members", [])]


def cuda_evidence(record: dict[str, Any]) -> dict[str, str | None]:
    """CUDA version each source names ("12.8"; None for a CPU build): version.py, cpp_lib.json, the runtime pin."""
    evidence: dict[str, str | None] = {}
    for name, text in record.get("texts", {}).items():
        if name.endswith("version.py") and (m := re.search(r"^cuda\s*(?::\s*\w[^=]*)?=\s*(.+)$", text, re.M)):
            value = m.group(1).strip().strip("'\"")
            if value == "None" or re.match(r"^\d+\.\d+", value):
                evidence[f"{name}:cuda"] = None if value == "None" else value
        if name.endswith("version.py") and (m := re.search(r"^__version__\s*=\s*['\"][^+'\"]*\+(\w+)", text, re.M)):
            local = m.group(1)
            if local == "cpu" or re.match(r"^cu\d{3}$", local):
                evidence[f"{name}:__version__"] = None if local == "cpu" else f"{local[2:-1]}.{local[-1]}"
        if name.endswith("cpp_lib.json"):  # xformers: {"version": {"cuda": 1208, "torch": "2.7.1+cu126", ...}}
            # The variant is the torch build it was compiled against (its runtime at import); "cuda" is the
            # nvcc that compiled it, which can be newer (0.0.31: nvcc 12.8 against torch cu126).
            torch = re.search(r'"torch":\s*"[^"+]*\+(cu\d{3}|cpu)"', text)
            if torch:
                local = torch.group(1)
                evidence[f"{name}:torch"] = None if local == "cpu" else f"{local[2:-1]}.{local[-1]}"
    pin = _runtime_pin(record.get("requires_dist", []), record.get("platform", "linux_x86_64"))
    if pin:
        evidence["requires"] = pin
    return evidence


# The library whose list the database records (the TORCH_CUDA_ARCH_LIST build); other libraries
# bring their own lists (magma in libtorch_cuda_linalg, flash-attention 3 in xformers) and count
# only in the ``*_all`` union. Without an entry: the package library with the most containers.
MAIN_LIBRARY: Final = {
    "torch": re.compile(r"^torch/lib/(lib)?torch_cuda\.(so|dll)$"),
    "torchvision": re.compile(r"^torchvision/_C\.(so|pyd)$"),
    "torchaudio": re.compile(r"^torchaudio/lib/(lib)?torchaudio\.(so|pyd)$"),
    "xformers": re.compile(r"^xformers/_C\.(so|pyd)$"),
    "vllm": re.compile(r"^vllm/_C(_stable_libtorch)?\.abi3\.so$"),  # its own kernels (not FA2/FA3, MLA, MoE)
    # SGLang's kernels: common_ops (built for its arch list; sm90/ and sm100/ copies, one loaded per GPU),
    # not flash_ops (FlashAttention 3, sm_80/sm_86/sm_90a only) nor flashmla_ops
    "sgl-kernel": re.compile(r"^sgl_kernel/(sm\d+/)?common_ops\.abi3\.so$"),
    "sglang-kernel": re.compile(r"^sgl_kernel/(sm\d+/)?common_ops\.abi3\.so$"),
}
#: The share of the main library's containers a target must be in to be on the base list (default a half).
#: vLLM's _C holds many arch-specific kernels (sm_90a, sm_100a ...) beside the generic ones built for its
#: TORCH_CUDA_ARCH_LIST, so no target reaches a half there; a quarter gives exactly that list.
BASE_SHARE: Final = {"vllm": 4}


def code_lists(package: str, record: dict[str, Any]) -> tuple[list[str], list[str], list[str], list[str]]:
    """(sass, ptx, sass_all, ptx_all): the main library's base list, and the union over the package's libraries."""
    own = {n: c for n, c in record.get("libraries", {}).items() if not is_vendored(n) and c.get("containers")}
    pattern = MAIN_LIBRARY.get(package)
    named = [n for n in own if pattern is not None and pattern.match(n)]
    main = max(named or own, key=lambda n: own[n]["containers"], default=None)
    sass: list[str] = []
    ptx: list[str] = []
    if main is not None:
        half = own[main]["containers"] / BASE_SHARE.get(package, 2)
        keep = {name for name, count in own[main]["counts"].items() if count >= half}
        sass = sort_archs({n for n in keep if n.startswith("sm_")})
        ptx = sort_archs({n for n in keep if n.startswith("compute_")})
    sass_all = sort_archs({t for c in own.values() for t in c["sass"]})
    ptx_all = sort_archs({t for c in own.values() for t in c["ptx"]})
    return sass, ptx, sass_all, ptx_all


_VENDORED = re.compile(
    r"(^|/)[^/]+\.libs/|(^|/)(lib)?(cudart|cublas|cublasLt|cufft|curand|cusparse|cusolver|cudnn|nccl|nvjpeg|nvrtc|"
    r"nvToolsExt|nvJitLink|cupti|cufile|nvshmem)[^/]*$"
)


def is_vendored(name: str) -> bool:
    """A copy of NVIDIA's own library (auditwheel's ``<pkg>.libs/``, or by name): not the package's code."""
    return bool(_VENDORED.search(name))


def _runtime_pin(requires: list[str], platform: str) -> str | None:
    """``12.8`` from ``nvidia-cuda-runtime-cu12==12.8.90`` or ``cuda-toolkit[...]==13.0.3`` (marker-aware)."""
    env = {
        "linux_x86_64": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"},
        "linux_aarch64": {"sys_platform": "linux", "platform_system": "Linux", "platform_machine": "aarch64"},
        "win_amd64": {"sys_platform": "win32", "platform_system": "Windows", "platform_machine": "AMD64"},
    }.get(platform)
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if not _RUNTIME_PIN.match(canonicalize_name(req.name)):
            continue
        if req.marker and env and not Marker(str(req.marker)).evaluate({**env, "python_version": "3.11", "extra": ""}):
            continue
        for spec in req.specifier:
            if spec.operator in ("==", "~=", ">="):
                parts = spec.version.split(".")
                if len(parts) >= 2:
                    return f"{parts[0]}.{parts[1]}"
    return None


def facts_from_record(
    package: str, version: str, platform: str, record: dict[str, Any], python: list[str], platforms: list[str]
) -> WheelFacts:
    """The fixture's view of a cache record: what the comparison needs, nothing more."""
    evidence = cuda_evidence(record)
    sass, ptx, sass_all, ptx_all = code_lists(package, record)
    named = [v for k, v in evidence.items() if k != "requires"]
    version_named = next((v for v in named if v), None) or evidence.get("requires")
    majors = record.get("cudart_majors") or []
    variant: str | None = None
    if version_named:
        major, minor = version_named.split(".")[:2]
        variant = f"cu{major}{minor}"
    elif named and not majors and not sass_all:
        variant = "cpu"  # version.py says cuda = None / +cpu and the wheel holds no GPU code
    cuda_major = int(version_named.split(".")[0]) if version_named else (majors[-1] if len(majors) == 1 else None)
    return WheelFacts(
        package=package, version=version, platform=platform, file=record["file"], variant=variant,
        cuda_major=cuda_major, sass=tuple(sass), ptx=tuple(ptx), sass_all=tuple(sass_all), ptx_all=tuple(ptx_all),
        python=tuple(python), platforms=tuple(platforms), requires_python=record.get("requires_python"),
        requires=tracked_requires(record.get("requires_dist", [])),
        binaries_scanned=bool(record.get("binaries_scanned", True)),
    )


# --------------------------------------------------------------------------- the run


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """One wheel to read, and what PyPI lists beside it."""

    package: str
    version: str
    platform: str
    dist: Dist
    binaries: bool
    tags: list[str]  # interpreter tags of every wheel of this release and platform
    platforms: list[str]  # every platform PyPI has a wheel of this release for


@dataclass(slots=True)
class Plan:
    """Per release: the wheels to read, and the PyPI builds with no wheel."""

    jobs: list[Job] = field(default_factory=list)
    missing: list[MissingWheel] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def plan_kind(
    db: CompatDB, kind: str, listing: dict[Version, list[Dist]] | None, versions: set[str] | None,
    extra_platforms: bool, scan_pure: bool,
) -> Plan:
    plan = Plan()
    releases = [r for r in db.packages(kind) if versions is None or str(r.version) in versions]
    if listing is None:
        plan.notes.append(f"{kind}: not on PyPI; {len(releases)} rows not scanned")
        for release in releases:
            for platform, variant in pypi_platforms(release).items():
                plan.missing.append(MissingWheel(package=kind, version=str(release.version), platform=platform,
                                                 variant=variant))
        return plan
    for release in releases:
        dists = listing.get(release.version, [])
        expected = pypi_platforms(release)
        by_platform: dict[str, list[Dist]] = defaultdict(list)
        for dist in dists:
            by_platform[dist.platform].append(dist)
        for platform, variant in expected.items():
            if not by_platform.get(platform) and not by_platform.get("any"):
                plan.missing.append(MissingWheel(package=kind, version=str(release.version), platform=platform,
                                                 variant=variant))
        platforms = _platforms_to_read(release, by_platform, expected, extra_platforms)
        for platform in platforms:
            chosen = pick(by_platform[platform])
            if chosen is None:
                continue
            tags = sorted({t for d in by_platform[platform] for t in d.tags})
            binaries = not release.pure or scan_pure
            plan.jobs.append(Job(
                package=kind, version=str(release.version), platform=platform, dist=chosen, binaries=binaries,
                tags=tags, platforms=sorted(by_platform),
            ))
    return plan


def _platforms_to_read(
    release: PackageRelease, by_platform: dict[str, list[Dist]], expected: dict[str, str], extra: bool
) -> list[str]:
    if "any" in by_platform and not any(p in by_platform for p in SCANNED_PLATFORMS):
        return ["any"]
    listed = {p for b in release.builds for p in b.platforms} | set(expected)
    if release.pure:
        listed = {"linux_x86_64"}
    out: list[str] = [p for p in SCANNED_PLATFORMS if p in by_platform and (p in listed or extra)]
    if not release.builds or not (release.pypi_variant or expected):
        out = out[:1]  # no PyPI build recorded: the metadata of one wheel is all there is to check
    return out


def load_cache(path: Path) -> dict[str, dict[str, Any]]:
    records: dict[str, dict[str, Any]] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line) if line.strip() else {}
            except json.JSONDecodeError:
                continue  # a line still being written by a running scan
            if record.get("format") == RECORD_FORMAT:
                records[record["file"]] = record
    return records


def read_wheel(
    client: httpx.Client, job: Job, stats: Counter[str], cache: Path, say: Any, *, verbose: bool
) -> dict[str, Any] | None:
    """Scan one wheel and append its record to the cache; None (said) when it cannot be read."""
    say(f"  reading {job.dist.filename} ({job.dist.size / 1e6:.0f} MB)")
    try:
        record = scan_wheel(client, job.dist, binaries=job.binaries, stats=stats, log=say if verbose else None)
    except (httpx.HTTPError, RuntimeError, zlib.error, struct.error) as exc:
        say(f"  FAILED {job.dist.filename}: {exc}")
        return None
    with cache.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, separators=(",", ":")) + "\n")
    sass, ptx, _, _ = code_lists(job.package, record)
    say(f"    {record['bytes_downloaded'] / 1e6:.0f} MB in {record['seconds']} s; sass {sass} ptx {ptx}; "
        f"total {stats['bytes'] / 1e9:.2f} GB")
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    root = Path(__file__).resolve().parent.parent
    parser.add_argument("--compat", type=Path, default=root / "src" / "cudaresolve" / "data" / "compat.toml")
    parser.add_argument("--kind", action="append", choices=PYPI_KINDS, help="scan only this package (repeatable)")
    parser.add_argument("--version", action="append", help="scan only this release version (repeatable)")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "cudaresolve-scan-wheels" / "scan.jsonl")
    parser.add_argument("--offline", action="store_true", help="read no wheel; compare what the cache holds "
                        "(PyPI's listings are still fetched)")
    parser.add_argument("--all-platforms", action="store_true", help="also read linux_aarch64/win_amd64 wheels "
                        "where no build of the row lists the platform")
    parser.add_argument("--scan-pure", action="store_true", help="also list the binaries of pure rows' wheels")
    parser.add_argument("--json", type=Path, help="write the disagreements as JSON here")
    parser.add_argument("--fixture", type=Path, help="write the compact regression fixture here")
    parser.add_argument("--known-table", type=Path, help="write the disagreements as the KNOWN table of "
                        "tests/test_wheel_scan_fixture.py (Python dict entries) here")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    db = load_compat(args.compat)
    kinds = [k for k in PYPI_KINDS if not args.kind or k in args.kind]
    versions = set(args.version) if args.version else None
    cache = load_cache(args.cache)
    args.cache.parent.mkdir(parents=True, exist_ok=True)
    stats: Counter[str] = Counter()
    wheels: list[WheelFacts] = []
    missing: list[MissingWheel] = []
    notes: list[str] = []
    read = 0
    started = time.monotonic()

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    with httpx.Client(timeout=120, follow_redirects=True, headers={"User-Agent": "cudaresolve-scan-wheels"}) as client:
        for kind in kinds:
            listing = fetch_listing(client, kind)
            plan = plan_kind(db, kind, listing, versions, args.all_platforms, args.scan_pure)
            missing += plan.missing
            notes += plan.notes
            say(f"{kind}: {len(plan.jobs)} wheels, {sum(1 for j in plan.jobs if j.dist.filename not in cache)} to read")
            for job in plan.jobs:
                record = cache.get(job.dist.filename)
                if record is None or (job.binaries and not record.get("binaries_scanned")):
                    if args.offline:
                        continue
                    record = read_wheel(client, job, stats, args.cache, say, verbose=args.verbose)
                    if record is None:
                        notes.append(f"{job.package} {job.version} {job.platform}: could not read {job.dist.filename}")
                        continue
                    read += 1
                    cache[job.dist.filename] = record
                where = f"{job.package} {job.version} {job.platform}: {job.dist.filename}"
                facts = facts_from_record(job.package, job.version, job.platform, record, job.tags, job.platforms)
                wheels.append(facts)
                notes += [f"{where}: {n}" for n in odd_members(record)]
    result = compare(db, wheels, missing)
    result.notes[:0] = notes
    print(format_report(result))
    elapsed = time.monotonic() - started
    print(f"summary: {len(wheels)} wheels compared ({read} read now, {len(wheels) - read} from the cache), "
          f"{stats['bytes'] / 1e9:.2f} GB downloaded in {elapsed:.0f} s, {stats['requests']} requests, "
          f"{result.facts} facts compared, {len(result.disagreements)} disagreements")
    if args.json:
        args.json.write_text(json.dumps({
            "counts": result.counts(), "facts": result.facts,
            "disagreements": [d.to_dict() for d in result.disagreements], "notes": result.notes,
        }, indent=1) + "\n", encoding="utf-8")
    if args.fixture:
        write_fixture(args.fixture, wheels, missing)
    if args.known_table:
        args.known_table.write_text(format_known_table(result.disagreements), encoding="utf-8")
    return 1 if result.disagreements else 0


def format_known_table(disagreements: list[Disagreement]) -> str:
    """One ``KNOWN`` entry per build: its key and each disagreement, as the change the data needs."""
    reasons: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    for d in disagreements:
        reasons[d.key].append(_short(d))
    order = {k: i for i, k in enumerate(PYPI_KINDS)}
    lines = []
    for key in sorted(reasons, key=lambda k: (order.get(k[0], 99), Version(k[1]), k[2], k[3])):
        head = f"    ({', '.join(json.dumps(k) for k in key)}):"
        reason = json.dumps("; ".join(reasons[key]))
        line = f"{head} {reason},"
        if len(line) > 120:
            line = f"{head}\n        {reason},"
            if len(line.split("\n")[1]) > 120:
                line += "  # noqa: E501"
        lines.append(line)
    return "\n".join(lines) + "\n"


def _short(d: Disagreement) -> str:
    """``sass -sm_37 +sm_35`` for list disagreements (what the database must lose and gain), else both values."""
    if d.kind in ("sass", "ptx"):
        db = set(re.findall(r"\w+_\d+[af]?", d.db))
        wheel = set(re.findall(r"\w+_\d+[af]?", d.wheel.split(" (+")[0]))
        change = [f"-{x}" for x in sort_archs(db - wheel)] + [f"+{x}" for x in sort_archs(wheel - db)]
        return f"{d.kind} {' '.join(change)}"
    return f"{d.kind}: db {d.db}, wheel {d.wheel}"


def write_fixture(path: Path, wheels: list[WheelFacts], missing: list[MissingWheel]) -> None:
    """One small JSON file: one line per wheel, so a diff shows which wheel changed."""
    order = {k: i for i, k in enumerate(PYPI_KINDS)}
    wheels = sorted(wheels, key=lambda w: (order.get(w.package, 99), Version(w.version), w.platform))
    lines = ["{", f' "scanned": "{datetime.date.today().isoformat()}",', ' "wheels": [']
    lines += [f"  {json.dumps(w.to_dict(), separators=(',', ':'))}," for w in wheels]
    if wheels:
        lines[-1] = lines[-1].rstrip(",")
    lines.append(" ],")
    lines.append(' "missing": [')
    lines += [f"  {json.dumps(m.to_dict(), separators=(',', ':'))}," for m in missing]
    if missing:
        lines[-1] = lines[-1].rstrip(",")
    lines += [" ]", "}"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
