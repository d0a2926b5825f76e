"""What one busy thread does to a download in another (issue 23). Needs the network.

    python bench/gil_convoy.py                      # pydantic-core's page on PyPI, 1 and 3 busy threads
    python bench/gil_convoy.py --url https://pypi.org/simple/numpy/ --busy 1

A thread reading a response gives up the interpreter lock at every socket read and must win it back
before it can read on; over TLS a read returns one record, 16 KB at most, so a page of megabytes takes
hundreds of reads. While another thread runs Python (parsing a page, solving), each read waits up to the
switch interval (5 ms) for the lock. This script times one GET of ``--url`` through httpx alone, then while
``--busy`` threads run a plain Python loop, then the same with a 0.5 ms switch interval: the gap is what a
cold lock's walk threads pay for every page and metadata file while other threads parse, and why
``index.page_fetcher`` moves fetching and parsing pages to another process.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time

ACCEPT = "application/vnd.pypi.simple.v1+json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="https://pypi.org/simple/pydantic-core/")
    parser.add_argument("--busy", type=int, nargs="*", default=[1, 3])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import httpx

    with httpx.Client() as client:

        def download() -> tuple[float, int, int]:
            started, reads, size = time.perf_counter(), 0, 0
            with client.stream("GET", args.url, headers={"Accept": ACCEPT}) as response:
                for chunk in response.iter_raw():
                    reads += 1
                    size += len(chunk)
            return time.perf_counter() - started, reads, size

        download()  # the connection made, so each row times one GET on it
        rows = [("alone", 0, 0.005)] + [(f"{n} busy", n, s) for n in args.busy for s in (0.005, 0.0005)]
        print(f"GET {args.url}")
        print("| threads | switch interval | median s | reads | bytes |")
        print("|---|--:|--:|--:|--:|")
        for label, busy, interval in rows:
            stop = threading.Event()
            spinners = [threading.Thread(target=_spin, args=(stop,), daemon=True) for _ in range(busy)]
            sys.setswitchinterval(interval)
            for spinner in spinners:
                spinner.start()
            try:
                runs = [download() for _ in range(args.repeat)]
            finally:
                stop.set()
                for spinner in spinners:
                    spinner.join()
                sys.setswitchinterval(0.005)
            wall = statistics.median(r[0] for r in runs)
            print(f"| {label} | {interval * 1000:g} ms | {wall:.3f} | {runs[0][1]} | {runs[0][2]} |")


def _spin(stop: threading.Event) -> None:
    count = 0
    while not stop.is_set():
        count += 1


if __name__ == "__main__":
    main()
