"""Build the Target to resolve for from flags, environment, a host file or detection. Pure, plus one file reader.

Where each part of the target comes from, first match wins:

==========  ===============================================================================
``--cpu``   a CPU target: no GPU, no driver (``--gpu``/``--driver`` with it are an error)
GPUs        ``--gpu`` (repeatable, or comma-separated) > ``--host FILE`` > ``CUDARESOLVE_GPUS``
            > detection
driver      ``--driver`` > ``--host FILE`` > ``CUDARESOLVE_DRIVER`` > detection, the last only
            when the GPUs were detected too
Python      ``--python-version`` > ``--host FILE`` > the running interpreter
platform    ``--platform`` > ``--host FILE`` > this machine
==========  ===============================================================================

A ``--host`` file stands for a whole machine, so it replaces the environment overrides as well
as detection; flags still win over it. GPUs declared (by flag or environment) without a driver
leave the driver unknown: ``driver`` and ``cuda_driver_max`` are None, and nothing is excluded
for the driver's sake. A driver declared without GPUs applies to the detected GPUs; with none
detected it is an error, since a driver alone says nothing about the SMs to cover.

A GPU is a name the database knows ("A800", "RTX 3090", "RTX4090", "1080 Ti", NVML's "NVIDIA
A100-SXM4-80GB"; ``db.gpu_names`` says how names compare) or a compute capability ("8.6", "86",
"sm_86", "sm89"). An unknown or ambiguous name is ``UnknownGpu`` and a text naming two GPUs is
``InvalidInput``, never a guess.
``cuda_driver_max`` always comes from the database (``CompatDB.max_cuda_for_driver``); NVML's
own CUDA version fills in only when the database knows no toolkit old enough for the driver.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from cudaresolve.core.archs import ComputeCapability, parse_cc
from cudaresolve.core.decode import TooDeep, loads_json
from cudaresolve.core.files import NotRegularFile, read_regular_bounded
from cudaresolve.core.platforms import normalize_platform
from cudaresolve.core.versions import parse_host_driver, parse_python_version
from cudaresolve.db.gpu_names import MatchKind, closest_labels
from cudaresolve.errors import InvalidDriver, InvalidInput, UnknownGpu
from cudaresolve.target.model import Gpu, Target, hosts_platform
from cudaresolve.target.options import MAX_GPUS, TargetOptions, split_gpu_list
from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Callable

    from cudaresolve.core.versions import CudaVersion, DriverVersion
    from cudaresolve.db.database import CompatDB
    from cudaresolve.db.python_platforms import PythonPlatform
    from cudaresolve.db.rows import GpuModel
    from cudaresolve.target.readings import DetectedGpu, Host

__all__ = [
    "ENV_DRIVER",
    "ENV_GPUS",
    "HOST_FILE_MAX_BYTES",
    "TargetOptions",
    "build_target",
    "load_host_file",
    "resolve_gpu",
    "split_gpu_list",
    "target_from_dict",
    "target_from_host",
    "this_platform",
    "this_python",
]

ENV_GPUS: Final = "CUDARESOLVE_GPUS"
ENV_DRIVER: Final = "CUDARESOLVE_DRIVER"
#: The most a ``--host`` file may hold; ``detect --json`` writes under 2 KB even for 8 GPUs.
HOST_FILE_MAX_BYTES: Final = 1024 * 1024
_HOST_KEYS: Final = ("gpus", "driver")
#: The most GPUs one target may hold: one machine's (an NVL72 rack's domain has 72), with room to spare.
_GPU_HINT: Final = Text("target.gpu.hint")
_HOST_HINT: Final = Text("target.host-file.hint")
# Looks like a compute capability or arch (8.6, 86, sm_86, sm89, sm_90a), not a product name. A bare
# number is one only with a major below 20: "4090" and "800" are model numbers, never SM 409.0 or 80.0.
_CC_LIKE: Final = re.compile(r"^(sm_|compute_)[0-9]+(\.[0-9]+)?[af]?$|^(1?[0-9])(\.[0-9]+|[0-9])?[af]?$", re.IGNORECASE)
_SM_SPELLING: Final = re.compile(r"^sm[-_ ]?(?=[0-9])", re.IGNORECASE)


def this_python() -> str:
    """The running interpreter as ``"3.11"``."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def this_platform() -> str:
    """This machine as one of ``models.PLATFORMS`` (``linux_x86_64``, ``win_amd64`` …)."""
    if sys.platform == "win32":
        import platform

        return normalize_platform(f"win_{platform.machine()}")
    system = "macosx" if sys.platform == "darwin" else sys.platform
    return normalize_platform(f"{system}_{os.uname().machine}")


