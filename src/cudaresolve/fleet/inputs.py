"""Fleet inventories -> ``FleetHost`` values. Pure, except ``read_inventory`` (reads files, bounded).

Four formats, recognised from the content, never from the file name:

- a host file (``cudaresolve detect --json``): a JSON object with ``target`` (or the bare target);
- ``kubectl get nodes -o json``: a JSON ``List``/``NodeList`` of ``Node`` objects (or one Node),
  read from the NVIDIA GPU Feature Discovery labels (``nvidia.com/gpu.product``, ``gpu.count``,
  ``gpu.compute.major``/``.minor``, ``cuda.driver-version.full`` or its parts, or the deprecated
  ``cuda.driver.major``/``.minor``/``.rev``); nodes without GPU labels are left out and counted;
- ``scontrol show node``: one ``NodeName=... Gres=gpu:TYPE:N ...`` line per node (``--oneliner``), or
  a ``NodeName=`` line and indented lines under it (the default); the driver comes from the user's map
  (``--driver-map``), as Slurm records none;
- a CSV inventory with a header naming at least a host and a GPU column.

GFD labels one GPU model per node, even on a node with two models: every kubectl host carries
that caveat as a note, so the plan can say it.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import os
import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.decode import TooDeep, loads_json
from cudaresolve.core.files import NotRegularFile, read_regular_bounded
from cudaresolve.errors import InvalidInput
from cudaresolve.lock.output import GENERATED_MARK
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = [
    "MAX_CONTAINERS",
    "MAX_GPU_COUNT",
    "MAX_HOSTS",
    "MAX_INVENTORY_BYTES",
    "MAX_LINES",
    "FleetHost",
    "Inventory",
    "gfd_product",
    "gpu_count",
    "parse_driver_map",
    "parse_inventory",
    "read_inventory",
]

#: One inventory file at most (a 10,000-node ``kubectl get nodes -o json`` is about 60 MB).
MAX_INVENTORY_BYTES: Final = 256 * 1024 * 1024
#: Hosts read in one plan, all files together.
MAX_HOSTS: Final = 200_000
#: Lines of one text inventory (a CSV or Slurm file: a host a line, with room for comments), and JSON objects and
#: arrays in one JSON inventory (a kubectl node is about a hundred): counted before any is made, so that a file of
#: tiny rows under the byte bound cannot make tens of millions of objects (a 250 MB file had made 3 GB).
MAX_LINES: Final = 1_000_000
MAX_CONTAINERS: Final = 2_000_000
#: Files read from one directory given to ``--from``.
MAX_FILES_PER_DIR: Final = 10_000

_GFD: Final = "nvidia.com/"
_PRODUCT_SUFFIX = re.compile(r"(-SHARED|-MIG-[A-Za-z0-9.+-]*)$")
_GRES = re.compile(r"^gpu:(?P<type>[^:(,]+)(?::(?P<count>[0-9]+))?")
_HINT: Final = Text("fleet.input.hint")
#: A node's machine as ``uname -m`` or Docker/Kubernetes spell it -> the wheel platform's machine.
_MACHINES: Final = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
#: How far into a file the generated-by mark is looked for (lock files carry it in their header).
_HEADER_CHARS: Final = 4096


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetHost:
    """One node as an inventory describes it: GPU models as given (names, or ``8.6`` capabilities), how
    many GPUs, the driver text, platform and Python when the inventory says, and where it came from."""

    name: str
    gpus: tuple[str, ...]  # one entry per distinct model, as the inventory spells it
    count: int = 0
    driver: str | None = None
    platform: str | None = None
    python: str | None = None
    origin: str = "hosts"  # "hosts", "kubectl", "slurm", "csv"
    label: str | None = None  # the raw GFD product label (with -SHARED/-MIG-...) or Slurm gres type
    cc: str | None = None  # GFD's compute capability labels, used when the product name is unknown
    features: tuple[str, ...] = ()  # Slurm AvailableFeatures


@dataclass(frozen=True, slots=True, kw_only=True)
class Inventory:
    """Hosts read from every ``--from``, and what was left out: nodes without GPU labels (``skipped``), Slurm
    nodes whose ``Gres=gpu:N`` names no GPU type (``untyped``, their names), and node names given more than once
    (``repeated``)."""

    hosts: tuple[FleetHost, ...]
    skipped: int = 0
    untyped: tuple[str, ...] = ()
    repeated: tuple[str, ...] = ()  # names given for more than one node (an exact repeat is kept once)


def gfd_product(nvml_name: str) -> str:
    """The ``nvidia.com/gpu.product`` label GFD writes for an NVML name: characters outside
    ``[A-Za-z0-9-_. ]`` removed, each run of whitespace turned into ``-``."""
    kept = re.sub(r"[^A-Za-z0-9\-_. ]", "", nvml_name)
    return re.sub(r"\s+", "-", kept.strip())


#: The most GPUs one host may say it has (GFD's ``gpu.count``, a CSV ``count``, a Slurm gres count); the
#: largest single machines hold 8 to 16. A count of 0, a negative or non-ASCII one, or more is refused.
MAX_GPU_COUNT: Final = 1024
_COUNT: Final = re.compile(r"[0-9]{1,8}")


def gpu_count(value: str | None, path: str, host: str) -> int:
    """A host's GPU count as written: 0 when the inventory gives none, else 1 to ``MAX_GPU_COUNT``; anything
    else (``-3``, ``0``, ``eight``, a billion, 5,000 digits) is ``InvalidInput`` naming the host."""
    if value is None or not value.strip():
        return 0
    text = value.strip()
    if _COUNT.fullmatch(text) and 1 <= int(text) <= MAX_GPU_COUNT:
        return int(text)
    shown = text if len(text) <= 24 else f"{text[:20]}... ({len(text):,} characters)"
    raise _bad(path, Text.of("fleet.input.bad-count", host=host, count=shown, limit=MAX_GPU_COUNT))


def _bad(path: str, what: Text) -> InvalidInput:
    return InvalidInput(Text.of("fleet.input.bad", path=path, reason=what), hint=_HINT)


# -- formats ----------------------------------------------------------------------------------


def parse_inventory(text: str, path: str, *, drivers: Mapping[str, str] | None = None) -> Inventory:
    """The hosts ``text`` (the content of ``path``) describes, in whichever format it is."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        if stripped.count("{") + stripped.count("[") > MAX_CONTAINERS:
            raise _bad(path, Text.of("fleet.input.too-many-values", limit=f"{MAX_CONTAINERS:,}"))
        try:
            data = loads_json(stripped)
        except TooDeep as exc:
            raise _bad(path, Text("fleet.input.too-deep")) from exc
        except ValueError as exc:
            raise _bad(path, Text.of("fleet.input.bad-json", error=str(exc))) from exc
        return _from_json(data, path)
    if stripped.count("\n") > MAX_LINES:
        raise _bad(path, Text.of("fleet.input.too-many-lines", limit=f"{MAX_LINES:,}"))
    lines = [line for line in stripped.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if lines and lines[0].lstrip().startswith("NodeName="):
        untyped: list[str] = []
        return Inventory(hosts=tuple(_slurm(lines, path, drivers or {}, untyped)), untyped=tuple(untyped))
    if lines:
        return Inventory(hosts=tuple(_csv(stripped, path)))
    raise _bad(path, Text("fleet.input.empty"))


def _from_json(data: Any, path: str) -> Inventory:
    if isinstance(data, dict) and ("items" in data or data.get("kind") in ("List", "NodeList", "Node")):
        nodes = data.get("items") if "items" in data else [data]
        if not isinstance(nodes, list):
            raise _bad(path, Text("fleet.input.items-not-list"))
        return _kubectl(nodes, path)
    if isinstance(data, dict) and ("target" in data or "gpus" in data):
        return Inventory(hosts=(_host_file(data, path),))
    raise _bad(path, Text("fleet.input.unknown-json"))


def _host_file(data: Mapping[str, Any], path: str) -> FleetHost:
    target = data.get("target", data)
    if not isinstance(target, dict) or not isinstance(target.get("gpus", []), list):
        raise _bad(path, Text("fleet.input.unknown-json"))
    models: list[str] = []
    for number, gpu in enumerate(target.get("gpus") or [], 1):
        if not isinstance(gpu, dict):
            raise _bad(path, Text("fleet.input.unknown-json"))
        spelled = _str(gpu.get("name")) or _str(gpu.get("cc"))
        if spelled is None:  # a GPU left out would plan the host as one without it (a CPU build for its only GPU)
            raise _bad(path, Text.of("fleet.input.gpu-unnamed", number=number))
        if spelled not in models:
            models.append(spelled)
    name = os.path.splitext(os.path.basename(path))[0] or path
    return FleetHost(
        name=str(data.get("host") or name),
        gpus=tuple(models),
        count=len(target.get("gpus") or []),
        driver=_str(target.get("driver")),
        platform=_str(target.get("platform")),
        python=_str(target.get("python")),
        origin="hosts",
    )


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _kubectl(nodes: list[Any], path: str) -> Inventory:
    hosts: list[FleetHost] = []
    skipped = 0
    for node in nodes:
        if not isinstance(node, dict):
            raise _bad(path, Text("fleet.input.items-not-list"))
        meta = _mapping(node.get("metadata"))
        labels = {str(k): str(v) for k, v in _mapping(meta.get("labels")).items()}
        host = _gfd_host(str(meta.get("name") or f"node-{len(hosts) + skipped}"), labels, node, path)
        if host is None:
            skipped += 1
        else:
            hosts.append(host)
    return Inventory(hosts=tuple(hosts), skipped=skipped)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _gfd_host(name: str, labels: Mapping[str, str], node: Mapping[str, Any], path: str) -> FleetHost | None:
    product = labels.get(_GFD + "gpu.product")
    major, minor = labels.get(_GFD + "gpu.compute.major"), labels.get(_GFD + "gpu.compute.minor")
    if not product and not (major and minor):
        return None
    model = _PRODUCT_SUFFIX.sub("", product) if product else ""
    cc = f"{major}.{minor}" if major and minor and major.isdigit() and minor.isdigit() else None
    return FleetHost(
        name=name,
        gpus=(model.replace("-", " ") if model else cc or "",),
        count=gpu_count(labels.get(_GFD + "gpu.count"), path, name),
        driver=_gfd_driver(labels),
        platform=_node_platform(labels, node),
        origin="kubectl",
        label=product or None,
        cc=cc,
    )


def _gfd_driver(labels: Mapping[str, str]) -> str | None:
    full = labels.get(_GFD + "cuda.driver-version.full")
    if full:
        return full
    for prefix, rev in (("cuda.driver-version.", "revision"), ("cuda.driver.", "rev")):
        parts = [labels.get(_GFD + prefix + p) for p in ("major", "minor", rev)]
        if parts[0] and parts[1]:
            return ".".join(p for p in parts if p)
    return None


def _node_platform(labels: Mapping[str, str], node: Mapping[str, Any]) -> str | None:
    info = _mapping(_mapping(node.get("status")).get("nodeInfo"))
    arch = labels.get("kubernetes.io/arch") or info.get("architecture")
    system = labels.get("kubernetes.io/os") or info.get("operatingSystem") or "linux"
    machine = _MACHINES.get(str(arch))
    if str(system).lower() == "windows" and machine == "x86_64":
        return "win_amd64"  # a Windows node: never planned as Linux
    return f"{system}_{machine}" if machine and system == "linux" else None


def _slurm(lines: list[str], path: str, drivers: Mapping[str, str], untyped: list[str]) -> list[FleetHost]:
    """The GPU nodes; a node whose gres gives a count but no type (``gpu:4``) goes to ``untyped``: its GPU is
    unknown, and a count is no GPU name."""
    hosts = []
    for number, line in _slurm_records(lines):
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        name = fields.get("NodeName")
        if not name:
            raise _bad(path, Text.of("fleet.input.slurm-line", line=number))
        found = [m for g in fields.get("Gres", "").split(",") if (m := _GRES.match(g.strip()))]
        gres = [m for m in found if not (m["type"].isdigit() and m["count"] is None)]
        if found and not gres:
            untyped.append(name)
        if not gres:
            continue  # a node without GPUs (or of no known type): nothing to plan for it
        models = tuple(dict.fromkeys(m["type"] for m in gres))
        arch = fields.get("Arch", "")
        features = fields.get("AvailableFeatures") or fields.get("ActiveFeatures") or ""
        hosts.append(
            FleetHost(
                name=name,
                gpus=models,
                count=sum(gpu_count(m["count"] or "1", path, name) for m in gres),
                driver=_driver_for(name, models, drivers),
                platform=_linux_on(arch),
                origin="slurm",
                label=",".join(models),
                features=tuple(f for f in features.split(",") if f and f != "(null)"),
            )
        )
    return hosts


def _slurm_records(lines: list[str]) -> list[tuple[int, str]]:
    """One ``(line number, text)`` per node: ``scontrol show node`` without ``--oneliner`` (its default) writes a
    node as a ``NodeName=`` line and indented lines under it, which belong to that node; an unindented line is a
    node of its own (``--oneliner``)."""
    records: list[tuple[int, str]] = []
    for number, line in enumerate(lines, 1):
        if records and line[:1].isspace() and not line.lstrip().startswith("NodeName="):
            records[-1] = (records[-1][0], f"{records[-1][1]} {line.strip()}")
        else:
            records.append((number, line))
    return records


def _with_driver(host: FleetHost, drivers: Mapping[str, str]) -> FleetHost:
    """A host whose inventory names no driver (a CSV row without one, a node without GFD's driver label) gets
    the user's ``--driver-map``/``--driver`` entry, as Slurm nodes do."""
    if host.driver or not drivers:
        return host
    return replace(host, driver=_driver_for(host.name, host.gpus, drivers))


def _driver_for(name: str, models: tuple[str, ...], drivers: Mapping[str, str]) -> str | None:
    """The first entry of the user's map whose pattern (a glob) matches the node name or a gres type."""
    for pattern, driver in drivers.items():
        if fnmatch.fnmatchcase(name, pattern) or any(fnmatch.fnmatchcase(m, pattern) for m in models):
            return driver
    return None


_CSV_COLUMNS: Final = {
    "host": ("host", "hostname", "node", "name"),
    "gpu": ("gpu", "gpus", "gpu_model", "model", "product"),
    "count": ("count", "gpu_count", "gpus_per_node"),
    "driver": ("driver", "driver_version"),
    "platform": ("platform", "arch"),
    "python": ("python", "python_version"),
}


def _linux_on(machine: str | None) -> str | None:
    """The Linux platform key of a bare machine name (``uname -m`` or Docker's spelling); None for others."""
    found = _MACHINES.get((machine or "").strip().lower())
    return f"linux_{found}" if found else None


def _machine_platform(value: str | None) -> str | None:
    """A platform cell as given, except a bare machine (``x86_64``, ``aarch64``, ``amd64``, ``arm64``), which
    means Linux on that machine, as for kubectl and Slurm nodes."""
    return None if value is None else (_linux_on(value) or value)


def _csv(text: str, path: str) -> list[FleetHost]:
    try:  # a field over csv.field_size_limit() (131,072 characters) is csv.Error
        rows = iter(list(csv.reader(io.StringIO(text))))
    except csv.Error as exc:
        raise _bad(path, Text.of("fleet.input.csv-unreadable", error=str(exc))) from exc
    header = [h.strip().lower().replace(" ", "_").replace("-", "_") for h in next(rows, [])]
    for key, names in _CSV_COLUMNS.items():  # two columns for one field: which one holds it is a guess
        if len(given := [h for h in header if h in names]) > 1:
            raise _bad(path, Text.of("fleet.input.csv-column-twice", field=key, columns=tuple(given)))
    where = {key: next((header.index(a) for a in names if a in header), None) for key, names in _CSV_COLUMNS.items()}
    if where["host"] is None or where["gpu"] is None:
        raise _bad(path, Text.of("fleet.input.csv-header", columns=tuple(header)))
    hosts = []
    for number, row in enumerate(rows, 2):
        if not any(cell.strip() for cell in row):
            continue

        def cell(key: str, row: list[str] = row) -> str | None:
            index = where[key]
            return row[index].strip() or None if index is not None and index < len(row) else None

        name, gpus = cell("host"), cell("gpu")
        if not name or not gpus:
            raise _bad(path, Text.of("fleet.input.csv-row", line=number))
        hosts.append(
            FleetHost(
                name=name,
                gpus=tuple(dict.fromkeys(g.strip() for g in re.split(r"[;+]", gpus) if g.strip())),
                count=gpu_count(cell("count"), path, name),
                driver=cell("driver"),
                platform=_machine_platform(cell("platform")),
                python=cell("python"),
                origin="csv",
            )
        )
    return hosts


def parse_driver_map(text: str, path: str) -> dict[str, str]:
    """``--driver-map``: one ``PATTERN DRIVER`` (or ``PATTERN=DRIVER``) per line; a pattern is a
    glob on the node name or the gres type (``gpu-a100-*``, ``tesla_t4``); the first match wins."""
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        parts = body.replace("=", " ").split()
        if len(parts) != 2:
            raise _bad(path, Text.of("fleet.input.driver-map-line", line=number))
        found.setdefault(parts[0], parts[1])
    return found


# -- files ------------------------------------------------------------------------------------


def read_inventory(paths: Iterable[str], *, drivers: Mapping[str, str] | None = None) -> Inventory:
    """Every host of every path (a directory means each regular file in it, sorted), bounded."""
    hosts: list[FleetHost] = []
    skipped = 0
    untyped: list[str] = []
    for path in paths:
        for file in _files(path):
            text = _read_text(file)
            if file != path and GENERATED_MARK in text[:_HEADER_CHARS]:
                continue  # a lock this command wrote into the folder (-o DIR beside --from DIR): no inventory
            part = parse_inventory(text, file, drivers=drivers)
            hosts += [_with_driver(h, drivers or {}) for h in part.hosts]
            skipped += part.skipped
            untyped += part.untyped
            if len(hosts) > MAX_HOSTS:
                raise InvalidInput(Text.of("fleet.input.too-many-hosts", limit=MAX_HOSTS), hint=_HINT)
    once = tuple(dict.fromkeys(hosts))  # one node read twice (a file given twice, an old copy beside it): once
    times = Counter(h.name for h in hosts)
    repeated = tuple(name for name, count in times.items() if count > 1)
    return Inventory(hosts=once, skipped=skipped, untyped=tuple(untyped), repeated=repeated)


def _files(path: str) -> list[str]:
    if os.path.isdir(path):
        names = sorted(os.listdir(path))[: MAX_FILES_PER_DIR + 1]
        if len(names) > MAX_FILES_PER_DIR:
            raise InvalidInput(Text.of("fleet.input.too-many-files", path=path, limit=MAX_FILES_PER_DIR), hint=_HINT)
        files = [os.path.join(path, n) for n in names if not n.startswith(".")]
        return [f for f in files if os.path.isfile(f)]
    return [path]


def read_text_file(path: str, limit: int = MAX_INVENTORY_BYTES) -> str:
    """A regular file's text, at most ``limit`` bytes; a FIFO or device is refused before reading."""
    try:
        data = read_regular_bounded(path, limit)
    except NotRegularFile as exc:
        raise _bad(path, Text("fleet.input.not-regular")) from exc
    except OSError as exc:
        raise _bad(path, Text.of("fleet.input.cannot-read", error=str(exc.strerror or exc))) from exc
    if len(data) > limit:
        raise _bad(path, Text.of("fleet.input.too-large", limit=limit))
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _bad(path, Text.of("fleet.input.bad-json", error=str(exc))) from exc


_read_text = read_text_file
