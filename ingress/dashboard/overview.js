// Overview: the organization, its root quorum, sub-organizations as a searchable paginated
// tree, counts, and the service's state.
import { busy, code, facts, field, h, reported, select, when } from "./ui.js";

const PAGE = 20;
const FINDERS = [["", "Name or id (this page)"], ["EMAIL", "Email of a user"], ["PHONE_NUMBER", "Phone number"],
  ["PUBLIC_KEY", "API key or passkey public key"], ["OIDC_TOKEN", "OIDC token"]];

async function orgName(api, id) {
  try {
    return (await api.query("get_organization", { organizationId: id })).organizationData.name;
  } catch (e) {
    return "";
  }
}

/** One level of sub-organizations under `parentId`, paginated by cursor, each expandable. */
function subTree(api, parentId, depth = 0) {
  const list = h("ul", { class: "tree", role: depth ? "group" : "tree", "aria-label": depth ? null : "Sub-organizations" });
  const box = h("div", { class: "subtree" }, list);
  const cursors = [];
  let search = { finder: "", text: "" };
  const pager = h("nav", { class: "pager", "aria-label": "Sub-organization pages" });
  async function load(after) {
    list.setAttribute("aria-busy", "true");
    const body = { organizationId: parentId, paginationOptions: { limit: String(PAGE), ...(after ? { after } : {}) } };
    if (search.finder && search.text) Object.assign(body, { filterType: search.finder, filterValue: search.text });
    let ids;
    try {
      ids = (await api.query("list_suborgs", body)).organizationIds || [];
    } catch (e) {
      // Credentials reach an organization and its direct sub-organizations only.
      list.replaceChildren(h("li", { class: "muted" }, `Not readable from this organization (${e.message}).`));
      list.removeAttribute("aria-busy");
      return;
    }
    const names = await Promise.all(ids.map((id) => orgName(api, id)));
    let rows = ids.map((id, i) => ({ id, name: names[i] }));
    if (!search.finder && search.text) {
      const t = search.text.toLowerCase();
      rows = rows.filter((r) => r.name.toLowerCase().includes(t) || r.id.includes(t));
    }
    list.replaceChildren(...(rows.length ? rows.map((r) => {
      const toggle = h("button", { class: "small", type: "button", "aria-expanded": "false", "aria-label": `Show sub-organizations of ${r.name || r.id}` }, "▸");
      const item = h("li", { role: "treeitem", "aria-expanded": "false", "data-org": r.id },
        toggle, " ", r.name ? h("strong", {}, r.name) : h("span", { class: "muted" }, "(name readable from its parent only)"), " ", code(r.id));
      toggle.addEventListener("click", () => {
        const open = toggle.getAttribute("aria-expanded") === "true";
        toggle.setAttribute("aria-expanded", String(!open));
        item.setAttribute("aria-expanded", String(!open));
        toggle.textContent = open ? "▸" : "▾";
        const child = item.querySelector(":scope > .subtree");
        if (open) { if (child) child.remove(); } else item.append(subTree(api, r.id, depth + 1));
      });
      return item;
    }) : [h("li", { class: "muted" }, depth ? "No sub-organizations." : "None found.")]));
    list.removeAttribute("aria-busy");
    const prev = h("button", { class: "small", type: "button", disabled: !cursors.length, onclick: () => { cursors.pop(); load(cursors[cursors.length - 1]); } }, "‹ Previous");
    const next = h("button", { class: "small", type: "button", disabled: ids.length < PAGE,
      onclick: () => { cursors.push(ids[ids.length - 1]); load(ids[ids.length - 1]); } }, "Next ›");
    pager.replaceChildren(prev, h("span", { class: "muted" }, `Page ${cursors.length + 1} · ${rows.length} shown`), next);
    pager.classList.toggle("quiet", !cursors.length && ids.length < PAGE);
  }
  if (depth === 0) {
    const finder = select("suborg-finder", FINDERS, "");
    const text = h("input", { id: "suborg-search", type: "search", autocomplete: "off" });
    box.prepend(h("form", { class: "filters", role: "search", "aria-label": "Find sub-organizations", onsubmit: (ev) => {
      ev.preventDefault();
      search = { finder: finder.value, text: text.value.trim() };
      cursors.length = 0;
      load();
    } }, field("Find by", finder), field("Search", text), h("div", { class: "field end" }, h("button", { type: "submit", id: "suborg-find" }, "Find"))));
  }
  box.append(pager);
  load();
  return box;
}

async function optional(api, name, body = {}) {
  try {
    return await api.query(name, body);
  } catch (e) {
    return null;
  }
}

