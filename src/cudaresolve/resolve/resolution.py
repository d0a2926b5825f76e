"""resolvelib's ``Resolution`` with its check of every pin and its ranking of every open name, each round,
remembered. Pure.

Each round resolvelib asks, of every name it has a criterion for, whether the current pin still meets every
requirement on that name (``Resolution._is_current_pin_satisfying``), and again after each pin for the names
met before it: rounds x names x requirements calls of the provider, about a fifth of a warm solve of the
189-package project, nearly all with the answer of the round before. A ``Criterion`` is never changed once
made (resolvelib makes a new one whenever the requirements on a name change: see its docstring), and a pin is
a candidate, so the answer for one criterion and one pin never changes: it is kept, keyed by the criterion's
identity, with the pin it was given for (another pin is checked anew), and the memo holds both objects so that no
identity is reused while it lives.

Each round resolvelib also ranks every open name (``Resolution._get_preference``, the provider's
``get_preference``): 9,738 calls in that solve, a tenth of it, nearly all for a criterion ranked the round before.
A rank is a function of the name's criterion and the last backtrack's causes (the provider's ranking reads nothing
else that changes during a solve: its doc says so), so it too is kept per criterion and causes, by identity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

from resolvelib.resolvers import Resolution

if TYPE_CHECKING:
    from resolvelib.resolvers.criterion import Criterion

__all__ = ["PinCheckedResolution"]

RT = TypeVar("RT")  # requirement
CT = TypeVar("CT")  # candidate
KT = TypeVar("KT")  # identifier


class PinCheckedResolution(Resolution[RT, CT, KT], Generic[RT, CT, KT]):
    """``Resolution``, its pin check answered once per criterion and pin (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pin_checks: dict[int, tuple[Criterion[RT, CT], CT, bool]] = {}  # by the criterion's identity
        self._ranks: dict[tuple[int, tuple[int, ...]], tuple[Criterion[RT, CT], tuple[Any, ...], Any]] = {}

    def _is_current_pin_satisfying(self, name: KT, criterion: Criterion[RT, CT]) -> bool:
        # Called rounds x names times: the state read from the list, not through resolvelib's ``state`` property,
        # and one identity as the key, the pin it was checked with beside its answer (another pin: checked anew).
        pin = self._states[-1].mapping.get(name)
        if pin is None:
            return False
        kept = self._pin_checks.get(id(criterion))
        if kept is None or kept[1] is not pin:
            verdict = super()._is_current_pin_satisfying(name, criterion)
            kept = self._pin_checks[id(criterion)] = (criterion, pin, verdict)
        return kept[2]

    def _get_preference(self, name: KT) -> Any:
        state = self._states[-1]
        criterion, causes = state.criteria[name], tuple(state.backtrack_causes)
        key = (id(criterion), tuple(map(id, causes)))
        kept = self._ranks.get(key)
        if kept is None:
            kept = self._ranks[key] = (criterion, causes, super()._get_preference(name))
        return kept[2]
