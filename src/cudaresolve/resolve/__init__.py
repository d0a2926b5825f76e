"""The solver.

It holds candidates from the database (``catalog``), the resolvelib provider, ``solve``,
findings for failures (``explain``) and ``why-not``.

Pure. May import: text, errors, core, db, target.
"""
