"""The pins of a finished resolvelib search that the user's requests still lead to. Pure.

resolvelib's own ``Resolver.resolve`` ends with ``_build_result``, which walks from each pin to the
requests recursively and without remembering where it has been: a cycle of pins that backtracking
left cut off from every request (A requires B, B requires A, and whatever required A was re-pinned
to a release that does not) recurses until ``RecursionError``. Cyclic requirements are legal and
occur on real indexes, so the search is run through ``resolvelib.resolvers.Resolution`` and its
final state read here, breadth first: the same pins, in bounded work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Mapping

    from resolvelib.structs import State

__all__ = ["connected_pins"]

RT = TypeVar("RT")
CT = TypeVar("CT")


def connected_pins(state: State[RT, CT, str], *, hide: str | None = None) -> dict[str, CT]:
    """``state``'s pins that some chain of requirements joins to the user's requests (a parent of None), less the
    identifier ``hide`` (a virtual one that is no package: ``<cudnn>``)."""
    mapping: Mapping[str, CT] = state.mapping
    key_of = {id(candidate): key for key, candidate in mapping.items()}
    children: dict[str | None, list[str]] = {}
    for key, criterion in state.criteria.items():
        for info in criterion.information:
            parent = info.parent
            if getattr(info.requirement, "constraint", False):
                continue  # a ``constrains`` row narrows, never brings a package in: no edge
            if parent is None:
                children.setdefault(None, []).append(key)
            elif id(parent) in key_of:
                children.setdefault(key_of[id(parent)], []).append(key)
    reached: set[str | None] = {None}
    todo: list[str | None] = [None]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in reached:
                reached.add(child)
                todo.append(child)
    return {key: candidate for key, candidate in mapping.items() if key in reached and key != hide}
