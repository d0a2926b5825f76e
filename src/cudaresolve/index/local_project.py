"""A local project folder as a requirement (``name @ file:///path``, ``-e PATH``): its metadata from its own build
backend, and the release it makes. Does I/O: reads the folder and runs the backend (``build_metadata``).

pip and uv lock such a folder as PEP 751 ``[packages.directory]``: no index, no hash, no version that could
go stale; its dependencies are what its backend says now (``prepare_metadata_for_build_wheel``, with build
requirements from the run's default index). The metadata is not cached: the folder's contents may change
between runs. ``--no-build`` refuses it, since nothing else can say what it requires.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cudaresolve.core.platforms import canonical_name
from cudaresolve.errors import DynamicMetadata, IndexUnavailable, NoSolution
from cudaresolve.resolve.model import FileKind
from cudaresolve.resolve.source import Artifact, IndexRelease
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from packaging.requirements import Requirement

    from cudaresolve.index.build_metadata import BuildPolicy

__all__ = ["directory_release", "project_name"]


def directory_release(
    name: str, folder: str, url: str, build: BuildPolicy | None
) -> tuple[IndexRelease, tuple[Requirement, ...]]:
    """The release the project at ``folder`` makes (``url``: how the requirement named it), and its requirements;
    ``NoSolution`` naming the folder when it is no project, may not be built, its build fails, or it is another
    package than ``name``."""
    from cudaresolve.index.build_metadata import prepare_tree_metadata
    from cudaresolve.index.metadata import parse_core_metadata

    source = Path(folder)
    if not source.is_dir() or not ((source / "pyproject.toml").is_file() or (source / "setup.py").is_file()):
        raise _refused("resolve.directory-not-project", folder, name)
    if build is None or not build.allowed:
        raise _refused("resolve.directory-no-build", folder, name)
    try:
        meta = parse_core_metadata(prepare_tree_metadata(source, build), source=folder)
    except (DynamicMetadata, IndexUnavailable) as e:
        raise NoSolution(Text.of("resolve.directory-failed", path=folder, reason=e.text),
                         hint=Text("resolve.directory.hint")) from e  # fmt: skip
    if canonical_name(meta.name) != canonical_name(name):
        raise NoSolution(Text.of("resolve.directory-other-name", path=folder, name=name, found=meta.name),
                         hint=Text("resolve.directory.hint"))  # fmt: skip
    artifact = Artifact(filename=source.name, url=url, requires_python=meta.requires_python, kind=FileKind.DIRECTORY)
    release = IndexRelease(name=canonical_name(name), version=meta.version, index_url="", artifact=artifact)
    return release, meta.requires_dist


def project_name(folder: Path) -> str | None:
    """The ``[project] name`` a folder's pyproject.toml states (PEP 621), None when it states none (a setup.py
    project names itself only when built)."""
    import tomllib

    from cudaresolve.core.decode import loads_toml
    from cudaresolve.core.files import PROJECT_FILE_MOST, read_regular_bounded

    try:  # read as every other TOML is: bounded in size, nesting and a key's parts (``core.decode``)
        raw = read_regular_bounded(folder / "pyproject.toml", PROJECT_FILE_MOST)
        data = loads_toml(raw.decode("utf-8")) if len(raw) <= PROJECT_FILE_MOST else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None
    project = data.get("project")
    name = project.get("name") if isinstance(project, dict) else None
    return name if isinstance(name, str) and name.strip() else None


def _refused(key: str, folder: str, name: str) -> NoSolution:
    return NoSolution(Text.of(key, path=folder, name=name), hint=Text("resolve.directory.hint"))
