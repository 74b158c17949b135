"""One-time code rules: alphabet, lengths, expiry bounds, typing aliases."""

from __future__ import annotations

import pytest

from infra.errors import InvalidRequest
from infra.sessions import otp


@pytest.mark.parametrize("length", [6, 7, 8, 9])
def test_codes_have_the_length_and_alphabet_asked_for(length: int) -> None:
    alnum = {otp.generate_code(length, True) for _ in range(200)}
    digits = {otp.generate_code(length, False) for _ in range(200)}
    assert all(len(c) == length and set(c) <= set(otp.CROCKFORD) for c in alnum)
    assert all(len(c) == length and c.isdigit() for c in digits)
    assert len(alnum) == 200  # no repeats in 200 draws of 32^6 or more
    assert not set("ILOU") & set("".join(alnum))  # Crockford leaves these out


@pytest.mark.parametrize("length", [0, 5, 10, -1])
def test_lengths_outside_6_to_9_are_refused(length: int) -> None:
    with pytest.raises(InvalidRequest, match="otpLength"):
        otp.validated_length(length, 9)


def test_expiration_defaults_to_five_minutes_and_caps_at_600() -> None:
    assert otp.validated_expiration(None) == 300
    assert otp.validated_expiration("600") == 600
    for bad in ("601", "0", "-5", "1e3", "abc"):
        with pytest.raises(InvalidRequest, match="600"):
            otp.validated_expiration(bad)


def test_typed_codes_are_normalized_as_crockford_decodes_them() -> None:
    assert otp.normalize_code(" abc-def o1l ", True) == "ABCDEF011"
    assert otp.normalize_code("12 34-56", False) == "123456"
