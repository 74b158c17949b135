// Wallets and private keys: list, create (account specs, address formats), accounts with
// addresses and derivation paths, export to a key the operator supplies, tags.
import { encryptWalletToBundle } from "./hpke.js";
import { busy, code, enumText, facts, field, h, pagedTable, reported, select, toast, when } from "./ui.js";

export const PRESETS = {
  ethereum: ["Ethereum", "CURVE_SECP256K1", "m/44'/60'/0'/0/{i}", "ADDRESS_FORMAT_ETHEREUM"],
  solana: ["Solana", "CURVE_ED25519", "m/44'/501'/{i}'/0'", "ADDRESS_FORMAT_SOLANA"],
  bitcoin: ["Bitcoin (native segwit)", "CURVE_SECP256K1", "m/84'/0'/0'/0/{i}", "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH"],
  "bitcoin-testnet": ["Bitcoin testnet (segwit)", "CURVE_SECP256K1", "m/84'/1'/0'/0/{i}", "ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH"],
  tron: ["Tron", "CURVE_SECP256K1", "m/44'/195'/0'/0/{i}", "ADDRESS_FORMAT_TRON"],
  cosmos: ["Cosmos", "CURVE_SECP256K1", "m/44'/118'/0'/0/{i}", "ADDRESS_FORMAT_COSMOS"],
};
const CURVES = ["CURVE_SECP256K1", "CURVE_ED25519", "CURVE_P256"];
const FORMATS = ["ADDRESS_FORMAT_ETHEREUM", "ADDRESS_FORMAT_SOLANA", "ADDRESS_FORMAT_BITCOIN_MAINNET_P2WPKH",
  "ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH", "ADDRESS_FORMAT_TRON", "ADDRESS_FORMAT_COSMOS",
  "ADDRESS_FORMAT_COMPRESSED", "ADDRESS_FORMAT_UNCOMPRESSED", "ADDRESS_FORMAT_SUI", "ADDRESS_FORMAT_APTOS",
  "ADDRESS_FORMAT_XRP", "ADDRESS_FORMAT_XLM", "ADDRESS_FORMAT_DOGE_MAINNET"];

/** One editable account spec row (control ids `${ids}-${n}-…`); returns [row, read()] */
function accountRow(n, preset = "ethereum", index = 0, ids = "acct") {
  const [, curve, path, format] = PRESETS[preset];
  const curveSel = select(`${ids}-${n}-curve`, CURVES.map((c) => [c, enumText(c, "CURVE_")]), curve);
  const pathIn = h("input", { id: `${ids}-${n}-path`, value: path.replace("{i}", index), spellcheck: "false" });
  const formatSel = select(`${ids}-${n}-format`, FORMATS.map((f) => [f, enumText(f, "ADDRESS_FORMAT_")]), format);
  const presetSel = select(`${ids}-${n}-preset`, Object.entries(PRESETS).map(([k, v]) => [k, v[0]]), preset, {
    onchange: (ev) => {
      const p = PRESETS[ev.target.value];
      curveSel.value = p[1]; pathIn.value = p[2].replace("{i}", index); formatSel.value = p[3];
    } });
  const row = h("fieldset", { class: "account-spec" }, h("legend", {}, `Account ${n + 1}`),
    h("div", { class: "filters" }, field("Chain preset", presetSel), field("Curve", curveSel),
      field("Derivation path", pathIn), field("Address format", formatSel)));
  return [row, () => ({ curve: curveSel.value, pathFormat: "PATH_FORMAT_BIP32", path: pathIn.value.trim(),
    addressFormat: formatSel.value })];
}

function accountsEditor(prefix) {
  const rows = [];
  const box = h("div", { class: "accounts-editor" });
  const add = (preset) => {
    // The new-wallet editor keeps the plain ids; the others are prefixed (ids stay unique).
    const [row, read] = accountRow(rows.length, preset, 0, prefix === "new" ? "acct" : `${prefix}-acct`);
    rows.push(read);
    box.append(row);
  };
  add("ethereum");
  const more = h("button", { type: "button", id: `${prefix}-add-account`, onclick: () => add("solana") }, "Add an account");
  return { node: h("div", {}, box, more), read: () => rows.map((r) => r()) };
}

