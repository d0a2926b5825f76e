"""What ``install --from`` refuses before pip runs. Pure, plus one probe of the target interpreter.

A lock is installed only when: it locks at least one package, each package once; every index and
file URL is https (http only on 127.0.0.1/localhost, or under a mirror the user named; a direct
reference may also be a ``file://`` wheel on this machine, as pip and uv take it); a
requirements lock has a hash on every pin (a file with every ``--hash`` removed, or only some,
would install those pins unchecked), one index only (a second one sits on ``#> `` lines that pip
and reviewers read as comments; several indexes need a pylock.toml, where each package names its
index) and no other comment that our reader would turn into an option (``#>--index-url``,
``#>-i``: ``read_lock`` refuses them); and the lock's ``requires-python`` and ``environments``
hold for the target interpreter.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import TYPE_CHECKING, Final

from cudaresolve.core.decode import loads_json
from cudaresolve.core.urls import in_local_folder, shown_url, split_url
from cudaresolve.errors import InvalidLockfile
from cudaresolve.lock.model import REGENERATE_HINT
from cudaresolve.resolve.model import FileKind
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from cudaresolve.lock.model import Lock

__all__ = ["check_environment", "check_installable", "interpreter_environment", "url_allowed"]

_LOCAL_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1"})
_PROBE_OUTPUT: Final = 64 * 1024  # the marker environment is a few hundred bytes
# The marker environment of an interpreter, without needing packaging inside it (PEP 508).
_PROBE: Final = (
    "import json,os,platform,sys;"
    "print(json.dumps({'python_version':'.'.join(platform.python_version_tuple()[:2]),"
    "'python_full_version':platform.python_version(),'sys_platform':sys.platform,"
    "'platform_machine':platform.machine(),'platform_system':platform.system(),'os_name':os.name,"
    "'implementation_name':sys.implementation.name,"
    "'platform_python_implementation':platform.python_implementation(),"
    "'platform_release':platform.release(),'platform_version':platform.version(),"
    "'implementation_version':platform.python_version()}))"
)


def url_allowed(url: str, mirrors: Iterable[str] = ()) -> bool:
    """https anywhere; http only on a loopback host or under a mirror the user named; never a URL ``split_url``
    refuses (whitespace or a control character in it would be several URLs to pip)."""
    parts = split_url(url)
    if parts is None:
        return False
    if any(m and url.startswith(m) for m in mirrors):
        return True
    host = parts.hostname
    if parts.scheme == "https" and host:
        return True
    return parts.scheme == "http" and host in _LOCAL_HOSTS


def interpreter_environment(python: str | None) -> dict[str, str]:
    """The PEP 508 marker environment of ``python`` (None: this interpreter)."""
    if python is None:
        from packaging.markers import default_environment

        return {str(k): str(v) for k, v in default_environment().items()}
    import subprocess  # here: an install whose target was probed before runs nothing

    from cudaresolve.core.processes import run_capped

    try:  # bounded as every probe of an interpreter: its output, its time, a process it leaves behind
        code, out, err = run_capped([python, "-c", _PROBE], timeout=60, cap=_PROBE_OUTPUT)
        if code != 0:
            raise ValueError(err.decode("utf-8", "replace").strip()[-300:] or f"exit status {code}")
        env = loads_json(out.decode("utf-8", "replace"))
        if not isinstance(env, dict):
            raise ValueError(f"its answer is not a JSON object: {out[:100]!r}")
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        from cudaresolve.errors import InvalidInput

        raise InvalidInput(
            Text.of("lock.cannot-run-python", python=python, reason=str(getattr(exc, "strerror", None) or exc)),
            hint=Text("lock.cannot-run-python.hint"),
        ) from exc
    return {str(k): str(v) for k, v in env.items()}


def check_installable(
    lock: Lock, *, source: str, requirements: bool, mirrors: Mapping[str, str], environment: Mapping[str, str] | None
) -> None:
    """Raise ``InvalidLockfile`` for the first reason (module docstring) this lock must not be installed;
    ``environment`` None: all but ``check_environment``, which the caller runs apart."""
    if not lock.packages:
        raise _refuse(Text.of("lock.install.empty", source=source))
    counts = Counter(p.name for p in lock.packages)
    for name, count in counts.items():
        if count > 1:
            raise _refuse(Text.of("lock.install.duplicate", source=source, name=name))
    named = tuple(mirrors.values())
    for p in lock.packages:
        if p.kind is FileKind.DIRECTORY:  # a local project folder must be there (``install.rooted`` made it a URL)
            from cudaresolve.resolve.direct import local_directory

            folder = local_directory(p.url or "")
            if folder is None:
                raise InvalidLockfile(Text.of("lock.install.no-folder", source=source, name=p.name, path=p.url or ""),
                                      hint=Text("lock.install.no-folder.hint"))
            if not any(os.path.isfile(os.path.join(folder, f)) for f in ("pyproject.toml", "setup.py")):
                raise InvalidLockfile(Text.of("lock.install.no-project", source=source, name=p.name, path=p.url or ""),
                                      hint=Text("lock.install.no-folder.hint"))  # fmt: skip
            continue
        for url in (p.index, p.url):
            direct = p.kind is FileKind.ARCHIVE and url == p.url  # a file:/// wheel named by a direct reference
            local = (direct or in_local_folder(p.url or "", p.index or "")) and (url or "").startswith("file:///")
            if url and not local and not url_allowed(url, named):
                raise InvalidLockfile(
                    Text.of("lock.install.bad-url", source=source, name=p.name, url=shown_url(url)),
                    hint=Text("lock.install.bad-url.hint"),
                )
    if requirements:  # pip reads one --index-url; any other index sits on '#> ' comment lines
        # a direct reference and a local project folder have their URL
        indexed = [p for p in lock.packages if p.kind not in (FileKind.ARCHIVE, FileKind.DIRECTORY)]
        first = indexed and _first_index(lock)
        hidden = next((p for p in indexed if p.index != first), None)
        if hidden is not None:
            raise InvalidLockfile(
                Text.of("lock.install.hidden-index", source=source, name=hidden.name, index=hidden.index[:200]),
                hint=Text("lock.install.hidden-index.hint"),
            )
    missing = lock.missing_hashes() if requirements else ()
    if missing and len(missing) == len(lock.packages):
        raise InvalidLockfile(
            Text.of("lock.install.no-hashes", source=source), hint=Text("lock.install.no-hashes.hint")
        )
    if missing:  # the line that lost its --hash is the one pip would install unchecked
        raise InvalidLockfile(
            Text.of(
                "lock.install.some-hashes", source=source, name=missing[0], count=len(missing), total=len(lock.packages)
            ),
            hint=Text("lock.install.no-hashes.hint"),
        )
    if environment is not None:
        check_environment(lock, source, environment)


def check_environment(lock: Lock, source: str, environment: Mapping[str, str]) -> None:
    """``InvalidLockfile`` unless the lock's ``requires-python`` and ``environments`` hold for the interpreter whose
    marker values are ``environment``."""
    found = environment.get("python_full_version", "")
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    wanted = [(source, lock.requires_python)] if lock.requires_python else []
    wanted += [(f"{source} ({p.name})", p.requires_python) for p in lock.packages if p.requires_python]  # PEP 751
    for where, spec in wanted:
        try:
            ok = SpecifierSet(spec).contains(found, prereleases=True)
        except InvalidSpecifier:
            ok = False
        if not ok:
            raise InvalidLockfile(
                Text.of("lock.install.python-mismatch", source=where, wanted=spec, found=found),
                hint=Text.of("lock.install.python-mismatch.hint", found=environment.get("python_version", found)),
            )
    if lock.environments:
        from packaging.markers import InvalidMarker, Marker

        try:
            ok = any(Marker(m).evaluate(dict(environment)) for m in lock.environments)
        except (InvalidMarker, ValueError, KeyError):
            ok = False
        if not ok:
            where = f"{environment.get('sys_platform', '?')} {environment.get('platform_machine', '?')}, Python {found}"
            raise InvalidLockfile(
                Text.of(
                    "lock.install.environment-mismatch",
                    source=source,
                    wanted=" or ".join(lock.environments),
                    found=where,
                ),
                hint=Text.of("lock.install.python-mismatch.hint", found=environment.get("python_version", found)),
            )


def _first_index(lock: Lock) -> str:
    """The active ``--index-url`` of a requirements lock: the lock's own index, else its first package's."""
    indexes = [p.index for p in lock.packages if p.kind is not FileKind.ARCHIVE]
    return lock.index_url if lock.index_url in indexes else indexes[0]


def _refuse(text: Text) -> InvalidLockfile:
    return InvalidLockfile(text, hint=REGENERATE_HINT)
