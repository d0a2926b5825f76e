"""Package indexes: simple-API pages (PEP 503 HTML, PEP 691 JSON), mirrors, the client and its HTTP cache.

``simple`` (pure parsers and mirror rewriting), ``client`` (fetching through an injected
``httpx.Client``, retries, offline fallback with notices) and ``http_cache`` (the on-disk page
cache, revalidated with ETag / Last-Modified). httpx is imported only where the network is used.

May import ``text``, ``errors`` and ``core``; never anything above.
"""