function deleteForm(prefix, label, submit) {
  const anyway = h("input", { type: "checkbox", id: `${prefix}-anyway` });
  const go = h("button", { class: "danger", type: "submit", id: `${prefix}-delete` }, label);
  return h("details", { class: "danger-zone" }, h("summary", {}, label),
    h("form", { onsubmit: (ev) => { ev.preventDefault(); busy(go, () => submit(anyway.checked)); } },
      h("label", { class: "check", for: anyway.id }, anyway, "Delete even though it was never exported (its keys are gone for good)"), go));
}

function exportForm(prefix, label, submit) {
  const target = h("textarea", { id: `${prefix}-target`, rows: 2, spellcheck: "false",
    placeholder: "04… (uncompressed P-256 public key, hex)" });
  const out = h("div", { id: `${prefix}-bundle` });
  const go = h("button", { class: "danger", type: "submit" }, label);
  const form = h("form", { class: "export", onsubmit: (ev) => {
    ev.preventDefault();
    busy(go, async () => {
      const bundle = await submit(target.value.trim());
      if (bundle) out.replaceChildren(h("p", { class: "muted" }, "Encrypted to your key; decrypt it where that key lives."),
        h("textarea", { rows: 4, readonly: true, "aria-label": "Export bundle", class: "wrap" }, bundle));
    });
  } }, field("Target public key (the operator's)", target,
    "Only the holder of the matching private key can open the export. An export needs whatever approvals your policies demand."), go, out);
  return h("details", { class: "danger-zone" }, h("summary", {}, label), form);
}

async function walletDetail(api, wallet, nav) {
  const accounts = await api.all("list_wallet_accounts", "accounts", "walletAccountId", { walletId: wallet.walletId });
  const editor = accountsEditor("more");
  const addBtn = h("button", { class: "primary", type: "submit" }, "Derive accounts");
  const newName = h("input", { id: "wallet-rename", value: wallet.walletName, autocomplete: "off" });
  const renameBtn = h("button", { type: "submit" }, "Rename");
  return h("section", { class: "card", id: "wallet-detail", "data-wallet": wallet.walletId },
    h("h2", {}, wallet.walletName),
    facts([["Wallet id", code(wallet.walletId)], ["Created", when(wallet.createdAt)],
      ["Imported", wallet.imported ? "yes" : "no"], ["Exported", wallet.exported ? "yes" : "no"]]),
    h("form", { class: "filters", onsubmit: (ev) => {
      ev.preventDefault();
      busy(renameBtn, async () => {
        const { activity } = await api.submit("update_wallet", "ACTIVITY_TYPE_UPDATE_WALLET", { walletId: wallet.walletId, walletName: newName.value.trim() });
        if (reported(activity, "Wallet renamed")) nav.refresh();
      });
    } }, field("Name", newName), h("div", { class: "field end" }, renameBtn)),
    pagedTable([
      { title: "Address", cell: (a) => code(a.address, { class: "address" }) },
      { title: "Path", cell: (a) => code(a.path) },
      { title: "Curve", cell: (a) => enumText(a.curve, "CURVE_") },
      { title: "Format", cell: (a) => enumText(a.addressFormat, "ADDRESS_FORMAT_") },
      { title: "Export", cell: (a) => h("a", { href: `#/wallets?wallet=${wallet.walletId}&export=${a.address}` }, "export…") },
    ], accounts, { id: "wallet-accounts", caption: `Accounts of ${wallet.walletName}` }),
    h("details", {}, h("summary", {}, "Derive more accounts"),
      h("form", { onsubmit: (ev) => {
        ev.preventDefault();
        busy(addBtn, async () => {
          const { activity } = await api.submit("create_wallet_accounts", "ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS",
            { walletId: wallet.walletId, accounts: editor.read() });
          if (reported(activity, "Accounts derived")) nav.refresh();
        });
      } }, editor.node, addBtn)),
    exportForm("export-wallet", nav.params.export ? `Export account ${nav.params.export}` : "Export the wallet", async (target) => {
      const { activity, result } = nav.params.export
        ? await api.submit("export_wallet_account", "ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT", { address: nav.params.export, targetPublicKey: target })
        : await api.submit("export_wallet", "ACTIVITY_TYPE_EXPORT_WALLET", { walletId: wallet.walletId, targetPublicKey: target });
      reported(activity, "Exported");
      return result && result.exportBundle;
    }),
    deleteForm("wallet", "Delete the wallet", async (anyway) => {
      const { activity } = await api.submit("delete_wallets", "ACTIVITY_TYPE_DELETE_WALLETS",
        { walletIds: [wallet.walletId], deleteWithoutExport: anyway });
      if (reported(activity, "Wallet deleted")) nav.go("wallets");
    }));
}

