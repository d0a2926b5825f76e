"""Tiny real wheels for tests and benchmarks (a module, METADATA, WHEEL, RECORD). Does I/O: writes files.

One builder shared by ``tests/test_install_e2e.py``, ``tests/test_cli_lock_install_e2e.py`` and
``bench/bench_lock.py`` (which must not import test code). pip and uv install these wheels like
any other: the RECORD hashes are right and the tag is whatever the caller asks for.

    from tiny_wheels import build_wheel
    wheel = build_wheel(tmp / "files", "torch", "2.7.1+cu118", "cp311-cp311-linux_x86_64", origin="A")
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

__all__ = ["TinyWheel", "build_wheel"]


@dataclass(frozen=True, slots=True)
class TinyWheel:
    """What a lock or an index page needs of a built wheel."""

    name: str
    version: str
    filename: str
    sha256: str  # of the .whl file
    metadata_sha256: str  # of its METADATA (the PEP 658 ``.metadata`` file, when written)


def build_wheel(
    dest: Path,
    name: str,
    version: str,
    tag: str,
    *,
    requires: Sequence[str] = (),
    origin: str | None = None,
    metadata_file: bool = False,
    imports: Sequence[str] = (),
    requires_python: str | None = None,
) -> TinyWheel:
    """Write ``dest/<dist>-<version>-<tag>.whl`` (``dest`` is created) and return its name and hashes.

    The wheel holds one module, named after the distribution without a ``_python`` suffix
    (``flashinfer-python`` -> ``flashinfer``), defining ``__version__`` and, when ``origin`` is
    given, ``ORIGIN`` (so a test can tell which index a module came from). ``requires`` become
    ``Requires-Dist`` lines; ``metadata_file`` also writes the PEP 658 ``<wheel>.metadata`` file.
    ``imports`` are modules the package imports when imported (a fake torch that fails without its
    dependencies, as the real one does).
    """
    dist = re.sub(r"[-_.]+", "_", name).lower()
    info = f"{dist}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    if requires_python:
        metadata += f"Requires-Python: {requires_python}\n"
    metadata += "".join(f"Requires-Dist: {req}\n" for req in requires)
    module = "".join(f"import {m}\n" for m in imports)
    module += f'__version__ = "{version}"\n' + (f'ORIGIN = "{origin}"\n' if origin is not None else "")
    purelib = "true" if tag.endswith("-none-any") else "false"
    files = {
        f"{dist.removesuffix('_python')}/__init__.py": module,
        f"{info}/METADATA": metadata,
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: cudaresolve-tiny-wheels\nRoot-Is-Purelib: {purelib}\nTag: {tag}\n"
        ),
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    filename = f"{dist}-{version}-{tag}.whl"
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest / filename, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    if metadata_file:
        (dest / f"{filename}.metadata").write_text(metadata, encoding="utf-8")
    return TinyWheel(
        name=name,
        version=version,
        filename=filename,
        sha256=hashlib.sha256((dest / filename).read_bytes()).hexdigest(),
        metadata_sha256=hashlib.sha256(metadata.encode()).hexdigest(),
    )
