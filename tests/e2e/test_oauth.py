"""OAuth / OIDC logins end to end against a real OIDC provider on loopback.

A deployment of its own (``WALLETD_OIDC_ISSUERS`` = the loopback provider, allow-listed with
``WALLETD_OIDC_ALLOW``; the X provider's endpoints pointed at it), driven through the official
``turnkey-http`` client and ``@turnkey/crypto``:

* sign-up binds the user by an ID token; ``oauth_login`` to the *parent* organization finds
  the user's sub-organization and returns a session JWT that ``verifySessionJwtSignature``
  accepts with the published notarizer key; the session key then stamps;
* ``oauth`` returns a credential bundle ``decryptCredentialBundle`` opens;
* an OAuth 2.0 credential whose secret ``encryptOauth2ClientSecret`` encrypted to the
  published encryption key, then ``oauth2_authenticate`` (PKCE code exchange) and a login
  with the ID token walletd issued;
* abuse: wrong nonce, audience, issuer, expired, bad signature, unknown ``kid``, reuse; the
  client secret, provider tokens and ID tokens never reach the database or the logs.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa
from turnkey_sdk_types import (
    CreateOauth2CredentialBody,
    CreateWalletBody,
    GetOauth2CredentialBody,
    GetWhoamiBody,
    ListOauth2CredentialsBody,
    Oauth2AuthenticateBody,
    OauthBody,
    OauthLoginBody,
)

from infra.crypto import hpke
from infra.sessions.oidc import nonce_for
from tests.e2e.test_turnkey_crypto_interop import INTEROP, node  # noqa: F401 (fixture)
from tests.support.deployment import Deployment, Key
from tests.support.keys import TestKey as ApiKeyPair
from tests.support.keys import make_key
from tests.support.oidc_provider import OidcProvider, pkce_pair
from tests.support.raw_api import RawApi, create_sub_org, root_user_params

APP = "app-client-1"
X_CLIENT, X_SECRET = "x-client-1", "x-secret-Vv8kQ2mZ7pL4"
ETH = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
       "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}


@pytest.fixture(scope="module")
def provider() -> Iterator[OidcProvider]:
    p = OidcProvider(clients={X_CLIENT: X_SECRET}).start()
    yield p
    p.stop()


@pytest.fixture(scope="module")
def dep(tmp_path_factory: pytest.TempPathFactory, provider: OidcProvider) -> Iterator[Deployment]:
    d = Deployment.embedded(tmp_path_factory.mktemp("oauth"), {
        "WALLETD_OIDC_ISSUERS": provider.issuer,
        "WALLETD_OIDC_ALLOW": "127.0.0.0/8",
        "WALLETD_OAUTH2_X_TOKEN_URL": f"{provider.issuer}/token",
        "WALLETD_OAUTH2_X_USERINFO_URL": f"{provider.issuer}/2/users/me",
        "WALLETD_LOG_LEVEL": "DEBUG",
    })
    yield d
    d.stop()


@pytest.fixture(scope="module")
def node_exe(node: str) -> str:  # noqa: F811 (the interop module's fixture)
    """Node with ``@turnkey/crypto`` installed (skips locally without it, fails under CI)."""
    return node


def _claims(jwt_text: str) -> dict[str, Any]:
    payload = jwt_text.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))  # type: ignore[no-any-return]


def _discovery(dep: Deployment) -> dict[str, str]:
    return requests.get(dep.base_url + "/public/v1/discovery/keys", timeout=10).json()  # type: ignore[no-any-return]


def _js(node_exe: str, **request: Any) -> Any:
    import subprocess

    done = subprocess.run([node_exe, str(INTEROP / "oauth_crypto.mjs")], cwd=INTEROP,
                          input=json.dumps(request), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["result"]


def _sign_up(dep: Deployment, token: str, name: str) -> tuple[str, str]:
    """A sub-organization whose root user is bound by ``token`` (as ``signUpWithOauth``)."""
    root = RawApi(dep, dep.root, dep.root.organization_id)
    sub_id, _, result = create_sub_org(root, name, users=[root_user_params(
        f"{name} root", oauthProviders=[{"providerName": "loopback", "oidcToken": token}])])
    return sub_id, result["rootUserIds"][0]


def _oauth_login(dep: Deployment, token: str, key: ApiKeyPair) -> requests.Response:
    return RawApi(dep, dep.root, dep.root.organization_id).submit(
        "oauth_login", "ACTIVITY_TYPE_OAUTH_LOGIN", {"oidcToken": token, "publicKey": key.public_key})


def test_sign_up_then_oauth_login_to_the_parent_through_the_official_client(
        dep: Deployment, provider: OidcProvider, node_exe: str) -> None:
    session_key = make_key()
    token = provider.id_token(sub="alice", aud=APP, nonce=nonce_for(session_key.public_key))
    sub_id, user_id = _sign_up(dep, token, "alice")

    # @turnkey/core's signUpWithOauth then logs in with the same token (one sign-up, one login).
    response = dep.client().oauth_login(OauthLoginBody(
        oidcToken=token, publicKey=session_key.public_key, expirationSeconds="600"))
    assert response.activity.status.value == "ACTIVITY_STATUS_COMPLETED"
    claims = _claims(response.session)
    assert claims["organization_id"] == sub_id
    assert claims["user_id"] == user_id
    assert claims["public_key"] == session_key.public_key
    assert claims["session_type"] == "SESSION_TYPE_READ_WRITE"
    notarizer = _discovery(dep)["notarizerPublicKey"]
    assert _js(node_exe, op="verifySessionJwtSignature", jwt=response.session,
               notarizerPublicKey=notarizer) is True

    # The session key stamps in the user's sub-organization.
    session = Key(sub_id, user_id, session_key.public_key, session_key.private_key)
    who = dep.client(session).get_whoami(GetWhoamiBody())
    assert (who.organizationId, who.userId) == (sub_id, user_id)
    wallet = dep.client(session).create_wallet(CreateWalletBody(walletName="oauth", accounts=[ETH]))
    assert wallet.addresses[0].startswith("0x")

    # The token has served its login: a second one is refused.
    again = _oauth_login(dep, token, session_key)
    assert again.status_code == 401, again.text
    assert "already used for a login" in again.json()["message"]
    # ... and its sign-up.
    root = RawApi(dep, dep.root, dep.root.organization_id)
    second = root.submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", {
        "subOrganizationName": "alice again", "rootQuorumThreshold": 1,
        "rootUsers": [root_user_params("again", oauthProviders=[
            {"providerName": "loopback", "oidcToken": token}])]})
    assert second.status_code == 401, second.text
    assert "already used for a signup" in second.json()["message"]


def test_a_fresh_token_logs_in_again_and_the_identical_request_is_the_same_use(
        dep: Deployment, provider: OidcProvider) -> None:
    key = make_key()
    _sign_up(dep, provider.id_token(sub="bob", aud=APP), "bob")
    token = provider.id_token(sub="bob", aud=APP, nonce=nonce_for(key.public_key))
    root = RawApi(dep, dep.root, dep.root.organization_id)
    from tests.support.raw_api import envelope, stamp_headers

    body = envelope("ACTIVITY_TYPE_OAUTH_LOGIN", dep.root.organization_id,
                    {"oidcToken": token, "publicKey": key.public_key})
    first = dep.post("/public/v1/submit/oauth_login", body, stamp_headers(dep, dep.root, body))
    assert first.status_code == 200, first.text
    # Go/Rust clients re-send the identical body: the same activity, not a second use.
    resent = dep.post("/public/v1/submit/oauth_login", body, stamp_headers(dep, dep.root, body))
    assert resent.status_code == 200, resent.text
    assert resent.json()["activity"]["id"] == first.json()["activity"]["id"]
    other = make_key()
    fresh = provider.id_token(sub="bob", aud=APP, nonce=nonce_for(other.public_key))
    assert root.ok("oauth_login", "ACTIVITY_TYPE_OAUTH_LOGIN",
                   {"oidcToken": fresh, "publicKey": other.public_key})["session"]


def test_oauth_returns_a_credential_bundle_turnkey_crypto_opens(
        dep: Deployment, provider: OidcProvider, node_exe: str) -> None:
    sub_id, user_id = _sign_up(dep, provider.id_token(sub="carol", aud=APP), "carol")
    embedded = hpke.generate_private_key()
    target = hpke.uncompressed(embedded.public_key()).hex()
    token = provider.id_token(sub="carol", aud=APP, nonce=nonce_for(target))
    response = dep.client().oauth(OauthBody(oidcToken=token, targetPublicKey=target))
    assert response.userId == user_id
    private_hex = _js(node_exe, op="decryptCredentialBundle", bundle=response.credentialBundle,
                      embeddedKey=format(embedded.private_numbers().private_value, "064x"))
    key = hpke.private_key_from_bytes(bytes.fromhex(private_hex))
    public = hpke.compressed(key.public_key()).hex()
    who = dep.client(Key(sub_id, user_id, public, private_hex)).get_whoami(GetWhoamiBody())
    assert who.userId == user_id
    keys = RawApi(dep, dep.root, sub_id).read("get_api_keys", {"userId": user_id})["apiKeys"]
    (made,) = [k for k in keys if k["apiKeyId"] == response.apiKeyId]
    assert made["credential"]["type"] == "CREDENTIAL_TYPE_OAUTH_KEY_P256"
    assert made["credential"]["publicKey"] == public


def _other_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.mark.parametrize(("case", "status", "message"), [
    ("wrong nonce", 400, "nonce does not bind"),
    ("wrong audience", 400, "audience"),
    ("wrong issuer", 400, "is not accepted"),
    ("expired", 400, "expired"),
    ("bad signature", 400, "signature does not verify"),
    ("unknown kid", 400, "does not publish"),
    ("unknown user", 404, "sign up"),
])
def test_bad_tokens_are_refused_with_a_clear_4xx(dep: Deployment, provider: OidcProvider,
                                                  case: str, status: int, message: str) -> None:
    key = make_key()
    _sign_up(dep, provider.id_token(sub=f"dave-{case}", aud=APP), f"dave {case}")
    nonce = nonce_for(key.public_key)
    sub = f"dave-{case}"
    token = {
        "wrong nonce": lambda: provider.id_token(sub=sub, aud=APP, nonce=nonce_for("02" + "ab" * 32)),
        "wrong audience": lambda: provider.id_token(sub=sub, aud="someone-elses-app", nonce=nonce),
        "wrong issuer": lambda: provider.id_token(sub=sub, aud=APP, nonce=nonce,
                                                  iss="https://accounts.example.net"),
        "expired": lambda: provider.id_token(sub=sub, aud=APP, nonce=nonce, lifetime_s=-300),
        "bad signature": lambda: provider.id_token(sub=sub, aud=APP, nonce=nonce, key=_other_key()),
        "unknown kid": lambda: provider.id_token(sub=sub, aud=APP, nonce=nonce, kid="rotated-away"),
        "unknown user": lambda: provider.id_token(sub="nobody", aud=APP, nonce=nonce),
    }[case]()
    response = _oauth_login(dep, token, key)
    assert response.status_code == status, response.text
    body = response.json()
    assert message in body["message"]
    if status == 400:
        assert {"@type": "type.googleapis.com/errors.v1.TurnkeyErrorDetail",
                "turnkeyErrorCode": "INVALID_OIDC_TOKEN"} in body["details"]


@pytest.mark.parametrize(("path", "type_", "field", "params"), [
    ("oauth_login", "ACTIVITY_TYPE_OAUTH_LOGIN", "publicKey", {"publicKey": "03zz"}),
    ("oauth", "ACTIVITY_TYPE_OAUTH", "targetPublicKey", {"targetPublicKey": "04" + "00" * 64}),
])
def test_a_bad_client_key_is_a_400_before_the_token_is_looked_at(
        dep: Deployment, path: str, type_: str, field: str, params: dict[str, str]) -> None:
    response = RawApi(dep, dep.root, dep.root.organization_id).submit(
        path, type_, {"oidcToken": "a.b.c", **params})
    assert response.status_code == 400, response.text
    violations = [d for d in response.json()["details"] if "fieldViolations" in d]
    assert violations[0]["fieldViolations"][0]["field"].endswith(field)


def test_oauth2_credential_and_authenticate_with_pkce(
        dep: Deployment, provider: OidcProvider, node_exe: str) -> None:
    encryption_key = _discovery(dep)["encryptionPublicKey"]
    envelope = _js(node_exe, op="encryptOauth2ClientSecret", clientSecret=X_SECRET,
                   encryptionPublicKey=encryption_key)
    client = dep.client()
    created = client.create_oauth2_credential(CreateOauth2CredentialBody(
        provider="OAUTH2_PROVIDER_X", clientId=X_CLIENT, encryptedClientSecret=envelope))
    credential_id = created.oauth2CredentialId
    got = client.get_oauth2_credential(GetOauth2CredentialBody(oauth2CredentialId=credential_id))
    assert got.oauth2Credential.clientId == X_CLIENT
    assert got.oauth2Credential.provider.value == "OAUTH2_PROVIDER_X"
    assert got.oauth2Credential.encryptedClientSecret == envelope
    listed = client.list_oauth2_credentials(ListOauth2CredentialsBody()).oauth2Credentials
    assert credential_id in [c.oauth2CredentialId for c in listed]

    # The app's user signs in at X (PKCE); the app hands walletd the code.
    session_key = make_key()
    verifier, challenge = pkce_pair()
    redirect = "https://app.example/callback"
    code = provider.authorize(client_id=X_CLIENT, redirect_uri=redirect, code_challenge=challenge,
                              user_id="4242")
    result = client.oauth2_authenticate(Oauth2AuthenticateBody(
        oauth2CredentialId=credential_id, authCode=code, redirectUri=redirect,
        codeVerifier=verifier, nonce=nonce_for(session_key.public_key)))
    claims = _claims(result.oidcToken)
    assert claims["iss"] == dep.base_url
    assert (claims["sub"], claims["aud"]) == ("x:4242", X_CLIENT)
    assert claims["nonce"] == nonce_for(session_key.public_key)
    # walletd authenticated to the token endpoint with the secret it decrypted.
    exchange = provider.token_requests[-1]
    assert exchange["code_verifier"] == verifier and exchange["client_id"] == X_CLIENT

    # The issued token signs the user up and logs them in like any ID token.
    sub_id, user_id = _sign_up(dep, result.oidcToken, "x user")
    login = dep.client().oauth_login(OauthLoginBody(oidcToken=result.oidcToken,
                                                    publicKey=session_key.public_key))
    assert _claims(login.session)["organization_id"] == sub_id
    assert _claims(login.session)["user_id"] == user_id

    # A used code, or a wrong verifier, is refused by the provider: a 401 naming the cause.
    replay = RawApi(dep, dep.root, dep.root.organization_id).submit(
        "oauth2_authenticate", "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE", {
            "oauth2CredentialId": credential_id, "authCode": code, "redirectUri": redirect,
            "codeVerifier": verifier, "nonce": nonce_for(session_key.public_key)})
    assert replay.status_code == 401, replay.text
    assert "refused the authorization code" in replay.json()["message"]


def test_update_and_delete_oauth2_credential(dep: Deployment, node_exe: str) -> None:
    root = RawApi(dep, dep.root, dep.root.organization_id)
    encryption_key = _discovery(dep)["encryptionPublicKey"]
    first = _js(node_exe, op="encryptOauth2ClientSecret", clientSecret="first-secret-value",
                encryptionPublicKey=encryption_key)
    made = root.ok("create_oauth2_credential", "ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL",
                   {"provider": "OAUTH2_PROVIDER_DISCORD", "clientId": "d-1",
                    "encryptedClientSecret": first})
    credential_id = made["oauth2CredentialId"]
    second = _js(node_exe, op="encryptOauth2ClientSecret", clientSecret="second-secret-value",
                 encryptionPublicKey=encryption_key)
    root.ok("update_oauth2_credential", "ACTIVITY_TYPE_UPDATE_OAUTH2_CREDENTIAL",
            {"oauth2CredentialId": credential_id, "provider": "OAUTH2_PROVIDER_DISCORD",
             "clientId": "d-2", "encryptedClientSecret": second})
    got = root.read("get_oauth2_credential", {"oauth2CredentialId": credential_id})
    assert got["oauth2Credential"]["clientId"] == "d-2"
    assert got["oauth2Credential"]["encryptedClientSecret"] == second
    root.ok("delete_oauth2_credential", "ACTIVITY_TYPE_DELETE_OAUTH2_CREDENTIAL",
            {"oauth2CredentialId": credential_id})
    gone = root.query("get_oauth2_credential", {"oauth2CredentialId": credential_id})
    assert gone.status_code == 404, gone.text


def test_a_secret_not_encrypted_to_the_service_key_is_a_400(dep: Deployment, node_exe: str) -> None:
    other = hpke.uncompressed(hpke.generate_private_key().public_key()).hex()
    envelope = _js(node_exe, op="encryptOauth2ClientSecret", clientSecret="x", encryptionPublicKey=other)
    response = RawApi(dep, dep.root, dep.root.organization_id).submit(
        "create_oauth2_credential", "ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL",
        {"provider": "OAUTH2_PROVIDER_X", "clientId": "c", "encryptedClientSecret": envelope})
    assert response.status_code == 400, response.text
    assert "encryptOauth2ClientSecret" in response.json()["message"]


def test_no_oauth_secret_in_database_or_logs(dep: Deployment, provider: OidcProvider,
                                             node_exe: str) -> None:
    from tests.e2e.test_custody import _dump_database, _encodings, _logs

    # Run the flows that handle secrets (also done by the tests above in this module).
    encryption_key = _discovery(dep)["encryptionPublicKey"]
    secret = "leak-check-secret-5Yq9r2Vb7Kx"
    envelope = _js(node_exe, op="encryptOauth2ClientSecret", clientSecret=secret,
                   encryptionPublicKey=encryption_key)
    provider.clients["leak-client"] = secret
    root = RawApi(dep, dep.root, dep.root.organization_id)
    credential_id = root.ok("create_oauth2_credential", "ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL", {
        "provider": "OAUTH2_PROVIDER_X", "clientId": "leak-client",
        "encryptedClientSecret": envelope})["oauth2CredentialId"]
    key = make_key()
    verifier, challenge = pkce_pair()
    code = provider.authorize(client_id="leak-client", redirect_uri="https://a.example/cb",
                              code_challenge=challenge, user_id="777")
    issued = root.ok("oauth2_authenticate", "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE", {
        "oauth2CredentialId": credential_id, "authCode": code,
        "redirectUri": "https://a.example/cb", "codeVerifier": verifier,
        "nonce": nonce_for(key.public_key)})["oidcToken"]
    login_key = make_key()
    _sign_up(dep, provider.id_token(sub="erin", aud=APP), "erin")
    login_token = provider.id_token(sub="erin", aud=APP, nonce=nonce_for(login_key.public_key))
    assert _oauth_login(dep, login_token, login_key).status_code == 200

    # (The ID token walletd issued is the activity's result, readable by design; it is bound
    # to the client key by its nonce.)
    assert issued
    access_tokens = [t for t, user in provider.access_tokens.items() if user == "777"]
    assert access_tokens
    needles = {"client secret": secret, "login ID token": login_token,
               "authorization code": code,
               "PKCE verifier": verifier, "session private key": login_key.private_key}
    needles.update(_encodings("client secret", secret.encode()))
    for i, token in enumerate(access_tokens):
        needles[f"provider access token {i}"] = token
    database, logs = _dump_database(dep), _logs(dep)
    assert "leak-client" in database and len(logs) > 1000  # the haystacks are real
    for where, haystack in (("database", database), ("logs", logs)):
        for what, needle in needles.items():
            assert needle not in haystack, f"{what} found in {where}"



def _attested(key: ApiKeyPair, token: str, body: bytes) -> dict[str, str]:
    """``X-Stamp-Attested`` with the OIDC scheme, as ``@turnkey/core``'s loginWithOauth sends."""
    stamp = {"publicKeyAttestation": token, "scheme": "STAMP_ATTESTED_SCHEME_P256_OIDC",
             "publicKey": key.public_key, "signature": key.sign(body)}
    header = base64.urlsafe_b64encode(json.dumps(stamp).encode()).decode().rstrip("=")
    return {"Content-Type": "application/json", "X-Stamp-Attested": header}


