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
import { AttestedStamper } from "@turnkey/core/dist/__stampers__/attested/base.mjs";
import { ApiKeyStamper, SignatureFormat } from "@turnkey/api-key-stamper";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const req = JSON.parse(Buffer.concat(chunks).toString("utf8"));

let result;
if (req.op === "decodeVerificationToken") {
  result = decodeVerificationToken(req.token);
} else if (req.op === "getClientSignatureMessageForLogin") {
  result = getClientSignatureMessageForLogin({
    verificationToken: req.token, sessionPublicKey: req.sessionPublicKey });
} else if (req.op === "signRaw") {
  // What core does for clientSignature: the API-key stamper's raw r||s signature.
  const stamper = new ApiKeyStamper({ apiPublicKey: req.publicKey, apiPrivateKey: req.privateKey });
  result = await stamper.sign(req.message, SignatureFormat.Raw);
} else if (req.op === "attestedStamp") {
  // loginWithOtp's X-Stamp-Attested header over the stamp_login body.
  const stamper = new AttestedStamper(
    new ApiKeyStamper({ apiPublicKey: req.publicKey, apiPrivateKey: req.privateKey }));
  stamper.configure({ attestedIdentity: req.token, publicKey: req.publicKey,
                      scheme: "STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN" });
  result = await stamper.stamp(req.body);
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
