"""``0020_verified_identities`` on existing rows (SQLite and PostgreSQL): what the operator's
own organizations hold and what a token-checked sign-up proved stay usable for logins;
everything else in sub-organizations becomes unverified."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from infra.db import migrate
from infra.db.engine import make_engine
from tests.support import services

NOW = datetime(2026, 11, 20, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'walletd.sqlite3'}"
        return
    url = services.create_database()
    try:
        yield url
    finally:
        services.drop_database(url)


def _insert(engine: Engine, table: str, stamped: bool = True, **values: object) -> None:
    if stamped:
        values = {"created_at": NOW, "updated_at": NOW, **values}
    columns = ", ".join(values)
    marks = ", ".join(f":{k}" for k in values)
    with engine.begin() as conn:
        conn.execute(text(f"INSERT INTO {table} ({columns}) VALUES ({marks})"), values)


def _org(engine: Engine, org_id: str, parent: str | None = None) -> None:
    _insert(engine, "organizations", id=org_id, name=org_id, parent_id=parent,
            root_quorum_threshold=1, version=1)


def _user(engine: Engine, user_id: str, org_id: str, email: str | None = None,
          phone: str | None = None) -> None:
    _insert(engine, "users", id=user_id, organization_id=org_id, name=user_id, email=email,
            phone_number=phone, is_root=True, view_version=1)


def _key(engine: Engine, key_id: str, org_id: str, user_id: str) -> None:
    _insert(engine, "api_keys", id=key_id, organization_id=org_id, user_id=user_id, name=key_id,
            public_key="02" + key_id.encode().hex().ljust(64, "0")[:64], curve="API_KEY_CURVE_P256",
            credential_type="CREDENTIAL_TYPE_API_KEY_P256")


def _provider(engine: Engine, row_id: str, org_id: str, user_id: str) -> None:
    _insert(engine, "oauth_providers", id=row_id, organization_id=org_id, user_id=user_id,
            name="google", issuer="https://accounts.google.com", audience="app",
            subject=row_id)


def test_existing_rows_keep_only_what_was_proven(url: str) -> None:
    migrate.upgrade(url, "0013_one_head")
    engine = make_engine(url, pool_size=1)
    try:
        _org(engine, "top")
        _user(engine, "operator", "top", email="ops@example.com")
        _key(engine, "operator-key", "top", "operator")
        # A sub-organization created by a token-checked sign-up: the token's email is proven,
        # the phone that rode along is not.
        _org(engine, "signed", "top")
        _user(engine, "signed-user", "signed", email="Ann@Example.com", phone="+15550009999")
        _key(engine, "signed-key", "signed", "signed-user")
        _insert(engine, "activities", id="act-1", organization_id="top",
                type="ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7",
                status="ACTIVITY_STATUS_COMPLETED", fingerprint="sha256:signup", body="{}",
                timestamp_ms="1", intent=json.dumps({}), version=1, user_id="proxy",
                result=json.dumps({"createSubOrganizationResultV7": {
                    "subOrganizationId": "signed", "rootUserIds": ["signed-user"]}}))
        _insert(engine, "verification_tokens", id="tok-1", organization_id="top", otp_id="otp-1",
                verification_type="OTP_TYPE_EMAIL", contact="ann@example.com", public_key="",
                expires_at=NOW, signup_used_at=NOW, signup_fingerprint="sha256:signup")
        # An OIDC-token sign-up and a bare-claims one.
        _org(engine, "oidc", "top")
        _user(engine, "oidc-user", "oidc")
        _provider(engine, "oidc-provider", "oidc", "oidc-user")
        _insert(engine, "oidc_token_uses", stamped=False, token_hash="h" * 64, usage="signup",
                fingerprint="signup:oidc:oidc-user", used_at=NOW, expires_at=NOW)
        _org(engine, "claims", "top")
        _user(engine, "claims-user", "claims", email="victim@example.com")
        _key(engine, "claims-key", "claims", "claims-user")
        _provider(engine, "claims-provider", "claims", "claims-user")

        migrate.upgrade(url)

        with engine.connect() as conn:
            users = {r[0]: (r[1] is not None, r[2] is not None) for r in conn.execute(text(
                "SELECT id, email_verified_at, phone_verified_at FROM users"))}
            keys = {r[0]: r[1] is not None for r in conn.execute(text(
                "SELECT id, login_verified_at FROM api_keys"))}
            providers = {r[0]: r[1] for r in conn.execute(text(
                "SELECT id, proof FROM oauth_providers"))}
    finally:
        engine.dispose()
    assert users["operator"] == (True, False)
    assert users["signed-user"] == (True, False)
    assert users["claims-user"] == (False, False)
    assert keys == {"operator-key": True, "signed-key": True, "claims-key": False}
    assert providers == {"oidc-provider": "oidc_token", "claims-provider": None}
