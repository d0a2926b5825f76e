"""Which program installs the verified files into the target environment, and its command lines. Pure, plus
looking for uv and pip.

The files are already fetched and hash-checked (``wheelcache``), and nothing is resolved, so the
installer only unpacks wheels: ``--no-deps``, no index, each named file replacing whatever is
installed under its name. Chosen in this order:

1. uv (``uv`` on PATH, else the ``uv`` package installed beside cudaresolve): ``uv pip install
   --python PY --no-deps --no-index --offline --no-config [--reinstall-package NAME...] FILE...``, in one
   run for every file. The fastest real installer (it links from its own cache, in parallel), and it
   needs no pip in the target, so a ``uv venv`` works. Only the names installed now that are to be
   replaced are reinstalled by name: ``--reinstall`` implies ``--refresh``, which made uv unpack
   every wheel again into its cache on each run.
2. pip of the target interpreter, when it has one: ``PY -m pip install --no-deps --no-index
   --force-reinstall FILE...``, with no pip setting that would install elsewhere (``--target``, ``--prefix``,
   ``--root``, ``--user`` from the environment or a configuration file: ``_PIP_HERE``).
3. pip of the interpreter running cudaresolve, pointed at the target with ``--python PY`` (pip
   22.3 and later): an environment without pip works without uv too.

``CUDARESOLVE_INSTALLER=pip`` skips uv (``=uv`` requires it). The ``installer`` library was not
chosen: it writes no ``INSTALLER`` of its own liking, compiles byte-code one file at a time, and
would be one more dependency where uv or pip is nearly always at hand.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from cudaresolve.errors import InvalidInput
from cudaresolve.install.pip import PipCommand
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from cudaresolve.lock.model import Lock
    from cudaresolve.resolve.model import LockedPackage

__all__ = ["CHOICE_ENV", "OWN", "Installer", "choose_installer", "find_uv", "folder_index", "wanted_installer"]

#: The environment variable that picks the installer (``uv`` or ``pip``; unset: uv when present).
CHOICE_ENV: Final = "CUDARESOLVE_INSTALLER"
#: ``CHOICE_ENV``'s value for the in-process installer whatever the lock (``inprocess``).
OWN: Final = "cudaresolve"


@dataclass(frozen=True, slots=True, kw_only=True)
class Installer:
    """``kind`` ("uv", "pip", or "none": no command at hand, ``choose_installer``); ``head``: the argv that
    runs it for the target (``uv pip`` with ``--python PY`` following the verb, or ``PY -m pip``, or
    ``THIS -m pip --python PY``); ``pip``:
    how pip is run for what only pip does here (building a locked sdist, downloading a file the lock
    gives no URL for), empty when no pip can reach the target."""

    kind: str
    head: tuple[str, ...]
    python: str
    pip: tuple[str, ...] = ()

    def install(
        self, files: Sequence[Path], *, fresh: bool = False, replacing: Sequence[str] | None = None
    ) -> PipCommand:
        """Install exactly ``files`` (wheels), replacing what is installed under their names. ``replacing``: the
        names installed now that are to be replaced (None: any of them may be); uv is told to reinstall only
        those (``--reinstall-package``: ``--reinstall`` would also make it unpack every wheel of its cache
        anew). ``fresh``: an installed file was changed in place, so uv unpacks the wheels anew instead of
        linking from its cache (an edit through a hard link changed the cached copy too)."""
        paths = tuple(str(f) for f in files)
        if not self.head:
            raise _none_at_hand(self.python, "")
        if self.kind == "uv":
            again = ("--reinstall",) if replacing is None else tuple(
                word for name in replacing for word in ("--reinstall-package", name))
            argv = (*self.head, "install", "--python", self.python, *_UV_EXACT, *again,
                    *(("--no-cache",) if fresh else ()), *paths)
        else:
            argv = (*self.head, "install", "--no-deps", "--no-index", "--force-reinstall", *paths)
            return PipCommand(argv=argv, index="", env=_PIP_HERE)
        return PipCommand(argv=argv, index="")

    def install_folders(self, folders: Sequence[LockedPackage], *, index: str | None = None) -> PipCommand:
        """Build and install the local project ``folders`` (``[packages.directory]``, their ``url`` a ``file://``
        URL), each in place (``-e``) when locked ``editable``, following no dependency. Their build requirements
        come from ``index`` (``folder_index``; None: the installer's default), into an isolated build
        environment, as ``uv pip sync`` builds them."""
        from cudaresolve.resolve.direct import local_directory

        if not self.head:
            raise _none_at_hand(self.python, "")
        words: list[str] = []
        for folder in folders:
            path = local_directory(folder.url or "") or folder.url or ""
            words += ["-e", path] if folder.editable else [path]
        indexed = ("--index-url", index) if index else ()
        if self.kind == "uv":
            argv = (*self.head, "install", "--python", self.python, "--no-deps", "--no-config", *indexed, *words)
        else:
            argv = (*self.head, "install", "--no-deps", *indexed, *words)
        return PipCommand(argv=argv, index=index or "")

    def uninstall(self, names: Sequence[str]) -> PipCommand:
        """Remove the distributions ``names``."""
        if not self.head:
            raise _none_at_hand(self.python, "")
        if self.kind == "uv":
            return PipCommand(argv=(*self.head, "uninstall", "--python", self.python, "--no-config", *names), index="")
        return PipCommand(argv=(*self.head, "uninstall", "-y", *names), index="")


_UV_EXACT: Final = ("--no-deps", "--no-index", "--offline", "--no-config")
#: pip's settings that would put the files somewhere else than the target environment, made empty (pip reads an
#: empty one as unset), and no configuration file read (where ``target``, ``prefix``, ``root`` or ``user`` may be
#: set): as uv's ``--no-config``, the verified wheels go into ``--python``'s environment, nowhere else.
_PIP_HERE: Final = (("PIP_CONFIG_FILE", os.devnull), ("PIP_TARGET", ""), ("PIP_PREFIX", ""), ("PIP_ROOT", ""),
                    ("PIP_USER", "0"))


def folder_index(lock: Lock) -> str | None:
    """The index a local project folder's build requirements come from: the lock's ``index-url`` when it is the
    index of its ordinary packages; not when it is a variant's index (its packages carry the variant's local
    version, ``2.7.1+cu128``: no build backend there) or the index of none of them (a set with no GPU build),
    then the index most of the other packages come from; None: the installer's own default."""
    from collections import Counter

    own = lock.index_url
    served = [p for p in lock.packages if p.index]  # a folder's or a direct reference's is ""
    held = [p for p in served if p.index == own]
    variant = bool(lock.variant) and any(p.version.endswith(f"+{lock.variant}") for p in held)
    others = Counter(p.index for p in served if p.index != own)
    if (own and held and not variant) or not others:
        return own or None
    return others.most_common(1)[0][0]


