"""One plan for a fleet: the fewest locks that run on every pool, and the ways out for the rest. Does I/O
only through ``lock.flow`` (index metadata for the groups' locks, unless offline) and ``write_group_locks``.

How a plan is made:

1. Each pool is solved alone with the database (``resolve.solve``, the solver ``lock`` uses). A pool
   no set fits is *blocked*; its findings are the solver's own.
2. The other pools are grouped greedily, largest pool first: a pool joins a group when one set
   runs on the group with it. A group is solved as one target that joins its pools: every GPU of
   every pool (each judged against its own host's driver for driver <-> GPU support), the lowest
   driver of the group (a variant that driver runs, every higher driver runs), one platform and
   Python. The set found is then checked on each member pool alone, pinned build by build, so a
   wrong merge is never emitted. When every pool fits one group, that is the one lock.
3. A blocked pool, or a pool left outside the largest group, gets the lowest driver with which the
   largest group's set would run on it, found by trying the drivers the database names, lowest
   first; none when the set has no code for its GPUs.
4. Each group's packages come from ``lock.flow.resolve_inputs`` (the whole environment online; the
   database's answer, marked incomplete, offline).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from cudaresolve.core.archs import format_arch_list
from cudaresolve.core.versions import DriverVersion, parse_driver
from cudaresolve.errors import NoSolution
from cudaresolve.target.model import Target
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from cudaresolve.core.archs import ComputeCapability
    from cudaresolve.db.database import CompatDB
    from cudaresolve.fleet.pools import Pool
    from cudaresolve.resolve.model import Solution
    from cudaresolve.text.findings import Finding, Notice

__all__ = ["Blocked", "Group", "Plan", "join_targets", "make_plan", "pins"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Group:
    """Pools one lock runs on, and that lock's solution."""

    number: int
    pools: tuple[Pool, ...]
    solution: Solution

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": f"group-{self.number}",
            "pools": [p.id for p in self.pools],
            "hosts": sum(len(p.hosts) for p in self.pools),
            "variant": self.solution.variant,
            "index_url": self.solution.index_url,
            "complete": self.solution.complete,
            "packages": [{"name": p.name, "version": p.version, "index": p.index} for p in self.solution.packages],
            "warnings": [w.to_dict() for w in self.solution.warnings],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Blocked:
    """A pool no set fits, or one outside the largest group, with why and the driver that would let it join."""

    pool: Pool
    reasons: tuple[Finding, ...]
    upgrade: DriverVersion | None = None  # the driver nearest its own that runs the largest group's set here
    joins: int | None = None  # the group that upgrade joins
    older: bool = False  # ``upgrade`` is older than the pool's driver (its GPUs' last branch is behind it)
    apart: bool = False  # its platform or Python is not the largest group's: no driver joins them (``join_targets``)

    def ways_out(self) -> list[dict[str, Any]]:
        if self.upgrade is None or self.joins is None:
            return []
        if self.older:
            branch = self.upgrade.branch
            text = Text.of("fleet.way-out.older", pool=self.pool.id, driver=str(self.upgrade), branch=branch,
                           group=self.joins)  # fmt: skip
            return [{"spec": f"driver R{branch}", "message": text}]
        text = Text.of("fleet.way-out.upgrade", pool=self.pool.id, driver=str(self.upgrade), group=self.joins)
        return [{"spec": f"driver>={self.upgrade}", "message": text}]

    def to_dict(self) -> dict[str, Any]:
        return {
            "pool": self.pool.id,
            "reasons": [r.to_dict() for r in self.reasons],
            "ways_out": self.ways_out(),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    pools: tuple[Pool, ...]
    groups: tuple[Group, ...]
    blocked: tuple[Blocked, ...]
    upgrades: tuple[Blocked, ...]  # pools with a set of their own, why group 1's is not it, the driver that joins it
    arch_list: str
    notices: tuple[Notice, ...] = field(default=())
    written: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "pools": [p.to_dict() for p in self.pools],
            "groups": [g.to_dict() for g in self.groups],
            "blocked": [b.to_dict() for b in self.blocked],
            "upgrades": [b.to_dict() for b in self.upgrades],
            "arch_list": self.arch_list,
            "warnings": [n.to_dict() for n in self.notices],
            "written": list(self.written),
        }


