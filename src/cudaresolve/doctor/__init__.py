"""``cudaresolve doctor``: check an installed environment's GPU packages against a target.

* ``report``: the values read from disk and the report's values (pure);
* ``check``: ``diagnose``, the checks themselves (pure); ``pt2``: those of AOTInductor packages (pure);
* ``environment``: read site-packages and ``.pt2`` files, then diagnose (I/O);
* ``smoke``: ``doctor --run``, one real operation per package and GPU (``smoke.toml``), its failures
  explained by ``errorlog``; ``child``: one such operation in a bounded child process (I/O).

May import ``errorlog``, ``binaries``, ``db``, ``target``, ``advice`` and below; never ``render`` or ``cli``.
"""
