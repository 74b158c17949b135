"""Creating users with their credentials (create_users, sub-organization root users, …).

Credential kinds other than API keys (authenticators, OAuth providers) and user tags are
attached by the modules that own them through ``USER_EXTRAS``: each is
``extra(session, organization_id, user, params, now, field_prefix)``; the same modules check
the params up front through ``USER_CHECKS`` (:func:`check_user`, from activity ``check``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field
from sqlalchemy.orm import Session

from infra.db.models.organizations import User
from infra.identity.credentials import ApiKeyParams, add_api_key, canonical_public_key
from infra.identity.directory import OidcTokenHook, attach_identity, check_identity
from infra.wiremodel import WireModel


class UserParams(WireModel):
    """``v1UserParamsV4`` (also accepts the V3/V2 shapes, which are subsets)."""

    user_name: str = Field(min_length=1, max_length=256)
    user_email: str | None = None
    user_phone_number: str | None = None
    api_keys: list[ApiKeyParams] = Field(default_factory=list)
    authenticators: list[dict[str, Any]] = Field(default_factory=list)
    oauth_providers: list[dict[str, Any]] = Field(default_factory=list)
    user_tags: list[str] = Field(default_factory=list)


def check_user(session: Session, organization_id: str, params: UserParams, field: str) -> None:
    """Refuse what can be refused about a new user before anything is stored.

    ``organization_id`` is where the user will live, or for a new sub-organization its
    parent (whose settings, such as WebAuthn origins, the sub-organization inherits).
    ``create_user`` checks the same again when it runs.

    Raises:
        InvalidRequest: a bad API key, contact, passkey attestation, OAuth identity, ...
    """
    for i, key in enumerate(params.api_keys):
        canonical_public_key(key, f"{field}.apiKeys[{i}].publicKey")
    check_identity(session, organization_id, params, field)


def create_user(session: Session, organization_id: str, params: UserParams, now: datetime,
                *, on_oidc_token: OidcTokenHook, is_root: bool = False,
                field: str = "users[0]") -> User:
    """Insert a user with its API keys, contacts, passkeys, OAuth providers and tags.

    ``on_oidc_token`` is called for each OAuth provider bound from an ``oidcToken`` (the
    sessions concept spends the token's one sign-up: ``infra.sessions.oidc_login.spend_signup``).
    """
    user = User(organization_id=organization_id, name=params.user_name,
                email=(params.user_email or None), phone_number=(params.user_phone_number or None),
                is_root=is_root)
    session.add(user)
    session.flush()
    for i, key in enumerate(params.api_keys):
        add_api_key(session, organization_id, user.id, key, now, f"{field}.apiKeys[{i}]")
    attach_identity(session, organization_id, user, params, now, field,
                    on_oidc_token=on_oidc_token)
    return user
