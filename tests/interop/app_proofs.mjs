// Checks walletd's app proofs with the official @turnkey/crypto, unchanged.
// stdin: {"appProofs": [v1AppProof, ...], "bootProof": v1BootProof}
// stdout: {"verified": n, "verifyPair": "<the error verifyPair raised on the boot record>"}
import { verifyAppProofSignature, verify } from "@turnkey/crypto";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const req = JSON.parse(Buffer.concat(chunks).toString("utf8"));

let verified = 0;
for (const proof of req.appProofs) {
  verifyAppProofSignature(proof); // throws on a bad proof
  verified += 1;
}
let pairError = "";
if (req.bootProof) {
  try {
    await verify(req.appProofs[0], req.bootProof);
    pairError = "accepted";
  } catch (err) {
    pairError = String(err && err.message ? err.message : err);
  }
}
console.log(JSON.stringify({ verified, verifyPair: pairError }));
