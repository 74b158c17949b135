"""Hard denials checked before anything else, whatever the policies or root quorum say.

These are the rules PROTOCOL.md §8.4 calls "feature gates and hard denials"
(organizations.mdx): requests that no policy and no quorum can make acceptable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from infra.policy.variables import activity_kind

IMPORT_KINDS = frozenset(
    {"INIT_IMPORT_WALLET", "IMPORT_WALLET", "INIT_IMPORT_PRIVATE_KEY", "IMPORT_PRIVATE_KEY"}
)
IMPORT_OWN_USER = "all import requests must target your own user"


def hard_denial(activity_type: str, parameters: Mapping[str, Any], requester_id: str) -> str | None:
    """The reason ``activity_type`` is refused outright for ``requester_id``, or ``None``."""
    kind = activity_kind(activity_type)
    if kind in IMPORT_KINDS and parameters.get("userId") != requester_id:
        return IMPORT_OWN_USER
    return None
