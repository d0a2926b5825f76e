"""Hosts -> pools: hosts with the same GPU set, driver, platform and Python, each pool one ``Target``. Pure.

A GPU is named as the inventory spells it and matched with the database's names (``--gpu``'s
rules; a GFD product label's dashes read as spaces); an unknown product falls back to GFD's
compute capability labels. A pool whose GPUs or driver cannot be read keeps its hosts and says
why (``problem``): the plan reports it instead of guessing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.platforms import normalize_platform
from cudaresolve.core.versions import parse_driver, parse_python_version
from cudaresolve.errors import InvalidInput
from cudaresolve.target.build import resolve_gpu
from cudaresolve.target.model import Gpu, Target, hosts_platform
from cudaresolve.text.findings import Finding

if TYPE_CHECKING:
    from collections.abc import Iterable

    from cudaresolve.db.database import CompatDB
    from cudaresolve.fleet.inputs import FleetHost

__all__ = ["MAX_POOLS", "Pool", "make_pools"]

#: The most distinct pools (GPU set, driver, platform, Python) one plan solves for: a fleet of many thousands of
#: hosts has a few dozen.
MAX_POOLS: Final = 1000


@dataclass(frozen=True, slots=True, kw_only=True)
class Pool:
    """Hosts that are one target: ``target`` is None when ``problem`` says why it could not be built."""

    id: str
    hosts: tuple[FleetHost, ...]
    gpus: tuple[str, ...]
    driver: str | None
    platform: str
    python: str
    target: Target | None
    problem: Finding | None = None
    short: tuple[str, ...] = ()  # the GPUs' shortest names (``RTX 5090``), for tables

    @property
    def labels(self) -> tuple[str, ...]:
        """The raw GFD product labels or Slurm gres types of its hosts, in first-seen order."""
        return tuple(dict.fromkeys(h.label for h in self.hosts if h.label))

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(h.origin for h in self.hosts)

    @property
    def gpu_count(self) -> int:
        """GPUs per host (the largest count its hosts report)."""
        return max((h.count for h in self.hosts), default=0)

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "hosts": [h.name for h in self.hosts],
            "gpus": list(self.gpus),
            "gpu_count": self.gpu_count,
            "driver": self.driver,
            "platform": self.platform,
            "python": self.python,
            "problem": self.problem.to_dict() if self.problem else None,
        }


def _gpu(host: FleetHost, spelled: str, db: CompatDB) -> Gpu:
    try:
        return resolve_gpu(spelled, db)
    except InvalidInput:
        if host.cc is None:
            raise
        return resolve_gpu(host.cc, db)


def _resolve(
    host: FleetHost, db: CompatDB, platform: str, python: str
) -> tuple[tuple[Any, ...], Target | None, Finding | None]:
    """(pool key, target, problem) for one host."""
    host_platform, host_python = platform, python
    try:
        host_platform = normalize_platform(host.platform) if host.platform else platform
        host_python = parse_python_version(host.python) if host.python else python
        gpus = tuple(dict.fromkeys(_gpu(host, g, db) for g in host.gpus if g))
        driver = parse_driver(host.driver) if host.driver else None
    except InvalidInput as err:
        found = Finding(code=err.code, text=err.text)
        return (tuple(host.gpus), host.driver, host_platform, host_python), None, found
    if not host.platform:  # a node of Grace superchips (GH200) is aarch64 whatever the plan's default
        host_platform = hosts_platform(gpus, host_platform)
    names = tuple(sorted(g.name for g in gpus))
    key = (names, str(driver) if driver else None, host_platform, host_python)
    target = Target(
        gpus=gpus,
        driver=driver if gpus else None,
        cuda_driver_max=db.max_cuda_for_driver(driver, host_platform) if driver and gpus else None,
        platform=host_platform,
        python=host_python,
        source="fleet",
    )
    return key, target, None


def make_pools(hosts: Iterable[FleetHost], db: CompatDB, *, platform: str, python: str) -> tuple[Pool, ...]:
    """The pools of ``hosts``, largest first (then by GPU names); ``platform`` and ``python`` stand in
    where an inventory does not say. Each distinct host spelling is matched once."""
    groups: dict[tuple[Any, ...], list[FleetHost]] = {}
    built: dict[tuple[Any, ...], tuple[Target | None, Finding | None]] = {}
    seen: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for host in hosts:
        spelling = (host.gpus, host.cc, host.driver, host.platform, host.python)
        if spelling not in seen:
            key, target, problem = _resolve(host, db, platform, python)
            seen[spelling] = key
            built.setdefault(key, (target, problem))
        groups.setdefault(seen[spelling], []).append(host)
    if len(groups) > MAX_POOLS:  # each pool is one solve (about 10 ms): the bound on a fleet file's work
        from cudaresolve.errors import InvalidInput
        from cudaresolve.text.model import Text

        raise InvalidInput(Text.of("fleet.too-many-pools", count=len(groups), limit=MAX_POOLS),
                           hint=Text("fleet.too-many-pools.hint"))  # fmt: skip
    order = sorted(groups, key=lambda k: (-len(groups[k]), str(k)))

    def short(name: str) -> str:
        model = db.find_gpu(name)
        return min((model.name, *model.aliases), key=len) if model else name

    pools = []
    for number, key in enumerate(order, 1):
        target, problem = built[key]
        names, driver, pool_platform, pool_python = key
        pools.append(
            Pool(
                id=f"pool-{number}",
                hosts=tuple(groups[key]),
                gpus=tuple(names),
                driver=driver,
                platform=pool_platform,
                python=pool_python,
                target=target,
                problem=problem,
                short=tuple(short(n) for n in names) if target is not None else tuple(names),
            )
        )
    return tuple(pools)
