"""resolvelib's pin check remembered (resolve.resolution): resolvelib's own answers, with fewer provider calls."""

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
}


class Toy(AbstractProvider[tuple[str, int], tuple[str, int], str]):
    def __init__(self) -> None:
        self.checks = 0

    def identify(self, requirement_or_candidate: tuple[str, int]) -> str:
        return requirement_or_candidate[0]

    def get_preference(self, identifier: str, *args: Any, **kwargs: Any) -> str:
        return identifier

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


def _solve(kind: type[Resolution[Any, Any, Any]], requests: list[tuple[str, int]]) -> tuple[dict[str, Any], int]:
    provider = Toy()
    state = kind(provider, BaseReporter()).resolve(requests, max_rounds=100)
    return dict(state.mapping), provider.checks


def test_the_same_pins_as_resolvelibs_own_with_fewer_checks() -> None:
    for requests in ([("app", 1)], [("app", 1), ("other", 1)], [("lib", 1), ("util", 1), ("other", 1)]):
        plain, plain_checks = _solve(Resolution, requests)
        kept, kept_checks = _solve(PinCheckedResolution, requests)
        assert kept == plain, requests
        assert kept_checks < plain_checks, requests


def test_the_method_it_remembers_is_still_resolvelibs() -> None:
    """A resolvelib that renamed the check would leave the memo unused: this says so at once."""
    assert callable(getattr(Resolution, "_is_current_pin_satisfying", None))
    assert PinCheckedResolution._is_current_pin_satisfying is not Resolution._is_current_pin_satisfying
