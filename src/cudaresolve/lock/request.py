"""What the user asked ``lock`` or ``install`` for, as given (``LockRequest``) and made concrete (``LockInputs``),
and the mirrors that request and the project name together (``all_mirrors``). Pure, but for the user's pip
and uv settings files read there.

Apart from the lock flow so that ``install --from``, which carries the request but resolves nothing, imports
no solver and no index client.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cudaresolve.index.extra import ExtraSources
from cudaresolve.lock.features import Selection
from cudaresolve.resolve import DEFAULT_PRERELEASE

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from packaging.tags import Tag

    from cudaresolve.db.database import CompatDB
    from cudaresolve.lock.features import Chosen
    from cudaresolve.lock.project import ProjectSettings
    from cudaresolve.lock.reqfiles import RequirementLine
    from cudaresolve.target.model import Target
    from cudaresolve.target.options import TargetOptions

__all__ = ["LockInputs", "LockRequest", "all_mirrors", "project_mirrors"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LockRequest:
    """What the user asked for, as given: requirements (none: the project's), the declared target,
    the database file (None: the shipped one), ``--offline`` and ``ORIG=MIRROR`` mirror mappings;
    ``constraints``: ``-c`` lines (they narrow versions, never add a package)."""

    requirements: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    target: TargetOptions
    compat: str | None = None
    offline: bool = False
    mirrors: tuple[str, ...] = ()
    project: Path = Path("pyproject.toml")
    gpu_source: str | None = None  # --gpu-source; None: the project's gpu-source, else "auto"
    index_url: str | None = None  # --index-url: the default index (a PyPI mirror); None: the user's settings
    environ: Mapping[str, str] | None = field(default=None, repr=False)  # None: os.environ (pip/uv settings)
    no_build: bool = False  # --no-build: an sdist with dynamic metadata is never built; its release is passed over
    upgrade: bool = False  # -U/--upgrade: the previous lock's pins are not kept
    upgrade_packages: tuple[str, ...] = ()  # --upgrade-package: these names' pins are not kept
    extra_index_urls: tuple[str, ...] = ()  # --extra-index-url, then a requirement file's (``index.extra``)
    find_links: tuple[str, ...] = ()  # -f/--find-links likewise
    trusted_hosts: tuple[str, ...] = ()  # a requirement file's --trusted-host lines
    editables: tuple[str, ...] = ()  # local folders given with -e, locked editable
    features: Selection = field(default_factory=Selection)  # --extra/--all-extras/--group/--all-groups/--no-dev
    exclude_newer: datetime | None = None  # --exclude-newer: files uploaded after it are not seen
    prerelease: str = DEFAULT_PRERELEASE  # --prerelease (``provider.CatalogProvider._allowed``)
    #: The requirement files' lines, checked before a solve (``lock.reqfiles.check_lines``)
    requirement_lines: tuple[RequirementLine, ...] = ()
    #: The files the request was read from (requirement and constraint files, the host file): never the output.
    read_files: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class LockInputs:
    """A request made concrete: the requirements, the Target, the database and the merged mirrors."""

    requirements: tuple[str, ...]
    target: Target
    db: CompatDB = field(repr=False)
    constraints: tuple[str, ...] = ()
    offline: bool = False
    mirrors: Mapping[str, str] = field(default_factory=dict)
    package_indexes: Mapping[str, str] = field(default_factory=dict)  # [tool.cudaresolve] package-index
    gpu_source: str = "auto"  # where GPU builds come from (``resolve.sources.GPU_SOURCES``)
    no_build: bool = False
    extra: ExtraSources = field(default_factory=ExtraSources)  # more indexes, first-index rule (``index.extra``)
    exclude_newer: datetime | None = None
    prerelease: str = DEFAULT_PRERELEASE
    chosen: Chosen | None = None  # the project's requirements by extra and group (None: given as arguments)
    #: The requirement files' lines (``LockRequest.requirement_lines``): what they say is in ``requirements``
    unchecked: tuple[RequirementLine, ...] = field(default=(), compare=False, repr=False)
    editables: tuple[str, ...] = ()  # the project itself, when its backend gives its dependencies (locked editable)

    def wheel_tags(self) -> tuple[Tag, ...]:
        """The wheel tags the target takes, best first (the database's glibc and macOS where it states none)."""
        from cudaresolve.target.environment import wheel_tags

        target, db = self.target, self.db
        return wheel_tags(target, glibc=target.glibc or db.assumed_glibc, macos=target.macos or db.assumed_macos)



def project_mirrors(request: LockRequest) -> dict[str, str]:
    """Every mirror of the run (``all_mirrors``), for a request whose database is not loaded yet."""
    from cudaresolve.db.database import load_compat
    from cudaresolve.lock.project import load_project

    db = load_compat(request.compat)
    return all_mirrors(request, load_project(request.project, pytorch_root=db.pytorch_index_root), db)


def all_mirrors(request: LockRequest, project: ProjectSettings, db: CompatDB) -> dict[str, str]:
    """The user's default index (pip's and uv's settings, ``[tool.cudaresolve] index-url``, ``--index-url``:
    ``index.settings``) as the mirror of the database's default index, under the project's ``index-mirror``
    table, under the ``--index-mirror`` flags."""
    import os

    from cudaresolve.index.mirrors import parse_mirrors
    from cudaresolve.index.settings import default_index

    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # no HOME and no passwd entry: no user files
        home = Path("/nonexistent")
    environ = os.environ if request.environ is None else request.environ
    setting = default_index(environ, home=home, cwd=Path.cwd(), project=project.index_url, flag=request.index_url)
    base: dict[str, str] = {}
    if setting is not None and setting.url.rstrip("/") != db.default_index.rstrip("/"):
        base[db.default_index] = setting.url
    return {**base, **project.mirrors, **parse_mirrors(request.mirrors)}