function tagAdder(api, key, tags, nav) {
  const tag = select("key-add-tag", tags.filter((t) => !(key.privateKeyTags || []).includes(t.tagId)).map((t) => [t.tagId, t.tagName]), null);
  const add = h("button", { type: "submit" }, "Add to tag");
  return h("form", { class: "filters", onsubmit: (ev) => {
    ev.preventDefault();
    busy(add, async () => {
      const { activity } = await api.submit("update_private_key_tag", "ACTIVITY_TYPE_UPDATE_PRIVATE_KEY_TAG",
        { privateKeyTagId: tag.value, addPrivateKeyIds: [key.privateKeyId], removePrivateKeyIds: [] });
      if (reported(activity, "Tag added")) nav.refresh();
    });
  } }, field("Tag", tag), h("div", { class: "field end" }, add));
}

/**
 * Import a wallet from a mnemonic: init_import_wallet's enclave-signed importBundle is checked
 * against the deployment's signer key, the mnemonic is HPKE-sealed to its target key in this
 * browser (hpke.js), and only the ciphertext goes to import_wallet.
 */
function importForm(api, nav) {
  const name = h("input", { id: "import-name", required: true, autocomplete: "off" });
  const mnemonic = h("textarea", { id: "import-mnemonic", rows: 3, required: true, spellcheck: "false", autocomplete: "off",
    placeholder: "twelve to twenty-four words" });
  const passphrase = h("input", { id: "import-passphrase", type: "password", autocomplete: "off" });
  const editor = accountsEditor("import");
  const go = h("button", { class: "primary", type: "submit", id: "import-create" }, "Import wallet");
  return h("details", {}, h("summary", {}, "Import a wallet from a mnemonic"),
    h("form", { id: "import-form", onsubmit: (ev) => {
      ev.preventDefault();
      busy(go, async () => {
        const { organizationId, userId } = api.session;
        const init = await api.submit("init_import_wallet", "ACTIVITY_TYPE_INIT_IMPORT_WALLET", { userId });
        if (!reported(init.activity, "Import bundle received")) return;
        const keys = await fetch("/public/v1/discovery/keys").then((r) => r.json());
        const words = mnemonic.value.trim().split(/\s+/).join(" ");
        const encryptedBundle = await encryptWalletToBundle(words, passphrase.value, init.result.importBundle,
          keys.signerPublicKey, organizationId, userId);
        mnemonic.value = "";
        passphrase.value = "";
        const { activity, result } = await api.submit("import_wallet", "ACTIVITY_TYPE_IMPORT_WALLET", {
          userId, walletName: name.value.trim(), encryptedBundle, accounts: editor.read() });
        if (reported(activity, `Wallet imported with ${(result.addresses || []).length} accounts`)) nav.go(`wallets?wallet=${result.walletId}`);
      });
    } }, h("p", { class: "muted" }, "The mnemonic is encrypted in this browser to a key only the signer holds; it is never sent in clear."),
    h("div", { class: "filters" }, field("Name", name), field("BIP-39 passphrase (optional)", passphrase)),
    field("Mnemonic", mnemonic), editor.node, h("div", { class: "actions" }, go)));
}

