"""Requirement (``-r FILE``) and constraint (``-c FILE``) files: pip's format, a bounded subset. Does I/O: reads files.

What a line may hold (https://pip.pypa.io/en/stable/reference/requirements-file-format/):

- a PEP 508 requirement (``torch>=2.4``, ``xformers; sys_platform == "linux"``), a direct
  reference among them (``pkg @ https://host/pkg-1.0-py3-none-any.whl#sha256=...``: judged
  later, with those on the command line; never in a constraint file);
- ``-r FILE`` / ``--requirement FILE`` and ``-c FILE`` / ``--constraint FILE`` (also with ``=``),
  a path relative to the file that names it; everything read through a constraint file is a
  constraint;
- comments (``#`` at the start or after white space), blank lines, a ``\\`` joining the next line,
  and ``${VAR}`` replaced by the environment variable (left as written when it is not set, as pip does).

- the index options files from the wild carry, as pip reads them: ``-i``/``--index-url URL`` (the default
  index; two different ones are refused, as ambiguous), ``--extra-index-url URL`` and
  ``-f``/``--find-links URL`` (more indexes, each package from the first that has it: uv's
  ``first-index`` rule), ``--trusted-host HOST`` (plain http allowed to that host's indexes).

- ``-e PATH``/``--editable PATH``: a local project folder (relative to the file), locked as PEP 751
  ``[packages.directory]`` with ``editable = true``; its name comes from its pyproject.toml.

Any other option (``--hash``, ``--no-binary`` ...) is refused with a coded error naming ``file:line``,
never ignored: cudaresolve chooses each file and hash itself. A URL as FILE is refused too. A requirement line
is checked as PEP 508 (naming ``file:line`` when it is not one) before anything is solved from it
(``check_lines``), not as it is read: a lock kept because it was made from these very lines (``lock.keep``)
needs no parser of requirements at all.

Bounds: a file of at most ``MAX_FILE_BYTES``, files nested at most ``MAX_DEPTH`` deep, at most
``MAX_FILES`` files in all; a file that includes itself (directly or through others) is an error.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from cudaresolve.core.files import NotRegularFile, read_regular_bounded
from cudaresolve.core.platforms import canonical_name
from cudaresolve.errors import InvalidInput
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Mapping, Sequence

__all__ = [
    "MAX_DEPTH", "MAX_FILES", "MAX_FILE_BYTES", "RequirementFiles", "RequirementLine", "check_lines",
    "directory_requirement", "read_requirement_files",
]

#: A requirement or constraint line as read: (``file:line``, its text, whether a constraint file gave it).
RequirementLine = tuple[str, str, bool]

MAX_FILE_BYTES: Final = 1024 * 1024
MAX_DEPTH: Final = 10
MAX_FILES: Final = 100
_ENV_VAR: Final = re.compile(r"\$\{([A-Z0-9_]+)\}")  # pip's form: ${NAME}, upper case, digits, _
_COMMENT: Final = re.compile(r"(?:^|(?<!\s)\s+)#.*$")  # a run of blanks tried once, from its start: linear
_NESTED: Final = {"-r": False, "--requirement": False, "-c": True, "--constraint": True}
#: Index options a line may hold, by their short names too (pip's requirements-file format).
_INDEX_OPTIONS: Final = {"-i": "--index-url", "-f": "--find-links", "--extra-index-url": "--extra-index-url",
                         "--find-links": "--find-links", "--trusted-host": "--trusted-host"}  # fmt: skip
_HINT: Final = Text("lock.reqfile.hint")


@dataclass(frozen=True, slots=True, kw_only=True)
class RequirementFiles:
    """What the files said: requirements and constraints (PEP 508 strings), in the order read, and the index
    options among their lines."""

    requirements: tuple[str, ...] = ()
    constraints: tuple[str, ...] = ()
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    trusted_hosts: tuple[str, ...] = ()
    editables: tuple[str, ...] = ()  # names of the local folders given with ``-e`` (installed in place)
    #: Each requirement and constraint line, for ``check_lines``.
    lines: tuple[RequirementLine, ...] = ()
    #: Every file read, as named (``-r``/``-c`` on the command line and in the files): none is written over.
    files: tuple[str, ...] = ()


def read_requirement_files(
    requirements: Sequence[str] = (), constraints: Sequence[str] = (), *, environ: Mapping[str, str] | None = None
) -> RequirementFiles:
    """Read every ``-r`` file then every ``-c`` file (module docstring: the format and its bounds)."""
    reader = _Reader(os.environ if environ is None else environ)
    for path in requirements:
        reader.read(_local(path), constraint=False, chain=())
    for path in constraints:
        reader.read(_local(path), constraint=True, chain=())
    return RequirementFiles(
        requirements=tuple(reader.requirements), constraints=tuple(reader.constraints), index_url=reader.index_url,
        extra_index_urls=tuple(dict.fromkeys(reader.indexes["--extra-index-url"])),
        find_links=tuple(dict.fromkeys(reader.indexes["--find-links"])),
        trusted_hosts=tuple(dict.fromkeys(reader.indexes["--trusted-host"])),
        editables=tuple(dict.fromkeys(reader.editables)), lines=tuple(reader.lines),
        files=tuple(dict.fromkeys(reader.paths)),
    )  # fmt: skip


class _Reader:
    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ
        self.requirements: list[str] = []
        self.constraints: list[str] = []
        self.files = 0
        self.paths: list[str] = []
        self.index_url: str | None = None
        self.editables: list[str] = []
        self.lines: list[RequirementLine] = []
        self.indexes: dict[str, list[str]] = {"--extra-index-url": [], "--find-links": [], "--trusted-host": []}

    def read(self, path: Path, *, constraint: bool, chain: tuple[Path, ...]) -> None:
        shown = str(path)
        if len(chain) >= MAX_DEPTH:
            raise InvalidInput(Text.of("lock.reqfile.too-deep", path=shown, limit=MAX_DEPTH), hint=_HINT)
        self.files += 1
        if self.files > MAX_FILES:
            raise InvalidInput(Text.of("lock.reqfile.too-many", limit=MAX_FILES), hint=_HINT)
        try:
            real = path.resolve()
        except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before Python 3.13), a name too long
            raise InvalidInput(Text.of("lock.reqfile.cannot-read", path=shown, reason=str(exc)[:200]),
                               hint=_HINT) from exc  # fmt: skip
        if real in chain:
            raise InvalidInput(Text.of("lock.reqfile.cycle", path=shown), hint=_HINT)
        self.paths.append(str(path))
        text = _read_bounded(path)
        for number, line in _logical_lines(text):
            self._line(path, number, line, constraint=constraint, chain=(*chain, real))

    def _line(self, path: Path, number: int, line: str, *, constraint: bool, chain: tuple[Path, ...]) -> None:
        where = f"{path}:{number}"
        line = _ENV_VAR.sub(lambda m: self.environ.get(m.group(1), m.group(0)), line).strip()
        if not line:
            return
        if line.startswith("-"):
            option, _, rest = line.partition(" ")
            if option.startswith("--") and "=" in option:
                option, _, value = option.partition("=")
                rest = f"{value} {rest}"
            if option in _NESTED and rest.strip():
                nested = _local(rest.strip())
                if not nested.is_absolute():
                    nested = path.parent / nested
                self.read(nested, constraint=constraint or _NESTED[option], chain=chain)
                return
            option = _INDEX_OPTIONS.get(option, option)
            value = rest.strip()
            if option in ("-e", "--editable") and value:
                folder = Path(value).expanduser()
                requirement = directory_requirement(str(folder if folder.is_absolute() else path.parent / folder))
                if requirement is None:
                    raise InvalidInput(Text.of("lock.reqfile.editable", where=where, path=value[:200]), hint=_HINT)
                (self.constraints if constraint else self.requirements).append(requirement)
                self.editables.append(canonical_name(requirement.split(" @ ", 1)[0]))
                return
            if option in self.indexes and value and " " not in value:
                self.indexes[option].append(value)
                return
            if option == "--index-url" and value and " " not in value:
                if self.index_url not in (None, value):
                    raise InvalidInput(Text.of("lock.reqfile.two-index-urls", where=where), hint=_HINT)
                self.index_url = value
                return
            raise InvalidInput(Text.of("lock.reqfile.option", where=where, option=option[:80]), hint=_HINT)
        if " -" in line:  # a per-requirement option: torch==2.7.1 --hash=sha256:...
            option = line[line.index(" -"):].split()[0]
            raise InvalidInput(Text.of("lock.reqfile.option", where=where, option=option[:80]), hint=_HINT)
        line = _egg_named(line)
        self.lines.append((where, line, constraint))
        (self.constraints if constraint else self.requirements).append(line)


def _egg_named(line: str) -> str:
    """pip's older form of a URL requirement, a bare URL naming its project in ``#egg=NAME``
    (``git+https://host/repo#egg=pkg``): ``NAME @ URL`` (the URL without the egg), which is then taken or refused
    as any URL requirement; any other line as it is."""
    url, _, fragment = line.partition("#")
    fields = dict(part.partition("=")[::2] for part in fragment.split("&")) if fragment else {}
    egg = fields.pop("egg", "").strip()
    if not egg or " " in url.strip() or "://" not in url:
        return line
    rest = "&".join(f"{k}={v}" for k, v in fields.items())
    return f"{egg} @ {url.strip()}{'#' + rest if rest else ''}"


def directory_requirement(text: str) -> str | None:
    """``NAME @ file:///abs/folder`` for a local project folder given as a path (``.``, ``./pkg``, ``-e PATH``),
    its name from its pyproject.toml (PEP 621); None when ``text`` is no such folder or it names itself only
    when built (a setup.py project: give it as ``NAME @ file:///path``)."""
    from cudaresolve.index.local_project import project_name

    folder = Path(text).expanduser()
    if "://" in text or not folder.is_dir():
        return None
    name = project_name(folder)
    return f"{name} @ {folder.resolve().as_uri()}" if name is not None else None


def _local(text: str) -> Path:
    """A file named in a flag or a file: a local path, never a URL (nothing is downloaded)."""
    if "://" in text:
        raise InvalidInput(Text.of("lock.reqfile.url", path=text[:200]), hint=_HINT)
    return Path(text)


def check_lines(lines: Iterable[RequirementLine]) -> None:
    """Raise ``InvalidInput`` naming the first of ``lines`` (``RequirementFiles.lines``) that is no PEP 508
    requirement, or in a constraint file has a URL or extras."""
    for where, line, constraint in lines:
        _check_requirement(line, where, constraint=constraint)


def _check_requirement(line: str, where: str, *, constraint: bool) -> None:
    """A PEP 508 requirement; in a constraint file without a URL and without extras (as pip says)."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(line)
    except InvalidRequirement as exc:
        raise InvalidInput(Text.of("lock.reqfile.bad-line", where=where, text=repr(line[:120])), hint=_HINT) from exc
    if constraint and req.url:
        raise InvalidInput(Text.of("lock.reqfile.constraint-url", where=where, text=repr(line[:120])), hint=_HINT)
    if constraint and req.extras:
        raise InvalidInput(Text.of("lock.reqfile.constraint-extras", where=where, text=repr(line[:120])), hint=_HINT)


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, line) with comments removed and ``\\``-continued lines joined."""
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = _COMMENT.sub("", raw)
        if not pending:
            start = number
        if line.endswith("\\"):
            pending.append(line[:-1])
            continue
        yield start, "".join([*pending, line])
        pending = []
    if pending:
        yield start, "".join(pending)


def _read_bounded(path: Path) -> str:
    """The text of a regular file of at most ``MAX_FILE_BYTES``; a FIFO or device is refused unread."""
    try:
        data = read_regular_bounded(path, MAX_FILE_BYTES)
    except NotRegularFile as exc:
        raise InvalidInput(Text.of("lock.reqfile.not-regular", path=str(path)), hint=_HINT) from exc
    except OSError as exc:
        raise InvalidInput(
            Text.of("lock.reqfile.cannot-read", path=str(path), reason=str(exc.strerror or exc)), hint=_HINT
        ) from exc
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInput(Text.of("lock.reqfile.too-large", path=str(path), limit=MAX_FILE_BYTES), hint=_HINT)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(Text.of("lock.reqfile.not-text", path=str(path)), hint=_HINT) from exc