def _same_cc_models(cc: ComputeCapability, db: CompatDB) -> dict[str, Any]:
    """``Gpu``'s datacenter, tegra and sbsa_from for a GPU known only by its compute capability: true when every
    model of that capability is one (8.0: data-center parts only); the models' ``sbsa_from`` when all share it."""
    models = [g for g in db.gpus if g.cc == cc]
    sbsa = {g.sbsa_from for g in models}
    every = {key: bool(models) and all(getattr(g, key) for g in models) for key in ("datacenter", "tegra")}
    return {**every, "sbsa_from": sbsa.pop() if len(sbsa) == 1 else None}


def _kind(model: GpuModel | None, cc: ComputeCapability, db: CompatDB) -> dict[str, Any]:
    """``Gpu``'s traits: the model's, else those its compute capability's models share (any host platform)."""
    if model is None:
        return _same_cc_models(cc, db)
    return {key: getattr(model, key) for key in ("datacenter", "tegra", "sbsa_from", "host_platforms")}


#: Longer than any GPU name the database holds, by far (a bound on the fuzzy matching's work).
_MAX_GPU_TEXT: Final = 200


def resolve_gpu(text: str, db: CompatDB) -> Gpu:
    """A declared GPU: a compute capability (``8.6``, ``sm_86``, ``sm89``) or a name the database knows.

    Names match as ``db.gpu_names`` says (``RTX4090``, ``1080 Ti``, ``4090``); a name that could
    mean several GPUs, or names two, is an error listing them, and an unknown one suggests the
    closest names.
    """
    stripped = text.strip()
    shown = repr(stripped) if len(stripped) <= 80 else repr(f"{stripped[:60]}…")  # errors stay one short line
    raw = _SM_SPELLING.sub("sm_", stripped)
    if not raw:
        raise InvalidInput(Text("target.empty-gpu"), hint=_GPU_HINT)
    if _CC_LIKE.match(raw):
        cc = parse_cc(raw.replace("sm_", "") if "." in raw else raw)
        return Gpu(name=cc.sm, cc=cc, **_same_cc_models(cc, db))
    if len(raw) > _MAX_GPU_TEXT:  # no GPU name is this long: no fuzzy matching over it
        raise UnknownGpu(Text.of("target.unknown-gpu", gpu=shown), hint=_GPU_HINT)
    found = db.match_gpu(raw)
    if found.gpu is not None:
        model = found.gpu
        return Gpu(name=model.name, cc=model.cc, **_kind(model, model.cc, db))
    names = tuple(repr(_short_name(g)) for g in found.candidates)
    if found.kind is MatchKind.AMBIGUOUS:
        hint = Text("target.ambiguous-gpu.hint")
        if len(names) > _LISTED:  # a word many names share (RTX): the closest few, and how many there are
            near = tuple(map(repr, closest_labels(stripped, [_short_name(g) for g in found.candidates], _LISTED // 2)))
            many = Text.of("target.ambiguous-gpu-many", gpu=shown, count=len(names), names=near)
            raise UnknownGpu(many, hint=Text("target.ambiguous-gpu-many.hint"))
        raise UnknownGpu(Text.of("target.ambiguous-gpu", gpu=shown, names=names), hint=hint)
    if found.kind is MatchKind.SEVERAL:
        hint = Text.of("target.several-gpus.hint", example=",".join(_short_name(g) for g in found.candidates))
        raise InvalidInput(Text.of("target.several-gpus", gpu=shown, names=names), hint=hint)
    message = Text.of("target.unknown-gpu-suggest", gpu=shown, names=names) if names else None
    raise UnknownGpu(message or Text.of("target.unknown-gpu", gpu=shown), hint=_GPU_HINT)


_LISTED: Final = 8  # the most names an ambiguous --gpu lists in full; past it, the closest few and the count



def _short_name(model: GpuModel) -> str:
    """The shortest name ``--gpu`` accepts for a GPU (``RTX 4090`` for ``NVIDIA GeForce RTX 4090``)."""
    return min((model.name, *model.aliases), key=len)


def _gpu_from_detected(seen: DetectedGpu, db: CompatDB, source: str) -> Gpu:
    """A detected GPU: its own compute capability where the source gave one, else the database's."""
    model = db.find_gpu(seen.name)
    cc = seen.cc or (model.cc if model else None)
    if cc is None:
        raise UnknownGpu(
            Text.of("target.detected-gpu-no-cc", source=source, gpu=repr(seen.name)),
            hint=Text("target.detected-gpu-no-cc.hint"),
        )
    return Gpu(name=seen.name, cc=cc, memory_mib=seen.memory_mib, **_kind(model, cc, db))


def _cuda_max(
    driver: DriverVersion | None, platform: str, db: CompatDB, fallback: CudaVersion | None = None
) -> CudaVersion | None:
    if driver is None:
        return None
    return db.max_cuda_for_driver(driver, platform) or fallback


def target_from_host(
    host: Host | None, db: CompatDB, *, platform: str, python: str, driver: DriverVersion | None = None
) -> Target:
    """A detection result as a Target; ``None`` (no driver) or no visible GPU is a CPU target.

    ``driver``, when given, replaces the detected driver (``--driver`` on a detected machine).
    """
    if host is None or not host.gpus:
        source = host.source if host is not None else "none"
        return Target(platform=platform, python=python, source=source)
    _bounded_gpus(len(host.gpus))  # what NVML or nvidia-smi reported, as the flags' and host files' are bounded
    gpus = tuple(_gpu_from_detected(g, db, host.source) for g in host.gpus)
    used = driver or host.driver
    fallback = host.cuda_driver if driver is None else None
    return Target(
        gpus=gpus,
        driver=used,
        cuda_driver_max=_cuda_max(used, platform, db, fallback),
        platform=platform,
        python=python,
        source=host.source,
    )


# -- host files -----------------------------------------------------------------------------


def _at(where: Text, suffix: str) -> Text:
    """A place in a host file: ``host file h.json: target.gpus[0]``."""
    return Text.of("target.host-file.at", where=where, suffix=suffix)


def _field(data: Mapping[str, Any], key: str, kind: type, where: Text) -> Any:
    value = data.get(key)
    # bool is an int to Python, never to a host file ("memory_mib": true).
    if value is not None and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
        raise InvalidInput(
            Text.of("target.host-file.type", at=_at(where, f".{key}"), expected=kind.__name__,
                    found=type(value).__name__),
            hint=_HOST_HINT,
        )
    return value


def _unwrap(data: Any, label: Text) -> tuple[Mapping[str, Any], Text]:
    """The target object of a host file and where it sits; it must say what it is.

    ``{}``, ``{"target": []}`` or a target nested one level too deep would otherwise read as a
    machine without GPUs, a silently wrong target: the ``gpus`` list and the ``driver`` (a
    string, or null for none) must both be there. ``{"gpus": [], "driver": null}`` is a CPU target.
    """
    if not isinstance(data, Mapping):
        raise InvalidInput(Text.of("target.host-file.not-object", label=label), hint=_HOST_HINT)
    where = label
    if "target" in data:
        if not isinstance(data["target"], Mapping):
            found = type(data["target"]).__name__
            at = _at(label, ".target")
            raise InvalidInput(Text.of("target.host-file.type", at=at, expected="dict", found=found), hint=_HOST_HINT)
        if data.get("schema", 1) != 1:
            raise InvalidInput(Text.of("target.host-file.schema", label=label, schema=repr(data.get("schema"))),
                               hint=_HOST_HINT)
        data, where = data["target"], Text.of("target.host-file.in-target", label=label)
    for key in _HOST_KEYS:
        if key not in data:
            raise InvalidInput(Text.of("target.host-file.missing", where=where, key=key), hint=_HOST_HINT)
    return data, where


def _bounded_gpus(count: int) -> None:
    """``InvalidInput`` for more GPUs than one machine holds (``MAX_GPUS``): each costs a lookup in the database."""
    if count > MAX_GPUS:
        raise InvalidInput(Text.of("target.too-many-gpus", count=count, limit=MAX_GPUS),
                           hint=Text("target.too-many-gpus.hint"))  # fmt: skip


def target_from_dict(data: Any, db: CompatDB, *, label: Text | None = None) -> Target:
    """A host file's JSON: the whole ``{"schema": 1, "target": {...}}`` object or the bare target.

    The target object needs ``gpus`` and ``driver`` (``_unwrap``). ``cuda_driver_max`` is
    recomputed from ``driver`` with this database; missing ``platform`` or ``python`` mean this
    machine's. Other keys this version does not know are ignored.
    """
    label = Text("target.host-file") if label is None else label
    data, where = _unwrap(data, label)
    gpus = []
    listed = _field(data, "gpus", list, where) or []
    _bounded_gpus(len(listed))
    for i, entry in enumerate(listed):
        at = _at(where, f".gpus[{i}]")
        if not isinstance(entry, Mapping) or not isinstance(entry.get("cc"), str):
            raise InvalidInput(Text.of("target.host-file.needs-cc", at=at), hint=_HOST_HINT)
        cc = parse_cc(entry["cc"])
        name = _field(entry, "name", str, at) or cc.sm
        model = db.find_gpu(name)
        if model is not None and model.cc != cc:  # a named GPU with another's capability: one of them is wrong
            mismatch = Text.of("target.host-file.cc-mismatch", at=at, gpu=name, cc=str(cc), known=str(model.cc))
            raise InvalidInput(mismatch, hint=_HOST_HINT)
        kind = _kind(model, cc, db)
        if entry.get("datacenter") is not None:
            kind["datacenter"] = _field(entry, "datacenter", bool, at)
        memory = _field(entry, "memory_mib", int, at)
        gpus.append(Gpu(name=name, cc=cc, memory_mib=memory, **kind))
    driver_text = _field(data, "driver", str, where)
    driver = parse_host_driver(driver_text) if driver_text is not None else None
    platform_text = _field(data, "platform", str, where)
    platform = normalize_platform(platform_text) if platform_text else this_platform()
    python_text = _field(data, "python", str, where)
    python = parse_python_version(python_text) if python_text else this_python()
    return Target(
        gpus=tuple(gpus),
        driver=driver if gpus else None,
        cuda_driver_max=_cuda_max(driver, platform, db) if gpus else None,
        platform=platform,
        python=python,
        source="host-file",
    )


def _read_host_bytes(path: str) -> bytes:
    """At most ``HOST_FILE_MAX_BYTES`` of a regular file, never blocking (``core.files.read_regular_bounded``):
    a FIFO, a device such as ``/dev/zero`` or a directory is refused before anything is read, and a file
    over the cap is refused after reading one byte past it."""
    try:
        data = read_regular_bounded(path, HOST_FILE_MAX_BYTES)
    except NotRegularFile as exc:
        raise InvalidInput(Text.of("target.host-file.not-regular", path=path), hint=_HOST_HINT) from exc
    except OSError as exc:
        reason = str(exc.strerror or exc)
        raise InvalidInput(Text.of("target.host-file.cannot-read", path=path, reason=reason), hint=_HOST_HINT) from exc
    if len(data) > HOST_FILE_MAX_BYTES:
        raise InvalidInput(
            Text.of("target.host-file.too-large", path=path, limit=HOST_FILE_MAX_BYTES), hint=_HOST_HINT
        )
    return data


def load_host_file(path: str, db: CompatDB) -> Target:
    """Read a host file (``cudaresolve detect --json > host.json``) as a Target.

    Only a regular file of at most ``HOST_FILE_MAX_BYTES`` (1 MiB; a real one is under 2 KB) is
    read; JSON nested deeper than Python's decoder can follow is ``target.host-file.too-deep``.
    """

    raw = _read_host_bytes(path)
    try:
        data = loads_json(raw.decode("utf-8"))
    except TooDeep as exc:
        raise InvalidInput(Text.of("target.host-file.too-deep", path=path), hint=_HOST_HINT) from exc
    except ValueError as exc:  # also UnicodeDecodeError and ints over Python's digit limit
        raise InvalidInput(Text.of("target.host-file.bad-json", path=path, error=str(exc)), hint=_HOST_HINT) from exc
    return target_from_dict(data, db, label=Text.of("target.host-file.named", path=path))


# -- putting it together --------------------------------------------------------------------


def _env_driver(environ: Mapping[str, str]) -> DriverVersion | None:
    text = environ.get(ENV_DRIVER, "").strip()
    if not text:
        return None
    try:
        return parse_host_driver(text)
    except InvalidDriver as exc:
        raise InvalidDriver(
            Text.of("target.env-driver", name=ENV_DRIVER, text=repr(text)), hint=exc.hint_text
        ) from exc


def _named_platform(options: TargetOptions, db: CompatDB) -> PythonPlatform | None:
    """``--platform`` and ``--python-platform`` read by the one parser (``python_platform``); None without them."""
    from cudaresolve.target.python_platform import declared_platform

    return declared_platform(options.platform, options.python_platform, db)


def build_target(
    options: TargetOptions,
    db: CompatDB,
    *,
    environ: Mapping[str, str] | None = None,
    detect: Callable[[Mapping[str, str]], Host | None] | None = None,
) -> Target:
    """The target for ``options`` (module docstring: what wins over what).

    ``detect`` defaults to ``target.detect.detect_host``; it runs only when neither flags, a host file
    nor the environment name the GPUs. ``--python-platform``'s glibc or macOS stays on the target.
    """
    from dataclasses import replace

    target = _build_target(options, db, environ=environ, detect=detect)
    named = _named_platform(options, db)
    glibc, macos = (named.glibc, named.macos) if named is not None else (None, None)
    glibc = options.glibc or glibc
    return replace(target, glibc=glibc, macos=macos) if glibc or macos else target


def _build_target(
    options: TargetOptions,
    db: CompatDB,
    *,
    environ: Mapping[str, str] | None,
    detect: Callable[[Mapping[str, str]], Host | None] | None,
) -> Target:
    env = os.environ if environ is None else environ
    if options.cpu and (options.gpus or options.driver):
        raise InvalidInput(Text("target.cpu-with-gpu"), hint=Text("target.cpu-with-gpu.hint"))
    flag_driver = parse_host_driver(options.driver) if options.driver else None
    _bounded_gpus(len(options.gpus))
    flag_gpus = tuple(resolve_gpu(g, db) for g in options.gpus)
    base = load_host_file(options.host_file, db) if options.host_file else None
    python = parse_python_version(options.python) if options.python else (base.python if base else this_python())
    named = _named_platform(options, db)
    platform = named.platform if named is not None else base.platform if base else this_platform()

    if options.cpu:
        return Target(platform=platform, python=python, source="flags")
    if base is not None:
        gpus = flag_gpus or base.gpus
        driver = flag_driver or base.driver
        source = "flags" if flag_gpus else "host-file"
        return _declared(gpus, driver, platform, python, source, db)

    env_gpus = split_gpu_list(env.get(ENV_GPUS, ""))
    _bounded_gpus(len(env_gpus))
    driver, driver_source = (flag_driver, "flags") if flag_driver else (_env_driver(env), "env")
    if flag_gpus or env_gpus:
        gpus = flag_gpus or tuple(resolve_gpu(g, db) for g in env_gpus)
        source = "flags" if flag_gpus else "env"
        if driver is not None and driver_source != source:
            source = f"{source}+{driver_source}"
        platform = platform if named is not None else hosts_platform(gpus, platform)  # GH200: aarch64, always
        return _declared(gpus, driver, platform, python, source, db)

    if named is not None and named.platform != this_platform():  # another machine's platform: not this one's GPUs
        if driver is not None:
            raise InvalidInput(Text("target.driver-without-gpu"), hint=Text("target.driver-without-gpu.hint"))
        return Target(platform=platform, python=python, source="flags")
    if detect is None:
        from cudaresolve.target.detect import detect_host

        detect = detect_host
    host = detect(env)
    if driver is not None and (host is None or not host.gpus):
        raise InvalidInput(Text("target.driver-without-gpu"), hint=Text("target.driver-without-gpu.hint"))
    target = target_from_host(host, db, platform=platform, python=python, driver=driver)
    if driver is not None:
        return _declared(target.gpus, driver, platform, python, f"{target.source}+{driver_source}", db)
    return target


def _declared(
    gpus: tuple[Gpu, ...], driver: DriverVersion | None, platform: str, python: str, source: str, db: CompatDB
) -> Target:
    """A target whose GPUs are known; ``cuda_driver_max`` follows from the driver and the database."""
    if not gpus:
        return Target(platform=platform, python=python, source=source)
    return Target(
        gpus=gpus,
        driver=driver,
        cuda_driver_max=_cuda_max(driver, platform, db),
        platform=platform,
        python=python,
        source=source,
    )
