// An activity's intent, rendered for the person about to vote on it.
import { chainName, decodeEthereumTx, units } from "./eth.js";
import { code, diffView, enumText, facts, h, json, kindOf } from "./ui.js";

export function intentOf(activity) {
  return Object.values(activity.intent || {})[0] || {};
}

async function describe(api, activity) {
  try {
    return (await api.query("describe_activity", { activityId: activity.id })).variables || {};
  } catch (e) {
    return null; // an older server: the browser's own decoding stands alone
  }
}

function argValue(v) {
  if (Array.isArray(v)) return `[${v.map(argValue).join(", ")}]`;
  if (v && typeof v === "object") return `{${Object.entries(v).map(([k, x]) => `${k}: ${argValue(x)}`).join(", ")}}`;
  return String(v);
}

async function contractLabels(api) {
  try {
    const list = (await api.query("list_smart_contract_interfaces")).smartContractInterfaces || [];
    return Object.fromEntries(list.map((i) => [String(i.smartContractAddress).toLowerCase(), i.label]));
  } catch (e) {
    return {};
  }
}

function transaction(intent, vars, labels = {}) {
  const out = [];
  const type = String(intent.type || "").replace("TRANSACTION_TYPE_", "");
  const eth = vars && vars.eth && vars.eth.tx;
  let local = null;
  if (type === "ETHEREUM") {
    try { local = decodeEthereumTx(intent.unsignedTransaction); } catch (e) { local = { error: e.message }; }
  }
  const signer = (vars && vars.wallet_account && vars.wallet_account.address) || intent.signWith;
  if (type === "ETHEREUM" && (eth || (local && !local.error))) {
    const to = (eth && eth.to) || local.to;
    const value = BigInt((eth && eth.value) || (local && local.value) || 0);
    const chainId = eth && eth.chain_id != null ? eth.chain_id : local && local.chainId;
    const call = eth && eth.function_name
      ? h("div", { class: "call", "data-part": "call" },
        h("div", {}, h("strong", {}, eth.function_name), " ", code(eth.function_signature || "")),
        facts(Object.entries(eth.contract_call_args || {}).map(([k, v]) => [k, code(argValue(v))]),
          { class: "facts args", "aria-label": "Call arguments" }))
      : (((eth && eth.data) || (local && local.data) || "0x") !== "0x"
        ? h("div", { class: "muted" }, "Calls ", code(((eth && eth.data) || local.data).slice(0, 10)),
          " — no contract interface registered for this address")
        : h("span", { class: "muted" }, "a plain transfer (no call data)"));
    out.push(facts([
      ["Chain", h("span", { "data-part": "chain" }, chainName(chainId))],
      ["From", code(signer || "")],
      ["To", [code(to || "(contract creation)", { "data-part": "to" }),
        labels[String(to || "").toLowerCase()] ? h("strong", { class: "contract-label" }, " ", labels[String(to).toLowerCase()]) : null]],
      ["Value", h("span", { "data-part": "value" }, `${units(value)} ETH`, " ",
        h("span", { class: "muted" }, `(${value} wei)`))],
      ["Method", call],
      ["Transaction", `${(local && local.type) || (eth && eth.type) || ""} · nonce ${(eth && eth.nonce) ?? (local && local.nonce) ?? ""} · gas ${(eth && eth.gas) ?? (local && local.gas) ?? ""}`],
    ], { "data-part": "tx" }));
    if (local && !local.error && eth && eth.to && local.to && eth.to.toLowerCase() !== local.to.toLowerCase()) {
      out.push(h("p", { class: "error" }, "The server's reading and the browser's disagree: do not approve."));
    }
  } else {
    const chain = vars && (vars.solana || vars.tron || vars.bitcoin);
    out.push(facts([["Chain", enumText(type, "")], ["Signer", code(signer || "")],
      ["Decoded", chain ? json(chain) : h("span", { class: "muted" }, "not decoded")]]));
  }
  out.push(h("details", {}, h("summary", {}, "Raw transaction"), h("pre", { class: "json wrap" }, intent.unsignedTransaction)));
  return out;
}

function exported(kind, intent, vars) {
  const what = kind === "EXPORT_WALLET"
    ? ["The wallet's mnemonic (every account)", (vars && vars.wallet && vars.wallet.label) || "", intent.walletId]
    : kind === "EXPORT_PRIVATE_KEY"
      ? ["A private key", (vars && vars.private_key && vars.private_key.label) || "", intent.privateKeyId]
      : ["One account's private key", "", intent.address];
  return facts([
    ["Exports", h("strong", { "data-part": "export" }, what[0])],
    ["Of", [what[1] ? h("strong", {}, what[1], " ") : null, code(what[2] || "")]],
    ["Encrypted to", code(intent.targetPublicKey || "", { "data-part": "target", class: "wrap" })],
    ["Note", "Whoever holds the target key's private half can read it."],
  ]);
}

