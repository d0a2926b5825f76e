"""The project's own settings: requirements and index mirrors from ``pyproject.toml``. Pure plus one reader."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.files import PROJECT_FILE_MOST
from cudaresolve.core.tomlcache import load_toml
from cudaresolve.errors import InvalidInput
from cudaresolve.lock.features import Features, features_from_dict
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from pathlib import Path

    from cudaresolve.index.settings import IndexSetting
    from cudaresolve.lock.features import Selection

__all__ = ["MAX_PROJECT_BYTES", "ProjectSettings", "built_project", "check_project_python", "load_project",
           "parse_gpu_source", "project_from_dict"]  # fmt: skip

#: The largest pyproject.toml read (``core.files.PROJECT_FILE_MOST``).
MAX_PROJECT_BYTES: Final = PROJECT_FILE_MOST


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectSettings:
    """``[tool.cudaresolve] requirements`` (else ``[project] dependencies``), ``index-mirror``, ``package-index``
    and ``gpu-source``."""

    requirements: tuple[str, ...] = ()
    mirrors: Mapping[str, str] = field(default_factory=dict)
    package_indexes: Mapping[str, str] = field(default_factory=dict)  # name -> the one index it comes from
    gpu_source: str | None = None  # [tool.cudaresolve] gpu-source: "auto", "pytorch" or "pypi" (None: not set)
    index_url: IndexSetting | None = None  # [tool.cudaresolve] index-url: the default index (a PyPI mirror)
    source: str = ""
    features: Features = field(default_factory=Features)  # extras and dependency groups (``features``)
    #: ``[project] name``, and which of its dependencies and optional-dependencies its build backend gives
    #: (``[project] dynamic``), when ``requirements`` are the project's own (no ``[tool.cudaresolve] requirements``)
    name: str | None = None
    dynamic: frozenset[str] = frozenset()
    requires_python: str | None = None  # [project] requires-python: the Pythons a lock of the project may be for
    #: The ``[tool.uv]`` tables that change what uv resolves for the project (``_UV_SETTINGS``) and that this tool
    #: does not read: the lock says so rather than give another answer than ``uv lock`` silently.
    uv_settings: tuple[str, ...] = ()
    #: The dependencies ``[tool.uv.sources]`` maps to a local folder with ``editable = true`` (``lock.uv_sources``)
    editables: tuple[str, ...] = ()


#: uv's project settings that choose indexes or change requirements (``[tool.uv] sources``, ``index``, ...).
_UV_SETTINGS: Final = ("sources", "index", "constraint-dependencies", "override-dependencies")


def project_from_dict(
    data: Mapping[str, Any], *, pytorch_root: str, source: str = "pyproject.toml", folder: Path | None = None
) -> ProjectSettings:
    """``pytorch_root`` (the database's PyTorch index root) is what a bare ``index-mirror`` URL replaces.
    Every shape is checked (``tool = "x"``, ``project = [1]`` ...): a wrong one is ``InvalidInput``,
    and ``index-mirror`` is validated exactly like the ``--index-mirror`` flag. ``folder``: the file's own, where
    the paths of ``[tool.uv.sources]`` start (None: those sources are not applied, only named as unread)."""
    from cudaresolve.index.mirrors import parse_mirrors
    from cudaresolve.lock.uv_sources import PathSources, apply_path_sources, path_sources

    tool = _table(_table(data, "tool", source, "tool"), "cudaresolve", source, "tool.cudaresolve")
    reqs = tool.get("requirements")
    origin = f"{source} [tool.cudaresolve] requirements"
    project = _table(data, "project", source, "project")
    name, dynamic = project.get("name"), project.get("dynamic", [])
    if not isinstance(dynamic, list) or not all(isinstance(d, str) for d in dynamic):
        raise InvalidInput(Text.of("lock.project.not-a-list", origin=f"{source} [project] dynamic"),
                           hint=Text("lock.project.not-a-list.hint"))  # fmt: skip
    own = frozenset(dynamic) & {"dependencies", "optional-dependencies"} if reqs is None else frozenset()
    if reqs is None:
        reqs = project.get("dependencies", [])
        origin = f"{source} [project] dependencies"
    if not isinstance(reqs, list) or not all(isinstance(r, str) for r in reqs):
        raise InvalidInput(Text.of("lock.project.not-a-list", origin=origin), hint=Text("lock.project.not-a-list.hint"))
    mirror = tool.get("index-mirror", {})
    if isinstance(mirror, str):  # one mirror of the PyTorch index
        mirror = {pytorch_root: mirror}
    if not isinstance(mirror, Mapping) or not all(isinstance(v, str) for v in mirror.values()):
        raise InvalidInput(Text.of("lock.project.bad-mirror", source=source), hint=Text("lock.project.bad-mirror.hint"))
    from cudaresolve.index.mirrors import parse_package_indexes

    indexes = tool.get("package-index", {})
    if not isinstance(indexes, Mapping) or not all(isinstance(v, str) for v in indexes.values()):
        raise InvalidInput(
            Text.of("lock.project.bad-package-index", source=source), hint=Text("index.package-index.hint")
        )
    gpu_source = tool.get("gpu-source")
    if gpu_source is not None:
        gpu_source = parse_gpu_source(gpu_source, f"{source} [tool.cudaresolve] gpu-source")
    index_url = None
    if "index-url" in tool:
        from cudaresolve.index.settings import check_index_url

        index_url = check_index_url(tool["index-url"], f"{source} [tool.cudaresolve] index-url")
    sources = path_sources(data, folder) if folder is not None else PathSources(complete=False)
    features = features_from_dict(data, source)
    features = replace(features, extras={k: apply_path_sources(v, sources) for k, v in features.extras.items()},
                       groups={k: apply_path_sources(v, sources) for k, v in features.groups.items()})  # fmt: skip
    requirements = apply_path_sources(tuple(reqs), sources)
    used = " ".join((*requirements, *(r for rs in (*features.extras.values(), *features.groups.values()) for r in rs)))
    return ProjectSettings(
        requirements=requirements,
        mirrors=parse_mirrors(mirror),
        package_indexes=parse_package_indexes(indexes),
        gpu_source=gpu_source,
        index_url=index_url,
        source=origin,
        features=features,
        name=name if isinstance(name, str) and name.strip() else None,
        dynamic=own,
        requires_python=_requires_python(project.get("requires-python"), source),
        uv_settings=_uv_settings(data, sources.complete),
        editables=tuple(name for name in sources.editable if f" @ {sources.urls[name]}" in used),
    )


def _uv_settings(data: Mapping[str, Any], sources_applied: bool) -> tuple[str, ...]:
    """The ``[tool.uv]`` keys of ``_UV_SETTINGS`` the file sets and this lock does not read (``sources`` is read
    when ``sources_applied``: every entry a local path, ``lock.uv_sources``); any shape: they are only named."""
    tool = data.get("tool")
    uv = tool.get("uv") if isinstance(tool, dict) else None
    if not isinstance(uv, dict):
        return ()
    return tuple(f"tool.uv.{key}" for key in _UV_SETTINGS if key in uv and not (key == "sources" and sources_applied))


def built_project(project: ProjectSettings, folder: Path, selection: Selection) -> tuple[str, Selection]:
    """For a project whose dependencies (or extras) its build backend gives (``[project] dynamic``): the requirement
    on the project itself at ``folder`` with the extras asked (its backend then says what they need, as uv's
    ``pip compile pyproject.toml`` asks it), and the selection left for the static features (the groups)."""
    from dataclasses import replace

    if project.name is None:
        raise InvalidInput(Text("lock.project.dynamic-no-name"), hint=Text("lock.project.dynamic.hint"))
    extras: tuple[str, ...] = ()
    if "optional-dependencies" in project.dynamic:
        if selection.all_extras:
            raise InvalidInput(Text("lock.project.dynamic-all-extras"), hint=Text("lock.project.dynamic.hint"))
        extras, selection = selection.extras, replace(selection, extras=())
    shown = f"[{','.join(extras)}]" if extras else ""
    return f"{project.name}{shown} @ {folder.resolve().as_uri()}", selection


def _requires_python(value: object, source: str) -> str | None:
    """``[project] requires-python``, checked as a specifier set (a wrong one is ``InvalidInput``); None when absent."""
    if value is None:
        return None
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        if not isinstance(value, str) or len(value) > 1000:  # a bound on the work, not a fact
            raise InvalidSpecifier(repr(value)[:80])
        return str(SpecifierSet(value))
    except InvalidSpecifier:
        raise InvalidInput(Text.of("lock.project.bad-requires-python", source=source, found=repr(value)[:80]),
                           hint=Text("lock.project.readme.hint")) from None  # fmt: skip


def check_project_python(project: ProjectSettings, python: str) -> None:
    """A lock of the project for a Python its ``requires-python`` leaves out is refused, as uv refuses it (any
    patch release of ``python`` that the set admits will do: the target names no patch)."""
    from packaging.specifiers import SpecifierSet

    if project.requires_python is None or not python[:1].isdigit():
        return
    admitted = SpecifierSet(project.requires_python)
    if not any(admitted.contains(f"{python}.{patch}", prereleases=True) for patch in range(100)):
        raise InvalidInput(Text.of("lock.project.python-excluded", spec=project.requires_python, python=python),
                           hint=Text("lock.project.python-excluded.hint"))  # fmt: skip


def parse_gpu_source(value: object, origin: str) -> str:
    """``auto``, ``pytorch`` or ``pypi`` (``resolve.sources.GPU_SOURCES``); anything else is ``InvalidInput``."""
    from cudaresolve.resolve.sources import GPU_SOURCES

    if not isinstance(value, str) or value not in GPU_SOURCES:
        raise InvalidInput(
            Text.of("lock.project.bad-gpu-source", origin=origin, found=repr(value)[:80]),
            hint=Text.of("lock.project.bad-gpu-source.hint", choices=", ".join(GPU_SOURCES)),
        )
    return value


def _table(data: Mapping[str, Any], key: str, source: str, dotted: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        text = Text.of("lock.project.not-a-table", source=source, table=dotted)
        raise InvalidInput(text, hint=Text("lock.project.readme.hint"))
    return value


def load_project(path: Path, *, pytorch_root: str) -> ProjectSettings:
    """Read ``path`` if it exists; a missing file gives empty settings."""
    if not path.is_file():
        return ProjectSettings()
    from cudaresolve.core.files import read_regular_bounded

    try:
        raw = read_regular_bounded(path, MAX_PROJECT_BYTES)
        if len(raw) > MAX_PROJECT_BYTES:  # read whole, a 1.7 GB file had ended in a MemoryError
            raise ValueError(f"larger than {MAX_PROJECT_BYTES // (1024 * 1024)} MiB")
        data = load_toml(raw.decode("utf-8"))
    except (OSError, ValueError) as exc:  # UnicodeDecodeError, tomllib.TOMLDecodeError, decode.TooDeep
        raise InvalidInput(
            Text.of("lock.project.cannot-read", path=str(path), error=str(exc)),
            hint=Text("lock.project.cannot-read.hint"),
        ) from exc
    return project_from_dict(data, pytorch_root=pytorch_root, source=str(path), folder=path.parent)
