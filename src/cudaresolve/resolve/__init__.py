"""The solver: candidates for a target (``catalog``), the resolvelib provider, ``solve``, the findings of a
failure (``explain``) and ``why-not``'s answers. Pure.

May import ``text``, ``errors``, ``core``, ``db`` and ``target``; never ``text.catalogue``.
resolvelib is imported only inside ``solve_catalog`` (start-up time).
"""
