// Reading an Ethereum transaction in the browser: RLP, the envelope types, units and chains.
// The server's describe_activity gives the same fields (and the contract call through the
// organization's ABIs); this decoder lets the page show what is signed even without it and
// checks the two agree.
import { fromHex, hex } from "./stamp.js";

export const CHAINS = {
  1: "Ethereum mainnet", 5: "Goerli", 10: "OP Mainnet", 56: "BNB Smart Chain", 100: "Gnosis",
  137: "Polygon", 8453: "Base", 42161: "Arbitrum One", 43114: "Avalanche C-Chain",
  11155111: "Sepolia", 17000: "Holesky", 84532: "Base Sepolia",
};

function rlpItem(bytes, at) {
  const b = bytes[at];
  if (b === undefined) throw new Error("RLP: truncated");
  if (b < 0x80) return [bytes.slice(at, at + 1), at + 1];
  const long = (n) => { let v = 0; for (let i = 0; i < n; i++) v = v * 256 + bytes[at + 1 + i]; return v; };
  if (b <= 0xb7) return [bytes.slice(at + 1, at + 1 + b - 0x80), at + 1 + b - 0x80];
  if (b <= 0xbf) {
    const n = b - 0xb7, len = long(n), start = at + 1 + n;
    return [bytes.slice(start, start + len), start + len];
  }
  let len, start;
  if (b <= 0xf7) { len = b - 0xc0; start = at + 1; }
  else { const n = b - 0xf7; len = long(n); start = at + 1 + n; }
  const end = start + len;
  if (end > bytes.length) throw new Error("RLP: truncated list");
  const items = [];
  let p = start;
  while (p < end) { const [item, q] = rlpItem(bytes, p); items.push(item); p = q; }
  return [items, end];
}

export function rlpDecode(bytes) {
  const [item, end] = rlpItem(bytes, 0);
  if (end !== bytes.length) throw new Error("RLP: trailing bytes");
  return item;
}

const big = (b) => (b.length ? BigInt("0x" + hex(b)) : 0n);
const addr = (b) => (b.length ? "0x" + hex(b) : "");

/** {type, chainId, nonce, to, value (BigInt), data, gas, maxFeePerGas?, gasPrice?} */
export function decodeEthereumTx(text) {
  const raw = fromHex(String(text).replace(/^0x/, ""));
  if (!raw.length) throw new Error("empty transaction");
  if (raw[0] >= 0xc0) {
    const f = rlpDecode(raw);
    return { type: "legacy", nonce: big(f[0]), gasPrice: big(f[1]), gas: big(f[2]), to: addr(f[3]),
      value: big(f[4]), data: "0x" + hex(f[5]), chainId: f.length > 6 ? big(f[6]) : null };
  }
  const kind = raw[0];
  const f = rlpDecode(raw.slice(1));
  if (kind === 1) return { type: "EIP-2930", chainId: big(f[0]), nonce: big(f[1]), gasPrice: big(f[2]),
    gas: big(f[3]), to: addr(f[4]), value: big(f[5]), data: "0x" + hex(f[6]) };
  if (kind === 2 || kind === 3 || kind === 4) return { type: { 2: "EIP-1559", 3: "EIP-4844", 4: "EIP-7702" }[kind],
    chainId: big(f[0]), nonce: big(f[1]), maxPriorityFeePerGas: big(f[2]), maxFeePerGas: big(f[3]),
    gas: big(f[4]), to: addr(f[5]), value: big(f[6]), data: "0x" + hex(f[7]) };
  throw new Error(`unknown transaction type ${kind}`);
}

/** 1500000000000000000n, 18 → "1.5" */
export function units(value, decimals = 18) {
  const v = BigInt(value);
  const base = 10n ** BigInt(decimals);
  const whole = v / base;
  const frac = (v % base).toString().padStart(decimals, "0").replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : `${whole}`;
}

export function chainName(id) {
  if (id == null) return "no chain id (pre-EIP-155)";
  const n = Number(id);
  return CHAINS[n] ? `${CHAINS[n]} (${n})` : `chain ${id}`;
}
