"""What a wheel may place, judged on its member names: its one ``.dist-info`` folder, and nothing that installs as
another distribution (a second ``.dist-info`` or an ``.egg-info`` under ``.data/purelib``) or replaces the
environment's own files (a script, or a ``.data/data`` file, named like its interpreter or activation scripts, or
its ``pyvenv.cfg``), and whose ``WHEEL`` tags are those its file name claims. Pure but ``check_wheel_files``
and ``tag_problem``, which read the wheels' listings and a ``WHEEL`` file.

Both ways a wheel is installed ask it: this process's linker (``link.plan_tree``) and the hand-over of large
wheels to uv, whose own checks leave these open.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from cudaresolve.errors import InvalidBinary
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

__all__ = [
    "RESERVED", "check_wheel_files", "dist_info_project", "identity_problem", "member_problem", "safe_member",
    "tag_problem", "wheel_problem",
]  # fmt: skip

#: A script name that is the environment's own (its interpreter, its activation scripts).
RESERVED: Final = re.compile(
    r"^(?:python(?:[0-9.]*)w?(?:\.exe)?|(?:de)?activate(?:\..*)?|activate_this\.py|Activate\.ps1)$", re.IGNORECASE
)  # venv's and uv's (activate_this.py) and virtualenv's (deactivate.bat) own scripts, on POSIX and Windows
_METADATA_FOLDERS: Final = (".dist-info", ".egg-info")
_SITE_FOLDERS: Final = frozenset({"site-packages", "dist-packages"})


def safe_member(name: str) -> bool:
    """Whether the member ``name`` stays inside the folder it is unpacked in: not absolute, no ``..``, ``.`` or
    empty part, no backslash, no drive (pip refuses such a wheel, uv leaves the member out)."""
    if not name or name.startswith("/") or "\\" in name or "\x00" in name or ":" in name.split("/", 1)[0]:
        return False
    parts = name.rstrip("/").split("/")
    return all(part not in ("", ".", "..") for part in parts)


def member_problem(info: str, name: str) -> str | None:
    """Why the member ``name`` (a path in the wheel, ``/``-separated) of the wheel whose ``.dist-info`` folder is
    ``info`` may not be installed, in words; None when it may."""
    parts = name.split("/")
    site = _in_site_packages(parts, info)
    if site and site[0] != info and site[0].lower().endswith(_METADATA_FOLDERS):  # a folder or a file: both are read
        shown = "/".join(parts[: len(parts) - len(site) + 1])
        return f"{shown}: the metadata of another distribution, which the lock does not name"
    if parts[0] != info[: -len(".dist-info")] + ".data" or len(parts) < 3:
        return None
    kind, rest = parts[1], parts[2:]
    if kind == "scripts" and len(rest) == 1 and RESERVED.match(rest[0]):
        return f"the script {rest[0]} would replace the environment's interpreter"
    if kind == "data" and (rest == ["pyvenv.cfg"] or (len(rest) == 2 and rest[0] in ("bin", "Scripts")
                                                        and RESERVED.match(rest[1]))):  # fmt: skip
        return f"{name} would replace the environment's own {rest[-1]}"
    return None


def _in_site_packages(parts: list[str], info: str) -> list[str] | None:
    """Where the member ``parts`` lands, relative to site-packages, when it lands there (importlib.metadata finds a
    distribution by any ``*.dist-info`` or ``*.egg-info`` entry there): the wheel's top level, its ``.data/purelib``
    and ``.data/platlib``, and its ``.data/data`` below a ``site-packages`` or ``dist-packages`` folder, whatever
    leads there: ``lib/pythonX.Y`` (``Lib`` on Windows), a venv's ``lib64`` (a link to ``lib``), Fedora's
    ``lib64``, Debian's ``dist-packages``."""
    if parts[0] != info[: -len(".dist-info")] + ".data":
        return parts
    kind, rest = (parts[1], parts[2:]) if len(parts) > 2 else ("", [])
    if kind in ("purelib", "platlib"):
        return rest
    site = next((i for i, p in enumerate(rest) if p.lower() in _SITE_FOLDERS), None)
    if kind == "data" and site is not None:
        return rest[site + 1 :] or None
    return None


