"""An attention kernel that refuses the GPU: FlashAttention's "FlashAttention only supports Ampere GPUs or newer".
Pure.

flash-attn's check passes GPUs of the architectures its release knows, from Ampere on. On a GPU older than Ampere
(Turing, Volta: a T4, a V100, an RTX 2080) no flash-attn build runs; on an Ampere or newer GPU the flash-attn that
raised it predates the GPU (an RTX 5090 with a release built before it), so the way out is another flash-attn build.
Ampere's first compute capability is the database's (its ``[[gpu]]`` rows of that architecture), never the code's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cudaresolve.text.model import Text

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from cudaresolve.core.archs import ComputeCapability
    from cudaresolve.db.database import CompatDB

__all__ = ["flash_attention_refused"]


def flash_attention_refused(
    db: CompatDB | None, ccs: Sequence[ComputeCapability], labels: Sequence[str | Text], f: Mapping[str, str]
) -> tuple[list[Text], list[Text]]:
    """Cause and fixes on the target's GPUs (``labels`` names them): older than the architecture the message names,
    or not; without a target, both readings."""
    family = f.get("family", "Ampere")
    known = [g.cc for g in db.gpus if g.arch.lower() == family.lower()] if db is not None else []
    floor = min(known) if known else None
    if not ccs or floor is None:
        return [Text.of("sig.flash-attn-refused.cause", family=family)], [
            Text("fix.flash-attn-sdpa"), Text("fix.rerun-with-target")]  # fmt: skip
    older = [cc for cc in ccs if cc < floor]
    if older:
        cause = Text.of("sig.flash-attn-refused.older", family=family, cc=floor, gpus=tuple(str(c) for c in older))
        return [cause], [Text("fix.flash-attn-sdpa")]
    cause = Text.of("sig.flash-attn-refused.newer", family=family, cc=floor, gpus=tuple(labels))
    return [cause], [Text("fix.upgrade-flash-attn"), Text("fix.flash-attn-sdpa"), Text("fix.doctor")]
