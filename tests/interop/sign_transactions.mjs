// Signs transactions built by each chain's own library through walletd with the official
// Turnkey SDKs, then checks the result with the chain's library. Reads one JSON request on stdin:
// {baseUrl, organizationId, apiPublicKey, apiPrivateKey, accounts: {ethereum, solana, tron,
// p2wpkh, p2tr, p2pkh: {address, publicKey}}}; prints {case: "ok" | "error: ..."}.
// Used by tests/e2e/test_sign_transaction_interop.py. Everything runs offline (no RPC node).
import { TurnkeyClient } from "@turnkey/http";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { createAccount } from "@turnkey/viem";
import { TurnkeySigner as EthersSigner } from "@turnkey/ethers";
import { TurnkeySigner as SolanaSigner } from "@turnkey/solana";
import * as viem from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { ethers } from "ethers";
import * as web3 from "@solana/web3.js";
import { ed25519 } from "@noble/curves/ed25519";
import * as bitcoin from "bitcoinjs-lib";
import * as ecc from "@bitcoinerlab/secp256k1";
import { ECPairFactory } from "ecpair";
import { TronWeb, utils as tronUtils } from "tronweb";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const req = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const client = new TurnkeyClient(
  { baseUrl: req.baseUrl },
  new ApiKeyStamper({ apiPublicKey: req.apiPublicKey, apiPrivateKey: req.apiPrivateKey }),
);
const org = req.organizationId;
const acc = req.accounts;
const results = {};

async function check(name, fn) {
  try {
    const ok = await fn();
    results[name] = ok === true ? "ok" : `error: check returned ${ok}`;
  } catch (e) {
    results[name] = `error: ${e?.message ?? e}`.slice(0, 600);
  }
}

async function signRaw(type, unsignedTransaction, signWith) {
  const { activity } = await client.signTransaction({
    type: "ACTIVITY_TYPE_SIGN_TRANSACTION_V2",
    organizationId: org,
    timestampMs: String(Date.now()),
    parameters: { type, unsignedTransaction, signWith },
  });
  if (activity.status !== "ACTIVITY_STATUS_COMPLETED") throw new Error(activity.status);
  return activity.result.signTransactionResult.signedTransaction;
}

// --- Ethereum: viem and ethers, every envelope --------------------------------------------
const ethAddress = acc.ethereum.address;
const to = "0x000000000000000000000000000000000000dEaD";
const delegate = privateKeyToAccount("0x" + "5a".repeat(32));
const blobHash = "0x01" + "ab".repeat(31);
const viemAuth = await delegate.signAuthorization({
  contractAddress: "0x1111111111111111111111111111111111111111", chainId: 11155111, nonce: 3,
});
const viemTxs = {
  legacy: { type: "legacy", to, value: 1n, gas: 21000n, gasPrice: 10n, nonce: 0 },
  eip155: { type: "legacy", chainId: 11155111, to, value: 1n, gas: 21000n, gasPrice: 10n, nonce: 1 },
  eip2930: { type: "eip2930", chainId: 11155111, to, value: 1n, gas: 30000n, gasPrice: 10n, nonce: 2,
             accessList: [{ address: to, storageKeys: ["0x" + "00".repeat(32)] }] },
  eip1559: { type: "eip1559", chainId: 11155111, to, value: 1n, gas: 21000n, nonce: 3,
             maxFeePerGas: 3000000000n, maxPriorityFeePerGas: 1000000000n },
  eip4844: { type: "eip4844", chainId: 11155111, to, value: 1n, gas: 21000n, nonce: 4,
             maxFeePerGas: 30n, maxPriorityFeePerGas: 1n, maxFeePerBlobGas: 7n,
             blobVersionedHashes: [blobHash] },
  eip7702: { type: "eip7702", chainId: 11155111, to, value: 0n, gas: 60000n, nonce: 5,
             maxFeePerGas: 30n, maxPriorityFeePerGas: 1n, authorizationList: [viemAuth] },
};
const viemAccount = await createAccount({ client, organizationId: org, signWith: ethAddress });
for (const [name, tx] of Object.entries(viemTxs)) {
  await check(`viem:${name}`, async () => {
    const signed = await viemAccount.signTransaction(tx);
    const recovered = await viem.recoverTransactionAddress({ serializedTransaction: signed });
    const parsed = viem.parseTransaction(signed);
    return recovered.toLowerCase() === ethAddress.toLowerCase() && parsed.type === tx.type
      && parsed.to?.toLowerCase() === to.toLowerCase();
  });
}

