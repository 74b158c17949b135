// Encrypting a wallet to an import bundle in this browser (PROTOCOL.md §5.1, §5.3): the
// enclave-signed importBundle is checked against the signer key, then the mnemonic is sealed
// with HPKE base mode, DHKEM(P-256, HKDF-SHA256) / HKDF-SHA256 / AES-256-GCM, info
// "turnkey_hpke", AAD = enc ‖ receiver public key. WebCrypto only; written from RFC 9180.
import { fromHex, hex } from "./stamp.js";

const text = new TextEncoder();
const INFO = text.encode("turnkey_hpke");
const KEM_SUITE = Uint8Array.of(...text.encode("KEM"), 0x00, 0x10);
const HPKE_SUITE = Uint8Array.of(...text.encode("HPKE"), 0x00, 0x10, 0x00, 0x01, 0x00, 0x02);
/** The import frame's separator between a mnemonic and its BIP-39 passphrase. */
export const PASSPHRASE_SEPARATOR = "\n--PASS--\n";

const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
};

async function hmac(key, data) {
  // An empty HKDF salt is HashLen zero bytes (RFC 5869 §2.2); WebCrypto refuses empty HMAC keys.
  const k = await crypto.subtle.importKey("raw", key.length ? key : new Uint8Array(32),
    { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, data));
}

const labeledExtract = (suite, salt, label, ikm) =>
  hmac(salt, concat(text.encode("HPKE-v1"), suite, text.encode(label), ikm));

async function labeledExpand(suite, prk, label, info, length) {
  // One HKDF-Expand block: every length used here is at most 32 (HashLen).
  const labeled = concat(Uint8Array.of(length >> 8, length & 0xff), text.encode("HPKE-v1"), suite,
    text.encode(label), info);
  return (await hmac(prk, concat(labeled, Uint8Array.of(1)))).slice(0, length);
}

/** HPKE-seal `plaintext` to the uncompressed P-256 key `receiverHex`: {encappedPublic, ciphertext} (hex). */
export async function seal(plaintext, receiverHex) {
  const receiverRaw = fromHex(receiverHex);
  if (receiverRaw.length !== 65 || receiverRaw[0] !== 4) throw new Error("the import target key is not an uncompressed P-256 key");
  const receiver = await crypto.subtle.importKey("raw", receiverRaw, { name: "ECDH", namedCurve: "P-256" }, false, []);
  const ephemeral = await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"]);
  const enc = new Uint8Array(await crypto.subtle.exportKey("raw", ephemeral.publicKey));
  const dh = new Uint8Array(await crypto.subtle.deriveBits({ name: "ECDH", public: receiver }, ephemeral.privateKey, 256));
  // DHKEM: ExtractAndExpand(dh, enc ‖ pkR)
  const eaePrk = await labeledExtract(KEM_SUITE, new Uint8Array(0), "eae_prk", dh);
  const shared = await labeledExpand(KEM_SUITE, eaePrk, "shared_secret", concat(enc, receiverRaw), 32);
  // Key schedule, base mode (no PSK)
  const none = new Uint8Array(0);
  const context = concat(Uint8Array.of(0),
    await labeledExtract(HPKE_SUITE, none, "psk_id_hash", none),
    await labeledExtract(HPKE_SUITE, none, "info_hash", INFO));
  const secret = await labeledExtract(HPKE_SUITE, shared, "secret", none);
  const key = await labeledExpand(HPKE_SUITE, secret, "key", context, 32);
  const nonce = await labeledExpand(HPKE_SUITE, secret, "base_nonce", context, 12);
  const aes = await crypto.subtle.importKey("raw", key, { name: "AES-GCM" }, false, ["encrypt"]);
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv: nonce, additionalData: concat(enc, receiverRaw), tagLength: 128 },
    aes, plaintext);
  return { encappedPublic: hex(enc), ciphertext: hex(sealed) };
}

/** A DER ECDSA signature as WebCrypto's r‖s (32 bytes each). */
export function fromDer(der) {
  const d = new Uint8Array(der);
  if (d[0] !== 0x30 || d[2] !== 0x02) throw new Error("not a DER signature");
  const int = (at) => {
    const len = d[at + 1];
    let v = d.slice(at + 2, at + 2 + len);
    while (v.length > 32 && v[0] === 0) v = v.slice(1);
    if (v.length > 32) throw new Error("not a P-256 signature");
    return [concat(new Uint8Array(32 - v.length), v), at + 2 + len];
  };
  const [r, next] = int(2);
  if (d[next] !== 0x02) throw new Error("not a DER signature");
  const [s] = int(next);
  return concat(r, s);
}

/**
 * Check an enclave-signed importBundle as the official encryptWalletToBundle does: the signer is
 * `signerHex`, the signature verifies, and it is for this organization and user. Returns the
 * import target key (uncompressed hex).
 */
export async function verifyImportBundle(bundle, signerHex, organizationId, userId) {
  let wrapper;
  try { wrapper = JSON.parse(bundle); } catch { throw new Error("the import bundle is not JSON"); }
  if (String(wrapper.enclaveQuorumPublic || "").toLowerCase() !== String(signerHex || "").toLowerCase())
    throw new Error("the import bundle is not signed by this deployment's signer key");
  const signer = await crypto.subtle.importKey("raw", fromHex(signerHex), { name: "ECDSA", namedCurve: "P-256" }, false, ["verify"]);
  const data = fromHex(String(wrapper.data || ""));
  let ok = false;
  try {
    ok = await crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, signer,
      fromDer(fromHex(String(wrapper.dataSignature || ""))), data);
  } catch { ok = false; }
  if (!ok) throw new Error("the import bundle's signature does not verify");
  const signed = JSON.parse(new TextDecoder().decode(data));
  if (signed.organizationId !== organizationId) throw new Error("the import bundle is for another organization");
  if (signed.userId !== userId) throw new Error("the import bundle is for another user");
  if (!signed.targetPublic) throw new Error("the import bundle has no target key");
  return signed.targetPublic;
}

/** The encryptedBundle of import_wallet: the mnemonic (and passphrase) sealed to the bundle's target. */
export async function encryptWalletToBundle(mnemonic, passphrase, bundle, signerHex, organizationId, userId) {
  const target = await verifyImportBundle(bundle, signerHex, organizationId, userId);
  const plain = passphrase ? `${mnemonic}${PASSPHRASE_SEPARATOR}${passphrase}` : mnemonic;
  return JSON.stringify(await seal(text.encode(plain), target));
}
