"""A real OIDC / OAuth 2.0 provider on loopback, built on PyJWT, for the login tests.

Serves what walletd talks to, over HTTP on 127.0.0.1:

* ``/.well-known/openid-configuration`` (discovery) and ``/jwks`` (RSA keys with ``kid``;
  :meth:`OidcProvider.rotate` adds a key, as Google does every few weeks);
* ``/token``: the authorization-code grant with PKCE (S256): the code must have been handed
  out by :meth:`OidcProvider.authorize` to the same client and redirect URI, the
  ``code_verifier`` must hash to its challenge, the client must authenticate with its secret
  (HTTP Basic or form fields), and a code works once;
* ``/2/users/me`` (X-style) and ``/users/@me`` (Discord-style): who the bearer token is.

ID tokens (:meth:`OidcProvider.id_token`) are what a provider hands an app after sign-in;
the knobs make the bad ones the abuse tests need (expired, other key, unknown ``kid``, ...).
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa


def pkce_pair() -> tuple[str, str]:
    """A PKCE ``(code_verifier, S256 code_challenge)``."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    return verifier, challenge.decode()


@dataclass
class _Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    user_id: str


@dataclass
class OidcProvider:
    """The provider's state; :meth:`start` serves it until :meth:`stop`."""

    clients: dict[str, str] = field(default_factory=dict)  # client id -> secret
    keys: list[tuple[str, rsa.RSAPrivateKey]] = field(default_factory=list)
    grants: dict[str, _Grant] = field(default_factory=dict)
    access_tokens: dict[str, str] = field(default_factory=dict)  # token -> user id
    requests: list[str] = field(default_factory=list)  # "METHOD path" as served
    token_requests: list[dict[str, str]] = field(default_factory=list)
    #: Serve discovery only at ``…/openid-configuration/`` (as Facebook does).
    discovery_with_slash: bool = False
    _server: ThreadingHTTPServer | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> OidcProvider:
        if not self.keys:
            self.rotate()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                provider.requests.append(f"GET {self.path}")
                provider._get(self)

            def do_POST(self) -> None:
                provider.requests.append(f"POST {self.path}")
                provider._post(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def issuer(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # -- keys and tokens ------------------------------------------------------------------
    def rotate(self) -> str:
        """Publish a new signing key (the newest signs); returns its ``kid``."""
        kid = f"k{len(self.keys) + 1}-{secrets.token_hex(4)}"
        self.keys.append((kid, rsa.generate_private_key(public_exponent=65537, key_size=2048)))
        return kid

    def jwks(self) -> dict[str, Any]:
        out = []
        for kid, key in self.keys:
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            out.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return {"keys": out}

    def id_token(self, *, sub: str, aud: str | list[str], nonce: str | None = None,
                 iss: str | None = None, lifetime_s: int = 600, kid: str | None = None,
                 key: rsa.RSAPrivateKey | None = None, **extra: Any) -> str:
        """An RS256 ID token signed by the newest key unless ``kid`` / ``key`` say otherwise."""
        now = int(time.time())
        claims: dict[str, Any] = {"iss": iss or self.issuer, "sub": sub, "aud": aud,
                                  "iat": now, "exp": now + lifetime_s, **extra}
        if nonce is not None:
            claims["nonce"] = nonce
        use_kid, use_key = self.keys[-1]
        return jwt.encode(claims, key or use_key, algorithm="RS256",
                          headers={"kid": kid or use_kid})

    def authorize(self, *, client_id: str, redirect_uri: str, code_challenge: str,
                  user_id: str) -> str:
        """The browser step: the user signs in and consents; returns the authorization code."""
        code = secrets.token_urlsafe(24)
        self.grants[code] = _Grant(client_id, redirect_uri, code_challenge, user_id)
        return code

    # -- HTTP -----------------------------------------------------------------------------
    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: Any) -> None:
        raw = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(raw)))
        handler.end_headers()
        handler.wfile.write(raw)

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        discovery = "/.well-known/openid-configuration" + ("/" if self.discovery_with_slash else "")
        if handler.path == discovery:
            self._send(handler, 200, {
                "issuer": self.issuer, "jwks_uri": f"{self.issuer}/jwks",
                "token_endpoint": f"{self.issuer}/token",
                "authorization_endpoint": f"{self.issuer}/authorize",
                "id_token_signing_alg_values_supported": ["RS256"]})
        elif handler.path == "/jwks":
            self._send(handler, 200, self.jwks())
        elif handler.path in ("/2/users/me", "/users/@me"):
            auth = handler.headers.get("Authorization", "")
            user = self.access_tokens.get(auth.removeprefix("Bearer "))
            if user is None:
                self._send(handler, 401, {"error": "invalid_token"})
            elif handler.path == "/2/users/me":
                self._send(handler, 200, {"data": {"id": user, "username": f"user{user}"}})
            else:
                self._send(handler, 200, {"id": user, "username": f"user{user}"})
        else:
            self._send(handler, 404, {"error": "not_found"})

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.path != "/token":
            self._send(handler, 404, {"error": "not_found"})
            return
        length = int(handler.headers.get("Content-Length", "0"))
        form = dict(urllib.parse.parse_qsl(handler.rfile.read(length).decode()))
        self.token_requests.append(form)
        client_id, secret = form.get("client_id", ""), form.get("client_secret")
        auth = handler.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            user, _, password = base64.b64decode(auth[6:]).decode().partition(":")
            client_id, secret = urllib.parse.unquote(user), urllib.parse.unquote(password)
        if self.clients.get(client_id) is None or self.clients[client_id] != secret:
            self._send(handler, 401, {"error": "invalid_client"})
            return
        grant = self.grants.pop(form.get("code", ""), None)
        verifier = form.get("code_verifier", "")
        challenge = base64.urlsafe_b64encode(
            hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if (form.get("grant_type") != "authorization_code" or grant is None
                or grant.client_id != client_id or grant.redirect_uri != form.get("redirect_uri")
                or grant.challenge != challenge):
            self._send(handler, 400, {"error": "invalid_grant"})
            return
        token = secrets.token_urlsafe(24)
        self.access_tokens[token] = grant.user_id
        self._send(handler, 200, {"access_token": token, "token_type": "bearer",
                                  "expires_in": 7200, "scope": "users.read"})