def test_x_stamp_attested_oidc_logs_in_to_the_parent_once(dep: Deployment,
                                                           provider: OidcProvider) -> None:
    from tests.support.raw_api import envelope

    key = make_key()
    token = provider.id_token(sub="frank", aud=APP, nonce=nonce_for(key.public_key))
    sub_id, user_id = _sign_up(dep, token, "frank")
    parent = dep.root.organization_id
    body = envelope("ACTIVITY_TYPE_STAMP_LOGIN", parent, {"publicKey": key.public_key})
    response = dep.post("/public/v1/submit/stamp_login", body, _attested(key, token, body))
    assert response.status_code == 200, response.text
    activity = response.json()["activity"]
    claims = _claims(activity["result"]["stampLoginResult"]["session"])
    assert (claims["organization_id"], claims["user_id"]) == (sub_id, user_id)
    assert claims["public_key"] == key.public_key
    who = dep.client(Key(sub_id, user_id, key.public_key, key.private_key)).get_whoami(
        GetWhoamiBody())
    assert who.userId == user_id
    # The identical request re-sent is the same login; a new request with the token is not.
    resent = dep.post("/public/v1/submit/stamp_login", body, _attested(key, token, body))
    assert resent.status_code == 200 and resent.json()["activity"]["id"] == activity["id"]
    body2 = envelope("ACTIVITY_TYPE_STAMP_LOGIN", parent, {"publicKey": key.public_key})
    again = dep.post("/public/v1/submit/stamp_login", body2, _attested(key, token, body2))
    assert again.status_code == 401, again.text
    assert "already used for a login" in again.json()["message"]


