// Settings: the organization's name, features, root quorum and contract interfaces; the
// webhook and auth proxy pages.
import { busy, code, field, h, pagedTable, reported, select, when } from "./ui.js";

const FEATURES = ["FEATURE_NAME_ROOT_USER_EMAIL_RECOVERY", "FEATURE_NAME_WEBAUTHN_ORIGINS", "FEATURE_NAME_EMAIL_AUTH",
  "FEATURE_NAME_EMAIL_RECOVERY", "FEATURE_NAME_WEBHOOK", "FEATURE_NAME_SMS_AUTH", "FEATURE_NAME_OTP_EMAIL_AUTH",
  "FEATURE_NAME_AUTH_PROXY", "FEATURE_NAME_SOLANA_RENT_PREFUND_ENABLED"];

export async function settingsPage(api, root, nav) {
  const [org, configs, interfaces] = await Promise.all([
    api.query("get_organization").then((r) => r.organizationData),
    api.query("get_organization_configs").then((r) => r.configs || {}).catch(() => ({})),
    api.query("list_smart_contract_interfaces").then((r) => r.smartContractInterfaces || []).catch(() => [])]);
  const features = configs.features || org.features || [];
  const run = (button, path, type, params, done) => busy(button, async () => {
    const { activity } = await api.submit(path, type, params);
    if (reported(activity, done)) nav.refresh();
  });
  root.append(h("section", { class: "card" }, h("h2", {}, "Elsewhere"),
    h("ul", {}, h("li", {}, h("a", { href: "#/webhooks" }, "Webhooks"), " — endpoints, deliveries, replay"),
      h("li", {}, h("a", { href: "#/proxy" }, "Auth proxy"), " — sign-up and login for your app's users"))));
  // Name
  const name = h("input", { id: "org-name", value: org.name, autocomplete: "off" });
  const rename = h("button", { type: "submit" }, "Rename");
  root.append(h("section", { class: "card" }, h("h2", {}, "Organization"),
    h("form", { class: "filters", onsubmit: (ev) => { ev.preventDefault(); run(rename, "update_organization_name", "ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME", { organizationName: name.value.trim() }, "Renamed"); } },
      field("Name", name), h("div", { class: "field end" }, rename))));
  // Features
  const fname = select("feature-name", FEATURES.map((f) => [f, f.replace("FEATURE_NAME_", "").toLowerCase().replace(/_/g, " ")]), FEATURES[0]);
  const fvalue = h("input", { id: "feature-value", autocomplete: "off", placeholder: "value (e.g. an origin list for WebAuthn)" });
  const setBtn = h("button", { class: "primary", type: "submit", id: "feature-set" }, "Set feature");
  root.append(h("section", { class: "card" }, h("h2", {}, "Features"),
    h("p", { class: "muted" }, "Only the root quorum changes features."),
    pagedTable([
      { title: "Feature", cell: (f) => code(f.name) },
      { title: "Value", cell: (f) => f.value || "" },
      { title: "", cell: (f) => h("button", { class: "danger small", "aria-label": `Remove ${f.name}`,
        onclick: (ev) => run(ev.currentTarget, "remove_organization_feature", "ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE", { name: f.name }, "Feature removed") }, "Remove") },
    ], features, { id: "features", caption: "Features", empty: "No feature set." }),
    h("form", { class: "filters", id: "feature-form", onsubmit: (ev) => { ev.preventDefault(); run(setBtn, "set_organization_feature", "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE", { name: fname.value, value: fvalue.value }, "Feature set"); } },
      field("Feature", fname), field("Value", fvalue), h("div", { class: "field end" }, setBtn))));
  // Root quorum
  const quorum = org.rootQuorum || { threshold: 1, userIds: [] };
  const members = select("quorum-users", (org.users || []).map((u) => [u.userId, u.userName]), null, { multiple: true, size: Math.min(6, Math.max(2, (org.users || []).length)) });
  for (const o of members.options) o.selected = (quorum.userIds || []).includes(o.value);
  const threshold = h("input", { id: "quorum-threshold", type: "number", min: "1", value: String(quorum.threshold) });
  const quorumBtn = h("button", { type: "submit" }, "Update root quorum");
  root.append(h("section", { class: "card" }, h("h2", {}, "Root quorum"),
    h("p", { class: "muted" }, "Root users bypass policies together; changing them needs the current quorum."),
    h("form", { class: "filters", onsubmit: (ev) => { ev.preventDefault(); run(quorumBtn, "update_root_quorum", "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM", { threshold: Number(threshold.value), userIds: [...members.selectedOptions].map((o) => o.value) }, "Root quorum updated"); } },
      field("Root users", members), field("Threshold", threshold), h("div", { class: "field end" }, quorumBtn))));
  // Contract interfaces (what approvals decode calls with)
  const address = h("input", { id: "sci-address", autocomplete: "off", placeholder: "0x…" });
  const label = h("input", { id: "sci-label", autocomplete: "off" });
  const abi = h("textarea", { id: "sci-abi", rows: 3, spellcheck: "false", placeholder: "[{\"type\":\"function\",…}]" });
  const addBtn = h("button", { class: "primary", type: "submit" }, "Add interface");
  root.append(h("section", { class: "card" }, h("h2", {}, "Smart contract interfaces"),
    h("p", { class: "muted" }, "Approvals and policies decode calls to these addresses."),
    pagedTable([
      { title: "Label", cell: (s) => s.label },
      { title: "Address", cell: (s) => code(s.smartContractAddress) },
      { title: "Type", cell: (s) => String(s.type || "").replace("SMART_CONTRACT_INTERFACE_TYPE_", "").toLowerCase() },
      { title: "Created", cell: (s) => when(s.createdAt) },
    ], interfaces, { id: "contract-interfaces", caption: "Smart contract interfaces" }),
    h("details", {}, h("summary", {}, "Add an interface"),
      h("form", { onsubmit: (ev) => { ev.preventDefault(); run(addBtn, "create_smart_contract_interface", "ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE", { smartContractAddress: address.value.trim(), smartContractInterface: abi.value.trim(), type: "SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM", label: label.value.trim() }, "Interface added"); } },
        h("div", { class: "filters" }, field("Contract address", address), field("Label", label)), field("ABI (JSON)", abi), addBtn))));
}
