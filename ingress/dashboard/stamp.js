// Stamping in the browser (PROTOCOL.md §1): X-Stamp with a WebCrypto P-256 key, and
// X-Stamp-Webauthn with a passkey (§2). No dependencies, no build step.

const enc = new TextEncoder();

export function hex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

export function fromHex(text) {
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.substr(i * 2, 2), 16);
  return out;
}

export function b64url(bytes) {
  let s = "";
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function fromB64url(text) {
  const s = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

// WebCrypto signs P1363 (r‖s); stamps carry DER.
function derInteger(bytes) {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  let v = bytes.slice(i);
  if (v[0] & 0x80) v = Uint8Array.of(0, ...v);
  return Uint8Array.of(0x02, v.length, ...v);
}

export function toDer(raw) {
  const sig = new Uint8Array(raw);
  const r = derInteger(sig.slice(0, 32));
  const s = derInteger(sig.slice(32));
  return Uint8Array.of(0x30, r.length + s.length, ...r, ...s);
}

export function compress(uncompressed) {
  const p = new Uint8Array(uncompressed);
  return Uint8Array.of(p[64] & 1 ? 3 : 2, ...p.slice(1, 33));
}

/** A session key: non-extractable P-256 private key and its compressed public key (hex). */
export async function newSessionKey() {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false,
    ["sign"]);
  const raw = await crypto.subtle.exportKey("raw", pair.publicKey);
  return { privateKey: pair.privateKey, publicKey: hex(compress(raw)) };
}

/** Import the one-time link key ({d, x, y} base64url, publicKey hex). */
export async function importLinkKey(link) {
  const privateKey = await crypto.subtle.importKey("jwk",
    { kty: "EC", crv: "P-256", d: link.d, x: link.x, y: link.y, ext: false },
    { name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
  return { privateKey, publicKey: link.publicKey };
}

export async function apiKeyStamp(key, body) {
  const raw = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, key.privateKey,
    enc.encode(body));
  const stamp = { publicKey: key.publicKey, scheme: "SIGNATURE_SCHEME_TK_API_P256",
    signature: hex(toDer(raw)) };
  return ["X-Stamp", b64url(enc.encode(JSON.stringify(stamp)))];
}

export async function passkeyStamp(body) {
  const digest = hex(await crypto.subtle.digest("SHA-256", enc.encode(body)));
  const assertion = await navigator.credentials.get({
    publicKey: { challenge: enc.encode(digest), userVerification: "preferred", timeout: 60000 },
  });
  const r = assertion.response;
  return ["X-Stamp-Webauthn", JSON.stringify({
    authenticatorData: b64url(r.authenticatorData), clientDataJson: b64url(r.clientDataJSON),
    credentialId: assertion.id, signature: b64url(r.signature) })];
}
