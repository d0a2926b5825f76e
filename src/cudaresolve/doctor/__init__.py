"""``cudaresolve doctor``: check an installed environment's GPU packages against a target.

* ``report``: the values read from disk and the report's values (pure);
* ``check``: ``diagnose``, the checks themselves (pure);
* ``environment``: read site-packages and ``.pt2`` files, then diagnose (I/O).

May import ``binaries``, ``db``, ``target``, ``advice`` and below; never ``render`` or ``cli``.
"""
