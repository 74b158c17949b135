"""Sign-up with a verification token: ``create_sub_organization`` spends the token's sign-up.

``@turnkey/core``'s ``signUpWithOtp`` (and the auth proxy's ``signup``) send the token of a
verified one-time code with a client signature of the key it is bound to (PROTOCOL.md §7.3,
§7.4). The API checks what the proxy checked (signature, contact, client signature) and
records the one sign-up the token serves (``infra.sessions.verification.record_token_use``),
so a replayed token cannot create a second account for the same address. The token is
sealed out of the stored activity like the other one-time secrets
(``infra.sessions.redaction``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from infra.activities.spec import ActivityContext
from infra.errors import Unauthenticated
from infra.sessions.params import chain_of
from infra.sessions.redaction import reveal
from infra.sessions.verification import (
    ClientSignature,
    record_token_use,
    token_usable_in,
    verify_client_signature,
    verify_token,
)
from infra.worker_services import service_keys


def spend_signup_token(ctx: ActivityContext, token: str, signature: dict[str, Any] | None,
                       users: Sequence[Any]) -> None:
    """Verify ``token`` for one of ``users``' contacts and spend its sign-up.

    Raises:
        Unauthenticated: a bad, foreign or used token, or a missing/wrong client signature.
    """
    token = reveal(token, ctx.session, service_keys(ctx.services), "verificationToken")
    claims = verify_token(ctx.session, token, ctx.now)
    if not token_usable_in(claims, chain_of(ctx.session, ctx.organization_id)):
        raise Unauthenticated("verification token was issued for another organization")
    contacts = {str(c).strip().lower() for u in users
                for c in (u.user_email, u.user_phone_number) if c}
    if claims.contact.lower() not in contacts:
        raise Unauthenticated("the verification token was issued for another contact than the "
                              "one signing up")
    if claims.public_key:
        if signature is None:
            raise Unauthenticated("clientSignature is required: the verification token is bound "
                                  "to a client key")
        verify_client_signature(ClientSignature.model_validate(signature), token=claims,
                                usage="signup", expected={})
    record_token_use(ctx.session, claims.id, "signup", ctx.activity.fingerprint, ctx.now)
