"""The compatibility database.

It holds its row types, reading and validating ``compat.toml``, the frozen ``CompatDB`` and its
queries, loading with a parse cache.

May import: text, errors, core.
"""
