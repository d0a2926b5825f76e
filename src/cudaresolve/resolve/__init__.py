"""The solver: candidates for a target (``catalog``), the resolvelib provider, ``solve``, the findings of a
failure (``explain``) and ``why-not``'s answers. Pure.

May import ``text``, ``errors``, ``core``, ``db`` and ``target``; never ``text.catalogue``.
resolvelib is imported only inside ``solve_catalog`` (start-up time).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: ``lock --help`` imports this module, and typing costs it ~9 ms
if TYPE_CHECKING:
    from typing import Final

#: When a pre-release may be chosen unless ``--prerelease`` says otherwise: uv's default (where a requirement names
#: one, or where no final release fits). Here, not in ``needs``: the CLI reads it without loading the solver.
DEFAULT_PRERELEASE: Final = "if-necessary-or-explicit"
