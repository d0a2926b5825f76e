"""Real wheel files for tests: the members given, a RECORD listing each with its sha256 and size, zipped."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import zipfile
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path


def write_wheel(path: Path, files: Mapping[str, bytes], info: str) -> str:
    """``files`` and ``info``/RECORD zipped at ``path`` (a member under a ``/scripts/`` folder executable); its
    sha256."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for member, body in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
        writer.writerow((member, f"sha256={digest}", len(body)))
    writer.writerow((f"{info}/RECORD", "", ""))
    with zipfile.ZipFile(path, "w") as archive:
        for member, body in {**files, f"{info}/RECORD": out.getvalue().encode()}.items():
            entry = zipfile.ZipInfo(member)
            entry.external_attr = (0o755 if "/scripts/" in member else 0o644) << 16
            archive.writestr(entry, body)
    return hashlib.sha256(path.read_bytes()).hexdigest()
