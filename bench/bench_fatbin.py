"""How much of a large CUDA library ``read_fatbin_archs`` reads, and how long it takes.

    python bench/bench_fatbin.py                      # synthesize a 1 GiB sparse library and list it
    python bench/bench_fatbin.py --size-mib 300       # a smaller one
    python bench/bench_fatbin.py /path/libtorch_cuda.so ...   # real files instead

The synthetic file is an ELF with one ``.nv_fatbin`` section holding many containers (one per
"translation unit"), each with cubins for 8 SMs and one PTX entry; payloads are holes in a
sparse file, so it costs no disk space.  Reported per file:

* requested: bytes the parser asked for (``FatbinListing.bytes_read``) and how many reads;
* pages: distinct 4 KiB pages those reads touch (what a cold page cache would fetch, before
  kernel readahead);
* rchar: bytes moved by read syscalls (``/proc/self/io``), for an unbuffered and a buffered
  (Python's default 8 KiB buffer) file object;
* time: best and median wall time over ``--repeat`` runs (warm page cache).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from cudaresolve.binaries.fatbin import FatbinListing, read_fatbin_archs

SMS = (75, 80, 86, 89, 90, 100, 120, 121)
PAGE = 4096


def synthesize(path: Path, *, size_mib: int, containers: int) -> int:
    """Write a sparse ELF of about ``size_mib`` MiB with ``containers`` fatbin containers."""
    entries_per = len(SMS) + 1
    payload = max(((size_mib * 1024 * 1024) // containers - 16) // entries_per - 64, 64) // 8 * 8
    one = 16 + entries_per * (64 + payload)
    start = 4096
    section = one * containers
    names = b"\0.nv_fatbin\0.shstrtab\0"
    names_at = start + section
    shoff = (names_at + len(names) + 7) // 8 * 8
    with open(path, "wb") as out:
        header = b"\x7fELF\x02\x01\x01" + b"\0" * 9 + struct.pack(
            "<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, 3, 2)
        out.write(header)
        for c in range(containers):
            base = start + c * one
            out.seek(base)
            out.write(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, one - 16))
            for i in range(entries_per):
                kind, sm, flags = (2, SMS[i], 0x100011 if SMS[i] in (90, 100) else 0x11) if i < len(SMS) else (
                    1, 120, 0x8011)
                out.seek(base + 16 + i * (64 + payload))
                out.write(struct.pack("<HHIQIIHHIIIQQQ", kind, 0x0101, 64, payload, 0, 0, 0, 9 if kind == 1 else 1,
                                      sm, 0, 0, flags, 0, 0))
        out.seek(names_at)
        out.write(names)
        out.seek(shoff)
        out.write(b"\0" * 64)
        out.write(struct.pack("<IIQQQQIIQQ", 1, 1, 2, start, start, section, 0, 0, 8, 0))
        out.write(struct.pack("<IIQQQQIIQQ", 12, 3, 0, 0, names_at, len(names), 0, 0, 1, 0))
    return path.stat().st_size


class Recorder:
    """Forwards to a file and records every (offset, length) read."""

    def __init__(self, inner: IO[bytes]) -> None:
        self.inner = inner
        self.reads: list[tuple[int, int]] = []

    def seek(self, offset: int, whence: int = 0, /) -> int:
        return self.inner.seek(offset, whence)

    def read(self, size: int = -1, /) -> bytes:
        at = self.inner.tell()
        data = self.inner.read(size)
        self.reads.append((at, len(data)))
        return data


def rchar() -> int:
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
    except OSError:
        pass
    return -1


def measure(path: Path, repeat: int) -> dict[str, Any]:
    with open(path, "rb", buffering=0) as raw:
        recorder = Recorder(raw)
        listing: FatbinListing = read_fatbin_archs(recorder)
    pages = {p for at, n in recorder.reads for p in range(at // PAGE, (at + max(n, 1) - 1) // PAGE + 1)}
    syscall: dict[str, int] = {}
    for label, buffering in (("unbuffered", 0), ("buffered", -1)):
        before = rchar()
        with open(path, "rb", buffering=buffering) as f:
            read_fatbin_archs(f)
        syscall[label] = rchar() - before
    times = []
    for _ in range(repeat):
        begin = time.perf_counter()
        with open(path, "rb", buffering=0) as f:
            read_fatbin_archs(f)
        times.append(time.perf_counter() - begin)
    size = listing.size
    return {
        "path": str(path), "size": size, "containers": len(listing.containers), "entries": len(listing.entries),
        "sass": list(listing.sass), "ptx": list(listing.ptx),
        "requested_bytes": listing.bytes_read, "requested_fraction": listing.bytes_read / size if size else 0.0,
        "reads": len(recorder.reads), "pages_4k": len(pages), "page_bytes_fraction": len(pages) * PAGE / size,
        "rchar_unbuffered": syscall["unbuffered"], "rchar_buffered": syscall["buffered"],
        "seconds_best": min(times), "seconds_median": statistics.median(times),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="real files to measure instead of a synthetic one")
    parser.add_argument("--size-mib", type=int, default=1024, help="synthetic file size (default 1024)")
    parser.add_argument("--containers", type=int, default=3000, help="synthetic container count (default 3000)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = []
    if args.paths:
        results = [measure(p, args.repeat) for p in args.paths]
    else:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "libsynthetic_cuda.so"
            synthesize(path, size_mib=args.size_mib, containers=args.containers)
            results = [measure(path, args.repeat)]
            results[0]["disk_blocks_bytes"] = os.stat(path).st_blocks * 512
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for r in results:
        print(f"{r['path']}: {r['size'] / 2**20:.0f} MiB, {r['containers']} containers, {r['entries']} entries")
        print(f"  sass {' '.join(r['sass'])}; ptx {' '.join(r['ptx']) or '-'}")
        print(f"  requested {r['requested_bytes']:,} bytes ({r['requested_fraction']:.4%}) in {r['reads']:,} reads;"
              f" {r['pages_4k']:,} distinct 4 KiB pages ({r['page_bytes_fraction']:.2%})")
        print(f"  read syscalls moved {r['rchar_unbuffered']:,} bytes unbuffered, {r['rchar_buffered']:,} buffered")
        print(f"  time best {r['seconds_best'] * 1000:.1f} ms, median {r['seconds_median'] * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
