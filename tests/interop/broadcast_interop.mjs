// Drives walletd's transaction management with the official clients, one JSON request on stdin:
// @turnkey/sdk-server's apiClient (ethSendTransaction V1, getSendTransactionStatus, getNonces,
// solSendTransaction) and @turnkey/core's client (ethSendTransactionV2, the V2 shape core sends
// for `calls`); solc compiles the test contract. Used by tests/e2e/test_broadcast.py.
import solc from "solc";
import { Turnkey } from "@turnkey/sdk-server";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { TurnkeySDKClientBase } from "@turnkey/core/dist/__generated__/sdk-client-base.mjs";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const req = JSON.parse(Buffer.concat(chunks).toString("utf8"));

function server() {
  return new Turnkey({
    apiBaseUrl: req.baseUrl, apiPublicKey: req.publicKey, apiPrivateKey: req.privateKey,
    defaultOrganizationId: req.organizationId,
    activityPoller: { intervalMs: 250, numRetries: 40 },
  }).apiClient();
}

function core() {
  return new TurnkeySDKClientBase({
    apiBaseUrl: req.baseUrl, organizationId: req.organizationId,
    apiKeyStamper: new ApiKeyStamper({ apiPublicKey: req.publicKey, apiPrivateKey: req.privateKey }),
    activityPoller: { intervalMs: 250, numRetries: 40 },
  });
}

// What @turnkey/core's pollTransactionStatus does: poll until INCLUDED/COMPLETED or FAILED.
async function poll(id) {
  const client = server();
  const deadline = Date.now() + (req.timeoutMs ?? 60000);
  while (Date.now() < deadline) {
    const resp = await client.getSendTransactionStatus({ sendTransactionStatusId: id });
    if (["INCLUDED", "COMPLETED", "FAILED", "CANCELLED"].includes(resp.txStatus)) return resp;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`transaction ${id} not settled in time`);
}

let result;
if (req.op === "compile") {
  const out = JSON.parse(solc.compile(JSON.stringify({
    language: "Solidity", sources: { "C.sol": { content: req.source } },
    settings: { evmVersion: "cancun",
                outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } },
  })));
  const errors = (out.errors ?? []).filter((e) => e.severity === "error");
  if (errors.length) throw new Error(JSON.stringify(errors));
  const contract = out.contracts["C.sol"][req.name];
  result = { abi: contract.abi, bytecode: "0x" + contract.evm.bytecode.object };
} else if (req.op === "sendV1") {
  const { sendTransactionStatusId } = await server().ethSendTransaction(req.transaction);
  result = { sendTransactionStatusId };
} else if (req.op === "sendV2") {
  const resp = await core().ethSendTransactionV2(req.transaction);
  result = { sendTransactionStatusId: resp.sendTransactionStatusId };
} else if (req.op === "sendAndPoll") {
  const { sendTransactionStatusId } = await server().ethSendTransaction(req.transaction);
  result = { sendTransactionStatusId, status: await poll(sendTransactionStatusId) };
} else if (req.op === "solSend") {
  const { sendTransactionStatusId } = await server().solSendTransaction(req.transaction);
  result = { sendTransactionStatusId, status: await poll(sendTransactionStatusId) };
} else if (req.op === "poll") {
  result = await poll(req.sendTransactionStatusId);
} else if (req.op === "nonces") {
  result = await server().getNonces({ address: req.address, caip2: req.caip2, nonce: true });
} else {
  throw new Error(`unknown op ${req.op}`);
}
process.stdout.write(JSON.stringify({ result }));
