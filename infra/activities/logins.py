"""Login activities: what their registry entries share (not an activity type).

A login (``email_auth``, ``init_otp_auth``, ``otp_auth``, ``otp_login``, ``oauth``,
``oauth_login``, ``oauth2_authenticate``) creates a credential (policy resource ``AUTH``,
action ``CREATE``), runs on the accounts pool, and a parent organization may submit it for a
user of one of its sub-organizations (PROTOCOL.md §8.3).
"""

from __future__ import annotations

from infra.activities.spec import ActivitySpec, Check, Handler, Version
from infra.messaging import queues


def login_spec(path: str, *versions: Version, execute: Handler,
               check: Check | None = None) -> ActivitySpec:
    """The registry entry of the login activity ``path``."""
    return ActivitySpec(path=path, versions=versions, execute=execute, check=check,
                        pool=queues.ACCOUNTS, resource="AUTH", action="CREATE",
                        parent_may_submit=True)
