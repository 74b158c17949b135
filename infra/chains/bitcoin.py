"""Bitcoin transactions (``TRANSACTION_TYPE_BITCOIN``): PSBTs, shown to policies and signed.

``unsignedTransaction`` is a BIP-174 PSBT as hex (``psbt.toHex()`` of bitcoinjs-lib, as in
Turnkey's Bitcoin examples). Every input whose previous output belongs to ``signWith``'s key
is signed; the others are left exactly as they are. The key owns an input when its previous
output (``witness_utxo``, or ``non_witness_utxo`` checked against the input's txid) is:

* P2WPKH: ECDSA over the BIP-143 sighash, stored as a partial signature;
* P2SH-P2WPKH (with its ``redeem_script``): the same;
* P2PKH: ECDSA over the legacy sighash, stored as a partial signature;
* P2TR key path with the BIP-86 tweak (no script tree): BIP-340 Schnorr over the BIP-341
  sighash, stored as ``PSBT_IN_TAP_KEY_SIG``.

The sighash type is the input's ``PSBT_IN_SIGHASH_TYPE`` when present, else ``ALL`` (ECDSA) or
``DEFAULT`` (taproot). Parsing and the BIP-143 and legacy sighashes are ``embit``'s; the
BIP-341 sighash is :func:`taproot_key_path_sighash` (embit's disagrees with the BIP-341 wallet
vectors for ``SINGLE`` and ``ANYONECANPAY``); signatures are libsecp256k1's (coincurve). The answer is the
signed, not finalized, PSBT as hex, as Turnkey returns it.

Policies see ``bitcoin.tx{version, inputs, outputs, locktime, fee}`` (PROTOCOL.md §8.3); output
addresses use the signing account's network (mainnet for a private key).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from io import BytesIO
from typing import Any

import coincurve
from embit import ec
from embit import script as scripts
from embit.networks import NETWORKS
from embit.psbt import PSBT, InputScope, read_string
from embit.script import Script
from embit.transaction import SIGHASH, Transaction, TransactionInput

from infra.chains.base import (
    FIELD,
    SIGN_WITH,
    InvalidTransaction,
    Signer,
    decode_hex,
    require_curve,
    require_formats,
)
from infra.crypto.addresses import AddressFormat, Curve
from infra.crypto.signing import sign_schnorr_taproot
from infra.errors import InvalidRequest

TRANSACTION_TYPE = "TRANSACTION_TYPE_BITCOIN"
PSBT_MAGIC = b"psbt\xff"
TAP_KEY_SIG = b"\x13"
_BITCOIN_FORMATS = frozenset(f for f in AddressFormat if f.value.startswith("ADDRESS_FORMAT_BITCOIN_"))
_NETWORKS = {"MAINNET": "main", "TESTNET": "test", "SIGNET": "signet", "REGTEST": "regtest"}
_LOCKTIME_THRESHOLD = 500_000_000
_TAPROOT_SIGHASHES = frozenset({0x00, 0x01, 0x02, 0x03, 0x81, 0x82, 0x83})


def _sha256(*parts: bytes) -> bytes:
    return hashlib.sha256(b"".join(parts)).digest()


def taproot_key_path_sighash(psbt: PSBT, index: int, hash_type: int) -> bytes:
    """BIP-341 ``SigMsg`` hashed with the ``TapSighash`` tag, key path, no annex.

    Written out here because embit's disagrees with the BIP-341 wallet vectors for
    ``SINGLE`` and ``ANYONECANPAY``; ``tests/unit/chains`` checks this one against all of them.
    """
    tx = psbt.tx
    utxos = [inp.utxo for inp in psbt.inputs]
    base, anyone_can_pay = hash_type & 0x03, bool(hash_type & 0x80)
    msg = bytes([0x00, hash_type]) + tx.version.to_bytes(4, "little")
    msg += tx.locktime.to_bytes(4, "little")
    if not anyone_can_pay:
        msg += _sha256(*(bytes(reversed(v.txid)) + v.vout.to_bytes(4, "little") for v in tx.vin))
        msg += _sha256(*(u.value.to_bytes(8, "little") for u in utxos))
        msg += _sha256(*(u.script_pubkey.serialize() for u in utxos))
        msg += _sha256(*(v.sequence.to_bytes(4, "little") for v in tx.vin))
    if base not in (SIGHASH.NONE, SIGHASH.SINGLE):
        msg += _sha256(*(out.serialize() for out in tx.vout))
    msg += b"\x00"  # spend type: key path, no annex
    if anyone_can_pay:
        vin, utxo = tx.vin[index], utxos[index]
        msg += bytes(reversed(vin.txid)) + vin.vout.to_bytes(4, "little")
        msg += utxo.value.to_bytes(8, "little") + utxo.script_pubkey.serialize()
        msg += vin.sequence.to_bytes(4, "little")
    else:
        msg += index.to_bytes(4, "little")
    if base == SIGHASH.SINGLE:
        msg += _sha256(tx.vout[index].serialize())
    tag = _sha256(b"TapSighash")
    return _sha256(tag, tag, msg)


class _Input(InputScope):
    """embit's input, keeping a sequence of 0 (embit's ``vin`` turns 0 into 0xffffffff)."""

    @property
    def vin(self) -> TransactionInput:
        sequence = 0xFFFFFFFF if self.sequence is None else self.sequence
        return TransactionInput(self.txid, self.vout, sequence=sequence)


class Psbt(PSBT):
    """embit's PSBT with :class:`_Input` (the BIP-341 vectors spend inputs of sequence 0)."""

    PSBTIN_CLS = _Input