/** Rename a private key tag and choose the keys that carry it (update_private_key_tag). */
function keyTagEditor(api, tags, keys, nav) {
  const which = select("key-tag-edit", tags.map((t) => [t.tagId, t.tagName]), tags[0].tagId);
  const rename = h("input", { id: "key-tag-rename", autocomplete: "off", required: true });
  const holders = select("key-tag-edit-keys", keys.map((k) => [k.privateKeyId, k.privateKeyName]), null, { multiple: true, size: Math.min(5, Math.max(2, keys.length)) });
  const save = h("button", { type: "submit", id: "key-tag-save" }, "Save tag");
  const chosen = () => tags.find((t) => t.tagId === which.value);
  const carrying = (t) => new Set(keys.filter((k) => (k.privateKeyTags || []).includes(t.tagId)).map((k) => k.privateKeyId));
  const load = () => {
    const t = chosen();
    rename.value = t.tagName;
    const had = carrying(t);
    for (const o of holders.options) o.selected = had.has(o.value);
  };
  which.addEventListener("change", load);
  load();
  return h("form", { id: "key-tag-edit-form", onsubmit: (ev) => {
    ev.preventDefault();
    busy(save, async () => {
      const t = chosen();
      const had = carrying(t);
      const want = new Set([...holders.selectedOptions].map((o) => o.value));
      const { activity } = await api.submit("update_private_key_tag", "ACTIVITY_TYPE_UPDATE_PRIVATE_KEY_TAG", {
        privateKeyTagId: t.tagId, newPrivateKeyTagName: rename.value.trim(),
        addPrivateKeyIds: [...want].filter((id) => !had.has(id)), removePrivateKeyIds: [...had].filter((id) => !want.has(id)) });
      if (reported(activity, "Tag saved")) nav.refresh();
    });
  } }, h("h3", {}, "Rename a tag or change its keys"),
  h("div", { class: "filters" }, field("Tag", which), field("New name", rename), field("Keys", holders),
    h("div", { class: "field end" }, save)));
}

