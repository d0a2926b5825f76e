"""Package indexes: simple-API pages (PEP 503 HTML, PEP 691 JSON), mirrors, the client and its HTTP cache.

``simple`` (pure parsers and mirror rewriting), ``client`` (fetching through an injected
``httpx.Client`` or a ``transport.LazyClient``, retries, offline fallback with notices),
``http_cache`` (the on-disk page cache: fresh pages used with no request, stale ones revalidated
with ETag / Last-Modified, after RFC 9111, whose parts ``freshness`` computes), ``parsed_cache``
(the wheels of a cached page, parsed once per body) and ``pages`` (the values fetching gives).
httpx is imported only when a request is really sent.

May import ``text``, ``errors`` and ``core``; never anything above.
"""
