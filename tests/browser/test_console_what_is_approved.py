"""What an approver sees is what is approved (issue 31), in headless Chromium on the
production path.

Mallory is a user who may register smart contract interfaces (a policy lets her). She holds
her API key. Her cheapest route to a bad signature: label the address she wants paid
"Treasury (verified)" so that an approver trusts the destination, or (holding the server or
the network between it and the console) answer ``describe_activity`` with a reading of the
transaction that differs from what is signed. What must stop her: the console shows who set a
label and when, plainly (no bold, "label set by … on …"), and compares every field it decodes
itself (chain, type, nonce, to, value, data, gas, fees) with the server's reading, showing
each difference and not offering approval."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import rlp

from tests.browser.conftest import console_shot
from tests.browser.console_support import (
    ETH_ACCOUNT,
    close_console,
    done,
    go,
    new_user,
    open_console,
    root_api,
    settled,
    user_link,
)
from tests.support.deployment import Deployment
from tests.support.raw_api import RawApi

SEPOLIA = 11155111
PAYEE = "0x" + "5e" * 20
LABEL = "Treasury (verified)"
ABI = [{"type": "function", "name": "deposit", "stateMutability": "payable", "inputs": [],
        "outputs": []}]


def _payment() -> str:
    """EIP-1559: 0.25 ETH to the payee with a short memo as data."""
    return "02" + rlp.encode([SEPOLIA, 3, 10**9, 2 * 10**9, 50_000, bytes.fromhex(PAYEE[2:]),
                              25 * 10**16, b"\x01\x02", []]).hex()


def _tamper(page: Any, activity_id: str, change: dict[str, str]) -> None:
    """The server (or the network) answers describe_activity of ``activity_id`` with
    ``change`` in ``eth.tx``; other activities (the deployment is shared with other tests,
    whose pending activities the approvals page also describes) are answered as they are."""
    def answer(route: Any) -> None:
        response = route.fetch()
        asked = json.loads(route.request.post_data or "{}")
        if asked.get("activityId") != activity_id:
            route.fulfill(response=response)
            return
        body = response.json()
        body["variables"]["eth"]["tx"].update(change)
        route.fulfill(response=response, body=json.dumps(body))
    page.route("**/public/v1/query/describe_activity", answer)


def test_a_label_shows_who_set_it_and_a_differing_reading_is_a_mismatch(
        browser: Any, production: Deployment, shots: Path) -> None:
    root = root_api(production)
    wallet = done(root, "create_wallet", "ACTIVITY_TYPE_CREATE_WALLET",
                  {"walletName": "payments", "accounts": [ETH_ACCOUNT]})
    mallory, trader, approver = (new_user(production, n) for n in ("mallory", "payer", "checker"))
    done(root, "create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        "policyName": "mallory registers interfaces", "effect": "EFFECT_ALLOW", "notes": "",
        "condition": "activity.resource == 'SMART_CONTRACT_INTERFACE'",
        "consensus": f"approvers.any(user, user.id == '{mallory.user_id}')"})
    done(root, "create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", {
        "policyName": "the checker co-signs payments", "effect": "EFFECT_ALLOW", "notes": "",
        "condition": "activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'",
        "consensus": f"approvers.any(user, user.id == '{approver.user_id}')"})
    as_mallory = RawApi(production, mallory, production.root.organization_id)
    done(as_mallory, "create_smart_contract_interface", "ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE", {
        "smartContractAddress": PAYEE, "smartContractInterface": json.dumps(ABI),
        "type": "SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM", "label": LABEL})
    as_trader = RawApi(production, trader, production.root.organization_id)
    pending = settled(as_trader, as_trader.submit("sign_transaction", "ACTIVITY_TYPE_SIGN_TRANSACTION_V2", {
        "signWith": wallet["addresses"][0], "unsignedTransaction": _payment(),
        "type": "TRANSACTION_TYPE_ETHEREUM"}))
    assert pending["status"] == "ACTIVITY_STATUS_CONSENSUS_NEEDED", pending

    context, page = open_console(browser, user_link(production, approver.user_id))
    try:
        _look_as_the_approver(page, pending["id"], mallory, shots)
    finally:
        page.unroute("**/public/v1/query/describe_activity")
        close_console(context)


def _look_as_the_approver(page: Any, activity_id: str, mallory: Any, shots: Path) -> None:
    card_sel = f"section.approval[data-activity='{activity_id}']"
    go(page, "approvals", f"{card_sel} [data-part=tx]")
    card = page.locator(card_sel)
    # The label: its registrant and time beside it, plainly, not as a verified name.
    label = card.locator("[data-part=label]")
    text = label.inner_text()
    assert LABEL in text and "set by" in text and "not verified" in text
    assert card.locator("[data-part=label-by]").inner_text().startswith("mallory with API key "
                                                                        + mallory.public_key[:12])
    assert card.locator("[data-part=label-at]").inner_text()  # the registration time
    bold = "strong.contract-label, .contract-label strong, strong:has-text('Treasury')"
    assert card.locator(bold).count() == 0
    assert int(label.evaluate("(e) => getComputedStyle(e).fontWeight")) < 600
    # The honest reading: server and browser agree, approval is offered.
    assert card.locator("[data-part=mismatch]").count() == 0
    assert card.locator("button[data-action=approve]").is_enabled()
    console_shot(page, shots, "approval-label")

    # A reading that differs in value, then in data: shown as a mismatch, field by field.
    for change, field in (({"value": str(25 * 10**15)}, "value"), ({"data": "0x0103"}, "data"),
                          ({"max_fee_per_gas": str(9 * 10**9)}, "max fee per gas"),
                          ({"chain_id": "1"}, "chain")):
        _tamper(page, activity_id, change)
        page.reload()
        page.wait_for_selector("#who-org")
        go(page, "approvals", f"{card_sel} [data-part=mismatch]")
        mismatch = card.locator("[data-part=mismatch]")
        assert "do not approve" in mismatch.inner_text()
        rows = mismatch.locator("tbody tr")
        assert rows.count() == 1 and rows.first.get_attribute("data-field") == field
        server, browser_side = (rows.first.locator("td").nth(i).inner_text() for i in (1, 2))
        assert server == next(iter(change.values())) and browser_side != server
        assert card.locator("button[data-action=approve]").is_disabled()
        page.unroute("**/public/v1/query/describe_activity")
    console_shot(page, shots, "approval-mismatch")