@dataclass(frozen=True)
class _Owned:
    """An input the signer owns and how it is signed."""

    index: int
    kind: str  # "segwit" (P2WPKH, P2SH-P2WPKH), "legacy" (P2PKH) or "taproot"


@dataclass(frozen=True)
class _KeyScripts:
    """The output scripts one compressed key owns."""

    p2wpkh: bytes
    p2sh_p2wpkh: bytes
    p2pkh: bytes
    p2tr: bytes

    @classmethod
    def of(cls, public_key: bytes) -> _KeyScripts:
        key = ec.PublicKey.parse(public_key)
        return cls(scripts.p2wpkh(key).data, scripts.p2sh(scripts.p2wpkh(key)).data,
                   scripts.p2pkh(key).data, scripts.p2tr(key).data)


@dataclass(frozen=True)
class BitcoinTransaction:
    """A parsed PSBT."""

    psbt: PSBT
    raw: bytes

    def _utxo_script(self, inp: InputScope, index: int) -> bytes | None:
        if inp.non_witness_utxo is not None:
            try:
                inp.verify()
            except Exception:
                raise InvalidTransaction(
                    f"input {index}'s non_witness_utxo is not the transaction it spends; send "
                    "the previous transaction whose txid the input names",
                    field=FIELD,
                ) from None
        utxo = inp.utxo
        return bytes(utxo.script_pubkey.data) if utxo is not None else None

    def owned_inputs(self, public_key: bytes) -> list[_Owned]:
        """The inputs ``public_key`` can sign (not yet finalized)."""
        mine = _KeyScripts.of(public_key)
        owned = []
        for i, inp in enumerate(self.psbt.inputs):
            spk = self._utxo_script(inp, i)
            if spk is None or inp.final_scriptsig is not None or inp.final_scriptwitness is not None:
                continue
            if spk == mine.p2tr:
                owned.append(_Owned(i, "taproot"))
            elif spk == mine.p2wpkh or (spk == mine.p2sh_p2wpkh and inp.redeem_script is not None
                                         and inp.redeem_script.data == mine.p2wpkh):
                owned.append(_Owned(i, "segwit"))
            elif spk == mine.p2pkh:
                if inp.non_witness_utxo is None:
                    raise InvalidTransaction(
                        f"input {i} spends a P2PKH output; send its previous transaction as "
                        "non_witness_utxo", field=FIELD)
                owned.append(_Owned(i, "legacy"))
        return owned

    def accept(self, signer: Signer) -> None:
        """A secp256k1 key owning at least one input (taproot inputs need every prevout)."""
        require_curve(signer, Curve.SECP256K1, "Bitcoin", TRANSACTION_TYPE)
        require_formats(signer, _BITCOIN_FORMATS, "Bitcoin", TRANSACTION_TYPE)
        owned = self.owned_inputs(signer.public_key)
        if not owned:
            raise InvalidRequest(
                "the PSBT has no input that signWith can sign; add inputs spending its "
                "P2WPKH, P2SH-P2WPKH, P2PKH or P2TR (BIP-86) outputs with their witness_utxo "
                "(or non_witness_utxo), or sign with the key that owns them",
                field=SIGN_WITH,
            )
        if any(o.kind == "taproot" for o in owned) and any(
            inp.utxo is None for inp in self.psbt.inputs
        ):
            raise InvalidTransaction(
                "signing a taproot input needs the previous output of every input (BIP-341); "
                "send witness_utxo for each input",
                field=FIELD,
            )
        for o in owned:
            _sighash_type(self.psbt.inputs[o.index], o, self.psbt.outputs)

    def sign(self, private_key_secret: bytes, signer: Signer) -> str:
        """The PSBT with the signer's inputs signed (not finalized), hex."""
        public_key = signer.public_key
        mine = _KeyScripts.of(public_key)
        psbt = Psbt.parse(self.raw)
        for owned in self.owned_inputs(public_key):
            inp = psbt.inputs[owned.index]
            sighash = _sighash_type(inp, owned, psbt.outputs)
            if owned.kind == "taproot":
                digest = taproot_key_path_sighash(psbt, owned.index, sighash)
            elif owned.kind == "segwit":
                code = scripts.p2pkh_from_p2wpkh(Script(mine.p2wpkh))  # BIP-143 scriptCode
                digest = psbt.sighash_segwit(owned.index, code, inp.utxo.value, sighash=sighash)
            else:
                digest = psbt.sighash_legacy(owned.index, Script(mine.p2pkh), sighash=sighash)
            if owned.kind == "taproot":
                sig = sign_schnorr_taproot(private_key_secret, digest)
                raw = bytes.fromhex(sig.r + sig.s)
                inp.unknown[TAP_KEY_SIG] = raw if sighash == SIGHASH.DEFAULT else raw + bytes([sighash])
            else:
                der = coincurve.PrivateKey(private_key_secret).sign(digest, hasher=None)
                inp.partial_sigs[ec.PublicKey.parse(public_key)] = der + bytes([sighash])
        return bytes(psbt.serialize()).hex()

    # --- policy view ------------------------------------------------------------------

    def policy_variables(self, signer: Signer | None) -> dict[str, Any]:
        """``{"bitcoin": {"tx": {...}}}``."""
        network = "main"
        fmt = signer.address_format if signer is not None else None
        if fmt is not None and fmt in _BITCOIN_FORMATS:
            network = _NETWORKS[fmt.value.split("_")[3]]
        return {"bitcoin": {"tx": self.policy_view(network)}}

    def policy_view(self, network: str = "main") -> dict[str, Any]:
        """``bitcoin.tx`` (PROTOCOL.md §8.3)."""
        psbt = self.psbt
        tx = psbt.tx
        outputs = []
        for out in tx.vout:
            kind = out.script_pubkey.script_type()
            try:
                addr = out.script_pubkey.address(NETWORKS[network]) if kind else ""
            except Exception:
                addr = ""
            outputs.append({"value": out.value, "script_pubkey": out.script_pubkey.data.hex(),
                            "address": addr, "address_type": (kind or "unknown").upper()})
        view: dict[str, Any] = {
            "version": str(tx.version),
            "inputs": [{"tx_id": vin.txid.hex(), "vout": vin.vout, "sequence": vin.sequence}
                       for vin in tx.vin],
            "outputs": outputs,
            "locktime": {"amount": tx.locktime,
                         "type": "Blocks" if tx.locktime < _LOCKTIME_THRESHOLD else "Seconds"},
        }  # fmt: skip
        if all(inp.utxo is not None for inp in psbt.inputs):
            view["fee"] = sum(inp.utxo.value for inp in psbt.inputs) - sum(o.value for o in tx.vout)
        return view


