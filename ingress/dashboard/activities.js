// Approvals (what is approved, before a vote) and activities (filters, detail view).
import { renderIntent } from "./intent.js";
import { busy, code, facts, field, h, json, kindOf, pagedTable, reported, seconds, select, short,
  statusBadge, when } from "./ui.js";

// How many of the newest activities the page reads (pages of 100).
const LATEST = 1000;
const STATUSES = ["CREATED", "PENDING", "COMPLETED", "FAILED", "CONSENSUS_NEEDED", "REJECTED",
  "AUTHENTICATORS_NEEDED"];

function votesOf(a, users = {}) {
  return (a.votes || []).map((v) => h("span", { class: "vote" },
    `${v.selection === "VOTE_SELECTION_APPROVED" ? "✓" : "✗"} ${(v.user && v.user.userName) || users[v.userId] || v.userId}`));
}

async function vote(api, a, approve, after) {
  const { activity } = await api.submit(approve ? "approve_activity" : "reject_activity",
    approve ? "ACTIVITY_TYPE_APPROVE_ACTIVITY" : "ACTIVITY_TYPE_REJECT_ACTIVITY", { fingerprint: a.fingerprint });
  reported(activity, `${approve ? "Approved" : "Rejected"}: ${short(a.type)}`);
  after();
}

export async function approvalsPage(api, root, nav) {
  const list = (await api.query("list_activities", {
    filterByStatus: ["ACTIVITY_STATUS_CONSENSUS_NEEDED"], paginationOptions: { limit: "100" } })).activities || [];
  root.append(h("p", { class: "muted" }, "Each activity waiting for votes, with what it would do. ",
    "Approve or reject: your vote is an activity stamped in this browser."));
  if (!list.length) {
    root.append(h("section", { class: "card" }, h("p", { class: "muted empty", id: "no-approvals" }, "No activity is waiting for a vote.")));
    return;
  }
  for (const listed of list) {
    // get_activity answers canApprove / canReject for the viewer.
    const a = (await api.query("get_activity", { activityId: listed.id })).activity;
    const title = h("h2", { id: `ap-${a.id}-title` }, short(a.type));
    const approve = h("button", { class: "primary", "data-action": "approve",
      "aria-describedby": `ap-${a.id}-title`, disabled: !a.canApprove }, "Approve");
    const reject = h("button", { class: "danger", "data-action": "reject",
      "aria-describedby": `ap-${a.id}-title`, disabled: !a.canReject }, "Reject");
    approve.addEventListener("click", () => busy(approve, () => vote(api, a, true, nav.refresh)));
    reject.addEventListener("click", () => busy(reject, () => vote(api, a, false, nav.refresh)));
    const intent = await renderIntent(api, a);
    // The server's and the browser's readings disagree: approving is not offered.
    if (intent.dataset.mismatch === "true") approve.disabled = true;
    root.append(h("section", { class: "card approval", "data-activity": a.id, "aria-labelledby": `ap-${a.id}-title` },
      h("div", { class: "row between" }, h("div", {}, title,
        h("p", { class: "muted" }, when(a.createdAt), " · ", code(a.id), " · votes: ", votesOf(a))),
        h("div", { class: "row" }, approve, reject)),
      intent,
      a.canApprove ? null : h("p", { class: "muted" }, "You may not vote on this activity.")));
  }
}

export async function activitiesPage(api, root, nav) {
  const [all, usersAnswer] = await Promise.all([
    api.all("list_activities", "activities", "id", {}, LATEST),
    api.query("list_users").catch(() => ({ users: [] }))]);
  const users = Object.fromEntries((usersAnswer.users || []).map((u) => [u.userId, u.userName]));
  const types = [...new Set(all.map((a) => a.type))].sort();
  const f = nav.params;
  const typeSel = select("filter-type", [["", "Any type"], ...types.map((t) => [t, short(t)])], f.type || "");
  const statusSel = select("filter-status", [["", "Any status"], ...STATUSES.map((s) => [`ACTIVITY_STATUS_${s}`, s.toLowerCase().replace("_", " ")])], f.status || "");
  const userSel = select("filter-user", [["", "Anyone"], ...Object.entries(users)], f.user || "");
  const from = h("input", { id: "filter-from", type: "datetime-local", value: f.from || "" });
  const to = h("input", { id: "filter-to", type: "datetime-local", value: f.to || "" });
  const form = h("form", { class: "card filters", role: "search", "aria-label": "Filter activities",
    onsubmit: (ev) => {
      ev.preventDefault();
      const q = new URLSearchParams();
      for (const [k, el] of [["type", typeSel], ["status", statusSel], ["user", userSel], ["from", from], ["to", to]]) {
        if (el.value) q.set(k, el.value);
      }
      nav.go(`activities?${q}`);
    } },
  field("Type", typeSel), field("Status", statusSel), field("Submitted by", userSel),
  field("From", from), field("To", to),
  h("div", { class: "field end" }, h("button", { class: "primary", type: "submit", id: "filter-apply" }, "Filter")));
  root.append(form);
  // Type and status are filtered by the server; user and time here.
  let rows = all;
  if (f.type || f.status) {
    rows = await api.all("list_activities", "activities", "id", {
      filterByType: f.type ? [f.type] : undefined,
      filterByStatus: f.status ? [f.status] : undefined }, LATEST);
  }
  const lo = f.from ? Date.parse(f.from) / 1000 : -Infinity;
  const hi = f.to ? Date.parse(f.to) / 1000 : Infinity;
  rows = rows.filter((a) => (!f.user || ((a.votes || [])[0] || {}).userId === f.user)
    && seconds(a.createdAt) >= lo && seconds(a.createdAt) <= hi);
  root.append(h("section", { class: "card" }, h("h2", {}, `Activities (${rows.length}${all.length >= LATEST ? ` of the latest ${LATEST}` : ""})`),
    pagedTable([
      { title: "When", cell: (a) => when(a.createdAt) },
      { title: "Activity", cell: (a) => h("a", { href: `#/activity/${a.id}` }, short(a.type)) },
      { title: "Status", cell: (a) => statusBadge(a.status) },
      { title: "Votes", cell: (a) => votesOf(a, users) },
    ], rows, { id: "activities", caption: "Activities", onOpen: (a) => nav.go(`activity/${a.id}`) })));
}

