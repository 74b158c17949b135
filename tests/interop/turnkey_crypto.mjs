// Runs @turnkey/crypto (the official SDK) on one JSON request read from stdin.
// Used by tests/e2e/test_turnkey_crypto_interop.py to prove walletd's bundles interoperate.
import {
  decryptExportBundle,
  encryptPrivateKeyToBundle,
  encryptWalletToBundle,
} from "@turnkey/crypto";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const req = JSON.parse(Buffer.concat(chunks).toString("utf8"));

let result;
if (req.op === "encryptWallet") {
  result = await encryptWalletToBundle({
    mnemonic: req.mnemonic,
    importBundle: req.importBundle,
    userId: req.userId,
    organizationId: req.organizationId,
    dangerouslyOverrideSignerPublicKey: req.signer,
  });
} else if (req.op === "encryptPrivateKey") {
  result = await encryptPrivateKeyToBundle({
    privateKey: req.privateKey,
    keyFormat: req.keyFormat,
    importBundle: req.importBundle,
    userId: req.userId,
    organizationId: req.organizationId,
    dangerouslyOverrideSignerPublicKey: req.signer,
  });
} else if (req.op === "decryptExport") {
  result = await decryptExportBundle({
    exportBundle: req.exportBundle,
    embeddedKey: req.embeddedKey,
    organizationId: req.organizationId,
    returnMnemonic: req.returnMnemonic,
    keyFormat: req.keyFormat,
    dangerouslyOverrideSignerPublicKey: req.signer,
  });
} else {
  throw new Error(`unknown op ${req.op}`);
}
process.stdout.write(JSON.stringify({ result }));