def _sighash_type(inp: InputScope, owned: _Owned, psbt_outputs: list[Any]) -> int:
    default = SIGHASH.DEFAULT if owned.kind == "taproot" else SIGHASH.ALL
    sighash = default if inp.sighash_type is None else int(inp.sighash_type)
    try:
        base, _ = SIGHASH.check(sighash)
    except Exception:
        base = -1
    if owned.kind == "taproot" and sighash not in _TAPROOT_SIGHASHES:
        raise InvalidTransaction(
            f"input {owned.index} asks for taproot sighash type {sighash}; send DEFAULT, ALL, "
            "NONE or SINGLE, optionally with ANYONECANPAY (BIP-341)",
            field=FIELD,
        )
    if base == SIGHASH.SINGLE and owned.index >= len(psbt_outputs):
        raise InvalidTransaction(
            f"input {owned.index} asks for SIGHASH_SINGLE but has no output at its index; add "
            "one or use another sighash type",
            field=FIELD,
        )
    if base < 0 or (owned.kind != "taproot" and base == SIGHASH.DEFAULT):
        raise InvalidTransaction(
            f"input {owned.index} asks for sighash type {sighash}; send ALL, NONE or SINGLE "
            "(optionally with ANYONECANPAY), or DEFAULT for taproot",
            field=FIELD,
        )
    return sighash