export async function activityPage(api, root, nav) {
  const id = nav.arg;
  const a = (await api.query("get_activity", { activityId: id })).activity;
  let evaluations = [];
  try {
    evaluations = (await api.query("get_policy_evaluations", { activityId: id })).policyEvaluations || [];
  } catch (e) { evaluations = []; }
  root.querySelector("h1").textContent = short(a.type);
  const actions = [];
  if (a.status === "ACTIVITY_STATUS_CONSENSUS_NEEDED") {
    const approve = h("button", { class: "primary", "data-action": "approve", disabled: !a.canApprove }, "Approve");
    const reject = h("button", { class: "danger", "data-action": "reject", disabled: !a.canReject }, "Reject");
    approve.addEventListener("click", () => busy(approve, () => vote(api, a, true, nav.refresh)));
    reject.addEventListener("click", () => busy(reject, () => vote(api, a, false, nav.refresh)));
    actions.push(approve, reject);
  }
  root.append(h("section", { class: "card", id: "activity-detail" },
    h("div", { class: "row between" }, facts([["Status", statusBadge(a.status)], ["Type", code(a.type)],
      ["Id", code(a.id)], ["Created", when(a.createdAt)], ["Updated", when(a.updatedAt)],
      ["Fingerprint", code(a.fingerprint, { class: "wrap" })]]), h("div", { class: "row" }, actions))));
  root.append(h("section", { class: "card" }, h("h2", {}, "Intent"), await renderIntent(api, a)));
  root.append(h("section", { class: "card", id: "activity-result" }, h("h2", {}, "Result"),
    a.result && Object.keys(a.result).length ? json(a.result)
      : a.failure ? h("p", { class: "error" }, a.failure.message || JSON.stringify(a.failure))
        : h("p", { class: "muted" }, "No result yet.")));
  root.append(h("section", { class: "card" }, h("h2", {}, "Votes"),
    pagedTable([
      { title: "User", cell: (v) => (v.user && v.user.userName) || v.userId },
      { title: "Vote", cell: (v) => v.selection === "VOTE_SELECTION_APPROVED" ? "✓ approved" : "✗ rejected" },
      { title: "Credential", cell: (v) => code(v.publicKey || v.credentialId || "") },
      { title: "When", cell: (v) => when(v.createdAt) },
    ], a.votes || [], { id: "activity-votes", caption: "Votes" })));
  root.append(h("section", { class: "card" }, h("h2", {}, "Policy evaluation"),
    evaluations.length ? h("ol", { id: "policy-evaluations" }, evaluations.map((e) => h("li", {},
      when(e.createdAt), " ", (e.policyEvaluations || []).length
        ? (e.policyEvaluations || []).map((p) => h("div", {}, h("a", { href: `#/policies?edit=${p.policyId}` }, code(p.policyId)), " → ", p.outcome.replace("OUTCOME_", "").toLowerCase().replace(/_/g, " ")))
        : h("span", { class: "muted" }, "decided without policies (root quorum, a gate or a default)"))))
      : h("p", { class: "muted" }, "No stored evaluation.")));
  const served = await api.served();
  let proofs = a.appProofs || [];
  if (!proofs.length && served.has("list_app_proofs")) {
    proofs = (await api.query("list_app_proofs", { activityId: id }).catch(() => ({}))).appProofs || [];
  }
  root.append(h("section", { class: "card" }, h("h2", {}, "App proofs"),
    proofs.length ? json(proofs)
      : h("p", { class: "muted", id: "app-proofs" }, "None: this deployment issues no app proofs for this activity.")));
  let inclusion = null;
  if (served.has("get_audit_inclusion_proof")) {
    inclusion = await api.query("get_audit_inclusion_proof", { activityId: id }).catch((e) => ({ error: e.message }));
  }
  root.append(h("section", { class: "card" }, h("h2", {}, "Log inclusion"), inclusion
    ? h("div", { id: "log-inclusion" }, inclusion.error ? h("p", { class: "error" }, inclusion.error)
      : [h("p", {}, `${(inclusion.leaves || []).length} leaves in the audit log`,
        (inclusion.pendingLeaves || []).length ? `, ${(inclusion.pendingLeaves || []).length} not yet in a checkpoint` : "",
        " (the server's inclusion proofs; the browser does not re-verify them)."), json(inclusion)])
    : h("p", { class: "placeholder", id: "log-inclusion" }, "Log inclusion: not available on this deployment.")));
}
