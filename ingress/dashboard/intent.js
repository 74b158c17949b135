// An activity's intent, rendered for the person about to vote on it.
import { chainName, decodeEthereumTx, units } from "./eth.js";
import { code, diffView, enumText, facts, h, json, kindOf, when } from "./ui.js";

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

// Contract labels are chosen by whoever may register an interface: the page shows who set
// one and when (the completed create_smart_contract_interface that made it), never as if
// the label were verified.
async function contractLabels(api) {
  try {
    const list = (await api.query("list_smart_contract_interfaces")).smartContractInterfaces || [];
    return Object.fromEntries(list.map((i) => [String(i.smartContractAddress).toLowerCase(), i]));
  } catch (e) {
    return {};
  }
}

async function labelRegistrant(api, iface) {
  try {
    const made = await api.all("list_activities", "activities", "id", {
      filterByType: ["ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE"],
      filterByStatus: ["ACTIVITY_STATUS_COMPLETED"] }, 1000);
    const activity = made.find((a) => Object.values(a.result || {}).some(
      (r) => r && r.smartContractInterfaceId === iface.smartContractInterfaceId));
    return activity ? (activity.votes || [])[0] || null : null;
  } catch (e) {
    return null;
  }
}

function credentialText(vote) {
  const credential = vote.publicKey || vote.credentialId || "";
  return credential ? ` with ${vote.publicKey ? "API key" : "credential"} ${credential.slice(0, 12)}…` : "";
}

async function labelNote(api, iface) {
  if (!iface) return null;
  const vote = await labelRegistrant(api, iface);
  const who = vote ? `${(vote.user && vote.user.userName) || vote.userId}${credentialText(vote)}`
    : "a user this page cannot name";
  return h("span", { class: "contract-label", "data-part": "label" },
    ` label “${iface.label}” set by `, h("span", { "data-part": "label-by" }, who), " on ",
    h("span", { "data-part": "label-at" }, when(iface.createdAt)),
    h("span", { class: "muted" }, " (chosen by its registrant, not verified)"));
}

// What the browser decoded beside what the server (describe_activity) decoded: every field
// the transaction carries. Integers compare as decimal strings, addresses and data in lower case.
const TX_TYPES = { legacy: "LEGACY", "EIP-2930": "TYPE_1", "EIP-1559": "TYPE_2", "EIP-4844": "TYPE_3",
  "EIP-7702": "TYPE_4" };

function crossCheck(eth, local) {
  const text = (v) => (v == null ? "" : String(v).toLowerCase());
  const fields = [["chain", eth.chain_id, local.chainId], ["type", eth.type, TX_TYPES[local.type] || local.type],
    ["nonce", eth.nonce, local.nonce], ["to", eth.to, local.to], ["value", eth.value, local.value],
    ["data", eth.data, local.data], ["gas", eth.gas, local.gas]];
  if (local.gasPrice != null) fields.push(["gas price", eth.gas_price, local.gasPrice]);
  if (local.maxFeePerGas != null) {
    fields.push(["max fee per gas", eth.max_fee_per_gas, local.maxFeePerGas],
      ["max priority fee per gas", eth.max_priority_fee_per_gas, local.maxPriorityFeePerGas]);
  }
  return fields.filter(([, server, browser]) => text(server) !== text(browser));
}

function mismatchView(differences) {
  return h("div", { class: "mismatch error", "data-part": "mismatch", role: "alert" },
    h("p", {}, "The server's reading and the browser's disagree: do not approve."),
    h("table", { class: "mismatch-fields" }, h("caption", {}, "Fields that differ"),
      h("thead", {}, h("tr", {}, h("th", {}, "Field"), h("th", {}, "Server"), h("th", {}, "Browser"))),
      h("tbody", {}, differences.map(([name, server, browser]) => h("tr", { "data-field": name },
        h("td", {}, name), h("td", {}, code(server == null ? "(absent)" : String(server), { class: "wrap" })),
        h("td", {}, code(browser == null ? "(absent)" : String(browser), { class: "wrap" })))))));
}

function transaction(intent, vars, label = null) {
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
      ["To", [code(to || "(contract creation)", { "data-part": "to" }), label]],
      ["Value", h("span", { "data-part": "value" }, `${units(value)} ETH`, " ",
        h("span", { class: "muted" }, `(${value} wei)`))],
      ["Method", call],
      ["Transaction", `${(local && local.type) || (eth && eth.type) || ""} · nonce ${(eth && eth.nonce) ?? (local && local.nonce) ?? ""} · gas ${(eth && eth.gas) ?? (local && local.gas) ?? ""}`],
    ], { "data-part": "tx" }));
    if (eth && local && local.error) {
      out.push(mismatchView([["decoding", "decoded", `the browser could not decode it: ${local.error}`]]));
    } else if (eth && local) {
      const differences = crossCheck(eth, local);
      if (differences.length) out.push(mismatchView(differences));
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

// Characters a reader would not see (policies stored before the server refused them):
// shown as their code point, so a diff never hides a change.
const UNSEEN = /(?![ \n\t])[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{Co}\p{Z}]/gu;

export function visible(text) {
  return String(text || "").replace(UNSEEN, (c) =>
    `⟦U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟧`);
}

function policyLines(p) {
  if (!p) return "";
  return [`name: ${visible(p.policyName)}`, `effect: ${p.effect || ""}`, `condition: ${visible(p.condition)}`,
    `consensus: ${visible(p.consensus)}`, `notes: ${visible(p.notes)}`].join("\n");
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
    let to = vars && vars.eth && vars.eth.tx && vars.eth.tx.to;
    if (!to && String(intent.type || "").endsWith("ETHEREUM")) {
      try { to = decodeEthereumTx(intent.unsignedTransaction).to; } catch (e) { to = null; }
    }
    const label = await labelNote(api, labels[String(to || "").toLowerCase()]);
    const parts = transaction(intent, vars, label);
    if (parts.some((p) => p.dataset && p.dataset.part === "mismatch")) box.dataset.mismatch = "true";
    box.append(...parts);
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