export async function walletsPage(api, root, nav) {
  const [wallets, keys, tags] = await Promise.all([
    api.query("list_wallets").then((r) => r.wallets || []),
    api.query("list_private_keys").then((r) => r.privateKeys || []),
    api.query("list_private_key_tags").then((r) => r.privateKeyTags || []).catch(() => [])]);
  // -- create a wallet
  const name = h("input", { id: "wallet-name", required: true, autocomplete: "off" });
  const words = select("wallet-words", ["12", "15", "18", "21", "24"], "12");
  const editor = accountsEditor("new");
  const create = h("button", { class: "primary", type: "submit", id: "wallet-create" }, "Create wallet");
  root.append(h("section", { class: "card" }, h("h2", {}, "New wallet"),
    h("form", { id: "wallet-form", onsubmit: (ev) => {
      ev.preventDefault();
      busy(create, async () => {
        const { activity, result } = await api.submit("create_wallet", "ACTIVITY_TYPE_CREATE_WALLET", {
          walletName: name.value.trim(), accounts: editor.read(), mnemonicLength: Number(words.value) });
        if (reported(activity, `Wallet created with ${(result.addresses || []).length} accounts`)) nav.go(`wallets?wallet=${result.walletId}`);
      });
    } }, h("div", { class: "filters" }, field("Name", name), field("Mnemonic words", words)), editor.node, h("div", { class: "actions" }, create)),
    importForm(api, nav)));
  // -- wallets
  root.append(h("section", { class: "card" }, h("h2", {}, `Wallets (${wallets.length})`),
    pagedTable([
      { title: "Name", cell: (w) => h("a", { href: `#/wallets?wallet=${w.walletId}` }, w.walletName) },
      { title: "Id", cell: (w) => code(w.walletId) },
      { title: "Created", cell: (w) => when(w.createdAt) },
      { title: "Exported", cell: (w) => (w.exported ? "yes" : "no") },
    ], wallets, { id: "wallets", caption: "Wallets", onOpen: (w) => nav.go(`wallets?wallet=${w.walletId}`) })));
  const chosen = wallets.find((w) => w.walletId === nav.params.wallet);
  if (chosen) {
    const detail = await walletDetail(api, chosen, nav);
    root.insertBefore(detail, root.children[1]);
  }
  // -- private keys
  const keyName = h("input", { id: "key-name", required: true, autocomplete: "off" });
  const keyCurve = select("key-curve", CURVES.map((c) => [c, enumText(c, "CURVE_")]), "CURVE_SECP256K1");
  const keyFormats = select("key-formats", FORMATS.map((f) => [f, enumText(f, "ADDRESS_FORMAT_")]), "ADDRESS_FORMAT_ETHEREUM", { multiple: true, size: 4 });
  const keyTags = select("key-tags", tags.map((t) => [t.tagId, t.tagName]), null, { multiple: true, size: Math.min(4, Math.max(2, tags.length)) });
  const keyBtn = h("button", { class: "primary", type: "submit", id: "key-create" }, "Create private key");
  const tagName = h("input", { id: "tag-name", autocomplete: "off" });
  const tagBtn = h("button", { type: "submit" }, "Create tag");
  root.append(h("section", { class: "card" }, h("h2", {}, `Private keys (${keys.length})`),
    pagedTable([
      { title: "Name", cell: (k) => k.privateKeyName },
      { title: "Curve", cell: (k) => enumText(k.curve, "CURVE_") },
      { title: "Addresses", cell: (k) => (k.addresses || []).map((a) => h("div", {}, code(a.address), " ", h("span", { class: "muted" }, enumText(a.format, "ADDRESS_FORMAT_")))) },
      { title: "Tags", cell: (k) => (k.privateKeyTags || []).map((id) => (tags.find((t) => t.tagId === id) || {}).tagName || id).join(", ") },
      { title: "Export", cell: (k) => h("a", { href: `#/wallets?key=${k.privateKeyId}` }, "export…") },
    ], keys, { id: "private-keys", caption: "Private keys" }),
    h("details", {}, h("summary", {}, "New private key"),
      h("form", { id: "key-form", onsubmit: (ev) => {
        ev.preventDefault();
        busy(keyBtn, async () => {
          const { activity } = await api.submit("create_private_keys", "ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2", { privateKeys: [{
            privateKeyName: keyName.value.trim(), curve: keyCurve.value,
            addressFormats: [...keyFormats.selectedOptions].map((o) => o.value),
            privateKeyTags: [...keyTags.selectedOptions].map((o) => o.value) }] });
          if (reported(activity, "Private key created")) nav.refresh();
        });
      } }, h("div", { class: "filters" }, field("Name", keyName), field("Curve", keyCurve),
        field("Address formats", keyFormats), field("Tags", keyTags)), keyBtn)),
    h("details", {}, h("summary", {}, `Private key tags (${tags.length})`),
      h("ul", { id: "key-tags-list" }, tags.map((t) => h("li", { "data-tag": t.tagId }, t.tagName, " ", code(t.tagId), " ",
        h("button", { class: "danger small", type: "button", "aria-label": `Delete private key tag ${t.tagName}`,
          onclick: (ev) => busy(ev.currentTarget, async () => {
            const { activity } = await api.submit("delete_private_key_tags", "ACTIVITY_TYPE_DELETE_PRIVATE_KEY_TAGS",
              { privateKeyTagIds: [t.tagId] });
            if (reported(activity, "Tag deleted")) nav.refresh();
          }) }, "Delete")))),
      h("form", { class: "row", onsubmit: (ev) => {
        ev.preventDefault();
        busy(tagBtn, async () => {
          const { activity } = await api.submit("create_private_key_tag", "ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG",
            { privateKeyTagName: tagName.value.trim(), privateKeyIds: [] });
          if (reported(activity, "Tag created")) nav.refresh();
        });
      } }, field("Tag name", tagName), tagBtn),
      tags.length ? keyTagEditor(api, tags, keys, nav) : null)));
  const key = keys.find((k) => k.privateKeyId === nav.params.key);
  if (key) {
    root.append(h("section", { class: "card", id: "key-detail" }, h("h2", {}, key.privateKeyName),
      facts([["Id", code(key.privateKeyId)], ["Public key", code(key.publicKey, { class: "wrap" })], ["Created", when(key.createdAt)]]),
      tagAdder(api, key, tags, nav),
      exportForm("export-key", "Export the private key", async (target) => {
        const { activity, result } = await api.submit("export_private_key", "ACTIVITY_TYPE_EXPORT_PRIVATE_KEY",
          { privateKeyId: key.privateKeyId, targetPublicKey: target });
        reported(activity, "Exported");
        return result && result.exportBundle;
      }),
      deleteForm("key", "Delete the private key", async (anyway) => {
        const { activity } = await api.submit("delete_private_keys", "ACTIVITY_TYPE_DELETE_PRIVATE_KEYS",
          { privateKeyIds: [key.privateKeyId], deleteWithoutExport: anyway });
        if (reported(activity, "Private key deleted")) nav.go("wallets");
      })));
  }
  if (!wallets.length && !keys.length) toast("No wallets or keys yet: create one above.");
}
