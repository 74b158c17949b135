"""Caps on the arrays of one request: the work a single activity may ask for.

Every unbounded array of an activity's parameters has a cap here; a longer array is a 400
(the parameter model's ``max_length``, so the ingress refuses it before anything is stored).
The numbers and their reasons are listed in docs/CONFORMANCE.md ("Bounded work per request").
They sit at or above the per-organization resource limits (``infra.validation.limits``), so
no request that could succeed is refused by a cap.
"""

from __future__ import annotations

from typing import Final

#: ``sign_raw_payloads.payloads``: one signing thread signs 100 payloads in a few
#: milliseconds and the stored result stays small; 60,000 cost seconds and 10 MB.
PAYLOADS: Final = 100
#: Accounts derived in one request (create/import wallet, create_wallet_accounts, a sign-up's
#: wallet): each is a derivation and a row.
ACCOUNTS: Final = 100
#: Users in ``create_users`` / root users of one sub-organization / ``update_root_quorum``:
#: the per-organization user limit is 100.
USERS: Final = 100
#: API keys, passkeys or OAuth providers given for one user in one request: the per-user
#: limits are 10 each.
CREDENTIALS_PER_USER: Final = 10
#: Tags named in one request (a user's or a key's tags): the per-organization tag limit is 100.
TAGS: Final = 100
#: Policies in ``create_policies``: the per-organization policy limit is 100.
POLICIES: Final = 100
#: Private keys in ``create_private_keys``: each is a key generation (the limit is 1,000 per
#: organization; 100 per request keeps one request's work bounded).
PRIVATE_KEYS: Final = 100
#: Address formats of one key: there are fewer than 30 formats.
ADDRESS_FORMATS: Final = 32
#: Invitations in one request: the per-organization limit is 100.
INVITATIONS: Final = 100
#: Webhook subscriptions of one endpoint: one per event type and filter.
SUBSCRIPTIONS: Final = 32
#: Ids in one delete or tag update (users, keys, wallets, policies, tags, providers, ...).
IDS: Final = 1000
#: Status or type filters of ``list_activities``: there are fewer than 200 activity types.
FILTERS: Final = 200
