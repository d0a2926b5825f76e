"""Package indexes.

It holds simple-API pages (PEP 503 HTML, PEP 691 JSON), mirrors, the HTTP client and its cache,
wheel choice.

May import: text, errors, core. Does I/O only through an injected HTTP client and the cache
directory.
"""