@pytest.mark.parametrize("case", ["wrong nonce", "other signer", "not stamp_login", "expired"])
def test_x_stamp_attested_oidc_refusals(dep: Deployment, provider: OidcProvider, case: str) -> None:
    from tests.support.raw_api import envelope

    key = make_key()
    sub = f"gina-{case}"
    _sign_up(dep, provider.id_token(sub=sub, aud=APP), f"gina {case}")
    nonce = nonce_for(make_key().public_key if case == "wrong nonce" else key.public_key)
    token = provider.id_token(sub=sub, aud=APP, nonce=nonce,
                              lifetime_s=-300 if case == "expired" else 600)
    type_, path = (("ACTIVITY_TYPE_CREATE_WALLET", "create_wallet") if case == "not stamp_login"
                   else ("ACTIVITY_TYPE_STAMP_LOGIN", "stamp_login"))
    params = ({"walletName": "w", "accounts": [ETH]} if case == "not stamp_login"
              else {"publicKey": key.public_key})
    body = envelope(type_, dep.root.organization_id, params)
    signer = make_key() if case == "other signer" else key
    stamp = _attested(signer, token, body)
    if case == "other signer":  # the stamp names the bound key but another key signed
        decoded = json.loads(base64.urlsafe_b64decode(stamp["X-Stamp-Attested"] + "=="))
        decoded["publicKey"] = key.public_key
        stamp["X-Stamp-Attested"] = base64.urlsafe_b64encode(
            json.dumps(decoded).encode()).decode().rstrip("=")
    response = dep.post(f"/public/v1/submit/{path}", body, stamp)
    assert response.status_code == 401, response.text
    message = response.json()["message"]
    assert {"wrong nonce": "nonce does not bind", "other signer": "signature",
            "not stamp_login": "stamp_login only", "expired": "expired"}[case] in message


