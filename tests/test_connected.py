"""The pins a finished search keeps (``resolve.connected``): those the requests lead to, cycles and all."""

from __future__ import annotations

import sys

import pytest
from resolvelib.resolvers import Criterion, RequirementInformation
from resolvelib.resolvers.resolution import _build_result
from resolvelib.structs import State

from cudaresolve.resolve.connected import connected_pins


def state(parents: dict[str, list[str | None]]) -> State[str, str, str]:
    """A final search state: each key pinned to the candidate ``"<key>-1"``, required by ``parents[key]`` (the
    parents' pinned candidates themselves, as resolvelib records them; a name not pinned stands for itself)."""
    mapping = {key: f"{key}-1" for key in parents}
    criteria = {
        key: Criterion([mapping[key]], [RequirementInformation(key, mapping.get(p, p) if p else None) for p in ps], [])
        for key, ps in parents.items()
    }
    return State(mapping=mapping, criteria=criteria, backtrack_causes=[])


def test_pins_the_requests_lead_to_are_kept_and_a_cut_off_cycle_is_dropped() -> None:
    """``app`` is requested and requires ``lib``; ``b`` and ``c`` require each other, and nothing else requires
    them any more (what backtracking can leave): resolvelib's own walk recurses without end on them."""
    final = state({"app": [None], "lib": ["app"], "b": ["c"], "c": ["b"], "d": ["lib", "c"]})
    assert connected_pins(final) == {"app": "app-1", "lib": "lib-1", "d": "d-1"}
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(200)
        with pytest.raises(RecursionError):
            _build_result(final)
    finally:
        sys.setrecursionlimit(limit)


def test_a_cycle_joined_to_the_requests_is_kept_and_matches_resolvelibs_result() -> None:
    final = state({"app": [None], "a": ["app", "b"], "b": ["a"], "gone": ["unpinned"]})  # its parent: not pinned
    found = connected_pins(final)
    assert found == {"app": "app-1", "a": "a-1", "b": "b-1"}
    assert found == dict(_build_result(final).mapping)
