// Round-trips secrets through walletd with the official packages only: @turnkey/http's
// TurnkeyClient (stamped by @turnkey/api-key-stamper) sends init_import_secrets,
// import_secrets, list_secrets and export_secrets; @turnkey/crypto's encryptSecretToBundle and
// decryptSecretBundle seal and open the values (the discovery signer key as the override).
// Used by tests/e2e/test_secrets.py; one JSON request on stdin, one JSON answer on stdout.
import { TurnkeyClient } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { decryptSecretBundle, encryptSecretToBundle, generateP256KeyPair } from "@turnkey/crypto";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const req = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const SUITE = "TRANSPORT_ENCRYPTION_SUITE_ENCLAVE_ENCRYPT_V1";
const client = new TurnkeyClient(
  { baseUrl: req.baseUrl },
  new ApiKeyStamper({ apiPublicKey: req.publicKey, apiPrivateKey: req.privateKey }),
);
const now = () => String(Date.now());
const organizationId = req.organizationId;

function completed(response, key) {
  const activity = response.activity;
  if (activity.status !== "ACTIVITY_STATUS_COMPLETED") {
    throw new Error(`activity ${activity.type} ended ${activity.status}: ${JSON.stringify(activity.failure)}`);
  }
  return activity.result[key];
}

const init = completed(await client.initImportSecrets({
  type: "ACTIVITY_TYPE_INIT_IMPORT_SECRETS", timestampMs: now(), organizationId,
  parameters: { encryptionSuite: SUITE, numSecrets: req.secrets.length },
}), "initImportSecretsResult");

const secrets = [];
for (let i = 0; i < req.secrets.length; i++) {
  const { secretPayload, targetPublicKey } = await encryptSecretToBundle({
    plaintext: req.secrets[i].value,
    ingressTargetBundle: init.enclaveTargetMessages[i],
    organizationId,
    dangerouslyOverrideSignerPublicKey: req.signer,
  });
  secrets.push({ name: req.secrets[i].name, secretPayload, targetPublicKey,
                 encryptionSuite: SUITE, staticProperties: req.secrets[i].staticProperties ?? [] });
}
const imported = completed(await client.importSecrets({
  type: "ACTIVITY_TYPE_IMPORT_SECRETS", timestampMs: now(), organizationId,
  parameters: { secrets },
}), "importSecretsResult");

const listed = await client.listSecrets({ organizationId });

const embedded = generateP256KeyPair();
const exported = completed(await client.exportSecrets({
  type: "ACTIVITY_TYPE_EXPORT_SECRETS", timestampMs: now(), organizationId,
  parameters: { secrets: imported.secretIds.map((secretId) => ({
    secretId, targetPublicKey: embedded.publicKeyUncompressed, encryptionSuite: SUITE })) },
}), "exportSecretsResult");

const values = [];
for (const secretPayload of exported.secretPayloads) {
  values.push(await decryptSecretBundle({
    secretPayload, embeddedPrivateKey: embedded.privateKey, organizationId,
    dangerouslyOverrideSignerPublicKey: req.signer,
  }));
}
process.stdout.write(JSON.stringify({
  secretIds: imported.secretIds, listed: listed.secrets, values,
  importBody: JSON.stringify(secrets),
}));
