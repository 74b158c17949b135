"""Cross-cutting HTTP concerns: CORS, the request id and request-rate limits."""

from __future__ import annotations

import json
import math
from typing import Any

import falcon
import sqlalchemy.exc

from infra import ratelimit, safejson
from infra.access import origin
from infra.auth.principal import AUTHENTICATED
from infra.errors import ResourceExhausted
from infra.identity.ancestry import organization_chain, remembered_chain
from infra.observability import context
from infra.services import Services
from ingress.resources.api import read_body

ALLOWED_HEADERS = ("Content-Type, X-Stamp, X-Stamp-Webauthn, X-Stamp-Attested, "
                   "X-Client-Version, X-Session")


class Cors:
    """Answer preflights and add CORS headers (browser SDKs send custom headers)."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if req.method == "OPTIONS":
            resp.status = falcon.HTTP_204
            resp.complete = True

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: Any,
                         req_succeeded: bool) -> None:
        resp.set_header("Access-Control-Allow-Origin", req.get_header("Origin") or "*")
        resp.set_header("Vary", "Origin")
        if req.method == "OPTIONS":
            resp.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
            resp.set_header("Access-Control-Allow-Headers",
                            req.get_header("Access-Control-Request-Headers") or ALLOWED_HEADERS)
            resp.set_header("Access-Control-Max-Age", "600")


#: Routes whose body the rate limiter reads (and keeps for ``read_body``) for its organization.
BODY_PATHS = ("/public/v1/submit/", "/public/v1/query/")


class RateLimit:
    """Request-rate limits as Turnkey applies them (PROTOCOL.md §10), before any work.

    Every ``/public/`` request counts against its client address; a submit or query naming an
    ``organizationId`` that exists also counts against its organization (the top of its
    chain: an organization shares one budget with its sub-organizations) and, for a
    sub-organization, against the sub-organization itself. Limits are requests per second
    over a window of ``rate_limit_burst_s`` (settings), so a burst of ``rps * burst_s`` passes.
    State lives in the limiter (``infra.ratelimit``): Redis shared by every ingress process,
    or this process's memory. Over a limit: 429, the wire body (``RATE_LIMIT_EXCEEDED``),
    ``Retry-After`` in whole seconds and Turnkey's ``ratelimit-limit`` /
    ``ratelimit-remaining``; answered requests carry the two ``ratelimit-*`` headers of
    their tightest limit.

    Only authenticated traffic spends an organization's budget: before authentication a
    request is counted against its client address and merely *checked* against its
    organization's budgets (refused if they are spent); it is counted against them once
    its stamp verified (``infra.auth.principal.AUTHENTICATED``). An anonymous flood naming
    an organization therefore spends only its own address's budget, and the defaults keep
    each organization budget above the address limit (docs/SECURITY.md).
    """

    def __init__(self, services: Services) -> None:
        settings = services.settings
        self.services = services
        self.limiter = ratelimit.from_url(settings.effective_rate_limit_url)
        self.window_s = float(max(1, settings.rate_limit_burst_s))
        self.hops = max(0, settings.rate_limit_forwarded_hops)
        self.address_limit = self._per_window(settings.rate_limit_address_rps)
        self.organization_limit = self._per_window(settings.rate_limit_organization_rps)
        self.sub_organization_limit = self._per_window(settings.rate_limit_sub_organization_rps)

    def _per_window(self, rps: float) -> int:
        """Requests per window for ``rps`` (0: no limit; a positive rate allows at least 1)."""
        return 0 if rps <= 0 else max(1, round(rps * self.window_s))

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        AUTHENTICATED.set(None)
        if req.method == "OPTIONS" or not req.path.startswith("/public/"):
            return
        counted: list[ratelimit.Admission] = []
        if self.address_limit:
            address = self.client_address(req)
            if not self._hit(req, resp, counted, "address:" + address, self.address_limit,
                             "client address"):
                return
        if (req.method == "POST" and req.path.startswith(BODY_PATHS)
                and (self.organization_limit or self.sub_organization_limit)):
            chain = self._chain(req)
            req.context.rate_budgets = self._budgets(chain)
            for key, limit, scope in req.context.rate_budgets:
                if not self._hit(req, resp, counted, key, limit, scope, peek=True):
                    return
        if counted:
            req.context.rate_limit = min(counted, key=lambda d: d.remaining)

    def _budgets(self, chain: list[str]) -> list[tuple[str, int, str]]:
        budgets = []
        if chain and self.organization_limit:
            budgets.append(("organization:" + chain[-1], self.organization_limit, "organization"))
        if len(chain) > 1 and self.sub_organization_limit:
            budgets.append(("sub-organization:" + chain[0], self.sub_organization_limit,
                            "sub-organization"))
        return budgets

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: Any,
                         req_succeeded: bool) -> None:
        if AUTHENTICATED.get() is not None:
            # Authenticated: now the request spends its organizations' budgets.
            for key, limit, _scope in req.context.get("rate_budgets") or ():
                self.limiter.hit(key, limit, self.window_s)
            AUTHENTICATED.set(None)
        decision = req.context.get("rate_limit")
        if decision is not None:
            resp.set_header("ratelimit-limit", str(decision.limit))
            resp.set_header("ratelimit-remaining", str(decision.remaining))

    def client_address(self, req: falcon.Request) -> str:
        """The peer address, or the one ``hops`` trusted proxies wrote into X-Forwarded-For."""
        return origin.client_address_of(req.remote_addr or "", req.get_header("X-Forwarded-For"),
                                        self.hops)

    def _chain(self, req: falcon.Request) -> list[str]:
        """The named organization and its ancestors (empty: none named, or not stored)."""
        body = read_body(req)
        req.context.body = body  # the resource reads it from here: the stream is consumed
        try:
            data = safejson.loads(body)
        except safejson.MalformedJson:
            return []
        if not isinstance(data, dict):
            return []
        req.context.body_object = data  # parsed once: the resource takes it from here too
        organization_id = data.get("organizationId")
        if not isinstance(organization_id, str) or not organization_id:
            return []
        known = remembered_chain(organization_id)
        if known is not None:
            return known
        try:
            with self.services.session_factory() as session:
                return organization_chain(session, organization_id)
        except sqlalchemy.exc.SQLAlchemyError:
            return []  # the database answers the request itself (503)

    def _hit(self, req: falcon.Request, resp: falcon.Response, counted: list[ratelimit.Admission],
             key: str, limit: int, scope: str, *, peek: bool = False) -> bool:
        decision = (self.limiter.peek if peek else self.limiter.hit)(key, limit, self.window_s)
        if decision.allowed:
            counted.append(decision)
            return True
        wait = max(1, math.ceil(decision.retry_after_s))
        error = ResourceExhausted(
            f"Too many requests. Please wait and try again in a few seconds: this {scope} may "
            f"send {limit} requests per {self.window_s:g} s; retry after {wait} s")
        resp.status = falcon.HTTP_429
        resp.content_type = falcon.MEDIA_JSON
        resp.text = json.dumps(error.to_wire())
        resp.set_header("Retry-After", str(wait))
        req.context.rate_limit = decision
        resp.complete = True
        return False
class RequestContext:
    """Bind a request id (the caller's ``X-Request-Id`` or a new one) for the request's log
    lines and the messages it sends; answer it in ``X-Request-Id``."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        request_id = context.request_id_from(req.get_header("X-Request-Id"))
        req.context.observability = context.bind(request_id=request_id, activity_id=None,
                                                 organization_id=None)
        resp.set_header("X-Request-Id", request_id)

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: Any,
                         req_succeeded: bool) -> None:
        tokens = req.context.get("observability")
        if tokens is not None:
            context.unbind(tokens)


class ClientOrigin:
    """Bind the client address (as the rate limiter sees it: same forwarded hops) for the
    access controls the request's authentication applies (``infra.access``)."""

    def __init__(self, services: Services) -> None:
        self.hops = max(0, services.settings.rate_limit_forwarded_hops)

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        address = origin.client_address_of(req.remote_addr or "",
                                           req.get_header("X-Forwarded-For"), self.hops)
        req.context.client_origin = origin.bind(address)

    def process_response(self, req: falcon.Request, resp: falcon.Response, resource: Any,
                         req_succeeded: bool) -> None:
        token = req.context.get("client_origin")
        if token is not None:
            origin.unbind(token)
