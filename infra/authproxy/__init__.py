"""The auth proxy's shared pieces: its own key, its configuration, its stamps.

The proxy process itself lives in the ``authproxy`` package; the API side (activities,
query, the configuration endpoint the proxy reads) uses what is here.
"""
