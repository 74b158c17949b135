// @turnkey/core's MFA handling (onMfaRequired + getMfaStatus + polling) against walletd.
// Reads one JSON request line from stdin: {apiBaseUrl, organizationId, publicKey, privateKey,
// signWith, payload}. Signs the payload with core's TurnkeySDKClientBase (API-key stamper);
// when core calls onMfaRequired, prints {"event":"mfa","context":…} and waits for one more
// stdin line (the test performs the approvals meanwhile); prints {"event":"done",…} with the
// activity core returns. Used by tests/e2e/test_mfa_policies.py.
import readline from "node:readline";
import { TurnkeySDKClientBase } from "@turnkey/core/dist/__generated__/sdk-client-base.mjs";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";

const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next = async () => (await lines.next()).value;
const req = JSON.parse(await next());

const client = new TurnkeySDKClientBase({
  apiBaseUrl: req.apiBaseUrl,
  organizationId: req.organizationId,
  apiKeyStamper: new ApiKeyStamper({ apiPublicKey: req.publicKey, apiPrivateKey: req.privateKey }),
  activityPoller: { intervalMs: 200, numRetries: 50 },
  onMfaRequired: async (context) => {
    console.log(JSON.stringify({ event: "mfa", context }));
    await next();
  },
});

try {
  const result = await client.signRawPayload({
    signWith: req.signWith, payload: req.payload, encoding: "PAYLOAD_ENCODING_HEXADECIMAL",
    hashFunction: "HASH_FUNCTION_NO_OP" });
  console.log(JSON.stringify({ event: "done", status: result.activity.status, r: result.r ?? null }));
} catch (e) {
  console.log(JSON.stringify({ event: "error", message: String(e && e.message || e) }));
}
process.exit(0);
