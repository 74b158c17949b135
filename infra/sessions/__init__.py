"""Sessions and logins (issue 12): service keys, session JWTs, login credentials, codes.

Who owns what (two engineers built this package side by side):

* **A — keys, sessions, one-time codes, delivery**: ``service_keys`` (notarizer,
  verification-token and encryption keys, versioned; ``walletd keys service-*``),
  ``tokens`` (the shared interface below),
  ``otp`` / ``verification`` (codes, verification tokens, client signatures),
  ``attested`` (``X-Stamp-Attested`` dispatch and its verification-token scheme),
  ``delivery`` (SMTP, Twilio-style SMS, outbox), and the activities ``stamp_login``,
  ``create_read_write_session``, ``create_read_only_session``, ``init_otp``, ``verify_otp``,
  ``otp_login``, ``init_otp_auth``, ``otp_auth``, ``email_auth``, ``init_user_email_recovery``.
* **B — OAuth / OIDC**: OIDC token verification, the OIDC scheme of ``X-Stamp-Attested``,
  ``oauth_login``, ``oauth``, ``oauth2_authenticate`` and the OAuth2 credential activities.

Interface for B (``infra.sessions.tokens`` unless named otherwise):

* ``issue_session_jwt(services, *, user_id, organization_id, public_key_hex, session_type,
  expiration_seconds, now, session=None) -> str`` — the ``session`` result of a login,
  signed by the current notarizer key. Workers only.
* ``add_login_credential(ctx, *, user_id, public_key_hex, expiration_seconds,
  invalidate_existing, name, credential_type="CREDENTIAL_TYPE_LOGIN") -> str`` — the
  session key as an expiring API key of the user (in the user's own organization); returns
  its id. Eviction of the oldest expiring key happens on flush (``infra.identity.quotas``).
* ``credential_bundle(target_public_key_hex, private_key_bytes) -> str`` and
  ``new_session_key() -> (compressed public hex, private bytes)`` for ``credentialBundle``.
* ``resolve_login_user(session, organization_id, *, email=, phone_number=, oauth=(iss, sub,
  aud), public_key=) -> LoginTarget(organization_id, user_id)`` — PROTOCOL.md §6 "Org
  resolution for logins".
* ``p256_public_key(hex, field)`` — a client key in compressed form or a 400.
* ``DEFAULT_SESSION_SECONDS`` (900).
* Service keys: ``infra.services.service_keys(services).current(session,
  ENCRYPTION)`` / ``.live(session, ENCRYPTION)`` give the encryption key pairs (workers);
  ``infra.sessions.service_keys.current_public_key(session, purpose)`` the public halves.
* ``X-Stamp-Attested``: each scheme is an ``infra.auth.attested.AttestedScheme``
  (``ATTESTED_SCHEME`` of ``infra.sessions.attested`` / ``attested_oidc``), wired by name in
  ``infra.bootstrap.stamps()``.
* Token use (one sign-up and one login per verification or OIDC token):
  ``infra.sessions.verification.record_token_use(session, token_id, usage, fingerprint)``.
"""
