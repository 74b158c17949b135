// walletd dashboard: sign in (one-time link or passkey), then every change is an activity
// stamped in this browser with the session key.
import { Api, ApiError, post } from "./api.js";
import { activitiesPage, activityPage, approvalsPage } from "./activities.js";
import { overviewPage } from "./overview.js";
import { policiesPage } from "./policies.js";
import { settingsPage } from "./settings.js";
import { usersPage } from "./users.js";
import { walletsPage } from "./wallets.js";
import { apiKeyStamp, fromB64url, importLinkKey, newSessionKey, passkeyStamp } from "./stamp.js";
import { $, h, pagedTable, short, statusBadge, toast, when } from "./ui.js";
const METHODS = ["email", "sms", "passkey", "wallet", "google", "apple", "facebook", "x", "discord"];
const PROXY_TYPES = ["INIT_OTP", "VERIFY_OTP", "OTP_LOGIN", "OAUTH_LOGIN", "OAUTH2_AUTHENTICATE",
  "CREATE_SUB_ORGANIZATION"];

// -- session storage (IndexedDB keeps the non-extractable key object) ----------------------
const DB = "walletd-dashboard";
function idb() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB, 1);
    req.onupgradeneeded = () => req.result.createObjectStore("session");
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}
async function store(op, value) {
  const db = await idb();
  return new Promise((resolve, reject) => {
    const tx = db.transaction("session", op === "get" ? "readonly" : "readwrite");
    const os = tx.objectStore("session");
    const req = op === "get" ? os.get("current") : op === "put" ? os.put(value, "current")
      : os.delete("current");
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function claimsOf(jwt) {
  return JSON.parse(new TextDecoder().decode(fromB64url(jwt.split(".")[1])));
}

async function login(stamper, organizationId, sessionKey) {
  const answer = await post("/public/v1/submit/stamp_login", {
    type: "ACTIVITY_TYPE_STAMP_LOGIN", timestampMs: String(Date.now()), organizationId,
    parameters: { publicKey: sessionKey.publicKey, expirationSeconds: "3600" } }, stamper);
  const claims = claimsOf(answer.activity.result.stampLoginResult.session);
  const session = { key: sessionKey, organizationId: claims.organization_id,
    userId: claims.user_id, expiry: Number(claims.exp) };
  await store("put", session);
  return session;
}

async function signInWithLink(encoded) {
  const link = JSON.parse(new TextDecoder().decode(fromB64url(encoded)));
  const linkKey = await importLinkKey(link);
  const sessionKey = await newSessionKey();
  const session = await login((body) => apiKeyStamp(linkKey, body), link.organizationId,
    sessionKey);
  // The link is one-time: its key goes, stamped by the new session key.
  await new Api(session).submit("delete_api_keys", "ACTIVITY_TYPE_DELETE_API_KEYS",
    { userId: link.userId, apiKeyIds: [link.apiKeyId] });
  return session;
}

// -- sign-in screen ------------------------------------------------------------------------
function signInView(error) {
  const org = h("input", { id: "org", placeholder: "Organization ID", autocomplete: "off",
    value: localStorage.getItem("walletd.org") || "" });
  const main = h("main", { class: "signin" },
    h("div", { class: "card narrow" },
      h("div", { class: "brand big" }, h("span", { class: "logo" }, "w"), "walletd"),
      h("h1", {}, "Sign in to the dashboard"),
      h("p", { class: "muted" }, "Use a one-time link from ",
        h("code", {}, "walletd dashboard-link"), " (", h("code", {}, "--user-id"), " for another user), or your passkey."),
      error ? h("p", { class: "error", id: "signin-error" }, error) : "",
      h("label", {}, "Organization", org),
      h("button", { class: "primary", id: "passkey", onclick: async () => {
        try {
          localStorage.setItem("walletd.org", org.value.trim());
          const session = await login((body) => passkeyStamp(body), org.value.trim(),
            await newSessionKey());
          render(session);
        } catch (e) {
          render(null, e.message);
        }
      } }, "Sign in with a passkey")));
  document.body.replaceChildren(main, h("div", { id: "toasts" }));
}

// -- pages ---------------------------------------------------------------------------------
async function proxyPage(api, root) {
  let config = null;
  try {
    config = (await api.query("get_auth_proxy_config")).config;
  } catch (e) {
    if (!(e instanceof ApiError) || e.status !== 404) throw e;
  }
  const toggle = h("button", { id: "proxy-toggle", class: config && config.enabled ? "danger" : "primary",
    onclick: async () => {
      const on = !(config && config.enabled);
      const { activity } = on
        ? await api.submit("enable_auth_proxy", "ACTIVITY_TYPE_ENABLE_AUTH_PROXY", {})
        : await api.submit("disable_auth_proxy", "ACTIVITY_TYPE_DISABLE_AUTH_PROXY", {});
      toast(activity.status === "ACTIVITY_STATUS_COMPLETED"
        ? `Auth proxy ${on ? "enabled" : "disabled"}` : `Waiting for approval (${activity.id})`);
      route();
    } }, config && config.enabled ? "Turn off" : "Turn on");
  const head = h("section", { class: "card" },
    h("div", { class: "row between" },
      h("div", {},
        h("h2", {}, "Auth proxy ", h("span", { id: "proxy-state", class: `badge ${config && config.enabled ? "completed" : "failed"}` },
          config && config.enabled ? "on" : "off")),
        h("p", { class: "muted" }, config
          ? ["Config ID ", h("code", { id: "config-id" }, config.configId), " · proxy user ",
            h("code", {}, config.userId)]
          : "Not set up yet: turning it on creates its user, key and policies.")),
      toggle));
  root.append(head);
  if (!config) return;
  const kit = config.walletKitSettings || {};
  const origins = h("textarea", { id: "origins", rows: 3 }, (config.allowedOrigins || []).join("\n"));
  const methods = METHODS.map((m) => h("label", { class: "check" },
    h("input", { type: "checkbox", name: "method", value: m,
      checked: (config.allowedAuthMethods || []).includes(m) }), m));
  const field = (id, label, value, type = "text") => h("label", {}, label,
    h("input", { id, type, value: value ?? "" }));
  const email = config.emailCustomizationParams || {};
  const form = h("form", { class: "card grid", id: "proxy-form", onsubmit: async (ev) => {
    ev.preventDefault();
    const v = (id) => $(`#${id}`).value.trim();
    const ids = {};
    for (const line of v("client-ids").split("\n")) {
      const [provider, id] = line.split("=").map((s) => s && s.trim());
      if (provider && id) ids[provider] = id;
    }
    const params = {
      allowedOrigins: v("origins").split(/\s+/).filter(Boolean),
      allowedAuthMethods: [...document.querySelectorAll("input[name=method]:checked")].map((i) => i.value),
      sendFromEmailAddress: v("from-address"), sendFromEmailSenderName: v("from-name"),
      replyToEmailAddress: v("reply-to"),
      emailCustomizationParams: { appName: v("app-name"), logoUrl: v("logo-url") || undefined },
      smsCustomizationParams: { template: v("sms-template") || undefined },
      sessionExpirationSeconds: Number(v("session-ttl")), otpExpirationSeconds: Number(v("otp-ttl")),
      otpLength: Number(v("otp-length")), otpAlphanumeric: $("#otp-alnum").checked,
      walletKitSettings: { oauthClientIds: ids, oauthRedirectUrl: v("redirect-url") || undefined,
        enabledSocialProviders: Object.keys(ids) },
    };
    try {
      const { activity } = await api.submit("update_auth_proxy_config",
        "ACTIVITY_TYPE_UPDATE_AUTH_PROXY_CONFIG", params);
      toast(activity.status === "ACTIVITY_STATUS_COMPLETED" ? "Saved" : "Waiting for approval");
      route();
    } catch (e) {
      toast(e.message, "bad");
    }
  } },
    h("fieldset", {}, h("legend", {}, "Who may call it"),
      h("label", {}, "Allowed origins (one per line, * for any)", origins),
      h("div", { class: "checks" }, methods)),
    h("fieldset", {}, h("legend", {}, "Email and SMS"),
      field("app-name", "App name", email.appName), field("logo-url", "Logo URL", email.logoUrl),
      field("from-address", "From address", config.sendFromEmailAddress),
      field("from-name", "Sender name", config.sendFromEmailSenderName),
      field("reply-to", "Reply-to", config.replyToEmailAddress),
      field("sms-template", "SMS template ({{.OtpCode}})", (config.smsCustomizationParams || {}).template)),
    h("fieldset", {}, h("legend", {}, "Sessions and codes"),
      field("session-ttl", "Session lifetime (s)", config.sessionExpirationSeconds, "number"),
      field("otp-ttl", "Code lifetime (s)", config.otpExpirationSeconds, "number"),
      field("otp-length", "Code length (6–9)", config.otpLength, "number"),
      h("label", { class: "check" }, h("input", { id: "otp-alnum", type: "checkbox",
        checked: !!config.otpAlphanumeric }), "Letters and digits")),
    h("fieldset", {}, h("legend", {}, "OAuth"),
      h("label", {}, "Client IDs (provider=client id, one per line)",
        h("textarea", { id: "client-ids", rows: 3 },
          Object.entries(kit.oauthClientIds || {}).map(([k, v]) => `${k}=${v}`).join("\n"))),
      field("redirect-url", "Redirect URL", kit.oauthRedirectUrl)),
    h("div", { class: "actions" }, h("button", { class: "primary", id: "save", type: "submit" }, "Save changes")));
  root.append(form);
}

function activityTable(activities, id) {
  return pagedTable([
    { title: "When", cell: (a) => when(a.createdAt) },
    { title: "Activity", cell: (a) => h("a", { href: `#/activity/${a.id}` }, short(a.type)) },
    { title: "Status", cell: (a) => statusBadge(a.status) },
    { title: "Votes", cell: (a) => (a.votes || []).map((v) => h("span", { class: "vote" },
      `${v.selection === "VOTE_SELECTION_APPROVED" ? "✓" : "✗"} ${(v.user && v.user.userName) || v.userId}`)) },
  ], activities, { id, caption: "Activities" });
}

async function proxyActivityPage(api, root) {
  const list = (await api.query("list_activities", { paginationOptions: { limit: "100" } })).activities || [];
  const mine = list.filter((a) => PROXY_TYPES.includes(short(a.type).toUpperCase().replace(/ /g, "_")));
  root.append(h("section", { class: "card" }, h("h2", {}, "Recent proxy activity"),
    h("p", { class: "muted" }, "Sign-ups, codes and logins the auth proxy forwarded."),
    activityTable(mine, "proxy-activity")));
}

async function webhooksPage(api, root) {
  const endpoints = (await api.query("list_webhook_endpoints")).webhookEndpoints || [];
  const add = h("form", { class: "row", id: "webhook-form", onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      await api.submit("create_webhook_endpoint", "ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT", {
        url: $("#hook-url").value.trim(), name: $("#hook-name").value.trim() || "endpoint",
        subscriptions: [{ eventType: "ACTIVITY_UPDATES" }] });
      toast("Endpoint added");
      route();
    } catch (e) { toast(e.message, "bad"); }
  } }, h("input", { id: "hook-name", placeholder: "Name", "aria-label": "Endpoint name" }),
    h("input", { id: "hook-url", placeholder: "https://example.com/hooks", class: "grow", "aria-label": "Endpoint URL" }),
    h("button", { class: "primary", type: "submit" }, "Add endpoint"));
  const section = h("section", { class: "card" }, h("h2", {}, "Webhook endpoints"), add);
  for (const e of endpoints) {
    let deliveries = [];
    try {
      deliveries = (await api.query("list_webhook_deliveries", { endpointId: e.endpointId })).deliveries || [];
    } catch (err) { deliveries = []; }
    const replay = async (d) => {
      await api.submit("replay_webhook_deliveries", "ACTIVITY_TYPE_REPLAY_WEBHOOK_DELIVERIES",
        { deliveryIds: [d.deliveryId] });
      toast("Delivery queued again");
      route();
    };
    section.append(h("div", { class: "endpoint" },
      h("div", { class: "row between" }, h("strong", {}, e.name), h("code", {}, e.url),
        statusBadge(e.isActive ? "ACTIVITY_STATUS_COMPLETED" : "ACTIVITY_STATUS_FAILED")),
      deliveries.length ? h("table", { class: "deliveries" },
        h("thead", {}, h("tr", {}, h("th", {}, "Event"), h("th", {}, "Status"), h("th", {}, "Attempts"),
          h("th", {}, "Last answer"), h("th", {}, ""))),
        h("tbody", {}, deliveries.map((d) => h("tr", {}, h("td", {}, d.eventType),
          h("td", {}, d.status.toLowerCase()), h("td", {}, d.attempts),
          h("td", {}, d.lastError || d.lastStatusCode || ""),
          h("td", {}, d.status === "FAILED" ? h("button", { class: "small", onclick: () => replay(d) }, "Replay") : "")))))
        : h("p", { class: "muted empty" }, "No deliveries yet.")));
  }
  root.append(section);
}

// [title, page, shown in the navigation]
const PAGES = {
  overview: ["Overview", overviewPage, true],
  approvals: ["Approvals", approvalsPage, true],
  activities: ["Activities", activitiesPage, true],
  activity: ["Activity", activityPage, false],
  wallets: ["Wallets & keys", walletsPage, true],
  users: ["Users & credentials", usersPage, true],
  policies: ["Policies", policiesPage, true],
  settings: ["Settings", settingsPage, true],
  proxy: ["Auth proxy", proxyPage, true],
  "proxy-activity": ["Proxy activity", proxyActivityPage, true],
  webhooks: ["Webhooks", webhooksPage, true],
};
const HOME = "overview";

let current = null;

function parseHash() {
  const m = location.hash.match(/^#\/([\w-]+)(?:\/([^?]*))?(?:\?(.*))?$/) || [];
  return { name: m[1] || HOME, arg: decodeURIComponent(m[2] || ""),
    params: Object.fromEntries(new URLSearchParams(m[3] || "")) };
}

let generation = 0;

async function route() {
  const mine = ++generation;
  const { name, arg, params } = parseHash();
  const [title, page] = PAGES[name] && PAGES[name][1] ? PAGES[name] : PAGES[HOME];
  for (const a of document.querySelectorAll("nav a")) {
    const active = a.dataset.page === name || (name === "activity" && a.dataset.page === "activities");
    a.classList.toggle("active", active);
    if (active) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  // Each route renders into a container of its own: a slower page still loading when the
  // operator moves on writes into a detached element, never into the page now shown.
  const main = $("#page");
  const heading = h("h1", { tabindex: "-1" }, title);
  const root = h("div", { class: "page-body" }, heading);
  main.replaceChildren(root);
  main.setAttribute("aria-busy", "true");
  document.title = `${title} · walletd console`;
  const nav = { arg, params, go: (to) => { location.hash = `#/${to}`; }, refresh: () => route() };
  try {
    await page(new Api(current), root, nav);
  } catch (e) {
    if (mine !== generation) return;
    if (e instanceof ApiError && e.status === 401) {
      await store("delete");
      render(null, "Your session ended; sign in again.");
      return;
    }
    root.append(h("p", { class: "error", role: "alert" }, e.message));
  }
  if (mine !== generation) return;
  main.removeAttribute("aria-busy");
  if (moved && (document.activeElement === document.body || !root.contains(document.activeElement))) {
    heading.focus({ preventScroll: true });
  }
  moved = false;
}
let moved = false;

function render(session, error) {
  current = session;
  if (!session) {
    signInView(error);
    return;
  }
  const nav = h("nav", { "aria-label": "Console" }, Object.entries(PAGES).filter(([, p]) => p[2] && p[1])
    .map(([k, [t]]) => h("a", { href: `#/${k}`, "data-page": k }, t)));
  const skip = h("a", { class: "skip", href: "#page", onclick: (ev) => { ev.preventDefault(); $("#page").focus(); } },
    "Skip to content");
  const shell = h("div", { class: "shell" },
    h("aside", {}, h("div", { class: "brand" }, h("span", { class: "logo" }, "w"), "walletd"), nav,
      h("div", { class: "who" }, h("span", { class: "muted" }, "Signed in"),
        h("code", { id: "who-org" }, session.organizationId),
        h("button", { class: "link", onclick: async () => { await store("delete"); render(null); } },
          "Sign out"))),
    h("main", { id: "page", tabindex: "-1" }));
  document.body.replaceChildren(skip, shell, h("div", { id: "toasts", "aria-live": "polite" }));
  route();
}

window.addEventListener("hashchange", () => { moved = true; if (current) route(); });

async function start() {
  const link = (location.hash.match(/^#link=([\w-]+)/) || [])[1];
  if (link) {
    history.replaceState(null, "", location.pathname + `#/${HOME}`);
    try {
      render(await signInWithLink(link));
    } catch (e) {
      render(null, `This sign-in link cannot be used: ${e.message}`);
    }
    return;
  }
  const saved = await store("get").catch(() => null);
  render(saved && saved.expiry * 1000 > Date.now() ? saved : null);
}

start();
