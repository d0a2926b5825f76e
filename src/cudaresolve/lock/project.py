"""The project's own settings: requirements and index mirrors from ``pyproject.toml``. Pure plus one reader."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cudaresolve.errors import InvalidInput

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["ProjectSettings", "load_project", "project_from_dict"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectSettings:
    """``[tool.cudaresolve] requirements`` (else ``[project] dependencies``) and ``index-mirror``."""

    requirements: tuple[str, ...] = ()
    mirrors: Mapping[str, str] = field(default_factory=dict)
    source: str = ""


def project_from_dict(data: Mapping[str, Any], *, pytorch_root: str, source: str = "pyproject.toml") -> ProjectSettings:
    """``pytorch_root`` (the database's PyTorch index root) is what a bare ``index-mirror`` URL replaces."""
    tool = data.get("tool", {}).get("cudaresolve", {})
    if not isinstance(tool, Mapping):
        raise InvalidInput(
            f"{source}: [tool.cudaresolve] must be a table", hint="see the README's configuration section"
        )
    reqs = tool.get("requirements")
    origin = f"{source} [tool.cudaresolve] requirements"
    if reqs is None:
        reqs = data.get("project", {}).get("dependencies", [])
        origin = f"{source} [project] dependencies"
    if not isinstance(reqs, list) or not all(isinstance(r, str) for r in reqs):
        raise InvalidInput(f"{origin} must be a list of strings", hint='e.g. requirements = ["torch", "torchrec"]')
    mirror = tool.get("index-mirror", {})
    if isinstance(mirror, str):  # one mirror of the PyTorch index
        mirror = {pytorch_root: mirror}
    if not isinstance(mirror, Mapping) or not all(isinstance(v, str) for v in mirror.values()):
        raise InvalidInput(
            f"{source}: [tool.cudaresolve] index-mirror must be a URL or a table of URL prefixes",
            hint='e.g. index-mirror = "https://mirror.example.org/pytorch/whl"',
        )
    return ProjectSettings(requirements=tuple(reqs), mirrors=dict(mirror), source=origin)


def load_project(path: Path, *, pytorch_root: str) -> ProjectSettings:
    """Read ``path`` if it exists; a missing file gives empty settings."""
    if not path.is_file():
        return ProjectSettings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(
            f"cannot read {path}: {exc}", hint="fix the file or pass requirements on the command line"
        ) from exc
    return project_from_dict(data, pytorch_root=pytorch_root, source=str(path))