def pins(solution: Solution) -> tuple[str, ...]:
    """The solution as exact requirements (local versions included), to check it on another target."""
    return tuple(f"{p.name}=={p.version}" for p in solution.packages)


def join_targets(targets: Sequence[Target], db: CompatDB) -> Target | None:
    """One target standing for several pools (module docstring, step 2); None when they differ in
    platform or Python, which no single lock spans."""
    first = targets[0]
    if any(t.platform != first.platform or t.python != first.python for t in targets):
        return None
    if all(t.is_cpu for t in targets):
        return first
    gpus = tuple(dict.fromkeys(replace(g, driver=t.driver) for t in targets for g in t.gpus))
    drivers = [t.driver for t in targets if t.driver is not None and not t.is_cpu]
    lowest = min(drivers) if drivers else None
    return Target(
        gpus=gpus,
        driver=lowest,
        cuda_driver_max=db.max_cuda_for_driver(lowest, first.platform) if lowest else None,
        platform=first.platform,
        python=first.python,
        source="fleet",
    )


class _Solver:
    """The database solves of one plan, memoised (a group is tried once)."""

    def __init__(self, requirements: Sequence[str], db: CompatDB) -> None:
        self.requirements = tuple(requirements)
        self.db = db
        self._seen: dict[Any, Solution | NoSolution] = {}

    def solve(self, target: Target, requirements: Sequence[str] | None = None) -> Solution | NoSolution:
        from cudaresolve.resolve.solve import solve

        reqs = tuple(requirements or self.requirements)
        key = (target, reqs)
        if key not in self._seen:
            try:
                self._seen[key] = solve(reqs, self.db, target).solution
            except NoSolution as err:
                self._seen[key] = err
        return self._seen[key]

    def runs_on(self, solution: Solution, target: Target) -> bool:
        """Whether exactly ``solution``'s builds resolve for ``target`` (the per-pool check)."""
        return not isinstance(self.solve(target, (*self.requirements, *pins(solution))), NoSolution)

    def why_not(self, solution: Solution, target: Target) -> tuple[Finding, ...]:
        """The solver's findings on why exactly ``solution``'s builds do not resolve for ``target``; () when they do."""
        found = self.solve(target, (*self.requirements, *pins(solution)))
        return tuple(found.findings) if isinstance(found, NoSolution) else ()

    def group(self, pools: Sequence[Pool]) -> Solution | None:
        targets = [p.target for p in pools if p.target is not None]
        joined = join_targets(targets, self.db)
        if joined is None:
            return None
        found = self.solve(joined)
        if isinstance(found, NoSolution):
            return None
        return found if all(self.runs_on(found, t) for t in targets) else None


def _candidate_drivers(db: CompatDB, platform: str, above: DriverVersion | None) -> list[DriverVersion]:
    """Every driver the database names as a floor (CUDA releases, GPU architectures), ascending."""
    found = set()
    for release in db.cuda:
        for number in (release.min_driver(platform), release.minor_compat_driver(platform)):
            found.add(number)
    for row in db.driver_gpus:
        if row.min_driver is not None:
            found.add(row.min_driver)
    return sorted(d for d in found if above is None or d > above)


def _upgrade(solver: _Solver, pool: Pool, main: Group) -> tuple[DriverVersion, bool] | None:
    """The driver nearest the pool's own with which group ``main``'s set runs on ``pool``, and whether it is older:
    the lowest newer one, else the newest older one (a driver past its GPUs' last branch: a P100 on R590 runs a set
    on R580); None when no driver makes it run, when the pool runs it already (no driver to change), or when the
    pool's platform or Python is not the group's (no single lock spans two: ``join_targets``)."""
    if pool.target is None or pool.target.is_cpu or _apart(pool, main):
        return None
    solution = main.solution
    if solver.runs_on(solution, pool.target):
        return None
    current = pool.target.driver
    every = _candidate_drivers(solver.db, pool.platform, None)
    newer = [d for d in every if current is None or d > current]
    older = [d for d in reversed(every) if current is not None and d < current]
    for is_older, drivers in ((False, newer), (True, older)):
        for driver in drivers:
            target = replace(
                pool.target, driver=driver, cuda_driver_max=solver.db.max_cuda_for_driver(driver, pool.platform)
            )
            if solver.runs_on(solution, target):
                return driver, is_older
    return None


