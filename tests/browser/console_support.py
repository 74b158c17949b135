"""Signing a user into the console and driving the production deployment from Python."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Any

from tests.support.deployment import ROOT, Deployment, Key
from tests.support.keys import make_key
from tests.support.raw_api import RawApi

#: Errors each open console page logged (by its browser context).
CONSOLE_ERRORS: dict[int, list[str]] = {}

ETH_ACCOUNT = {"curve": "CURVE_SECP256K1", "pathFormat": "PATH_FORMAT_BIP32",
               "path": "m/44'/60'/0'/0/0", "addressFormat": "ADDRESS_FORMAT_ETHEREUM"}


def root_link(dep: Deployment) -> str:
    """``walletd dashboard-link``, as an operator runs it."""
    out = subprocess.run([sys.executable, "-m", "walletd", "dashboard-link"], env=dep.env, cwd=ROOT,
                         capture_output=True, text=True, timeout=60, check=True)
    return out.stdout.strip().splitlines()[-1]


def user_link(dep: Deployment, user_id: str) -> str:
    """``walletd dashboard-link --user-id``: a one-time link for another user of the root
    organization (the root key creates the link's API key for that user)."""
    out = subprocess.run([sys.executable, "-m", "walletd", "dashboard-link", "--user-id", user_id],
                         env=dep.env, cwd=ROOT, capture_output=True, text=True, timeout=60,
                         check=True)
    return out.stdout.strip().splitlines()[-1]


def root_api(dep: Deployment) -> RawApi:
    return RawApi(dep, dep.root, dep.root.organization_id)


def settled(api: RawApi, response: Any) -> dict[str, Any]:
    """The activity of a submit, followed while PENDING (a busy machine answers early)."""
    assert response.status_code == 200, response.text
    activity: dict[str, Any] = response.json()["activity"]
    deadline = time.monotonic() + 60
    while activity["status"] == "ACTIVITY_STATUS_PENDING" and time.monotonic() < deadline:
        time.sleep(0.3)
        activity = api.read("get_activity", {"activityId": activity["id"]})["activity"]
    return activity


def done(api: RawApi, path: str, type_: str, parameters: dict[str, Any]) -> dict[str, Any]:
    activity = settled(api, api.submit(path, type_, parameters))
    assert activity["status"] == "ACTIVITY_STATUS_COMPLETED", activity
    (result,) = activity["result"].values()
    return result  # type: ignore[no-any-return]


def new_user(dep: Deployment, name: str, tags: list[str] | None = None) -> Key:
    key = make_key()
    result = done(root_api(dep), "create_users", "ACTIVITY_TYPE_CREATE_USERS_V3", {"users": [{
        "userName": name, "apiKeys": [key.api_key_params()], "authenticators": [],
        "oauthProviders": [], "userTags": tags or []}]})
    return Key(dep.root.organization_id, result["userIds"][0], key.public_key, key.private_key)


def wait_for(check: Any, timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError("condition not met in time")


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def open_console(browser: Any, link: str) -> tuple[Any, Any]:
    """A new browser context signed in through ``link``: (context, page)."""
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    errors = CONSOLE_ERRORS.setdefault(id(context), [])
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"Uncaught {e}"))
    page.goto(link)
    page.wait_for_selector("#who-org")
    assert "#link=" not in page.url
    return context, page


def close_console(context: Any) -> None:
    """Close a context; the page broke no Content-Security-Policy rule and threw nothing."""
    errors = CONSOLE_ERRORS.pop(id(context), [])
    context.close()
    assert not [e for e in errors if "Content Security Policy" in e or "Uncaught" in e], errors


def go(page: Any, where: str, ready: str) -> None:
    """Follow the console's route ``where`` and wait for ``ready`` and the page to settle."""
    page.evaluate(f"location.hash = '#/{where}'")
    page.wait_for_selector(ready)
    page.wait_for_function("() => !document.querySelector('#page[aria-busy]')")
