"""The distributions installed in a target interpreter's environment. Does I/O: runs that interpreter once.

The target is usually another interpreter (``--python``), so a short script runs in it and prints
JSON: each distribution's name, version, ``.dist-info`` directory, installer and requirements, as
``importlib.metadata`` sees them (the first of a name on ``sys.path`` wins, as for imports and for
pip). For the names asked for it also sends the installed RECORD and the RECORD paths whose file is
missing on disk or has another size (a cheap check for files changed after the install; at most
``_MAX_DAMAGED`` named). The script needs nothing but the standard library and reads at most
``record.MAX_RECORD_BYTES`` of RECORDs in all; what does not fit is sent as no RECORD. A distribution
whose files cannot be read (METADATA not UTF-8, a RECORD csv cannot read) is sent as ``broken`` with its
folder: ``read_installed`` refuses the environment naming it, since pip would trip on it too.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from cudaresolve.core.decode import loads_json
from cudaresolve.core.platforms import canonical_name
from cudaresolve.errors import InvalidInput
from cudaresolve.install.record import MAX_RECORD_BYTES
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["InstalledDist", "read_installed"]

_MAX_DAMAGED: Final = 5
# Runs in the target interpreter: stdin {"record": [names], "limit": bytes, "damaged": n}, stdout JSON.
_SCRIPT: Final = r"""
import csv, json, os, re, sys
sys.path = [p for p in sys.path if p not in ('', os.getcwd())]
import importlib.metadata as m
ask = json.loads(sys.stdin.read())
want, budget, most = set(ask['record']), ask['limit'], ask['damaged']
out, seen = [], set()
for d in m.distributions():
    path = getattr(d, '_path', None)
    try:
        name = d.metadata['Name'] or ''
        key = re.sub(r'[-_.]+', '-', name).lower()
        if not name or key in seen:
            continue
        item = {'name': name, 'version': d.version, 'path': str(path) if path else None,
                'installer': (d.read_text('INSTALLER') or '').strip() or None, 'requires': d.requires or []}
        text = d.read_text('RECORD') if key in want else None
    except Exception as e:
        out.append({'broken': str(path), 'error': ('%s: %s' % (type(e).__name__, e))[:300]})
        continue
    seen.add(key)
    if text is not None and len(text) <= budget:
        budget -= len(text)
        bad = []
        for row in csv.reader(text.splitlines()):
            if len(bad) >= most:
                break
            if len(row) < 3 or not row[2].isdigit():
                continue
            try:
                size = os.stat(d.locate_file(row[0])).st_size
            except OSError:
                size = -1
            if size != int(row[2]):
                bad.append(row[0])
        item['record'], item['damaged'] = text, bad
    out.append(item)
sys.stdout.write(json.dumps(out))
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class InstalledDist:
    """One installed distribution; ``record`` (the installed RECORD's text) and ``damaged`` (RECORD
    paths missing on disk or of another size) only for the names ``read_installed`` was asked for."""

    name: str  # normalized (PEP 503)
    version: str
    path: str | None
    installer: str | None = None
    requires: tuple[str, ...] = ()
    record: str | None = field(default=None, repr=False)
    damaged: tuple[str, ...] = ()


def read_installed(python: str | None, *, records: Iterable[str] = ()) -> dict[str, InstalledDist]:
    """Normalized name -> the distribution installed in ``python``'s environment (None: this
    interpreter's), with the RECORD of each name in ``records``. An interpreter that cannot run or
    answers nonsense is ``InvalidInput``."""
    interpreter = python or sys.executable
    ask = {"record": sorted(canonical_name(n) for n in records), "limit": MAX_RECORD_BYTES, "damaged": _MAX_DAMAGED}
    try:
        done = subprocess.run(
            [interpreter, "-c", _SCRIPT],
            input=json.dumps(ask),
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        found = loads_json(done.stdout)
        if not isinstance(found, list):
            raise ValueError("not a list")
        broken = next((item for item in found if isinstance(item, dict) and "broken" in item), None)
        dists = [_dist(item) for item in found] if broken is None else []
    except (OSError, ValueError, TypeError, KeyError, subprocess.SubprocessError) as exc:
        reason = getattr(exc, "strerror", None) or getattr(exc, "stderr", None) or exc
        raise InvalidInput(
            Text.of("lock.cannot-run-python", python=interpreter, reason=str(reason).strip()[-500:]),
            hint=Text("lock.cannot-run-python.hint"),
        ) from exc
    if broken is not None:
        raise InvalidInput(Text.of("lock.installed.damaged-dist", python=interpreter, path=str(broken["broken"]),
                                   error=str(broken.get("error"))), hint=Text("doctor.damaged-dist.fix"))
    return {d.name: d for d in dists}


def _dist(item: Mapping[str, object]) -> InstalledDist:
    requires = item.get("requires") or []
    damaged = item.get("damaged") or []
    record = item.get("record")
    path = item.get("path")
    installer = item.get("installer")
    if not isinstance(requires, list) or not isinstance(damaged, list):
        raise TypeError("requires and damaged are lists")
    return InstalledDist(
        name=canonical_name(str(item["name"])),
        version=str(item["version"]),
        path=path if isinstance(path, str) else None,
        installer=installer if isinstance(installer, str) else None,
        requires=tuple(str(r) for r in requires),
        record=record if isinstance(record, str) else None,
        damaged=tuple(str(p) for p in damaged),
    )
