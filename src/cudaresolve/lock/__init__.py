"""Locks: the ``Lock`` value, pylock.toml and requirements files, and the lock flow.

``model`` (the Lock value and its pylock mapping), ``lockfile`` (pylock.toml text; reading and
writing either format), ``requirements`` (pip requirements files), ``reqfiles`` (``-r``/``-c``
files), ``wheels`` (pins matched to index files), ``project`` (pyproject settings), ``output``
(where a lock is written), ``flow`` (``LockRequest`` -> a written lock). Installing a lock is
``install/``, the folder above this one.

May import ``text``, ``errors``, ``core``, ``db``, ``target``, ``resolve`` and ``index``; never
``install``, ``doctor``, ``render`` or ``cli``. File writers here may format Texts in English (lock
files record their warnings in English).
"""
