"""A wallet imported from a mnemonic in the operator's console (headless Chromium, production
path): ``init_import_wallet``'s enclave-signed importBundle is checked in the browser against
the deployment's signer key, the mnemonic HPKE-sealed to it with WebCrypto (PROTOCOL.md §5.3)
and only the ciphertext sent in ``import_wallet``; the imported accounts are read back through
the API."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from eth_account import Account

from infra.crypto import bundles, hpke
from tests.browser.conftest import console_shot
from tests.browser.console_support import close_console, go, open_console, root_api, root_link
from tests.support.deployment import Deployment


def test_a_wallet_is_imported_from_a_mnemonic_encrypted_in_the_browser(
        browser: Any, production: Deployment, shots: Path) -> None:
    Account.enable_unaudited_hdwallet_features()
    _, mnemonic = Account.create_with_mnemonic()
    passphrase = "correct horse"
    expected = Account.from_mnemonic(mnemonic, passphrase=passphrase,
                                     account_path="m/44'/60'/0'/0/0").address
    name = f"imported-{uuid.uuid4().hex[:8]}"
    api = root_api(production)

    context, page = open_console(browser, root_link(production))
    go(page, "wallets", "#wallet-form")
    page.click("#page details:has(#import-form) summary")
    page.fill("#import-name", name)
    console_shot(page, shots, "wallet-import", docs=True)  # the form, before any secret
    page.fill("#import-mnemonic", "  " + mnemonic.replace(" ", "\n  ") + "\n")  # spacing is tidied
    page.fill("#import-passphrase", passphrase)
    assert page.input_value("#import-acct-0-path") == "m/44'/60'/0'/0/0"
    page.click("#import-create")
    page.wait_for_selector(f"#wallet-detail h2:has-text('{name}')")
    wallet_id = page.get_attribute("#wallet-detail", "data-wallet")
    (wallet,) = [w for w in api.read("list_wallets")["wallets"] if w["walletId"] == wallet_id]
    assert wallet["walletName"] == name and wallet["imported"] is True
    (account,) = api.read("list_wallet_accounts", {"walletId": wallet_id})["accounts"]
    assert account["address"] == expected
    assert account["address"] in page.inner_text("#wallet-accounts")
    # The mnemonic went only as ciphertext: no activity's parameters carry it.
    activities = api.read("list_activities", {"filterByType": ["ACTIVITY_TYPE_IMPORT_WALLET"]})["activities"]
    (imported,) = [a for a in activities if name in str(a["intent"])]
    assert "encappedPublic" in imported["intent"]["importWalletIntent"]["encryptedBundle"]
    assert mnemonic not in json.dumps(imported) and passphrase not in json.dumps(imported)

    # The browser refuses an import bundle another key signed, or one whose signature fails.
    target = hpke.uncompressed(hpke.generate_private_key().public_key())
    signer_hex = page.evaluate(
        "() => fetch('/public/v1/discovery/keys').then((r) => r.json()).then((k) => k.signerPublicKey)")
    forged = bundles.build_import_bundle(bundles.ServiceSigner.generate(), user_id=production.root.user_id,
                                         organization_id=production.root.organization_id,
                                         target_public_key=target)
    refused = """async ([bundle, signer, org, user]) => {
      const m = await import('/dashboard/hpke.js');
      try { await m.encryptWalletToBundle('abandon', '', bundle, signer, org, user); return 'sealed'; }
      catch (e) { return e.message; }
    }"""
    args = [forged, signer_hex, production.root.organization_id, production.root.user_id]
    assert "not signed by this deployment's signer key" in page.evaluate(refused, args)
    # Claiming the forger's key as the signer: the wrapper names it, but the signature must verify too.
    wrapper = json.loads(forged)
    wrapper["data"] = wrapper["data"][:-2] + ("00" if wrapper["data"][-2:] != "00" else "01")
    args = [json.dumps(wrapper), wrapper["enclaveQuorumPublic"],
            production.root.organization_id, production.root.user_id]
    assert "signature does not verify" in page.evaluate(refused, args)
    close_console(context)
