"""resolvelib's pin check and ranking remembered (resolve.resolution): resolvelib's own answers, with fewer provider
calls."""

from __future__ import annotations

from typing import Any

from resolvelib import AbstractProvider, BaseReporter
from resolvelib.resolvers import Resolution

from cudaresolve.resolve.resolution import PinCheckedResolution

# name -> version -> requirements (name, lowest version allowed); versions tried newest first
INDEX: dict[str, dict[int, list[tuple[str, int]]]] = {
    "app": {2: [("lib", 2), ("util", 1)], 1: [("lib", 1)]},
    "lib": {3: [("util", 3)], 2: [("util", 2)], 1: []},
    "util": {3: [("extra", 1)], 2: [], 1: []},
    "extra": {1: []},
    "other": {1: [("util", 2), ("lib", 1)]},
    # a conflict: top 2 needs mid 2, which needs a leaf 2 that does not exist; backtracking ends at top 1, mid 1
    "top": {2: [("mid", 2)], 1: [("mid", 1)]},
    "mid": {2: [("leaf", 2)], 1: [("leaf", 1)]},
    "leaf": {1: []},
}


class Toy(AbstractProvider[tuple[str, int], tuple[str, int], str]):
    def __init__(self) -> None:
        self.checks = self.ranks = 0

    def identify(self, requirement_or_candidate: tuple[str, int]) -> str:
        return requirement_or_candidate[0]

    def get_preference(self, identifier: str, *args: Any, **kwargs: Any) -> tuple[bool, int, str]:
        """The last conflict's names first, then the most requirements on a name, then by name."""
        self.ranks += 1
        causes = {info.requirement[0] for info in kwargs["backtrack_causes"]}
        return identifier not in causes, -len(list(kwargs["information"][identifier])), identifier

    def find_matches(self, identifier: str, requirements: Any, incompatibilities: Any) -> list[tuple[str, int]]:
        floor = max(v for _, v in requirements[identifier])
        bad = set(incompatibilities[identifier])
        newest = sorted(INDEX[identifier], reverse=True)
        return [(identifier, v) for v in newest if v >= floor and (identifier, v) not in bad]

    def is_satisfied_by(self, requirement: tuple[str, int], candidate: tuple[str, int]) -> bool:
        self.checks += 1
        return candidate[1] >= requirement[1]

    def get_dependencies(self, candidate: tuple[str, int]) -> list[tuple[str, int]]:
        return INDEX[candidate[0]][candidate[1]]


def _solve(kind: type[Resolution[Any, Any, Any]], requests: list[tuple[str, int]]) -> tuple[dict[str, Any], Toy]:
    provider = Toy()
    state = kind(provider, BaseReporter()).resolve(requests, max_rounds=100)
    return dict(state.mapping), provider


def test_the_same_pins_as_resolvelibs_own_with_fewer_checks_and_ranks() -> None:
    cases = ([("app", 1)], [("app", 1), ("other", 1)], [("lib", 1), ("util", 1), ("other", 1)],
             [("top", 1), ("app", 1), ("other", 1)])  # fmt: skip
    ranks = []
    for requests in cases:
        plain, plain_calls = _solve(Resolution, requests)
        kept, kept_calls = _solve(PinCheckedResolution, requests)
        assert kept == plain, requests
        assert kept_calls.checks < plain_calls.checks and kept_calls.ranks <= plain_calls.ranks, requests
        ranks.append((kept_calls.ranks, plain_calls.ranks))
    assert sum(k for k, _ in ranks) < sum(p for _, p in ranks), ranks
    assert _solve(PinCheckedResolution, cases[-1])[0]["top"] == ("top", 1)  # the conflict was met, and backtracked


def test_the_method_it_remembers_is_still_resolvelibs() -> None:
    """A resolvelib that renamed the check would leave the memo unused: this says so at once."""
    for method in ("_is_current_pin_satisfying", "_get_preference"):
        assert callable(getattr(Resolution, method, None))
        assert getattr(PinCheckedResolution, method) is not getattr(Resolution, method)