def wheel_problem(names: Iterable[str]) -> str | None:
    """Why a wheel whose members are ``names`` may not be installed; None when it may."""
    listed = list(names)
    infos = {n.split("/", 1)[0] for n in listed if "/" in n and n.split("/", 1)[0].endswith(".dist-info")}
    if len(infos) != 1:
        return f"{len(infos)} .dist-info folders"
    (info,) = infos
    return next((p for n in listed if (p := member_problem(info, n)) is not None), None)


def identity_problem(info: str, metadata: str, project: str, version: str | None) -> str | None:
    """Why a wheel whose ``.dist-info`` folder is named ``info`` and whose METADATA reads ``metadata`` does not
    install the locked ``project`` (and ``version``, when given), in words; None when it does. A wheel whose hash
    matches the lock but which installs another distribution is refused so, whoever installs it."""
    from email.parser import HeaderParser  # every line ending (a lone \r too), headers past 64 KiB: as pip reads it

    from cudaresolve.core.platforms import canonical_name

    if dist_info_project(info) != canonical_name(project):
        return f"its metadata ({info}) is of another project than {project}"
    headers = HeaderParser().parsestr(metadata)
    names = [n.strip() for n in headers.get_all("Name") or []]
    if len(names) != 1 or canonical_name(names[0]) != canonical_name(project):  # none, two, or another's
        return f"its METADATA names {', '.join(repr(n[:80]) for n in names) or 'nothing'}, not {project}"
    named = {"folder": info[: -len(".dist-info")].rpartition("-")[2]}
    if (found := headers.get("Version")) is not None:
        named.setdefault("METADATA", str(found).strip())
    for where, said in named.items():
        if version is not None and not _same_version(said, version):
            return f"its {where} says version {said[:80]!r}, not {version}"
    return None


def dist_info_project(folder: str) -> str:
    """The normalized project name of a ``NAME-VERSION.dist-info`` folder's name."""
    from cudaresolve.core.platforms import canonical_name

    return str(canonical_name(folder[: -len(".dist-info")].rsplit("-", 1)[0]))


def _same_version(found: str, locked: str) -> bool:
    if found == locked:
        return True
    from packaging.version import InvalidVersion, Version

    try:
        return Version(found) == Version(locked)
    except InvalidVersion:
        return found == locked


#: The most of a wheel's METADATA read for its Name and Version (the header block comes first): lazy_wheel's bound.
_METADATA_MOST: Final = 16 * 1024 * 1024


def check_wheel_files(wheels: Iterable[tuple[Path, str, str | None]]) -> None:
    """``InvalidBinary`` for the first wheel of ``wheels`` ((path, locked project, locked version) each) whose
    listing ``wheel_problem`` refuses, that breaks an archive's bounds (``core.archive``), whose METADATA names
    another project or version (``identity_problem``) or whose ``WHEEL`` tags are not its name's: what the linker
    checks, asked before uv or pip install it."""
    from cudaresolve.core.archive import READ_ERRORS, open_archive

    for path, project, version in wheels:
        try:
            with open(path, "rb") as raw, open_archive(raw) as archive:
                names = archive.namelist()
                unsafe = next((n for n in names if not safe_member(n)), None)
                if unsafe is not None:  # as the in-process unpacking refuses it, whichever installer runs
                    raise InvalidBinary(Text.of("lock.install.unsafe-member", file=path.name, member=unsafe[:200]),
                                        hint=Text("lock.install.unsafe-member.hint"))
                problem = wheel_problem(names)
                infos = {n.split("/", 1)[0] for n in names if "/" in n}
                info = next((i for i in infos if i.endswith(".dist-info")), "")  # the one: ``wheel_problem`` said so
                if problem is None and f"{info}/METADATA" in names:
                    with archive.open(f"{info}/METADATA") as member:
                        metadata = member.read(_METADATA_MOST).decode("utf-8", "replace")
                    problem = identity_problem(info, metadata, project, version)
                elif problem is None:
                    problem = "no .dist-info/METADATA"
                if problem is None and f"{info}/WHEEL" in names:
                    with archive.open(f"{info}/WHEEL") as member:
                        text = member.read(65536).decode("utf-8", "replace")
                    problem = _version_problem(text) or _tags_problem(text, path.name)
                elif problem is None:
                    problem = "its .dist-info has no readable WHEEL file"
        except READ_ERRORS as exc:
            problem = f"not a readable wheel ({type(exc).__name__})"
        except InvalidBinary as exc:  # past ``core.archive``'s bounds, said without the wheel's name
            if not exc.text.key.startswith("binaries."):
                raise
            raise InvalidBinary(Text.of("lock.install.bad-wheel", file=path.name, reason=exc.text),
                                hint=Text("lock.install.bad-wheel.hint")) from exc
        if problem is not None:
            raise InvalidBinary(Text.of("lock.install.bad-wheel", file=path.name, reason=problem),
                                hint=Text("lock.install.bad-wheel.hint"))  # fmt: skip


