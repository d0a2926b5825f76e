"""Checking an installed environment against a target.

It holds reading it (``environment``), the pure checks (``check``) and the report values.

May import: text, errors, core, db, target, resolve, advice, index, lock, binaries.
"""
