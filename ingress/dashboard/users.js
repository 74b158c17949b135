// Users and credentials: users, API keys (pasted or generated in this browser, expiry,
// delete), passkeys registered with WebAuthn in this browser, OAuth providers, user tags.
import { b64url, compress, fromB64url, hex } from "./stamp.js";
import { busy, code, facts, field, h, pagedTable, reported, select, when } from "./ui.js";

/** A P-256 API key made in this browser: {publicKey (compressed hex), privateKey (hex)}. */
export async function browserApiKey() {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign"]);
  const raw = await crypto.subtle.exportKey("raw", pair.publicKey);
  const jwk = await crypto.subtle.exportKey("jwk", pair.privateKey);
  return { publicKey: hex(compress(raw)), privateKey: hex(fromB64url(jwk.d)) };
}

/** "1 key", "3 keys". */
function count(n, noun) {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

function expiryText(k) {
  if (!k.expirationSeconds || k.expirationSeconds === "0") return "never";
  const at = Number(k.createdAt?.seconds || 0) + Number(k.expirationSeconds);
  return `${new Date(at * 1000).toLocaleString()}${at * 1000 < Date.now() ? " (expired)" : ""}`;
}

async function userDetail(api, user, org, nav) {
  const q = { userId: user.userId };
  const [keys, passkeys, providers] = await Promise.all([
    api.query("get_api_keys", q).then((r) => r.apiKeys || []),
    api.query("get_authenticators", q).then((r) => r.authenticators || []),
    api.query("get_oauth_providers", q).then((r) => r.oauthProviders || [])]);
  const isRoot = (org.rootQuorum?.userIds || []).includes(user.userId);
  const submit = async (button, path, type, params, done) => busy(button, async () => {
    const { activity, result } = await api.submit(path, type, params);
    if (reported(activity, done)) { nav.refresh(); }
    return result;
  });
  // API keys
  const keyName = h("input", { id: "apikey-name", value: "console key", autocomplete: "off" });
  const keyPublic = h("textarea", { id: "apikey-public", rows: 2, spellcheck: "false", placeholder: "02… / 03… compressed P-256 public key (hex)" });
  const keyExpiry = select("apikey-expiry", [["", "never"], ["3600", "1 hour"], ["86400", "1 day"], ["2592000", "30 days"], ["31536000", "1 year"]], "");
  const secret = h("div", { id: "apikey-secret" });
  const generate = h("button", { type: "button", id: "apikey-generate", onclick: () => busy(generate, async () => {
    const made = await browserApiKey();
    keyPublic.value = made.publicKey;
    secret.replaceChildren(h("div", { class: "parse-error", role: "alert" }, "The private half, shown once. Keep it where the key will be used; it never leaves this page unless you copy it.",
      h("textarea", { rows: 2, readonly: true, id: "apikey-private", "aria-label": "Generated private key (hex)" }, made.privateKey)));
  }) }, "Generate a key pair in this browser");
  const addKey = h("button", { class: "primary", type: "submit", id: "apikey-create" }, "Add API key");
  const keyForm = h("form", { id: "apikey-form", onsubmit: (ev) => {
    ev.preventDefault();
    const k = { apiKeyName: keyName.value.trim(), publicKey: keyPublic.value.trim(), curveType: "API_KEY_CURVE_P256" };
    if (keyExpiry.value) k.expirationSeconds = keyExpiry.value;
    submit(addKey, "create_api_keys", "ACTIVITY_TYPE_CREATE_API_KEYS_V2", { userId: user.userId, apiKeys: [k] }, "API key added");
  } }, h("div", { class: "filters" }, field("Name", keyName), field("Expires after", keyExpiry)),
  field("Public key", keyPublic), h("div", { class: "row" }, generate, addKey), secret);
  const del = (k) => (ev) => submit(ev.currentTarget, "delete_api_keys", "ACTIVITY_TYPE_DELETE_API_KEYS",
    { userId: user.userId, apiKeyIds: [k.apiKeyId] }, "API key deleted");
  // Passkeys
  const passName = h("input", { id: "passkey-name", value: "console passkey", autocomplete: "off" });
  const register = h("button", { class: "primary", type: "submit", id: "passkey-register" }, "Register a passkey");
  const passForm = h("form", { id: "passkey-form", onsubmit: async (ev) => {
    ev.preventDefault();
    await busy(register, async () => {
      const challenge = crypto.getRandomValues(new Uint8Array(32));
      const cred = await navigator.credentials.create({ publicKey: {
        challenge, rp: { name: "walletd", id: location.hostname },
        user: { id: new TextEncoder().encode(user.userId).slice(0, 64), name: user.userName, displayName: user.userName },
        pubKeyCredParams: [{ type: "public-key", alg: -7 }],
        authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" }, timeout: 60000 } });
      const transports = (cred.response.getTransports ? cred.response.getTransports() : [])
        .map((t) => `AUTHENTICATOR_TRANSPORT_${t.toUpperCase()}`);
      const { activity } = await api.submit("create_authenticators", "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", {
        userId: user.userId, authenticators: [{ authenticatorName: passName.value.trim(), challenge: b64url(challenge),
          attestation: { credentialId: cred.id, clientDataJson: b64url(cred.response.clientDataJSON),
            attestationObject: b64url(cred.response.attestationObject), transports: transports.length ? transports : ["AUTHENTICATOR_TRANSPORT_INTERNAL"] } }] });
      if (reported(activity, "Passkey registered")) nav.refresh();
    });
  } }, field("Passkey name", passName), register);
  // OAuth providers
  const provName = h("input", { id: "oauth-name", autocomplete: "off", placeholder: "Google" });
  const provToken = h("textarea", { id: "oauth-token", rows: 2, spellcheck: "false", placeholder: "an OIDC token (JWT) for this user" });
  const addProv = h("button", { class: "primary", type: "submit" }, "Link provider");
  const provForm = h("form", { onsubmit: (ev) => {
    ev.preventDefault();
    submit(addProv, "create_oauth_providers", "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS",
      { userId: user.userId, oauthProviders: [{ providerName: provName.value.trim(), oidcToken: provToken.value.trim() }] }, "Provider linked");
  } }, field("Provider name", provName), field("OIDC token", provToken), addProv);
  const remove = h("button", { class: "danger small", type: "button", id: "user-delete",
    onclick: () => busy(remove, async () => {
      const { activity } = await api.submit("delete_users", "ACTIVITY_TYPE_DELETE_USERS", { userIds: [user.userId] });
      if (reported(activity, "User deleted")) nav.go("users");
    }) }, "Delete user");
  const editName = h("input", { id: "user-edit-name", value: user.userName, autocomplete: "off" });
  const editEmail = h("input", { id: "user-edit-email", type: "email", value: user.userEmail || "", autocomplete: "off" });
  const saveUser = h("button", { type: "submit", id: "user-save" }, "Save");
  const editForm = h("form", { class: "filters", onsubmit: (ev) => {
    ev.preventDefault();
    const change = { userId: user.userId, userName: editName.value.trim() };
    if (editEmail.value.trim()) change.userEmail = editEmail.value.trim();
    submit(saveUser, "update_user", "ACTIVITY_TYPE_UPDATE_USER", change, "User updated");
  } }, field("Name", editName), field("Email", editEmail), h("div", { class: "field end" }, saveUser));
  return h("section", { class: "card", id: "user-detail", "data-user": user.userId },
    h("div", { class: "row between" }, h("h2", {}, user.userName, isRoot ? h("span", { class: "badge" }, " root") : ""), remove),
    facts([["User id", code(user.userId)], ["Email", user.userEmail], ["Phone", user.userPhoneNumber],
      ["Created", when(user.createdAt)]]),
    h("details", {}, h("summary", {}, "Edit name and email"), editForm),
    h("h3", {}, `API keys (${keys.length})`),
    pagedTable([
      { title: "Name", cell: (k) => k.apiKeyName },
      { title: "Public key", cell: (k) => code(k.credential?.publicKey || "", { class: "wrap" }) },
      { title: "Expires", cell: expiryText },
      { title: "", cell: (k) => h("button", { class: "danger small", onclick: del(k), "aria-label": `Delete API key ${k.apiKeyName}` }, "Delete") },
    ], keys, { id: "api-keys", caption: "API keys" }),
    h("details", {}, h("summary", {}, "Add an API key"), keyForm),
    h("h3", {}, `Passkeys (${passkeys.length})`),
    pagedTable([
      { title: "Name", cell: (a) => a.authenticatorName },
      { title: "Credential id", cell: (a) => code(a.credentialId) },
      { title: "Created", cell: (a) => when(a.createdAt) },
      { title: "", cell: (a) => h("button", { class: "danger small", "aria-label": `Delete passkey ${a.authenticatorName}`,
        onclick: (ev) => submit(ev.currentTarget, "delete_authenticators", "ACTIVITY_TYPE_DELETE_AUTHENTICATORS",
          { userId: user.userId, authenticatorIds: [a.authenticatorId] }, "Passkey deleted") }, "Delete") },
    ], passkeys, { id: "passkeys", caption: "Passkeys" }),
    h("details", {}, h("summary", {}, "Register a passkey (this browser's authenticator)"), passForm),
    h("h3", {}, `OAuth providers (${providers.length})`),
    pagedTable([
      { title: "Provider", cell: (p) => p.providerName },
      { title: "Issuer", cell: (p) => code(p.issuer) },
      { title: "Subject", cell: (p) => code(p.subject) },
      { title: "", cell: (p) => h("button", { class: "danger small", "aria-label": `Unlink ${p.providerName}`,
        onclick: (ev) => submit(ev.currentTarget, "delete_oauth_providers", "ACTIVITY_TYPE_DELETE_OAUTH_PROVIDERS",
          { userId: user.userId, providerIds: [p.providerId] }, "Provider unlinked") }, "Unlink") },
    ], providers, { id: "oauth-providers", caption: "OAuth providers" }),
    h("details", {}, h("summary", {}, "Link an OAuth provider"), provForm));
}

export async function usersPage(api, root, nav) {
  const [users, tags, org] = await Promise.all([
    api.query("list_users").then((r) => r.users || []),
    api.query("list_user_tags").then((r) => r.userTags || []),
    api.query("get_organization").then((r) => r.organizationData || {})]);
  const tagName = (id) => (tags.find((t) => t.tagId === id) || {}).tagName || id;
  const roots = new Set(org.rootQuorum?.userIds || []);
  const chosen = users.find((u) => u.userId === nav.params.user);
  if (chosen) root.append(await userDetail(api, chosen, org, nav));
  root.append(h("section", { class: "card" }, h("h2", {}, `Users (${users.length})`),
    pagedTable([
      { title: "Name", cell: (u) => h("a", { href: `#/users?user=${u.userId}` }, u.userName) },
      { title: "Email", cell: (u) => u.userEmail || "" },
      { title: "Root", cell: (u) => (roots.has(u.userId) ? "root" : "") },
      { title: "Credentials", cell: (u) => [count((u.apiKeys || []).length, "key"),
                                            count((u.authenticators || []).length, "passkey"),
                                            `${(u.oauthProviders || []).length} OAuth`].join(" · ") },
      { title: "Tags", cell: (u) => (u.userTags || []).map(tagName).join(", ") },
    ], users, { id: "users", caption: "Users", onOpen: (u) => nav.go(`users?user=${u.userId}`) })));
  // New user
  const name = h("input", { id: "user-name", required: true, autocomplete: "off" });
  const email = h("input", { id: "user-email", type: "email", autocomplete: "off" });
  const userTags = select("user-tags", tags.map((t) => [t.tagId, t.tagName]), null, { multiple: true, size: Math.min(4, Math.max(2, tags.length)) });
  const create = h("button", { class: "primary", type: "submit", id: "user-create" }, "Create user");
  root.append(h("section", { class: "card" }, h("h2", {}, "New user"),
    h("form", { id: "user-form", onsubmit: (ev) => {
      ev.preventDefault();
      busy(create, async () => {
        const u = { userName: name.value.trim(), apiKeys: [], authenticators: [], oauthProviders: [],
          userTags: [...userTags.selectedOptions].map((o) => o.value) };
        if (email.value.trim()) u.userEmail = email.value.trim();
        const { activity, result } = await api.submit("create_users", "ACTIVITY_TYPE_CREATE_USERS_V3", { users: [u] });
        if (reported(activity, "User created")) nav.go(`users?user=${result.userIds[0]}`);
      });
    } }, h("div", { class: "filters" }, field("Name", name), field("Email (optional)", email), field("Tags", userTags),
      h("div", { class: "field end" }, create)))));
  // User tags: create, rename (and change who carries it), delete.
  const tag = h("input", { id: "user-tag-name", autocomplete: "off" });
  const members = select("user-tag-members", users.map((u) => [u.userId, u.userName]), null, { multiple: true, size: Math.min(5, Math.max(2, users.length)) });
  const addTag = h("button", { type: "submit", id: "user-tag-create" }, "Create tag");
  const carriers = (t) => users.filter((u) => (u.userTags || []).includes(t.tagId));
  const removeTag = (t) => (ev) => busy(ev.currentTarget, async () => {
    const { activity } = await api.submit("delete_user_tags", "ACTIVITY_TYPE_DELETE_USER_TAGS", { userTagIds: [t.tagId] });
    if (reported(activity, "Tag deleted")) nav.refresh();
  });
  root.append(h("section", { class: "card" }, h("h2", {}, `User tags (${tags.length})`),
    pagedTable([
      { title: "Tag", cell: (t) => t.tagName },
      { title: "Id", cell: (t) => code(t.tagId) },
      { title: "Users", cell: (t) => carriers(t).map((u) => u.userName).join(", ") },
      { title: "", cell: (t) => h("button", { class: "danger small", type: "button", "data-tag": t.tagId,
        "aria-label": `Delete user tag ${t.tagName}`, onclick: removeTag(t) }, "Delete") },
    ], tags, { id: "user-tags-table", caption: "User tags" }),
    h("form", { id: "user-tag-form", onsubmit: (ev) => {
      ev.preventDefault();
      busy(addTag, async () => {
        const { activity } = await api.submit("create_user_tag", "ACTIVITY_TYPE_CREATE_USER_TAG",
          { userTagName: tag.value.trim(), userIds: [...members.selectedOptions].map((o) => o.value) });
        if (reported(activity, "Tag created")) nav.refresh();
      });
    } }, h("div", { class: "filters" }, field("Tag name", tag), field("Users", members), h("div", { class: "field end" }, addTag))),
    tags.length ? userTagEditor(api, tags, users, carriers, nav) : null));
}

/** Rename a user tag and choose who carries it (update_user_tag). */
function userTagEditor(api, tags, users, carriers, nav) {
  const which = select("user-tag-edit", tags.map((t) => [t.tagId, t.tagName]), tags[0].tagId);
  const rename = h("input", { id: "user-tag-rename", autocomplete: "off", required: true });
  const holders = select("user-tag-edit-members", users.map((u) => [u.userId, u.userName]), null, { multiple: true, size: Math.min(5, Math.max(2, users.length)) });
  const save = h("button", { type: "submit", id: "user-tag-save" }, "Save tag");
  const chosen = () => tags.find((t) => t.tagId === which.value);
  const load = () => {
    const t = chosen();
    rename.value = t.tagName;
    const had = new Set(carriers(t).map((u) => u.userId));
    for (const o of holders.options) o.selected = had.has(o.value);
  };
  which.addEventListener("change", load);
  load();
  return h("details", {}, h("summary", {}, "Rename a tag or change its users"),
    h("form", { id: "user-tag-edit-form", onsubmit: (ev) => {
      ev.preventDefault();
      busy(save, async () => {
        const t = chosen();
        const had = new Set(carriers(t).map((u) => u.userId));
        const want = new Set([...holders.selectedOptions].map((o) => o.value));
        const { activity } = await api.submit("update_user_tag", "ACTIVITY_TYPE_UPDATE_USER_TAG", {
          userTagId: t.tagId, newUserTagName: rename.value.trim(),
          addUserIds: [...want].filter((id) => !had.has(id)), removeUserIds: [...had].filter((id) => !want.has(id)) });
        if (reported(activity, "Tag saved")) nav.refresh();
      });
    } }, h("div", { class: "filters" }, field("Tag", which), field("New name", rename), field("Users", holders),
      h("div", { class: "field end" }, save))));
}
