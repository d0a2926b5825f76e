"""Install: a lock made the environment, exactly. Does I/O: HTTP, the file cache, the target interpreter, uv or pip.

``install`` (the flow: read or resolve the lock, mirrors applied once, the environment the user
means), ``verify`` (what a lock must be to be installed), ``sync`` (the environment made equal to a
lock), ``fetch`` (the verified wheel of each package), ``wheelcache`` (the lock's files from its
URLs into a sha256-keyed cache shared by every environment), ``closure`` (a lock holds all its
wheels need on the interpreter), ``installer`` (uv or pip, and their command lines), ``installed``
(what an interpreter has installed), ``record`` (RECORDs compared) and ``pip`` (the pip runs).

May import every folder up to ``lock``; never ``fleet``, ``doctor``, ``render`` or ``cli``.
"""
