# /// script
# requires-python = ">=3.11"
# dependencies = ["httpx>=0.27"]
# ///
"""Snapshot one project page of an index into tests/fixtures/indexes. Does I/O: network and files.

Not run in CI (tests never touch the network). Example:

    uv run tools/freeze_index.py --index https://pypi.org/simple --project torch \\
        --label pypi --match 'torch-2\\.(7\\.1|9\\.1)-cp31[12]' --limit 12
    uv run tools/freeze_index.py --index https://download.pytorch.org/whl/cu128 --project torch \\
        --label pytorch-cu128 --match 'cp31[1-3]' --limit 12

The file is named ``<label>-<project>-<UTC date>.json|html`` after the Content-Type served
(PEP 691 JSON or PEP 503 HTML). ``--match`` (a regex on the filename) and ``--limit`` trim the
page to a few files so fixtures stay small; everything else on the page is kept as served.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

import httpx

ACCEPT = "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.1"
ANCHOR_TEXT = re.compile(r"<a\b[^>]*>([^<]*)</a>", re.IGNORECASE)
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "indexes"


def trim_json(payload: dict[str, object], pattern: re.Pattern[str], limit: int) -> dict[str, object]:
    files = payload.get("files")
    listed = files if isinstance(files, list) else []
    kept = [f for f in listed if isinstance(f, dict) and pattern.search(str(f.get("filename", "")))][:limit]
    trimmed = dict(payload, files=kept)
    versions = payload.get("versions")
    if isinstance(versions, list):  # PEP 700 "versions": keep those the kept files belong to
        present = {str(f["filename"]).split("-")[1] for f in kept}
        trimmed["versions"] = [v for v in versions if v in present]
    return trimmed


def trim_html(text: str, pattern: re.Pattern[str], limit: int) -> str:
    out: list[str] = []
    kept = 0
    for line in text.splitlines():
        match = ANCHOR_TEXT.search(line)
        if match is None:
            out.append(line)
        elif pattern.search(match.group(1)) and kept < limit:
            out.append(line)
            kept += 1
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="index root, e.g. https://pypi.org/simple")
    parser.add_argument("--project", required=True)
    parser.add_argument("--label", required=True, help="file name prefix, e.g. pypi or pytorch-cu118")
    parser.add_argument("--match", default=".", help="regex on filenames to keep")
    parser.add_argument("--limit", type=int, default=12)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    name = re.sub(r"[-_.]+", "-", args.project).lower()  # PEP 503 normalisation
    url = f"{args.index.rstrip('/')}/{name}/"
    response = httpx.get(url, headers={"Accept": ACCEPT}, timeout=60.0, follow_redirects=True)
    response.raise_for_status()
    pattern = re.compile(args.match)
    date = datetime.now(UTC).strftime("%Y-%m-%d")
    if "json" in response.headers.get("Content-Type", ""):
        body = json.dumps(trim_json(response.json(), pattern, args.limit), indent=2) + "\n"
        suffix = "json"
    else:
        body = trim_html(response.text, pattern, args.limit)
        suffix = "html"
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / f"{args.label}-{name}-{date}.{suffix}"
    target.write_text(body, encoding="utf-8")
    print(f"wrote {target} from {response.url}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