def tag_problem(wheel: Path, filename: str) -> str | None:
    """Why the wheel's ``WHEEL`` file (at ``wheel``) is not one to install, in words: missing, of a ``Wheel-Version``
    whose major is not 1 (pip and uv refuse both: PEP 427's installer must), or with ``Tag:`` lines that name another
    system or machine than its file name's (the name the lock was checked against the interpreter with): a wheel
    served under another's name (a win32 build locked as py3-none-any). None when the tags share one, or either
    names none."""
    try:
        text = wheel.read_text(encoding="utf-8", errors="replace")[:65536]
    except OSError:
        return "its .dist-info has no readable WHEEL file"
    return _version_problem(text) or _tags_problem(text, filename)


def _version_problem(text: str) -> str | None:
    """Why a ``WHEEL`` file's ``text`` is of a wheel format this installer does not read (no ``Wheel-Version``, or
    another major version than 1); None when it reads it."""
    from email.parser import HeaderParser

    found = HeaderParser().parsestr(text).get("Wheel-Version")
    if found is None:
        return "its WHEEL file has no Wheel-Version"
    if str(found).strip().split(".", 1)[0] != "1":
        return f"its WHEEL file says Wheel-Version {str(found).strip()[:40]!r}; only version 1 wheels are installed"
    return None


def _tags_problem(text: str, filename: str) -> str | None:
    """``tag_problem`` of a ``WHEEL`` file's ``text``."""
    from packaging.tags import parse_tag
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        named = {_where(t.platform) for t in parse_wheel_filename(filename)[3]} - {"any"}
    except InvalidWheelFilename:
        return None
    declared: set[str] = set()
    said: list[str] = []
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() == "tag":
            try:
                declared |= {_where(t.platform) for t in parse_tag(value.strip())}
            except ValueError:
                continue
            said.append(value.strip())
    declared.discard("any")
    if not declared or named & declared:  # a pure wheel renamed for one platform, a glibc rename (PyTorch's) keep
        return None  # their WHEEL file: only another system or machine, or "any" in the name, is sure
    shown = ", ".join(said)[:200]
    return f"its WHEEL file says it is for {shown}, which its name does not claim"


def _where(platform: str) -> str:
    """A platform tag reduced to its system and machine (``manylinux_2_28_x86_64`` and ``linux_x86_64`` are both
    ``linux/x86_64``): a build's name may be renamed for its glibc without its ``WHEEL`` file (PyTorch's are),
    which says nothing about another system or machine."""
    if platform == "any":
        return platform
    system = next((s for s in ("linux", "win", "macosx") if s in platform.split("_", 1)[0]), platform)
    machine = next((a for a in ("x86_64", "aarch64", "ppc64le", "s390x", "universal2") if platform.endswith(a)), None)
    return f"{system}/{machine or platform.rsplit('_', 1)[-1]}"
