"""Tiny real wheels and sdists for tests and benchmarks (a module, METADATA, WHEEL, RECORD). Does I/O: writes files.

One builder shared by ``tests/test_install_e2e.py``, ``tests/test_cli_lock_install_e2e.py`` and
``bench/bench_lock.py`` (which must not import test code). pip and uv install these wheels like
any other: the RECORD hashes are right and the tag is whatever the caller asks for.

    from tiny_wheels import build_wheel
    wheel = build_wheel(tmp / "files", "torch", "2.7.1+cu118", "cp311-cp311-linux_x86_64", origin="A")

``build_sdist`` writes a pure-Python sdist that builds itself (a PEP 517 backend inside it, no build
dependencies), with a PKG-INFO as static or as dynamic as a test needs (PEP 643).
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

__all__ = ["TinySdist", "TinyWheel", "build_sdist", "build_wheel"]


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


@dataclass(frozen=True, slots=True)
class TinySdist:
    """What a lock or an index page needs of a built sdist."""

    name: str
    version: str
    filename: str
    sha256: str  # of the sdist file
    pkg_info: str  # its PKG-INFO text (also the PEP 658 ``.metadata`` file, when written)


#: A PEP 517 backend shipped inside the sdist (``backend-path = ["."]``, no build requirements): pip and uv
#: build the wheel with nothing from an index, which a test on 127.0.0.1 has no setuptools to offer.
_BACKEND = '''"""Builds this tiny package's wheel with the standard library only."""
import base64, hashlib, os, zipfile

NAME, VERSION, REQUIRES, FAIL = {name!r}, {version!r}, {requires!r}, {fail!r}
DIST = NAME.replace("-", "_").replace(".", "_").lower()
INFO = DIST + "-" + VERSION + ".dist-info"


def _files():
    if FAIL:
        raise RuntimeError(FAIL)
    meta = "Metadata-Version: 2.1\\nName: " + NAME + "\\nVersion: " + VERSION + "\\n"
    meta += "".join("Requires-Dist: " + r + "\\n" for r in REQUIRES)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, DIST, "__init__.py")) as f:
        module = f.read()
    wheel = "Wheel-Version: 1.0\\nGenerator: tiny-backend\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    return {{DIST + "/__init__.py": module, INFO + "/METADATA": meta, INFO + "/WHEEL": wheel}}


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    os.makedirs(os.path.join(metadata_directory, INFO), exist_ok=True)
    for path, text in _files().items():
        if path.startswith(INFO):
            with open(os.path.join(metadata_directory, path), "w") as f:
                f.write(text)
    return INFO


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = _files()
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(path + ",sha256=" + digest + "," + str(len(text.encode())))
    files[INFO + "/RECORD"] = "\\n".join(record + [INFO + "/RECORD,,"]) + "\\n"
    filename = DIST + "-" + VERSION + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return filename


def get_requires_for_build_editable(config_settings=None):
    return []


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return build_wheel(wheel_directory, config_settings, metadata_directory)  # PEP 660: a copy stands in
'''


def build_sdist(
    dest: Path,
    name: str,
    version: str,
    *,
    requires: Sequence[str] = (),
    metadata_version: str = "2.2",
    dynamic: Sequence[str] = (),
    origin: str | None = None,
    zip_format: bool = False,
    metadata_file: bool = False,
    requires_python: str | None = None,
    built_requires: Sequence[str] | None = None,
    backend_error: str | None = None,
) -> TinySdist:
    """Write ``dest/<dist>-<version>.tar.gz`` (or ``.zip``): a pure-Python sdist whose PKG-INFO says
    ``metadata_version`` and ``Dynamic: <field>`` for each of ``dynamic``, and which pip and uv build into
    a wheel with the same ``requires`` (its own backend, no build dependencies). The module defines
    ``__version__`` and ``ORIGIN``; ``metadata_file`` also writes the PEP 658 ``<sdist>.metadata`` file;
    ``requires_python`` is PKG-INFO's ``Requires-Python`` (the built wheel's METADATA does not repeat it);
    ``built_requires``: what the backend's METADATA requires instead (a PKG-INFO whose dynamic dependencies
    differ from the built ones); ``backend_error``: the backend raises this instead of building."""
    import io
    import tarfile

    dist = re.sub(r"[-_.]+", "_", name).lower()
    top = f"{dist}-{version}"
    pkg_info = f"Metadata-Version: {metadata_version}\nName: {name}\nVersion: {version}\n"
    pkg_info += "".join(f"Dynamic: {field}\n" for field in dynamic)
    pkg_info += f"Requires-Python: {requires_python}\n" if requires_python else ""
    pkg_info += "".join(f"Requires-Dist: {req}\n" for req in requires)
    module = f'__version__ = "{version}"\n' + (f'ORIGIN = "{origin}"\n' if origin is not None else "")
    files = {
        f"{top}/PKG-INFO": pkg_info,
        f"{top}/pyproject.toml": (
            '[build-system]\nrequires = []\nbuild-backend = "tiny_backend"\nbackend-path = ["."]\n'
        ),
        f"{top}/tiny_backend.py": _BACKEND.format(
            name=name, version=version, fail=backend_error,
            requires=list(requires if built_requires is None else built_requires),
        ),
        f"{top}/{dist}/__init__.py": module,
    }
    dest.mkdir(parents=True, exist_ok=True)
    filename = f"{top}.zip" if zip_format else f"{top}.tar.gz"
    if zip_format:
        with zipfile.ZipFile(dest / filename, "w") as archive:
            for path, text in files.items():
                archive.writestr(path, text)
    else:
        with tarfile.open(dest / filename, "w:gz") as archive:
            for path, text in files.items():
                data = text.encode()
                info = tarfile.TarInfo(path)
                info.size, info.mode = len(data), 0o644
                archive.addfile(info, io.BytesIO(data))
    if metadata_file:
        (dest / f"{filename}.metadata").write_text(pkg_info, encoding="utf-8")
    return TinySdist(
        name=name,
        version=version,
        filename=filename,
        sha256=hashlib.sha256((dest / filename).read_bytes()).hexdigest(),
        pkg_info=pkg_info,
    )