const ethersSigner = new EthersSigner({ client, organizationId: org, signWith: ethAddress });
const delegateWallet = new ethers.Wallet("0x" + "5a".repeat(32));
const ethersAuth = delegateWallet.authorizeSync({
  address: "0x1111111111111111111111111111111111111111", chainId: 11155111n, nonce: 3n,
});
const ethersTxs = {
  legacy: { type: 0, chainId: 0, to, value: 1n, gasLimit: 21000n, gasPrice: 10n, nonce: 0 },
  eip155: { type: 0, chainId: 11155111, to, value: 1n, gasLimit: 21000n, gasPrice: 10n, nonce: 1 },
  eip2930: { type: 1, chainId: 11155111, to, value: 1n, gasLimit: 30000n, gasPrice: 10n, nonce: 2,
             accessList: [{ address: to, storageKeys: ["0x" + "00".repeat(32)] }] },
  eip1559: { type: 2, chainId: 11155111, to, value: 1n, gasLimit: 21000n, nonce: 3,
             maxFeePerGas: 3000000000n, maxPriorityFeePerGas: 1000000000n },
  eip4844: { type: 3, chainId: 11155111, to, value: 1n, gasLimit: 21000n, nonce: 4,
             maxFeePerGas: 30n, maxPriorityFeePerGas: 1n, maxFeePerBlobGas: 7n,
             blobVersionedHashes: [blobHash] },
  eip7702: { type: 4, chainId: 11155111, to, value: 0n, gasLimit: 60000n, nonce: 5,
             maxFeePerGas: 30n, maxPriorityFeePerGas: 1n, authorizationList: [ethersAuth] },
};
for (const [name, tx] of Object.entries(ethersTxs)) {
  await check(`ethers:${name}`, async () => {
    const signed = await ethersSigner.signTransaction(tx);
    const parsed = ethers.Transaction.from(signed);
    return parsed.from.toLowerCase() === ethAddress.toLowerCase() && parsed.type === tx.type
      && parsed.to?.toLowerCase() === to.toLowerCase();
  });
}

// --- Solana: @turnkey/solana signing @solana/web3.js transactions --------------------------
const solSigner = new SolanaSigner({ organizationId: org, client });
const from = new web3.PublicKey(acc.solana.address);
const recipient = web3.Keypair.generate().publicKey;
const blockhash = web3.Keypair.generate().publicKey.toBase58();
await check("solana:legacy-transfer", async () => {
  const tx = new web3.Transaction({ feePayer: from, recentBlockhash: blockhash }).add(
    web3.SystemProgram.transfer({ fromPubkey: from, toPubkey: recipient, lamports: 1234 }));
  const signed = await solSigner.signTransaction(tx, acc.solana.address);
  return signed.verifySignatures() && signed.signatures[0].publicKey.equals(from);
});
await check("solana:v0-lookup-table-transfer", async () => {
  const table = new web3.AddressLookupTableAccount({
    key: web3.Keypair.generate().publicKey,
    state: { deactivationSlot: BigInt("18446744073709551615"), lastExtendedSlot: 0,
             lastExtendedSlotStartIndex: 0, addresses: [recipient] },
  });
  const message = new web3.TransactionMessage({
    payerKey: from, recentBlockhash: blockhash,
    instructions: [web3.SystemProgram.transfer({ fromPubkey: from, toPubkey: recipient, lamports: 99 })],
  }).compileToV0Message([table]);
  const signed = await solSigner.signTransaction(new web3.VersionedTransaction(message), acc.solana.address);
  return message.addressTableLookups.length === 1
    && ed25519.verify(signed.signatures[0], signed.message.serialize(), from.toBytes());
});

