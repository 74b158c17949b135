"""One login and one sign-up per OIDC token, on real rows (SQLite); audiences registered."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from infra.db.models.identity import OauthProvider
from infra.db.models.oauth import Oauth2Credential, OidcTokenUse
from infra.db.models.organizations import Organization, User
from infra.errors import Unauthenticated
from infra.sessions.oidc import accepted_audiences, token_hash
from infra.sessions.oidc_login import LOGIN_USAGE, SIGNUP_USAGE, spend_token
from tests.support.sqlite import sqlite_session

NOW = datetime(2026, 11, 24, 3, 0, tzinfo=UTC)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    with sqlite_session(tmp_path / "t.db") as s:
        yield s


def test_a_token_serves_one_login_and_one_signup(session: Session) -> None:
    digest = token_hash("header.payload.signature")
    spend_token(session, digest, NOW, SIGNUP_USAGE, "signup:org:user", NOW)
    spend_token(session, digest, NOW, LOGIN_USAGE, "sha256:aaa", NOW)
    spend_token(session, digest, NOW, LOGIN_USAGE, "sha256:aaa", NOW)  # the same request again
    with pytest.raises(Unauthenticated, match="already used for a login"):
        spend_token(session, digest, NOW, LOGIN_USAGE, "sha256:bbb", NOW)
    with pytest.raises(Unauthenticated, match="already used for a signup"):
        spend_token(session, digest, NOW, SIGNUP_USAGE, "signup:org2:user2", NOW)
    rows = session.query(OidcTokenUse).all()
    assert {(r.usage, r.fingerprint) for r in rows} == {
        ("signup", "signup:org:user"), ("login", "sha256:aaa")}
    assert all(r.token_hash == digest != "header.payload.signature" for r in rows)


def test_accepted_audiences_come_from_providers_and_credentials(session: Session) -> None:
    """Audiences of providers the operator bound (``proof`` operator) and of credentials; a
    provider a tenant registered (unproven, or proven by a token whose audience had to be
    accepted already) adds none."""
    parent = Organization(id="p", name="app")
    child = Organization(id="c", name="user org", parent_id="p")
    other = Organization(id="o", name="other")
    session.add_all([parent, child, other])
    session.flush()
    session.add_all([User(id="u", organization_id="c", name="u"),
                     User(id="v", organization_id="o", name="v")])
    session.flush()
    session.add_all([
        OauthProvider(organization_id="c", user_id="u", name="g", issuer="i", audience="child-aud",
                      subject="s", proof="operator"),
        OauthProvider(organization_id="c", user_id="u", name="t", issuer="i", audience="tenant-aud",
                      subject="t"),
        OauthProvider(organization_id="c", user_id="u", name="o", issuer="i", audience="token-aud",
                      subject="o", proof="oidc_token"),
        OauthProvider(organization_id="o", user_id="v", name="g", issuer="i", audience="other-aud",
                      subject="s", proof="operator"),
        Oauth2Credential(organization_id="p", provider="OAUTH2_PROVIDER_X", client_id="x-client",
                         encrypted_client_secret="e", wrapped_key="w", ciphertext="c")])
    session.flush()
    assert accepted_audiences(session, ["p"]) == {"child-aud", "x-client"}
    assert accepted_audiences(session, ["c", "p"]) == {"child-aud", "x-client"}
    assert accepted_audiences(session, ["o"]) == {"other-aud"}
