"""Lock files and the lock/install flows.

It holds the ``Lock`` value, PEP 751 ``pylock.toml``, hashed requirements, pyproject settings, pip.

May import: text, errors, core, db, target, resolve, advice, index.
"""
