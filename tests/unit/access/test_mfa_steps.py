"""MFA policy steps: validation and which approval fits a step (no database)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from infra.errors import InvalidRequest
from infra.pipeline.mfa import Method, _fits, normalise_steps


@dataclass
class M:
    type: str
    id: str | None = None


@dataclass
class S:
    any: list[M] = field(default_factory=list)


def test_steps_are_kept_in_order_with_optional_ids() -> None:
    steps = normalise_steps([S([M("AUTHENTICATION_TYPE_EMAIL_OTP")]),
                             S([M("AUTHENTICATION_TYPE_PASSKEY", "pk-1"),
                                M("AUTHENTICATION_TYPE_SESSION", "profile-1")])])
    assert steps == [{"any": [{"type": "AUTHENTICATION_TYPE_EMAIL_OTP"}]},
                     {"any": [{"type": "AUTHENTICATION_TYPE_PASSKEY", "id": "pk-1"},
                              {"type": "AUTHENTICATION_TYPE_SESSION", "id": "profile-1"}]}]


@pytest.mark.parametrize("steps", [[], [S([])], [S([M("AUTHENTICATION_TYPE_FINGERPRINT")])],
                                   [S([M("AUTHENTICATION_TYPE_PASSKEY")])] * 11])
def test_invalid_steps_are_refused(steps: list[S]) -> None:
    with pytest.raises(InvalidRequest):
        normalise_steps(steps)


def test_an_approval_fits_a_step_by_type_and_id_when_one_is_named() -> None:
    step = (("AUTHENTICATION_TYPE_PASSKEY", ""), ("AUTHENTICATION_TYPE_SESSION", "profile-1"))
    assert _fits(Method("AUTHENTICATION_TYPE_PASSKEY", "any-passkey"), step)
    assert _fits(Method("AUTHENTICATION_TYPE_SESSION", "profile-1"), step)
    assert not _fits(Method("AUTHENTICATION_TYPE_SESSION", ""), step)  # no profile
    assert not _fits(Method("AUTHENTICATION_TYPE_SESSION", "profile-2"), step)
    assert not _fits(Method("AUTHENTICATION_TYPE_API_KEY", "key"), step)
