"""User tags and private key tags renamed and deleted in the operator's console (headless
Chromium, production path): every change an activity the page stamps itself
(``update_user_tag``, ``delete_user_tags``, ``update_private_key_tag``,
``delete_private_key_tags``), its effect read back through the API."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from tests.browser.conftest import console_shot
from tests.browser.console_support import (
    close_console,
    done,
    go,
    new_user,
    open_console,
    root_api,
    root_link,
    wait_for,
)
from tests.support.deployment import Deployment
from tests.support.raw_api import RawApi


def _unique(name: str) -> str:
    """A tag name no other test of the package's shared deployment uses."""
    return f"{name}-{uuid.uuid4().hex[:8]}"


def _user_tags(api: RawApi) -> dict[str, str]:
    return {t["tagId"]: t["tagName"] for t in api.read("list_user_tags")["userTags"]}


def _key_tags(api: RawApi) -> dict[str, str]:
    return {t["tagId"]: t["tagName"] for t in api.read("list_private_key_tags")["privateKeyTags"]}


SELECTED = "s => [...s.selectedOptions].map(o => o.value)"


def _tags_of_user(api: RawApi, user_id: str) -> list[str]:
    (user,) = [u for u in api.read("list_users")["users"] if u["userId"] == user_id]
    return list(user.get("userTags") or [])


def _tags_of_key(api: RawApi, key_id: str) -> list[str]:
    (key,) = [k for k in api.read("list_private_keys")["privateKeys"] if k["privateKeyId"] == key_id]
    return list(key.get("privateKeyTags") or [])


def test_a_user_tag_is_renamed_its_users_changed_and_deleted(browser: Any, production: Deployment,
                                                              shots: Path) -> None:
    api = root_api(production)
    first, second = _unique("auditors"), _unique("signers")
    first_id = done(api, "create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
                    {"userTagName": first, "userIds": []})["userTagId"]
    second_id = done(api, "create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
                     {"userTagName": second, "userIds": []})["userTagId"]
    alice = new_user(production, _unique("alice"), tags=[first_id])
    bob_name = _unique("bob")
    bob = new_user(production, bob_name)

    context, page = open_console(browser, root_link(production))
    go(page, "users", "#user-tags-table")
    # Rename the first tag and move it from alice to bob (update_user_tag).
    page.click("#page details:has(#user-tag-edit-form) summary")
    page.select_option("#user-tag-edit", first_id)
    assert page.input_value("#user-tag-rename") == first
    assert page.eval_on_selector("#user-tag-edit-members", SELECTED) == [alice.user_id]
    renamed = _unique("reviewers")
    page.fill("#user-tag-rename", renamed)
    page.select_option("#user-tag-edit-members", [bob.user_id])
    page.click("#user-tag-save")
    wait_for(lambda: _user_tags(api).get(first_id) == renamed)
    assert _tags_of_user(api, alice.user_id) == []
    assert _tags_of_user(api, bob.user_id) == [first_id]
    page.wait_for_selector(f"#user-tags-table tr:has-text('{renamed}'):has-text('{bob_name}')")
    console_shot(page, shots, "user-tags", docs=True)

    # A name another tag carries: the wire error's message, and nothing changes.
    go(page, "users", "#user-tags-table")
    page.click("#page details:has(#user-tag-edit-form) summary")
    page.select_option("#user-tag-edit", first_id)
    page.fill("#user-tag-rename", second)
    page.click("#user-tag-save")
    page.wait_for_selector(".toast.bad:has-text('already exists')")
    assert _user_tags(api)[first_id] == renamed

    # Delete the second tag from the keyboard (delete_user_tags).
    button = f"#user-tags-table button[aria-label='Delete user tag {second}']"
    page.focus(button)
    page.keyboard.press("Enter")
    wait_for(lambda: second_id not in _user_tags(api))
    assert first_id in _user_tags(api)
    page.wait_for_selector(".toast:has-text('Tag deleted')")
    page.wait_for_selector(button, state="detached")
    # Deleting a tag its user carries takes it off the user too.
    page.click(f"#user-tags-table button[aria-label='Delete user tag {renamed}']")
    wait_for(lambda: first_id not in _user_tags(api))
    assert _tags_of_user(api, bob.user_id) == []
    close_console(context)


def test_a_private_key_tag_is_renamed_its_keys_changed_and_deleted(
        browser: Any, production: Deployment) -> None:
    api = root_api(production)
    hot, cold = _unique("hot"), _unique("cold")
    hot_id = done(api, "create_private_key_tag", "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG",
                  {"privateKeyTagName": hot, "privateKeyIds": []})["privateKeyTagId"]
    cold_id = done(api, "create_private_key_tag", "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG",
                   {"privateKeyTagName": cold, "privateKeyIds": []})["privateKeyTagId"]
    first_key, second_key = (done(api, "create_private_keys", "ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2", {
        "privateKeys": [{"privateKeyName": _unique(name), "curve": "CURVE_SECP256K1",
                         "addressFormats": ["ADDRESS_FORMAT_ETHEREUM"], "privateKeyTags": tags}]})[
        "privateKeys"][0]["privateKeyId"] for name, tags in (("payer", [hot_id]), ("vault", [])))

    context, page = open_console(browser, root_link(production))
    go(page, "wallets", "#private-keys")
    # Rename the hot tag and move it from one key to the other (update_private_key_tag).
    page.click("#page details:has(#key-tags-list) summary")
    page.select_option("#key-tag-edit", hot_id)
    assert page.input_value("#key-tag-rename") == hot
    assert page.eval_on_selector("#key-tag-edit-keys", SELECTED) == [first_key]
    renamed = _unique("warm")
    page.fill("#key-tag-rename", renamed)
    page.select_option("#key-tag-edit-keys", [second_key])
    page.click("#key-tag-save")
    wait_for(lambda: _key_tags(api).get(hot_id) == renamed)
    assert _tags_of_key(api, first_key) == []
    assert _tags_of_key(api, second_key) == [hot_id]
    page.wait_for_selector(f"#key-tags-list li:has-text('{renamed}')", state="attached")

    # A name another tag carries: the wire error's message, and nothing changes.
    page.click("#page details:has(#key-tags-list) summary")
    page.select_option("#key-tag-edit", hot_id)
    page.fill("#key-tag-rename", cold)
    page.click("#key-tag-save")
    page.wait_for_selector(".toast.bad:has-text('already exists')")
    assert _key_tags(api)[hot_id] == renamed

    # Delete the cold tag from the keyboard (delete_private_key_tags).
    button = f"#key-tags-list button[aria-label='Delete private key tag {cold}']"
    page.focus(button)
    page.keyboard.press("Enter")
    wait_for(lambda: cold_id not in _key_tags(api))
    assert hot_id in _key_tags(api)
    page.wait_for_selector(button, state="detached")
    # Deleting a tag a key carries takes it off the key too.
    page.click("#page details:has(#key-tags-list) summary")
    page.click(f"#key-tags-list button[aria-label='Delete private key tag {renamed}']")
    wait_for(lambda: hot_id not in _key_tags(api))
    assert _tags_of_key(api, second_key) == []
    close_console(context)
