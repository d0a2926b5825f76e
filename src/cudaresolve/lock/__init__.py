"""Locks: the ``Lock`` value, pylock.toml and requirements files, the lock and install flows, pip.

``model`` (the Lock value and its pylock mapping), ``lockfile`` (pylock.toml text; reading and
writing either format), ``requirements`` (pip requirements files), ``wheels`` (pins matched to
index files), ``project`` (pyproject settings), ``flow`` (``LockRequest`` -> a written lock),
``install`` (a lock installed through pip, mirrors applied once), ``sync`` (the environment made
equal to a lock), ``installed`` (what an interpreter has installed), ``record`` (RECORDs compared)
and ``pip`` (the pip runs).

May import ``text``, ``errors``, ``core``, ``db``, ``target``, ``resolve`` and ``index``; never
``doctor``, ``render`` or ``cli``. File writers here may format Texts in English (lock files
record their warnings in English).
"""
