"""Known CUDA error messages: find them in a log (``signatures``), then explain cause and fixes (``explain``). Pure.

May import ``text``, ``errors``, ``core``, ``db``, ``target``, ``resolve`` and ``advice``; never ``text.catalogue``.
"""
