"""Access controls the official clients speak (issue 24; docs/ACCESS.md).

* :mod:`infra.access.ip_allowlist` — organization and API-key IP allow-lists;
* :mod:`infra.access.session_profiles` — scoped, bounded sessions;
* :mod:`infra.pipeline.mfa` — per-user MFA policies and the activities waiting for them
  (:mod:`infra.access.mfa_view`: their wire view);
* :mod:`infra.access.origin` — the client address of the request being served;
* :mod:`infra.access.guard` — the one per-request check ``authenticate`` calls;
* :mod:`infra.access.changes` — per-process caches forgotten when the controls change.
"""
