"""The ways out shared by ``why-not``, ``doctor`` and ``explain-error``: which variant a driver runs best,
which releases carry native code for a set of GPUs. Pure.

Each rule is written once here and returns values, or ``Text`` sentences that ``render`` formats.
May import ``text``, ``errors``, ``core``, ``db``, ``target`` and ``resolve``; never ``text.catalogue``.
"""