def _check_global_transaction(raw: bytes, psbt: PSBT) -> None:
    """BIP-174: a version-0 PSBT's unsigned transaction has empty scriptSigs and no witnesses."""
    if psbt.version not in (None, 0):
        raise InvalidTransaction("only version 0 PSBTs are supported; send a BIP-174 PSBT",
                                 field=FIELD)
    stream = BytesIO(raw[len(PSBT_MAGIC):])
    if read_string(stream) != b"\x00":
        raise InvalidTransaction("the PSBT must start with its unsigned transaction (key 0x00)",
                                 field=FIELD)
    value = read_string(stream)
    tx = Transaction.parse(value)
    if tx.serialize() != value or any(vin.script_sig.data for vin in tx.vin):
        raise InvalidTransaction(
            "the PSBT's unsigned transaction must have empty scriptSigs and no witness data "
            "(BIP-174); put signatures in the inputs' fields instead",
            field=FIELD,
        )


def decode(text: str) -> BitcoinTransaction:
    """Decode ``unsignedTransaction`` (PSBT hex); raises :class:`InvalidTransaction`."""
    raw = decode_hex(text, "the PSBT (BIP-174)")
    if not raw.startswith(PSBT_MAGIC):
        raise InvalidTransaction(
            "unsignedTransaction is not a PSBT (it must start with 70736274ff); send the "
            "BIP-174 PSBT as hex, e.g. bitcoinjs-lib's psbt.toHex()",
            field=FIELD,
        )
    try:
        stream = BytesIO(raw)
        psbt = Psbt.read_from(stream)
        trailing = stream.read()
    except Exception:
        raise InvalidTransaction(
            "unsignedTransaction is not a valid PSBT (truncated or malformed); send the "
            "complete BIP-174 PSBT as hex",
            field=FIELD,
        ) from None
    if trailing:
        raise InvalidTransaction("unsignedTransaction has bytes after the PSBT", field=FIELD)
    _check_global_transaction(raw, psbt)
    if not psbt.inputs:
        raise InvalidTransaction("the PSBT has no inputs", field=FIELD)
    for index, inp in enumerate(psbt.inputs):
        prev = inp.non_witness_utxo
        if prev is not None and (prev.txid() != inp.txid or inp.vout >= len(prev.vout)):
            raise InvalidTransaction(
                f"input {index}'s non_witness_utxo is not the transaction it spends; send the "
                "previous transaction whose txid and output the input names",
                field=FIELD,
            )
    return BitcoinTransaction(psbt, raw)
