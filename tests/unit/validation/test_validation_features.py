"""Organization features and their values (infra.validation.features)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra.errors import InvalidRequest
from infra.validation.features import (
    FeatureName,
    is_enabled,
    validate_feature,
    webauthn_origins,
)

SWAGGER = Path("/work/shared/reference/public_api.swagger.json")
if not SWAGGER.exists():  # CI clones main with shared/ beside it
    SWAGGER = Path(__file__).resolve().parents[4] / "shared/reference/public_api.swagger.json"


@pytest.mark.skipif(not SWAGGER.exists(), reason="shared/ not beside the repository")
def test_every_feature_name_of_the_swagger_enum_is_known() -> None:
    enum = json.loads(SWAGGER.read_text())["definitions"]["v1FeatureName"]["enum"]
    assert sorted(enum) == sorted(f.value for f in FeatureName)


FLAGS = [
    FeatureName.ROOT_USER_EMAIL_RECOVERY,
    FeatureName.EMAIL_AUTH,
    FeatureName.EMAIL_RECOVERY,
    FeatureName.SMS_AUTH,
    FeatureName.OTP_EMAIL_AUTH,
    FeatureName.AUTH_PROXY,
    FeatureName.SOLANA_RENT_PREFUND_ENABLED,
]


@pytest.mark.parametrize("name", FLAGS)
@pytest.mark.parametrize(("value", "stored"), [("", ""), ("true", "true"), ("FALSE", "false")])
def test_flag_features_take_true_false_or_empty(name: FeatureName, value: str, stored: str) -> None:
    assert validate_feature(name.value, value) == (name, stored)


@pytest.mark.parametrize("name", FLAGS)
def test_flag_features_reject_other_values(name: FeatureName) -> None:
    with pytest.raises(InvalidRequest, match=f"invalid value for {name.value}"):
        validate_feature(name.value, "https://example.com")


@pytest.mark.parametrize(
    "value",
    [
        '["https://app.example.com", "http://localhost:3000"]',
        "https://www.turnkey.com",
        '["*"]',
        "*",
        '["android:apk-key-hash:abc"]',
    ],
)
def test_webauthn_origins_take_a_json_list_or_one_origin(value: str) -> None:
    assert validate_feature("FEATURE_NAME_WEBAUTHN_ORIGINS", value)[1] == value


@pytest.mark.parametrize(
    "value",
    [
        "",
        "[]",
        '["https://app.example.com/path"]',
        "[1]",
        '["not an origin"]',
        "[not json",
        '{"origin": "https://a.example"}',
        '["https://user@a.example"]',
        '["https://a.example:99999"]',
    ],
)
def test_webauthn_origins_reject_non_origins(value: str) -> None:
    with pytest.raises(InvalidRequest, match="FEATURE_NAME_WEBAUTHN_ORIGINS"):
        validate_feature("FEATURE_NAME_WEBAUTHN_ORIGINS", value)


def test_webauthn_origins_parse_to_the_allowed_list() -> None:
    assert webauthn_origins(None) is None
    assert webauthn_origins("") is None
    assert webauthn_origins("https://a.example/") == ["https://a.example"]
    assert webauthn_origins('["https://a.example", "*"]') == ["https://a.example", "*"]


@pytest.mark.parametrize("value", ["https://hooks.example.com/turnkey", "http://127.0.0.1:8080/x"])
def test_webhook_takes_an_http_url(value: str) -> None:
    assert validate_feature("FEATURE_NAME_WEBHOOK", value)[1] == value


@pytest.mark.parametrize(
    "value", ["", "true", "ftp://example.com", "https://", "https://u:p@example.com/", "/hook"]
)
def test_webhook_rejects_non_urls(value: str) -> None:
    with pytest.raises(InvalidRequest, match="FEATURE_NAME_WEBHOOK"):
        validate_feature("FEATURE_NAME_WEBHOOK", value)


@pytest.mark.parametrize("name", ["FEATURE_NAME_SWAP_CONFIG", "FEATURE_NAME_EARN_CONFIG"])
def test_config_features_take_a_json_object(name: str) -> None:
    assert validate_feature(name, '{"enabled": true}')[1] == '{"enabled": true}'
    for bad in ("", "[]", "true", "{"):
        with pytest.raises(InvalidRequest, match=name):
            validate_feature(name, bad)


def test_unknown_feature_names_are_rejected() -> None:
    with pytest.raises(InvalidRequest, match="unknown feature name"):
        validate_feature("FEATURE_NAME_TELEPORT", "true")


def test_oversized_values_are_rejected() -> None:
    with pytest.raises(InvalidRequest, match="longer than"):
        validate_feature("FEATURE_NAME_SWAP_CONFIG", '{"a": "' + "x" * 20000 + '"}')


def test_is_enabled_uses_documented_defaults_and_stored_values() -> None:
    assert is_enabled(FeatureName.EMAIL_AUTH, {}) is True
    assert is_enabled(FeatureName.SMS_AUTH, {}) is False
    assert is_enabled(FeatureName.SMS_AUTH, {"FEATURE_NAME_SMS_AUTH": ""}) is True
    assert is_enabled(FeatureName.EMAIL_AUTH, [("FEATURE_NAME_EMAIL_AUTH", "false")]) is False