@pytest.fixture(scope="module")
def prod(tmp_path_factory: pytest.TempPathFactory, provider: OidcProvider) -> Iterator[Deployment]:
    """The production path (gunicorn + worker processes, a fresh PostgreSQL database and
    RabbitMQ vhost) trusting the loopback provider."""
    from tests.support import services

    url = services.create_database()
    vhost = services.create_vhost()
    d = Deployment.production(tmp_path_factory.mktemp("oauth-prod"), url, vhost, {
        "WALLETD_OIDC_ISSUERS": provider.issuer,
        "WALLETD_OIDC_ALLOW": "127.0.0.0/8",
        "WALLETD_OAUTH2_X_TOKEN_URL": f"{provider.issuer}/token",
        "WALLETD_OAUTH2_X_USERINFO_URL": f"{provider.issuer}/2/users/me",
    })
    yield d
    d.stop()
    services.drop_database(url)
    services.delete_vhost(vhost)


def test_production_path_oauth2_authenticate_login_and_master_key_rotation(
        prod: Deployment, provider: OidcProvider, node_exe: str) -> None:
    from tests.e2e.test_custody import _keys_cli

    envelope = _js(node_exe, op="encryptOauth2ClientSecret", clientSecret=X_SECRET,
                   encryptionPublicKey=_discovery(prod)["encryptionPublicKey"])
    client = prod.client()
    credential_id = client.create_oauth2_credential(CreateOauth2CredentialBody(
        provider="OAUTH2_PROVIDER_X", clientId=X_CLIENT,
        encryptedClientSecret=envelope)).oauth2CredentialId
    # The sealed client secret is rewrapped by a master-key rotation and still opens.
    assert "rewrapped" in _keys_cli(prod, "rotate")
    key = make_key()
    verifier, challenge = pkce_pair()
    code = provider.authorize(client_id=X_CLIENT, redirect_uri="https://app.example/cb",
                              code_challenge=challenge, user_id="9001")
    issued = client.oauth2_authenticate(Oauth2AuthenticateBody(
        oauth2CredentialId=credential_id, authCode=code, redirectUri="https://app.example/cb",
        codeVerifier=verifier, nonce=nonce_for(key.public_key))).oidcToken
    assert _claims(issued)["sub"] == "x:9001"
    sub_id, user_id = _sign_up(prod, issued, "prod x user")
    login = prod.client().oauth_login(OauthLoginBody(oidcToken=issued, publicKey=key.public_key))
    claims = _claims(login.session)
    assert (claims["organization_id"], claims["user_id"]) == (sub_id, user_id)
    who = prod.client(Key(sub_id, user_id, key.public_key, key.private_key)).get_whoami(
        GetWhoamiBody())
    assert who.userId == user_id
    again = _oauth_login(prod, issued, key)
    assert again.status_code == 401, again.text


