"""Remove an installed distribution by its RECORD. Does I/O: removes files in the target environment.

``remove`` deletes what an installed distribution's RECORD lists, only inside ``inside`` (the environment's
folders), and the folders left empty; the byte-code of each ``.py`` removed goes with it. The counterpart of
``link``, which places a wheel's files.
"""

from __future__ import annotations

import contextlib
import csv
import os
from typing import TYPE_CHECKING

from cudaresolve.core.files import remove_tree
from cudaresolve.install.record import MAX_RECORD_BYTES

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["remove"]


def _venv_own(path: str, at_home: bool) -> bool:
    """The environment's own interpreter, activation scripts or ``pyvenv.cfg`` (``at_home``: directly in one of the
    environment's folders), which a RECORD may list (a stray distribution's, written by hand) but no distribution
    installed: never removed, as no wheel may replace them."""
    from cudaresolve.install.wheel_members import RESERVED

    name, folder = os.path.basename(path), os.path.basename(os.path.dirname(path))
    return (name == "pyvenv.cfg" and at_home) or (folder in ("bin", "Scripts") and RESERVED.match(name) is not None)


def remove(dist_info: str, record: str | None, inside: Sequence[str]) -> None:
    """Remove the distribution whose metadata is ``dist_info`` (``record``: its RECORD's text): each listed file
    inside one of the ``inside`` folders, the byte-code of each ``.py`` among them, the folders left empty (up to
    those), then the metadata itself. An ``.egg-info`` folder lists its files in ``installed-files.txt``,
    relative to itself; an ``.egg-info`` file lists none. A file that cannot be removed is left."""
    base = os.path.dirname(dist_info)
    if record is None and dist_info.endswith(".egg-info") and os.path.isdir(dist_info):
        base, record = dist_info, _listed(os.path.join(dist_info, "installed-files.txt"))
    homes = tuple(os.path.join(os.path.realpath(f), "") for f in inside)
    real: dict[str, str] = {}  # a folder's real path, found once
    emptied: set[str] = set()
    try:
        rows = list(csv.reader((record or "").splitlines()))
    except csv.Error:
        rows = []
    for row in rows:
        if not row or not row[0]:
            continue
        path = os.path.normpath(os.path.join(base, row[0]))
        folder = os.path.dirname(path)
        if folder not in real:
            real[folder] = os.path.join(os.path.realpath(folder), "")
        if not real[folder].startswith(homes) or os.path.islink(folder) or _venv_own(path, real[folder] in homes):
            continue
        for gone in (path, *_bytecode(path)):
            try:
                os.unlink(gone)
            except OSError:  # not there, a folder, not ours to remove: left
                continue
            emptied.add(os.path.dirname(gone))
    if os.path.isdir(dist_info) and not os.path.islink(dist_info):
        remove_tree(dist_info)  # as deep as a wheel made it: shutil.rmtree recurses per level
    else:
        with contextlib.suppress(OSError):
            os.unlink(dist_info)
    tops = {h.rstrip(os.sep) for h in homes}
    for folder in sorted(emptied, key=len, reverse=True):
        while os.path.realpath(folder) not in tops and os.path.realpath(folder).startswith(homes):
            try:
                os.rmdir(folder)
            except OSError:
                break
            folder = os.path.dirname(folder)


def _listed(path: str) -> str:
    """An ``installed-files.txt`` as RECORD text (one path per row); empty when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as handle:
            return "".join(f'"{line.strip()}"\n' for line in handle.read(MAX_RECORD_BYTES).splitlines()
                           if line.strip() and '"' not in line)
    except (OSError, UnicodeDecodeError):
        return ""


def _bytecode(path: str) -> list[str]:
    if not path.endswith(".py"):
        return []
    cache = os.path.join(os.path.dirname(path), "__pycache__")
    stem = os.path.basename(path)[:-3] + "."
    try:
        return [os.path.join(cache, n) for n in os.listdir(cache) if n.startswith(stem) and n.endswith(".pyc")]
    except OSError:
        return []
