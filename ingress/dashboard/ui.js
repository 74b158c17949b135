// Small DOM helpers shared by every page: elements, toasts, formatting, paginated tables.

export const $ = (sel, root = document) => root.querySelector(sel);

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "value" && (tag === "input" || tag === "select")) el.value = v ?? "";
    else if (v === true) el.setAttribute(k, "");
    else if (v !== false && v != null) el.setAttribute(k, v);
  }
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  if (tag === "select" && attrs.value != null) el.value = attrs.value;
  return el;
}

export function toast(message, kind = "ok") {
  const box = $("#toasts");
  if (!box) return;
  const el = h("div", { class: `toast ${kind}`, role: kind === "bad" ? "alert" : "status" }, message);
  box.append(el);
  setTimeout(() => el.remove(), 6000);
}

export function when(ts) {
  if (!ts) return "";
  const seconds = Number(ts.seconds || 0);
  return new Date(seconds * 1000).toLocaleString();
}

export function seconds(ts) {
  return ts ? Number(ts.seconds || 0) : 0;
}

export function short(type) {
  return String(type || "").replace("ACTIVITY_TYPE_", "").replace(/_V\d+$/, "").toLowerCase()
    .replace(/_/g, " ");
}

export function kindOf(type) {
  return String(type || "").replace("ACTIVITY_TYPE_", "").replace(/_V\d+$/, "");
}

export function statusBadge(status) {
  const s = String(status || "").replace("ACTIVITY_STATUS_", "");
  return h("span", { class: `badge ${s.toLowerCase()}` }, s.replace("_", " ").toLowerCase());
}

export function enumText(value, prefix) {
  return String(value || "").replace(prefix, "").toLowerCase().replace(/_/g, " ");
}

/** A labelled form control: <label for=id>text</label> + the control. */
export function field(label, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), control,
    hint ? h("small", { class: "muted", id: `${id}-hint` }, hint) : null);
}

export function select(id, options, value, attrs = {}) {
  return h("select", { id, ...attrs }, options.map((o) => {
    const [v, t] = Array.isArray(o) ? o : [o, o];
    return h("option", { value: v, selected: v === value }, t);
  }));
}

/** Definition list of [term, value] pairs (value: text or node). */
export function facts(pairs, attrs = {}) {
  return h("dl", { class: "facts", ...attrs }, pairs.filter(Boolean).map(([k, v]) =>
    [h("dt", {}, k), h("dd", {}, v == null || v === "" ? h("span", { class: "muted" }, "—") : v)]));
}

export function code(text, attrs = {}) {
  return h("code", attrs, text);
}

export function json(value) {
  return h("pre", { class: "json" }, JSON.stringify(value, null, 2));
}

/**
 * A table that paginates in the browser. columns: [{title, cell: (row) => node|text}];
 * rows: array. Renders one page at a time with a labelled pager; Enter/Space on a row with
 * `onOpen` opens it.
 */
export function pagedTable(columns, rows, { id, caption, pageSize = 25, onOpen, empty } = {}) {
  const wrap = h("div", { class: "paged", id: id ? `${id}-wrap` : null });
  if (!rows.length) {
    wrap.append(h("p", { class: "muted empty" }, empty || "Nothing yet."));
    return wrap;
  }
  let page = 0;
  const pages = Math.max(1, Math.ceil(rows.length / pageSize));
  const tbody = h("tbody");
  const status = h("span", { class: "muted", "aria-live": "polite" });
  const prev = h("button", { class: "small", type: "button", "aria-label": "Previous page",
    onclick: () => show(page - 1) }, "‹ Previous");
  const next = h("button", { class: "small", type: "button", "aria-label": "Next page",
    onclick: () => show(page + 1) }, "Next ›");
  const size = select(id ? `${id}-size` : null, ["10", "25", "50", "100", "1000"], String(pageSize),
    { "aria-label": "Rows per page", onchange: (ev) => { pageSize = Number(ev.target.value); show(0); } });
  function show(n) {
    const count = Math.max(1, Math.ceil(rows.length / pageSize));
    page = Math.min(Math.max(0, n), count - 1);
    const frag = document.createDocumentFragment();
    for (const row of rows.slice(page * pageSize, (page + 1) * pageSize)) {
      const tr = h("tr", {}, columns.map((c) => h("td", {}, c.cell(row))));
      if (onOpen) {
        tr.tabIndex = 0;
        tr.classList.add("clickable");
        tr.addEventListener("click", (ev) => { if (!ev.target.closest("button,a,input")) onOpen(row); });
        tr.addEventListener("keydown", (ev) => {
          if ((ev.key === "Enter" || ev.key === " ") && ev.target === tr) { ev.preventDefault(); onOpen(row); }
        });
      }
      frag.append(tr);
    }
    tbody.replaceChildren(frag);
    status.textContent = `Page ${page + 1} of ${count} · ${rows.length} rows`;
    prev.disabled = page === 0;
    next.disabled = page >= count - 1;
  }
  const table = h("table", { id }, caption ? h("caption", { class: "sr-only" }, caption) : null,
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c.title)))), tbody);
  wrap.append(table, h("nav", { class: "pager", "aria-label": `${caption || "Table"} pages` },
    prev, status, next, h("label", { class: "inline" }, "Rows ", size)));
  show(0);
  // A table of one short page needs no pager (its rows-per-page control included).
  if (pages === 1 && rows.length <= 10) wrap.querySelector(".pager").classList.add("quiet");
  return wrap;
}

/** Run an async action from a button, disabling it and reporting errors as a toast. */
export async function busy(button, action) {
  if (button) button.disabled = true;
  try {
    return await action();
  } catch (e) {
    toast(e.message || String(e), "bad");
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

/** Report an activity's outcome the way every page does. */
export function reported(activity, done) {
  const s = String(activity.status || "").replace("ACTIVITY_STATUS_", "");
  if (s === "COMPLETED") toast(done);
  else if (s === "CONSENSUS_NEEDED") toast(`Waiting for approval: ${short(activity.type)} (${activity.id})`);
  else if (s === "AUTHENTICATORS_NEEDED") toast(`Waiting for MFA: ${short(activity.type)} (${activity.id})`);
  else {
    const why = activity.failure && activity.failure.message ? `: ${activity.failure.message}` : "";
    toast(`${short(activity.type)}: ${s.toLowerCase()}${why}`, s === "FAILED" || s === "REJECTED" ? "bad" : "ok");
  }
  return s === "COMPLETED";
}

/** A line-by-line diff (LCS) of two texts: [{op: " "|"-"|"+", line}]. */
export function diffLines(before, after) {
  const a = String(before || "").split("\n");
  const b = String(after || "").split("\n");
  const n = a.length, m = b.length;
  const t = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--)
    t[i][j] = a[i] === b[j] ? t[i + 1][j + 1] + 1 : Math.max(t[i + 1][j], t[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { out.push({ op: " ", line: a[i] }); i++; j++; }
    else if (t[i + 1][j] >= t[i][j + 1]) out.push({ op: "-", line: a[i++] });
    else out.push({ op: "+", line: b[j++] });
  }
  while (i < n) out.push({ op: "-", line: a[i++] });
  while (j < m) out.push({ op: "+", line: b[j++] });
  return out;
}

export function diffView(before, after, label) {
  return h("pre", { class: "diff", "aria-label": label }, diffLines(before, after).map((d) =>
    h("span", { class: d.op === "+" ? "add" : d.op === "-" ? "del" : "same" },
      `${d.op} ${d.line}\n`)));
}
