# ruff: noqa: RUF001 (this module holds text in other scripts on purpose)
"""Policy text reads as it is stored (``infra.policy.text``), and only new text is judged."""

from __future__ import annotations

import pytest

from infra.errors import InvalidRequest
from infra.policy.evaluator import compiled
from infra.policy.text import UnreadablePolicyText, check_policy_fields, check_policy_text

DENY = "wallet.label == 'cold wallet'"


@pytest.mark.parametrize(("text", "index", "line", "column", "named"), [
    # A zero-width space inside the string literal: the diff shows 'cold wallet'.
    ("wallet.label == 'cold\u200b wallet'", 21, 1, 22, "U+200B (ZERO WIDTH SPACE)"),
    # A right-to-left override reorders what follows it on screen.
    ("activity.type == 'A' \u202e|| true", 21, 1, 22, "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    ("activity.type == 'A'\n&& wallet.id == 'x\u2066'", 39, 2, 19, "U+2066 (LEFT-TO-RIGHT ISOLATE)"),
    ("x == 'a\ufeffb'", 7, 1, 8, "U+FEFF (ZERO WIDTH NO-BREAK SPACE)"),
    ("x == 'a\u00adb'", 7, 1, 8, "U+00AD (SOFT HYPHEN)"),
    ("x == 'a\u034fb'", 7, 1, 8, "U+034F (COMBINING GRAPHEME JOINER)"),
    ("x == '\u3164'", 6, 1, 7, "U+3164 (HANGUL FILLER)"),
    ("x == 'a\U000e0041'", 7, 1, 8, "U+E0041 (TAG LATIN CAPITAL LETTER A)"),
    ("x == 'a\x1bb'", 7, 1, 8, "U+001B"),
    ("x == 'a\ue000'", 7, 1, 8, "U+E000"),
    ("x == 'a\ufe0fb'", 7, 1, 8, "U+FE0F (VARIATION SELECTOR-16)"),
])
def test_invisible_characters_are_refused_at_their_position(
        text: str, index: int, line: int, column: int, named: str) -> None:
    with pytest.raises(UnreadablePolicyText) as refused:
        check_policy_text(text, field="parameters.condition")
    error = refused.value
    assert (error.index, error.line, error.column) == (index, line, column)
    assert "invisible character" in error.message and named in error.message
    assert f"at index {index} (line {line}, column {column})" in error.message
    assert error.message.startswith("invalid policy condition:")
    assert isinstance(error, InvalidRequest)  # a 400 in the wire body
    wire = error.to_wire()
    assert wire["code"] == 3 and wire["details"][0]["fieldViolations"][0]["field"] == (
        "parameters.condition")


@pytest.mark.parametrize(("space", "named"), [
    ("\u00a0", "U+00A0 (NO-BREAK SPACE)"), ("\u2009", "U+2009 (THIN SPACE)"),
    ("\u3000", "U+3000 (IDEOGRAPHIC SPACE)"), ("\u2028", "U+2028 (LINE SEPARATOR)"),
    ("\x85", "U+0085"), ("\x0b", "U+000B"),
])
def test_whitespace_other_than_the_ascii_space_is_refused(space: str, named: str) -> None:
    with pytest.raises(UnreadablePolicyText) as refused:
        check_policy_text(f"wallet.label == 'cold{space}wallet'", field="parameters.consensus")
    assert refused.value.index == 21 and named in refused.value.message


@pytest.mark.parametrize(("text", "index", "named", "scripts"), [
    # A Cyrillic a (U+0430) among Latin letters: 'wallet' on screen, another string to the engine.
    ("wallet.label == 'cold w\u0430llet'", 23, "U+0430 (CYRILLIC SMALL LETTER A)", "(Latin, Cyrillic)"),
    # In an identifier: a Greek omicron in a keyword.
    ("activity.type == 'A' && wall\u03bft.id == 'x'", 28, "U+03BF (GREEK SMALL LETTER OMICRON)",
     "(Latin, Greek)"),
    # Cyrillic first, then a Latin letter.
    ("x == '\u0441\u043e\u0440y'", 9, "U+0079 (LATIN SMALL LETTER Y)", "(Cyrillic, Latin)"),
])
def test_a_word_mixing_scripts_is_refused(text: str, index: int, named: str, scripts: str) -> None:
    with pytest.raises(UnreadablePolicyText) as refused:
        check_policy_text(text, field="parameters.policyCondition")
    assert refused.value.index == index
    assert named in refused.value.message and scripts in refused.value.message
    assert "mixes scripts" in refused.value.message


@pytest.mark.parametrize("text", [
    DENY,
    "approvers.any(user, user.id == 'x') &&\n\tactivity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'\r\n",
    "Политика казначейства: выводы только с двумя подписями",  # Cyrillic, one script a word
    "Σύνοψη πολιτικής",                                          # Greek
    "出金ポリシー: 二人の承認が必要",                              # Han with Kana (Japanese)
    "출금 정책 승인",                                             # Hangul
    "سياسة السحب",                                               # Arabic
    "café naïve résumé",                                         # Latin with diacritics
    "e\u0301t\u00e9",                                            # a combining accent
    "⚠️ treasury: no exports 🚀",                               # emoji, with its selector
    "wallet.label == 'Kasse Zürich' || wallet.label == 'Касса'",  # two scripts, two words
    "",
])
def test_readable_text_is_accepted(text: str) -> None:
    check_policy_text(text, field="parameters.notes")


def test_none_is_nothing_to_check() -> None:
    check_policy_text(None, field="parameters.notes")


def test_each_field_is_named_under_its_prefix() -> None:
    with pytest.raises(UnreadablePolicyText) as refused:
        check_policy_fields("parameters.policies[1].", policyName="ok", notes="n\u200bote")
    assert refused.value.to_wire()["details"][0]["fieldViolations"][0]["field"] == (
        "parameters.policies[1].notes")
    assert refused.value.message.startswith("invalid policy notes:")


def test_proposed_text_is_judged_and_stored_text_is_not() -> None:
    """MFA conditions and session-profile scopes are checked as ``parameters.*`` (new text);
    stored ones are compiled under their column name and still evaluate."""
    hidden = "activity.type == 'ACTIVITY_TYPE_EXPORT\u200b_WALLET'"
    with pytest.raises(UnreadablePolicyText) as refused:
        compiled(hidden, "parameters.scope")
    assert "U+200B" in refused.value.message and refused.value.index == 38
    stored = compiled(hidden, "scope")
    assert stored({"activity": {"type": "ACTIVITY_TYPE_EXPORT_WALLET"}}) is False
    assert stored({"activity": {"type": "ACTIVITY_TYPE_EXPORT\u200b_WALLET"}}) is True
