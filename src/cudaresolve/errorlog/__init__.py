"""Known CUDA error messages: finding them in a log and explaining cause and fixes for a target.

May import: everything below it (text, errors, core, db, target, resolve, advice, index, lock,
binaries, doctor).
"""