// --- Bitcoin: a bitcoinjs-lib PSBT, finalized by bitcoinjs-lib -----------------------------
bitcoin.initEccLib(ecc);
const ECPair = ECPairFactory(ecc);
const network = bitcoin.networks.testnet;
await check("bitcoin:psbt-p2wpkh-p2tr-p2pkh", async () => {
  const pub = (a) => Buffer.from(a.publicKey, "hex");
  const foreign = ECPair.makeRandom({ network });
  const payments = [
    bitcoin.payments.p2wpkh({ pubkey: pub(acc.p2wpkh), network }),
    bitcoin.payments.p2tr({ internalPubkey: pub(acc.p2tr).subarray(1), network }),
    bitcoin.payments.p2pkh({ pubkey: pub(acc.p2pkh), network }),
    bitcoin.payments.p2wpkh({ pubkey: Buffer.from(foreign.publicKey), network }),
  ];
  if (payments[0].address !== acc.p2wpkh.address || payments[1].address !== acc.p2tr.address
      || payments[2].address !== acc.p2pkh.address) {
    throw new Error("bitcoinjs-lib derives other addresses than walletd");
  }
  const prev = new bitcoin.Transaction();
  prev.addInput(Buffer.alloc(32, 1), 0);
  payments.forEach((p) => prev.addOutput(p.output, 50000n));
  const psbt = new bitcoin.Psbt({ network });
  payments.forEach((p, i) => {
    const input = { hash: prev.getId(), index: i };
    if (i === 2) input.nonWitnessUtxo = prev.toBuffer();
    else input.witnessUtxo = { script: p.output, value: 50000n };
    if (i === 1) input.tapInternalKey = pub(acc.p2tr).subarray(1);
    psbt.addInput(input);
  });
  psbt.addOutput({ address: "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", value: 190000n });
  let signed = psbt;
  for (const account of [acc.p2wpkh, acc.p2tr, acc.p2pkh]) {
    const hex = await signRaw("TRANSACTION_TYPE_BITCOIN", signed.toHex(), account.address);
    signed = bitcoin.Psbt.fromHex(hex, { network });
  }
  if (signed.data.inputs[3].partialSig?.length) throw new Error("foreign input was signed");
  const validator = (pubkey, msghash, signature) => ecc.verify(msghash, pubkey, signature);
  const schnorr = (pubkey, msghash, signature) => ecc.verifySchnorr(msghash, pubkey, signature);
  const valid = signed.validateSignaturesOfInput(0, validator)
    && signed.validateSignaturesOfInput(1, schnorr)
    && signed.validateSignaturesOfInput(2, validator);
  signed.signInput(3, foreign);
  signed.finalizeAllInputs();
  const tx = signed.extractTransaction();
  return valid && tx.ins.length === 4 && tx.ins[0].witness.length === 2
    && tx.ins[1].witness.length === 1 && tx.ins[2].script.length > 0;
});

// --- Tron: a tronweb transaction (built offline), verified by tronweb ----------------------
await check("tron:transfer", async () => {
  const tw = new TronWeb({ fullHost: "http://127.0.0.1:9" });
  const tx = { visible: false, raw_data: {
    contract: [{ parameter: { value: { owner_address: tw.address.toHex(acc.tron.address),
      to_address: tw.address.toHex("TJRabPrwbZy45sbavfcjinPJC18kjpRTv8"), amount: 1000 },
      type_url: "type.googleapis.com/protocol.TransferContract" }, type: "TransferContract" }],
    ref_block_bytes: "a2b4", ref_block_hash: "0102030405060708",
    expiration: Date.now() + 60000, timestamp: Date.now() } };
  const pb = tronUtils.transaction.txJsonToPb(tx);
  tx.raw_data_hex = tronUtils.transaction.txPbToRawDataHex(pb).toLowerCase();
  tx.txID = tronUtils.transaction.txPbToTxID(pb).replace(/^0x/, "");
  const signedHex = await signRaw("TRANSACTION_TYPE_TRON", tx.raw_data_hex, acc.tron.address);
  const decoded = globalThis.TronWebProto.Transaction.deserializeBinary(Buffer.from(signedHex, "hex"));
  const rawHex = Buffer.from(decoded.getRawData().serializeBinary()).toString("hex");
  const signature = Buffer.from(decoded.getSignatureList()[0]).toString("hex");
  const recovered = tw.trx.ecRecover({ ...tx, signature: [signature] });
  return rawHex === tx.raw_data_hex && recovered === acc.tron.address;
});

console.log(JSON.stringify(results));