async function policyChange(api, kind, intent) {
  if (kind === "CREATE_POLICIES") {
    return (intent.policies || []).map((p) => policyText(null, p));
  }
  let current = null;
  if (intent.policyId) {
    try { current = (await api.query("get_policy", { policyId: intent.policyId })).policy; } catch (e) { current = null; }
  }
  if (kind === "DELETE_POLICY") return [h("p", {}, "Deletes this policy:"), policyText(current, null)];
  if (kind === "UPDATE_POLICY") {
    const draft = { policyName: intent.policyName ?? current?.policyName, effect: intent.policyEffect ?? current?.effect,
      condition: intent.policyCondition ?? current?.condition, consensus: intent.policyConsensus ?? current?.consensus,
      notes: intent.policyNotes ?? current?.notes };
    return [policyText(current, draft)];
  }
  return [policyText(null, intent)];
}

function policyLines(p) {
  if (!p) return "";
  return [`name: ${p.policyName || ""}`, `effect: ${p.effect || ""}`, `condition: ${p.condition || ""}`,
    `consensus: ${p.consensus || ""}`, `notes: ${p.notes || ""}`].join("\n");
}

function policyText(before, after) {
  return h("div", { class: "policy-change", "data-part": "policy" },
    h("p", { class: "muted" }, before && after ? "Changes against the policy in force:" : after ? "New policy:" : ""),
    diffView(policyLines(before), policyLines(after), "Policy change"));
}

function people(kind, intent) {
  if (kind === "CREATE_USERS") {
    return (intent.users || []).map((u) => facts([
      ["User", h("strong", {}, u.userName)], ["Email", u.userEmail], ["Phone", u.userPhoneNumber],
      ["API keys", (u.apiKeys || []).map((k) => h("div", {}, k.apiKeyName, " ", code(k.publicKey)))],
      ["Passkeys", (u.authenticators || []).map((a) => a.authenticatorName).join(", ")],
      ["Tags", (u.userTags || []).join(", ")]]));
  }
  if (kind === "CREATE_API_KEYS") {
    return [facts([["For user", code(intent.userId)], ["Keys", (intent.apiKeys || []).map((k) => h("div", {},
      h("strong", {}, k.apiKeyName), " ", code(k.publicKey), " ", enumText(k.curveType, "API_KEY_CURVE_"),
      k.expirationSeconds ? ` · expires after ${k.expirationSeconds}s` : " · no expiry"))]])];
  }
  if (kind === "CREATE_AUTHENTICATORS") {
    return [facts([["For user", code(intent.userId)],
      ["Passkeys", (intent.authenticators || []).map((a) => h("div", {}, a.authenticatorName, " ", code(a.attestation?.credentialId || "")))]])];
  }
  if (kind === "UPDATE_ROOT_QUORUM") {
    return [facts([["Threshold", String(intent.threshold)], ["Root users", (intent.userIds || []).map((u) => h("div", {}, code(u)))]])];
  }
  if (kind === "DELETE_USERS" || kind === "DELETE_API_KEYS") return [json(intent)];
  return null;
}

/** The intent of `activity` as a person reads it. */
export async function renderIntent(api, activity) {
  const kind = kindOf(activity.type);
  const intent = intentOf(activity);
  const box = h("div", { class: "intent", "data-kind": kind });
  if (kind === "SIGN_TRANSACTION") {
    const [vars, labels] = await Promise.all([describe(api, activity), contractLabels(api)]);
    box.append(...transaction(intent, vars, labels));
  } else if (kind.startsWith("EXPORT_")) {
    box.append(exported(kind, intent, await describe(api, activity)));
  } else if (kind.endsWith("_POLICY") || kind === "CREATE_POLICIES") {
    box.append(...await policyChange(api, kind, intent));
  } else if (people(kind, intent)) {
    box.append(...people(kind, intent));
  } else if (kind === "SIGN_RAW_PAYLOAD" || kind === "SIGN_RAW_PAYLOADS") {
    const vars = await describe(api, activity);
    box.append(facts([["Signer", code(intent.signWith)], ["Encoding", enumText(intent.encoding, "PAYLOAD_ENCODING_")],
      ["Hash", enumText(intent.hashFunction, "HASH_FUNCTION_")],
      ["Payload", h("pre", { class: "json wrap" }, intent.payload || (intent.payloads || []).join("\n"))],
      vars && vars.eth && vars.eth.eip_712 ? ["EIP-712", json(vars.eth.eip_712)] : null]));
  } else {
    box.append(json(intent));
  }
  return box;
}