def _apart(pool: Pool, group: Group) -> bool:
    """Whether ``pool`` is on another platform or Python than ``group``'s pools, which no single lock spans."""
    first = next((p.target for p in group.pools if p.target is not None), None)
    if pool.target is None or first is None:
        return False
    return (pool.target.platform, pool.target.python) != (first.platform, first.python)


def make_plan(
    pools: Sequence[Pool],
    requirements: Sequence[str],
    db: CompatDB,
    *,
    finish: Any = None,
    notices: Sequence[Notice] = (),
) -> Plan:
    """The plan for ``pools`` (module docstring). ``finish(target) -> Solution`` makes each group's
    final answer (``lock.flow``); without it the database's answer stands."""
    solver = _Solver(requirements, db)
    blocked_reasons: dict[str, tuple[Finding, ...]] = {}
    viable: list[Pool] = []
    for pool in pools:
        if pool.target is None:
            blocked_reasons[pool.id] = (pool.problem,) if pool.problem else ()
            continue
        alone = solver.solve(pool.target)
        if isinstance(alone, NoSolution):
            blocked_reasons[pool.id] = tuple(alone.findings)
        else:
            viable.append(pool)
    members_of: list[list[Pool]] = []
    remaining = list(viable)
    if remaining and solver.group(remaining) is not None:
        members_of.append(remaining)
        remaining = []
    while remaining:
        members = [remaining[0]]
        for pool in remaining[1:]:
            if solver.group([*members, pool]) is not None:
                members.append(pool)
        members_of.append(members)
        remaining = [p for p in remaining if p not in members]
    groups = []
    for number, members in enumerate(members_of, 1):
        found = solver.group(members)
        assert found is not None  # every group was formed by a successful solve
        joined = join_targets([p.target for p in members if p.target is not None], db)
        solution = finish(joined) if finish is not None and joined is not None else found
        groups.append(Group(number=number, pools=tuple(members), solution=solution))
    blocked, upgrades = [], []
    for pool in pools:
        change = _upgrade(solver, pool, groups[0]) if groups else None
        upgrade, older = change if change is not None else (None, False)
        if pool.id in blocked_reasons:
            apart = bool(groups) and _apart(pool, groups[0])
            blocked.append(Blocked(pool=pool, reasons=blocked_reasons[pool.id], upgrade=upgrade, joins=1, older=older,
                                   apart=apart))  # fmt: skip
        elif groups and pool not in groups[0].pools and pool.target is not None:
            apart = _apart(pool, groups[0])  # why group 1's lock is not this pool's: its platform, or the solver's word
            reasons = () if apart else solver.why_not(groups[0].solution, pool.target)
            upgrades.append(Blocked(pool=pool, reasons=reasons, upgrade=upgrade, joins=1, older=older, apart=apart))
    ccs = {g.cc for p in pools if p.target is not None for g in p.target.gpus}
    return Plan(
        pools=tuple(pools),
        groups=tuple(groups),
        blocked=tuple(blocked),
        upgrades=tuple(upgrades),
        arch_list=format_arch_list(sorted(ccs)) if ccs else "",
        notices=(*notices, *_no_one_toolkit(db, ccs)),
    )


def _no_one_toolkit(db: CompatDB, ccs: set[ComputeCapability]) -> list[Notice]:
    """A ``fleet-arch-list-split`` warning when no CUDA toolkit compiles every SM of the fleet's arch list (sm_37
    needs CUDA 11.x at most, sm_103 CUDA 12.9 at least: ``[[cuda]] nvcc-sm``), so no one source build covers it."""
    from cudaresolve.db.toolkits import toolkit_gap
    from cudaresolve.text.findings import warning

    best, left = toolkit_gap(db, ccs)
    if not left:
        return []
    return [warning("fleet-arch-list-split", "fleet.arch-list-split", cuda=str(best.version) if best else "-",
                    missing=format_arch_list(left))]  # fmt: skip


def parse_default_driver(text: str | None) -> Mapping[str, str]:
    """``--driver`` on ``plan``: the driver of every node whose inventory and ``--driver-map`` name none."""
    return {"*": str(parse_driver(text))} if text else {}
