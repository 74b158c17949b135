// Runs @turnkey/crypto (the official SDK) for the OAuth tests on one JSON request from stdin:
// encryptOauth2ClientSecret, decryptCredentialBundle, verifySessionJwtSignature.
// Used by tests/e2e/test_oauth.py.
import {
  decryptCredentialBundle,
  encryptOauth2ClientSecret,
  verifySessionJwtSignature,
} from "@turnkey/crypto";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const req = JSON.parse(Buffer.concat(chunks).toString("utf8"));

let result;
if (req.op === "encryptOauth2ClientSecret") {
  result = await encryptOauth2ClientSecret(req.clientSecret, req.encryptionPublicKey);
} else if (req.op === "decryptCredentialBundle") {
  result = decryptCredentialBundle(req.bundle, req.embeddedKey);
} else if (req.op === "verifySessionJwtSignature") {
  result = await verifySessionJwtSignature(req.jwt, req.notarizerPublicKey);
} else {
  throw new Error(`unknown op ${req.op}`);
}
process.stdout.write(JSON.stringify({ result }));
