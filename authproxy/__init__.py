"""The auth proxy: a separate Falcon app a browser calls to sign users up and log them in.

It holds no database connection: it reads each configuration from the public API
(``infra.authproxy.lookup``), opens the proxy user's sealed key for the request that uses
it, and forwards activities to the API over HTTP like any client (``WALLETD_API_URL``).
"""