def test_oauth2_authenticate_encrypts_the_bearer_token_to_the_requested_key(
        dep: Deployment, provider: OidcProvider, node_exe: str) -> None:
    from infra.crypto import bundles

    root = RawApi(dep, dep.root, dep.root.organization_id)
    envelope = _js(node_exe, op="encryptOauth2ClientSecret", clientSecret=X_SECRET,
                   encryptionPublicKey=_discovery(dep)["encryptionPublicKey"])
    credential_id = root.ok("create_oauth2_credential", "ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL", {
        "provider": "OAUTH2_PROVIDER_X", "clientId": X_CLIENT,
        "encryptedClientSecret": envelope})["oauth2CredentialId"]
    verifier, challenge = pkce_pair()
    code = provider.authorize(client_id=X_CLIENT, redirect_uri="https://app.example/cb",
                              code_challenge=challenge, user_id="31337")
    target = hpke.generate_private_key()
    issued = root.ok("oauth2_authenticate", "ACTIVITY_TYPE_OAUTH2_AUTHENTICATE", {
        "oauth2CredentialId": credential_id, "authCode": code,
        "redirectUri": "https://app.example/cb", "codeVerifier": verifier,
        "nonce": nonce_for(make_key().public_key),
        "bearerTokenTargetPublicKey": hpke.uncompressed(target.public_key()).hex()})["oidcToken"]
    sealed = _claims(issued)["encrypted_bearer_token"]
    bearer = bundles.open_encrypted_bundle(sealed, target).decode()
    assert provider.access_tokens[bearer] == "31337"
