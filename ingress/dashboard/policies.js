// Policies: the list, and an editor that parses with the server's own parser (errors at their
// position) and asks what a draft would decide on a recent activity, storing nothing
// (evaluate_policy_draft, walletd's own query).
import { busy, code, diffView, field, h, pagedTable, reported, select, short, statusBadge, when } from "./ui.js";

function caret(text, line, column) {
  const src = String(text || "").split("\n")[line - 1] ?? "";
  return `${src}\n${" ".repeat(Math.max(0, column - 1))}^`;
}

function offsetOf(text, line, column) {
  const lines = String(text).split("\n");
  let at = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) at += lines[i].length + 1;
  return at + column - 1;
}

export async function policiesPage(api, root, nav) {
  const [policies, activities] = await Promise.all([
    api.query("list_policies").then((r) => r.policies || []),
    api.query("list_activities", { paginationOptions: { limit: "50" } }).then((r) => r.activities || [])]);
  const editing = policies.find((p) => p.policyId === nav.params.edit) || null;
  const name = h("input", { id: "policy-name", required: true, value: editing ? editing.policyName : "", autocomplete: "off" });
  const effect = select("policy-effect", [["EFFECT_ALLOW", "allow"], ["EFFECT_DENY", "deny"]], editing ? editing.effect : "EFFECT_ALLOW");
  const condition = h("textarea", { id: "policy-condition", rows: 4, spellcheck: "false", "aria-describedby": "policy-condition-error" },
    editing ? editing.condition : "");
  const consensus = h("textarea", { id: "policy-consensus", rows: 2, spellcheck: "false", "aria-describedby": "policy-consensus-error" },
    editing ? editing.consensus : "");
  const notes = h("input", { id: "policy-notes", value: editing ? editing.notes : "", autocomplete: "off" });
  const errorBox = { condition: h("div", { id: "policy-condition-error", "aria-live": "polite" }),
    consensus: h("div", { id: "policy-consensus-error", "aria-live": "polite" }) };
  const controls = { condition, consensus };
  const target = select("policy-activity", [["", "— parse only —"], ...activities.map((a) =>
    [a.id, `${short(a.type)} · ${a.status.replace("ACTIVITY_STATUS_", "").toLowerCase()} · ${when(a.createdAt)}`])], nav.params.activity || "");
  const decision = h("div", { id: "policy-decision", "aria-live": "polite" });
  const text = (p) => [`effect: ${p.effect}`, `condition: ${p.condition || ""}`, `consensus: ${p.consensus || ""}`].join("\n");
  const changes = h("div", { id: "policy-changes" });
  const showChanges = () => {
    if (!editing) return;
    changes.replaceChildren(h("p", { class: "muted" }, "Changes against the policy in force:"),
      diffView(text(editing), text({ effect: effect.value, condition: condition.value, consensus: consensus.value }), "Changes"));
  };
  for (const control of [effect, condition, consensus]) control.addEventListener("input", showChanges);
  showChanges();

  const draft = () => ({ effect: effect.value, condition: condition.value.trim() || undefined,
    consensus: consensus.value.trim() || undefined });
  async function check() {
    const answer = await api.query("evaluate_policy_draft", { ...draft(), activityId: target.value || undefined,
      replacesPolicyId: editing ? editing.policyId : undefined });
    for (const [k, box] of Object.entries(errorBox)) {
      box.replaceChildren();
      controls[k].removeAttribute("aria-invalid");
    }
    for (const e of answer.errors || []) {
      const control = controls[e.field];
      if (!control) continue;
      control.setAttribute("aria-invalid", "true");
      errorBox[e.field].replaceChildren(h("div", { class: "parse-error", role: "alert", "data-line": e.line, "data-column": e.column },
        h("strong", {}, `Line ${e.line}, column ${e.column}: `), e.message,
        h("pre", { "aria-hidden": "true" }, caret(control.value, e.line, e.column))));
      const at = offsetOf(control.value, e.line, e.column);
      control.focus();
      control.setSelectionRange(at, Math.min(at + 1, control.value.length));
    }
    const ev = answer.evaluation;
    if (!answer.errors.length && !ev) decision.replaceChildren(h("p", { class: "decision" }, "Parses. Pick an activity to see what it would decide."));
    if (ev) {
      const tell = (o) => o.replace("OUTCOME_", "").toLowerCase().replace(/_/g, " ");
      decision.replaceChildren(h("div", { class: "decision", "data-outcome": ev.outcome, "data-draft-outcome": ev.draftOutcome },
        h("p", {}, "This draft on its own: ", h("strong", { id: "draft-outcome" }, tell(ev.draftOutcome)),
          ev.draftDetail ? h("span", { class: "muted" }, ` (${ev.draftDetail})`) : ""),
        h("p", {}, "With the organization's other policies, the activity would be: ",
          h("strong", { id: "decision-outcome" }, tell(ev.outcome)), h("span", { class: "muted" }, ` — ${ev.reason}`)),
        ev.settledBeforePolicies ? h("p", { class: "muted" }, "Settled before any policy is read (root quorum, a gate or a rejection).") : "",
        h("p", { class: "muted" }, "Nothing was stored: this is a query.")));
    } else if (answer.errors.length) {
      decision.replaceChildren();
    }
  }
  const checkBtn = h("button", { type: "button", id: "policy-check" }, "Check");
  checkBtn.addEventListener("click", () => busy(checkBtn, check));
  const save = h("button", { class: "primary", type: "submit", id: "policy-save" }, editing ? "Save changes" : "Create policy");
  const form = h("form", { class: "card editor", id: "policy-form", "aria-labelledby": "policy-editor-title", onsubmit: (ev) => {
    ev.preventDefault();
    busy(save, async () => {
      const d = draft();
      const { activity, result } = editing
        ? await api.submit("update_policy", "ACTIVITY_TYPE_UPDATE_POLICY_V2", { policyId: editing.policyId,
          policyName: name.value.trim(), policyEffect: d.effect, policyCondition: d.condition ?? "",
          policyConsensus: d.consensus ?? "", policyNotes: notes.value })
        : await api.submit("create_policy", "ACTIVITY_TYPE_CREATE_POLICY_V3", { policyName: name.value.trim(),
          effect: d.effect, condition: d.condition, consensus: d.consensus, notes: notes.value });
      if (reported(activity, editing ? "Policy saved" : "Policy created")) nav.go(`policies?edit=${editing ? editing.policyId : result.policyId}`);
    });
  } },
  h("h2", { id: "policy-editor-title" }, editing ? `Edit “${editing.policyName}”` : "New policy"),
  h("div", { class: "filters" }, field("Name", name), field("Effect", effect), field("Notes", notes)),
  field("Condition", condition, "When the policy applies, e.g. activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'"), errorBox.condition,
  field("Consensus", consensus, "Who must approve, e.g. approvers.any(user, user.id == '<user id>')"), errorBox.consensus,
  changes,
  h("div", { class: "filters" }, field("What would this decide on", target), h("div", { class: "field end" }, checkBtn),
    h("div", { class: "field end" }, save)),
  decision);
  root.append(form);
  root.append(h("section", { class: "card" }, h("h2", {}, `Policies (${policies.length})`),
    h("p", {}, h("a", { href: "#/policies" }, "New policy")),
    pagedTable([
      { title: "Name", cell: (p) => h("a", { href: `#/policies?edit=${p.policyId}` }, p.policyName) },
      { title: "Effect", cell: (p) => {
        const badge = statusBadge(p.effect === "EFFECT_ALLOW" ? "ACTIVITY_STATUS_COMPLETED" : "ACTIVITY_STATUS_FAILED");
        badge.textContent = p.effect.replace("EFFECT_", "").toLowerCase();
        return badge;
      } },
      { title: "Condition", cell: (p) => code(p.condition || "", { class: "wrap" }) },
      { title: "Consensus", cell: (p) => code(p.consensus || "", { class: "wrap" }) },
      { title: "Updated", cell: (p) => when(p.updatedAt) },
      { title: "", cell: (p) => h("button", { class: "danger small", "aria-label": `Delete policy ${p.policyName}`,
        onclick: (ev) => busy(ev.currentTarget, async () => {
          const { activity } = await api.submit("delete_policy", "ACTIVITY_TYPE_DELETE_POLICY", { policyId: p.policyId });
          if (reported(activity, "Policy deleted")) nav.go("policies");
        }) }, "Delete") },
    ], policies, { id: "policies", caption: "Policies" })));
}
