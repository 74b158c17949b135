// Runs the official Turnkey JS packages for the session/OTP tests on one JSON request from
// stdin: @turnkey/core's decodeVerificationToken and getClientSignatureMessageForLogin, and
// @turnkey/crypto's encryptOtpCodeToBundle, verifyOtpVerificationToken,
// verifySessionJwtSignature and decryptCredentialBundle (with the discovery keys as overrides).
// Used by tests/e2e/test_sessions_interop.py.
import {
  decryptCredentialBundle,
  encryptOtpCodeToBundle,
  verifyOtpVerificationToken,
  verifySessionJwtSignature,
} from "@turnkey/crypto";
import { decodeVerificationToken, getClientSignatureMessageForLogin } from "@turnkey/core";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const req = JSON.parse(Buffer.concat(chunks).toString("utf8"));

let result;
if (req.op === "decodeVerificationToken") {
  result = decodeVerificationToken(req.token);
} else if (req.op === "getClientSignatureMessageForLogin") {
  result = getClientSignatureMessageForLogin({
    verificationToken: req.token, sessionPublicKey: req.sessionPublicKey });
} else if (req.op === "encryptOtpCodeToBundle") {
  result = await encryptOtpCodeToBundle(req.code, req.bundle, req.publicKey, req.signer);
} else if (req.op === "verifyOtpVerificationToken") {
  try {
    result = await verifyOtpVerificationToken(req.token, req.signer);
  } catch (err) {
    result = { error: String(err.message) };
  }
} else if (req.op === "verifySessionJwtSignature") {
  result = await verifySessionJwtSignature(req.jwt, req.notarizer);
} else if (req.op === "decryptCredentialBundle") {
  result = decryptCredentialBundle(req.bundle, req.embeddedKey);
} else {
  throw new Error(`unknown op ${req.op}`);
}
process.stdout.write(JSON.stringify({ result }));