export async function overviewPage(api, root, nav) {
  const [orgAnswer, wallets, keys, policies, pending, activities, subs, status, openapi] = await Promise.all([
    api.query("get_organization"),
    api.query("list_wallets").then((r) => r.wallets || []),
    api.query("list_private_keys").then((r) => r.privateKeys || []),
    api.query("list_policies").then((r) => r.policies || []),
    api.query("list_activities", { filterByStatus: ["ACTIVITY_STATUS_CONSENSUS_NEEDED"], paginationOptions: { limit: "100" } }).then((r) => r.activities || []),
    api.query("list_activities", { paginationOptions: { limit: "100" } }).then((r) => r.activities || []),
    api.query("list_suborgs", { paginationOptions: { limit: "100" } }).then((r) => r.organizationIds || []),
    optional(api, "get_service_status"),
    fetch("/public/v1/openapi.json").then((r) => r.json()).catch(() => ({}))]);
  const org = orgAnswer.organizationData;
  const users = org.users || [];
  const byId = Object.fromEntries(users.map((u) => [u.userId, u.userName]));
  const quorum = org.rootQuorum || {};
  const count = (label, n, href, id) => h("a", { class: "count", href, id }, h("b", {}, n), label);
  root.append(h("section", { class: "card" }, h("h2", {}, org.name),
    facts([["Organization id", code(org.organizationId, { id: "overview-org-id" })],
      ["Root quorum", h("span", { id: "overview-quorum" }, `${quorum.threshold} of ${(quorum.userIds || []).length}: `,
        (quorum.userIds || []).map((u) => byId[u] || u).join(", "))],
      ["Features", (org.features || []).map((f) => h("div", {}, code(f.name), " ", f.value)).concat(
        (org.features || []).length ? [] : [h("span", { class: "muted" }, "none set")])]]),
    h("div", { class: "counts", id: "overview-counts" },
      count("users", users.length, "#/users", "count-users"),
      count("wallets", wallets.length, "#/wallets", "count-wallets"),
      count("private keys", keys.length, "#/wallets", "count-keys"),
      count("policies", policies.length, "#/policies", "count-policies"),
      count("waiting for votes", pending.length, "#/approvals", "count-pending"),
      count("recent activities", activities.length >= 100 ? "100+" : activities.length, "#/activities", "count-activities"),
      count("sub-organizations", subs.length >= 100 ? "100+" : subs.length, "#/overview", "count-suborgs"))));
  const subName = h("input", { id: "suborg-name", required: true, autocomplete: "off" });
  const subUser = h("input", { id: "suborg-user", required: true, autocomplete: "off", value: "admin" });
  const subEmail = h("input", { id: "suborg-email", type: "email", autocomplete: "off" });
  const subKey = h("input", { id: "suborg-key", autocomplete: "off", spellcheck: "false", placeholder: "02…/03… (optional)" });
  const subBtn = h("button", { class: "primary", type: "submit", id: "suborg-create" }, "Create sub-organization");
  const subForm = h("form", { id: "suborg-form", onsubmit: (ev) => {
    ev.preventDefault();
    busy(subBtn, async () => {
      const rootUser = { userName: subUser.value.trim(), apiKeys: [], authenticators: [], oauthProviders: [] };
      if (subEmail.value.trim()) rootUser.userEmail = subEmail.value.trim();
      if (subKey.value.trim()) rootUser.apiKeys = [{ apiKeyName: "root key", publicKey: subKey.value.trim(), curveType: "API_KEY_CURVE_P256" }];
      const { activity } = await api.submit("create_sub_organization", "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", {
        subOrganizationName: subName.value.trim(), rootQuorumThreshold: 1, rootUsers: [rootUser] });
      if (reported(activity, "Sub-organization created")) nav.refresh();
    });
  } }, h("div", { class: "filters" }, field("Name", subName), field("Root user", subUser), field("Root user's email", subEmail),
    field("Root user's API public key", subKey), h("div", { class: "field end" }, subBtn)));
  root.append(h("section", { class: "card", id: "suborgs" }, h("h2", {}, "Sub-organizations"), subTree(api, org.organizationId),
    h("details", {}, h("summary", {}, "New sub-organization"), subForm)));
  // The service: what this deployment answers about itself.
  const own = new Set((openapi["x-walletd-undocumented-operations"] || []).concat(Object.keys(openapi.paths || {})));
  const served = (fragment) => [...own].find((p) => p.startsWith("/public/v1/query/") && p.includes(fragment));
  const seal = served("seal");
  const checkpoint = served("checkpoint") || served("audit");
  const placeholder = (what, id) => h("span", { class: "placeholder", id }, `${what}: not available on this deployment.`);
  let sealView = seal ? await optional(api, seal.split("/").pop()) : null;
  if (!sealView) {
    // Worker roles report their seal on /ready; an ingress that knows it says so there too.
    const ready = await fetch("/ready").then((r) => r.json()).catch(() => ({}));
    if (ready.checks && ready.checks.seal) sealView = { seal: ready.checks.seal };
  }
  const checkpointView = checkpoint ? await optional(api, checkpoint.split("/").pop()) : null;
  root.append(h("section", { class: "card", id: "service" }, h("h2", {}, "Service"),
    facts([
      ["walletd", status ? code(status.walletdVersion, { id: "service-version" }) : placeholder("Version", "service-version")],
      ["Public API", status ? status.apiVersion : (openapi.info || {}).version],
      ["Database", status ? `${status.databaseDialect} · revision ${status.databaseRevision || "?"}` : ""],
      ["Broker", status ? status.broker : ""],
      ["Seal state", sealView ? h("pre", { class: "json", id: "service-seal" }, JSON.stringify(sealView, null, 2)) : placeholder("Seal state", "service-seal")],
      ["Latest audit checkpoint", checkpointView ? h("pre", { class: "json", id: "service-checkpoint" }, JSON.stringify(checkpointView, null, 2)) : placeholder("Audit checkpoint", "service-checkpoint")],
      ["Checked", when({ seconds: Date.now() / 1000 })],
    ])));
}