def choose_installer(
    python: str, *, has_pip: bool, env: Mapping[str, str] | None = None, needed: bool = True, look: bool = True
) -> Installer:
    """The installer for ``python``'s environment (module docstring); ``has_pip``: whether the target
    has pip. None at hand is ``InvalidInput``; unless ``needed`` (the wheels are installed in this process:
    ``inprocess``), then an installer of kind ``none`` that raises it only when a command of it is asked for
    (a locked sdist or folder to build). Not ``look``: that one at once, uv and pip not looked for (nothing
    will ask for a command)."""
    env = os.environ if env is None else env
    wanted = wanted_installer(env)
    if wanted not in ("", "uv", "pip", OWN):  # a typo never silently means "whichever is present"
        raise InvalidInput(Text.of("lock.install.bad-installer", variable=CHOICE_ENV, value=wanted[:40]),
                           hint=Text.of("lock.install.bad-installer.hint", variable=CHOICE_ENV))
    if not look and not needed:
        return Installer(kind="none", head=(), python=python)
    own_pip = (sys.executable, "-m", "pip", "--python", python) if _has_pip() else ()
    pip = (python, "-m", "pip") if has_pip else own_pip
    uv = find_uv(env) if wanted != "pip" else None
    if uv is not None:
        return Installer(kind="uv", head=(uv, "pip"), python=python, pip=pip)
    if pip and wanted != "uv":
        return Installer(kind="pip", head=pip, python=python, pip=pip)
    if not needed:
        return Installer(kind="none", head=(), python=python, pip=pip)
    raise _none_at_hand(python, wanted)


def wanted_installer(env: Mapping[str, str] | None = None) -> str:
    """``CHOICE_ENV`` as given (None: ``os.environ``), trimmed and lower-cased; "" when unset."""
    return (os.environ if env is None else env).get(CHOICE_ENV, "").strip().lower()


def _none_at_hand(python: str, wanted: str) -> InvalidInput:
    return InvalidInput(Text.of("lock.install.no-installer", python=python, wanted=wanted or "uv, pip"),
                        hint=Text("lock.install.no-installer.hint"))


def _has_pip() -> bool:
    """Whether this interpreter can run ``-m pip``: a ``pip`` package on its ``sys.path``, looked for on disk.
    Not ``importlib.util.find_spec``: it holds the global import lock while the path hooks run, and setuptools'
    ``_distutils_hack`` hook imports a module there for the name ``pip``, which deadlocks against the thread that
    loads the database (``install.background``) when that thread is importing the same module."""
    return any(os.path.isfile(os.path.join(folder or ".", "pip", "__main__.py")) for folder in sys.path)


def find_uv(env: Mapping[str, str] | None = None) -> str | None:
    """uv on PATH, else the binary of the ``uv`` package installed beside cudaresolve, else None."""
    import shutil  # here: an install that links every wheel looks for no tool

    env = os.environ if env is None else env
    found = shutil.which("uv", path=env.get("PATH"))
    if found:
        return found
    try:
        from uv import find_uv_bin  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        return str(find_uv_bin())
    except (FileNotFoundError, OSError):
        return None
