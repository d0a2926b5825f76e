"""``cudaresolve plan`` as a user runs it: read the inventories, pool, plan, write one lock per group. Does I/O.

Each group's lock is made by ``lock.flow`` for the group's joined target, exactly as ``lock`` makes
one. ``-o DIR`` writes ``pylock.group-N.toml`` for a complete lock (a PEP 751 name), else
``group-N.requirements.txt`` (the group's GPU stack, its header saying it is not a complete lock); a file
there that cudaresolve did not generate is never overwritten.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

from cudaresolve.errors import InvalidInput
from cudaresolve.text.findings import warning
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping

    from cudaresolve.db.database import CompatDB
    from cudaresolve.fleet.plan import Plan
    from cudaresolve.target.model import Target

__all__ = ["PlanRequest", "run_plan"]

#: Node names a warning lists before it stops (the count is always given).
_SHOWN_NODES: Final = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanRequest:
    requirements: tuple[str, ...]
    sources: tuple[str, ...]
    python: str | None = None
    platform: str | None = None
    driver_map: str | None = None
    default_driver: str | None = None
    offline: bool = False
    compat: str | None = None
    output_dir: str | None = None


def run_plan(request: PlanRequest) -> Plan:
    from cudaresolve.core.platforms import normalize_platform
    from cudaresolve.core.versions import parse_python_version
    from cudaresolve.db.database import load_compat
    from cudaresolve.fleet.inputs import parse_driver_map, read_inventory, read_text_file
    from cudaresolve.fleet.plan import make_plan, parse_default_driver
    from cudaresolve.fleet.pools import make_pools
    from cudaresolve.target.build import this_platform, this_python

    if not request.requirements:
        raise InvalidInput(Text("lock.no-requirements"), hint=Text("lock.no-requirements.hint"))
    db = load_compat(request.compat)
    drivers = {}
    if request.driver_map:
        drivers = parse_driver_map(read_text_file(request.driver_map), request.driver_map)
    drivers.update({k: v for k, v in parse_default_driver(request.default_driver).items() if k not in drivers})
    inventory = read_inventory(request.sources, drivers=drivers)
    if not inventory.hosts:
        raise InvalidInput(Text("fleet.no-hosts"), hint=Text("fleet.input.hint"))
    platform = normalize_platform(request.platform) if request.platform else this_platform()
    python = parse_python_version(request.python) if request.python else this_python()
    pools = make_pools(inventory.hosts, db, platform=platform, python=python)
    notices = []
    if inventory.skipped:
        notices.append(warning("fleet-nodes-skipped", "fleet.nodes-skipped", count=inventory.skipped))
    if inventory.untyped:
        shown = inventory.untyped[:_SHOWN_NODES]
        notices.append(warning("fleet-gres-untyped", "fleet.gres-untyped", count=len(inventory.untyped), nodes=shown))
    if inventory.repeated:
        repeated = inventory.repeated
        notices.append(warning("fleet-node-repeated", "fleet.node-repeated", count=len(repeated),
                               nodes=repeated[:_SHOWN_NODES]))  # fmt: skip
    kubectl = sum(1 for h in inventory.hosts if h.origin == "kubectl")
    if kubectl:
        notices.append(warning("gfd-one-model", "fleet.gfd-one-model", count=kubectl))
    no_driver = [p.id for p in pools if p.target is not None and not p.target.is_cpu and p.target.driver is None]
    if no_driver:
        notices.append(warning("driver-unknown", "fleet.driver-unknown", pools=tuple(no_driver)))

    mirrors, package_indexes = _index_settings(request, db)

    def finish(target: Target):  # type: ignore[no-untyped-def]
        from cudaresolve.lock.flow import LockInputs, resolve_inputs

        return resolve_inputs(LockInputs(requirements=request.requirements, target=target, db=db,
                                         offline=request.offline, mirrors=mirrors, package_indexes=package_indexes))

    plan = make_plan(pools, request.requirements, db, finish=finish, notices=notices)
    if request.output_dir is not None:
        plan = replace(plan, written=_write_groups(plan, request.output_dir, mirrors))
    return plan


def _index_settings(request: PlanRequest, db: CompatDB) -> tuple[dict[str, str], Mapping[str, str]]:
    """The indexes a group's lock reads, as ``lock`` reads them in this folder: the user's default index (pip's and
    uv's settings, ``[tool.cudaresolve] index-url``) and the project's ``index-mirror`` and ``package-index``; never
    PyPI or the PyTorch index behind a mirror the user named."""
    from cudaresolve.lock.project import load_project
    from cudaresolve.lock.request import LockRequest, all_mirrors
    from cudaresolve.target.options import TargetOptions

    asked = LockRequest(requirements=request.requirements, target=TargetOptions(), compat=request.compat,
                        offline=request.offline)
    project = load_project(asked.project, pytorch_root=db.pytorch_index_root)
    return all_mirrors(asked, project, db), project.package_indexes


def _write_groups(plan: Plan, folder: str, mirrors: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Each group's lock into ``folder``; ``mirrors``: each package's ``index`` is the one that served it, as
    ``lock`` writes it."""
    from cudaresolve.lock.lockfile import pylock_problem, render_lock
    from cudaresolve.lock.model import lock_from_solution
    from cudaresolve.lock.output import check_default_free, write_output

    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(
            Text.of("lock.output.cannot-write", path=folder, reason=str(exc.strerror or exc)),
            hint=Text("lock.output.cannot-write.hint"),
        ) from exc
    rendered = []
    for group in plan.groups:  # every file rendered and every path checked before the first is written
        frozen = lock_from_solution(group.solution, mirrors=mirrors)
        whole = group.solution.complete and pylock_problem(frozen) is None
        name = f"pylock.group-{group.number}.toml" if whole else f"group-{group.number}.requirements.txt"
        path = os.path.join(folder, name)
        check_default_free(path)
        rendered.append((path, render_lock(path, frozen, fmt="pylock" if whole else "requirements")))
    for path, text in rendered:
        write_output(path, text)
    return tuple(path for path, _ in rendered)
