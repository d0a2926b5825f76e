"""GPU names: the normal form of a name, the lookup of typed or reported names, the ``gpus`` filter. Pure.

A name becomes a tuple of tokens (``gpu_name_key``): lower case; cut at every character that is
not a letter or digit and between letters and digits (``RTX4090`` = ``rtx 4090``, ``1080Ti`` =
``1080 ti``, ``A100`` = ``a 100``); without the vendor words NVIDIA, GeForce, Tesla, Quadro and
the word GPU; without memory sizes (``80GB``, ``16 GB``, ``144G``), form factors (``PCIe``,
``SXM4``, ``HBM3e``, ``NVL``, ``OAM``, and V100's ``DGXS`` and ``FHHL``: ``Tesla V100-DGXS-32GB``),
``with Max-Q Design``/``Max-Q``, GPU Feature Discovery's time-slicing suffix ``-SHARED``, a Jetson board's
``(Engineering Reference) Developer Kit (Super)`` and a MIG instance's profile (``MIG 1g.5gb``: an instance has
its GPU's compute capability), since no two GPUs of different compute capability differ only in those
(``db check`` refuses two rows with one key). ``Mobile`` means ``Laptop``. The *loose* key also drops a
leading series word (RTX, GTX, GT, Jetson), so ``1080 Ti``, ``4090`` and ``Orin Nano`` are names too.

``GpuNames.match(text)`` tries, in order, and stops at the first that finds anything:

1. the key of a name or alias: exactly one GPU (labels are unique per the database check);
2. a loose key: one GPU, or an ambiguity (also when names of another architecture begin with the text:
   ``TITAN`` is GTX TITAN's loose key, and TITAN X, Xp, V and RTX begin with it);
3. a beginning of names (``Jetson AGX`` -> AGX Orin, AGX Xavier, AGX Thor): one GPU, or an ambiguity;
   a GPU found by 1-3 is an ambiguity still when another generation's GPU has the same name followed by its
   architecture's (``RTX 6000``: Quadro RTX 6000, and RTX 6000 Ada Generation);
4. several names in a row (``RTX 3090 RTX 5090``): an error naming them, never the first alone;
5. a vGPU type, the name a virtual machine's driver reports (NVIDIA's type names: board, frame buffer in GB and
   series, ``T4-16C``, ``GRID T4-16Q``, ``NVIDIA A100-40C``; a MIG-backed type's slices, ``A100-4-20C``): its
   board, by 1-4; a board code with a letter suffix
   for its variant (``A100D``, ``H100XM``, ``V100DX``) that names nothing is matched without the suffix, when that
   finds exactly one GPU (a vGPU runs on its board's architecture);
6. otherwise unknown, with the closest names (difflib) to suggest.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from cudaresolve.db.rows import GpuModel

__all__ = ["GpuListing", "GpuMatch", "GpuNames", "MatchKind", "closest_labels", "gpu_loose_key", "gpu_name_key"]

_VENDOR_WORDS: Final = frozenset({"nvidia", "geforce", "tesla", "quadro", "gpu"})
_SERIES_WORDS: Final = frozenset({"rtx", "gtx", "gt", "jetson"})
_SYNONYMS: Final = {"mobile": "laptop"}
# Words and phrases that never tell two GPUs of different compute capability apart.
_QUALIFIER: Final = re.compile(r"^(?:pcie|sxm[0-9]*|dgxs|fhhl|hbm[0-9]*e?|nvl[0-9]*|oam|[0-9]+(?:gb|g|tb)|maxq)$")
_PHRASES: Final = (
    (re.compile(r"\bwith\s+max[-_\s]?q\s+design\b"), " "),
    (re.compile(r"\bmax[-_\s]?q\b"), " maxq "),
    # a Jetson board: "NVIDIA Jetson AGX Orin Developer Kit"; JetPack 6's device tree on the Orin NX / Nano carrier
    # says "Orin Nano Engineering Reference Developer Kit Super", NVIDIA's product page "Orin Nano Super Developer Kit"
    (re.compile(r"\b(?:super\s+)?(?:engineering\s+reference\s+)?developer[-_\s]+kit(?:\s+super)?\b"), " "),
    (re.compile(r"\b([0-9]+)\s+(?:gb|tb)\b"), r" \1gb "),  # "80 GB" -> one memory token
    # a MIG instance ("A100-SXM4-40GB MIG 1g.5gb", GFD's "...-MIG-3g.20gb"): its GPU's architecture, so its GPU
    (re.compile(r"\bmig[-_\s]+(?:[0-9]+c\.)?[0-9]+g\.[0-9]+gb(?:[+-](?:me|gfx)(?:\.all)?)*(?![a-z0-9])"), " "),
    # GFD's time-slicing suffix ("Tesla-T4-SHARED", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED"): the board's replicas
    (re.compile(r"[-_\s]shared\s*$"), " "),
)
_WORD: Final = re.compile(r"[a-z]+|[0-9]+")
# A vGPU type (step 5): an optional vendor word, the board, ``-``, the frame buffer in GB and the series letter; a
# MIG-backed type names its compute slices between board and frame buffer (``A100-4-20C``, ``H100-1-10C``) and may
# end in ``ME``, media extensions (``A100-1-5CME``). A space stands for the ``-`` too: a GPU Feature Discovery
# label writes every space as ``-`` (``GRID-A100-40C``), and ``plan`` reads its dashes back as spaces.
_VGPU: Final = re.compile(
    r"\s*(?:nvidia\s+)?(?:grid\s+)?(?P<board>\S.*?)(?:[-\s][1-8])?[-\s][0-9]{1,4}[abcq](?:me)?\s*", re.IGNORECASE
)
_SM_FORM: Final = re.compile(r"sm[-_ ]?([0-9]{1,2}?)([0-9])")  # sm_89, sm89: the cc 8.9 (``gpus`` filter)
_SUGGESTIONS: Final = 3
_SIMILARITY: Final = 0.6
_MAX_SPLIT_TOKENS: Final = 24  # a longer text is no list of GPU names; it is not split


def gpu_name_key(name: str) -> tuple[str, ...]:
    """``NVIDIA GeForce RTX 3090`` -> ``('rtx', '3090')``; ``Tesla V100-SXM2-16GB`` -> ``('v', '100')``."""
    text = name.lower()
    for pattern, replacement in _PHRASES:
        text = pattern.sub(replacement, text)
    tokens: list[str] = []
    for chunk in re.split(r"[^0-9a-z]+", text):
        if not chunk or _QUALIFIER.match(chunk):
            continue
        for word in _WORD.findall(chunk):
            word = _SYNONYMS.get(word, word)
            if word not in _VENDOR_WORDS:
                tokens.append(word)
    return tuple(tokens)


def gpu_loose_key(key: tuple[str, ...]) -> tuple[str, ...]:
    """``('rtx', '4090')`` -> ``('4090',)``: the key without its leading series word."""
    return key[1:] if len(key) > 1 and key[0] in _SERIES_WORDS else key


def closest_labels(text: str, labels: Iterable[str], count: int) -> tuple[str, ...]:
    """The ``count`` labels spelled most like ``text`` (case aside; the given order among equals)."""
    import difflib  # only to suggest names for one that is unknown

    typed = text.lower()
    ranked = sorted(labels, key=lambda label: -difflib.SequenceMatcher(None, typed, label.lower()).ratio())
    return tuple(ranked[:count])


class MatchKind(enum.Enum):
    FOUND = "found"  # ``gpu`` is the one GPU the text names
    AMBIGUOUS = "ambiguous"  # ``candidates``: the GPUs the text could mean
    SEVERAL = "several"  # ``candidates``: the GPUs the text names one after another
    UNKNOWN = "unknown"  # ``candidates``: the closest names, maybe none


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuMatch:
    kind: MatchKind
    gpu: GpuModel | None = None
    candidates: tuple[GpuModel, ...] = ()


def _unique(models: Iterable[GpuModel]) -> tuple[GpuModel, ...]:
    return tuple({id(m): m for m in models}.values())


@dataclass(frozen=True, slots=True)
class GpuNames:
    """The names of the database's GPUs, indexed for ``match`` and ``filter``."""

    gpus: tuple[GpuModel, ...]
    _exact: Mapping[tuple[str, ...], GpuModel] = field(init=False, repr=False, compare=False)
    _loose: Mapping[tuple[str, ...], tuple[GpuModel, ...]] = field(init=False, repr=False, compare=False)
    _spelled: Mapping[str, GpuModel] = field(init=False, repr=False, compare=False)
    #: a name's beginning -> the GPUs named by it followed by their architecture's name (``RTX 6000`` -> RTX 6000 Ada)
    _before_arch: Mapping[tuple[str, ...], tuple[GpuModel, ...]] = field(init=False, repr=False, compare=False)
    _words: Mapping[str, frozenset[str]] = field(init=False, repr=False, compare=False)  # name -> its labels' words

    def __post_init__(self) -> None:
        exact: dict[tuple[str, ...], GpuModel] = {}
        loose: dict[tuple[str, ...], list[GpuModel]] = {}
        for gpu in self.gpus:
            for label in (gpu.name, *gpu.aliases):
                key = gpu_name_key(label)
                if key:
                    exact.setdefault(key, gpu)
                    group = loose.setdefault(gpu_loose_key(key), [])
                    if gpu not in group:
                        group.append(gpu)
        object.__setattr__(self, "_exact", exact)
        object.__setattr__(self, "_loose", {k: tuple(v) for k, v in loose.items()})
        object.__setattr__(self, "_spelled", {" ".join(k): g for k, g in exact.items()})
        before: dict[tuple[str, ...], list[GpuModel]] = {}
        for gpu in self.gpus:
            arch = gpu_name_key(gpu.arch)
            for named in map(gpu_name_key, (gpu.name, *gpu.aliases)):
                for name in (named, gpu_loose_key(named)):
                    for cut in range(1, len(name)):
                        if name[cut : cut + len(arch)] == arch:
                            group = before.setdefault(name[:cut], [])
                            group.extend(() if gpu in group else (gpu,))
        object.__setattr__(self, "_before_arch", {k: tuple(v) for k, v in before.items()})
        words = {g.name: frozenset(re.findall(r"[a-z]+", " ".join((g.name, *g.aliases)).lower())) for g in self.gpus}
        object.__setattr__(self, "_words", words)

    def match(self, text: str) -> GpuMatch:
        """The GPU ``text`` names (module docstring: the order of the tries)."""
        found = self._named(text)
        vgpu = _VGPU.fullmatch(text) if found.kind is MatchKind.UNKNOWN else None
        if vgpu is None:
            return found
        board = self._named(vgpu["board"])
        if board.kind is MatchKind.UNKNOWN:
            key = gpu_name_key(vgpu["board"])
            if len(key) > 1 and key[-1].isalpha() and key[-2].isdigit():  # A100D, H100XM: the board's variant
                board = self._named(" ".join(key[:-1]))
                board = board if board.kind is MatchKind.FOUND else GpuMatch(kind=MatchKind.UNKNOWN)
        return board if board.kind in (MatchKind.FOUND, MatchKind.AMBIGUOUS) else found

    def _named(self, text: str) -> GpuMatch:
        """Tries 1-4 and 6 of the module docstring."""
        key = gpu_name_key(text)
        if not key:
            return GpuMatch(kind=MatchKind.UNKNOWN)
        if key in self._exact:
            return self._one(self._exact[key], key, text)
        found = self._loose.get(gpu_loose_key(key), ())
        if len(found) == 1:  # a name without its series word: other generations' names may begin with it (TITAN)
            longer = [g for g in self._starting_with(key) if g.arch != found[0].arch]
            found = _unique([found[0], *longer])
        if not found:
            found = self._starting_with(key)
        if len(found) == 1:
            return self._one(found[0], key, text)
        if found:
            return GpuMatch(kind=MatchKind.AMBIGUOUS, candidates=found)
        several = self._split(key)
        if several:
            return GpuMatch(kind=MatchKind.SEVERAL, candidates=several)
        return GpuMatch(kind=MatchKind.UNKNOWN, candidates=self.closest(key))

    def _one(self, gpu: GpuModel, key: tuple[str, ...], text: str) -> GpuMatch:
        """``gpu``, unless a GPU of another architecture has the name ``key`` followed at once by its architecture's
        name (``RTX 6000``: Quadro RTX 6000, and RTX 6000 Ada Generation; ``TITAN X``: GTX TITAN X, and TITAN X
        (Pascal)) and no brand or series word of ``text`` (Quadro, GTX) leaves it out: then the text could mean
        either."""
        told = {w for w in re.findall(r"[a-z]+", text.lower()) if w in _VENDOR_WORDS | _SERIES_WORDS}
        found = (*self._before_arch.get(key, ()), *self._before_arch.get(gpu_loose_key(key), ()))
        rivals = [other for other in found if other.arch != gpu.arch and told <= self._words[other.name]]
        if not rivals:
            return GpuMatch(kind=MatchKind.FOUND, gpu=gpu)
        return GpuMatch(kind=MatchKind.AMBIGUOUS, candidates=_unique([gpu, *rivals]))

    def find(self, text: str) -> GpuModel | None:
        """The one GPU ``text`` names, else None (ambiguous, several or unknown)."""
        found = self.match(text)
        return found.gpu if found.kind is MatchKind.FOUND else None

    def closest(self, key: tuple[str, ...]) -> tuple[GpuModel, ...]:
        """Up to three GPUs whose names are spelled most like ``key``."""
        import difflib

        near = difflib.get_close_matches(" ".join(key), self._spelled, n=_SUGGESTIONS * 3, cutoff=_SIMILARITY)
        return _unique(self._spelled[n] for n in near)[:_SUGGESTIONS]

    def filter(self, pattern: str | None) -> tuple[GpuModel, ...]:
        """The GPUs whose name or alias holds ``pattern`` (normalised), or whose arch or cc is it (``8.9``, or as
        ``--gpu`` takes it, ``sm_89``, ``sm89``). A pattern with no letter or digit (``[``, ``-``) matches none."""
        key = gpu_name_key(pattern or "")
        if not key:
            return self.gpus if not (pattern or "").strip() else ()
        spelled, word = " ".join(key), (pattern or "").strip().lower()
        sm = _SM_FORM.fullmatch(word)
        word = f"{sm[1]}.{sm[2]}" if sm else word
        return tuple(
            gpu
            for gpu in self.gpus
            if any(spelled in " ".join(gpu_name_key(label)) for label in (gpu.name, *gpu.aliases))
            or word in (gpu.arch.lower(), str(gpu.cc))
        )

    def _starting_with(self, key: tuple[str, ...]) -> tuple[GpuModel, ...]:
        size = len(key)
        hits = [g for k, group in self._loose.items() if k[:size] == key for g in group]
        hits += [g for k, g in self._exact.items() if k[:size] == key]
        return _unique(hits)

    def _split(self, key: tuple[str, ...]) -> tuple[GpuModel, ...]:
        """The GPUs of ``key`` read as two or more names in a row, or ``()`` when it is not one."""
        if len(key) > _MAX_SPLIT_TOKENS:
            return ()
        # best[i]: the GPUs of key[:i] as whole names, fewest names first; None when impossible
        best: list[tuple[GpuModel, ...] | None] = [()] + [None] * len(key)
        for end in range(1, len(key) + 1):
            for start in range(end):
                head = best[start]
                if head is None:
                    continue
                part = key[start:end]
                gpu = self._exact.get(part)
                group = self._loose.get(part, ())
                one = gpu or (group[0] if len(group) == 1 else None)
                if one is not None and (best[end] is None or len(head) + 1 < len(best[end] or ())):
                    best[end] = (*head, one)
        result = best[-1]
        return result if result is not None and len(result) > 1 else ()


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuListing:
    """What ``cudaresolve gpus [PATTERN]`` shows: the GPUs the database knows that match."""

    pattern: str | None
    gpus: tuple[GpuModel, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpus": [
                {
                    "name": g.name,
                    "cc": str(g.cc),
                    "arch": g.arch,
                    "datacenter": g.datacenter,
                    "tegra": g.tegra,
                    "aliases": list(g.aliases),
                }
                for g in self.gpus
            ]
        }
