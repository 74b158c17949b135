"""Access controls the official clients speak (issue 24; docs/ACCESS.md).

* :mod:`infra.access.ip_allowlist` — organization and API-key IP allow-lists;
* :mod:`infra.access.session_profiles` — scoped, bounded sessions;
* :mod:`infra.pipeline.mfa` — per-user MFA policies and the activities waiting for them
  (:mod:`infra.access.mfa_view`: their wire view);
* :mod:`infra.access.origin` — the client address of the request being served;
* :mod:`infra.access.guard` — ``authorize``: the one per-request check, called by submit and
  query right after ``authenticate`` with the request as the route parsed it;
* :mod:`infra.access.issuance` — what a credential inherits from the one whose activity
  issues it (session profile, bound, lineage), and what a profiled session may run only by
  name;
* :mod:`infra.access.changes` — per-process caches forgotten when the controls change.
"""
