"""Bitcoin PSBTs: BIP-174 parsing vectors, BIP-341 key-path vectors, P2WPKH/P2PKH/P2TR signing."""

from __future__ import annotations

import json
from pathlib import Path

import coincurve
import pytest
from embit import ec
from embit import script as scripts
from embit.psbt import PSBT
from embit.transaction import Transaction, TransactionInput, TransactionOutput

from infra.chains.base import InvalidTransaction, Signer
from infra.chains.bitcoin import TAP_KEY_SIG, Psbt, decode, taproot_key_path_sighash
from infra.crypto.addresses import AddressFormat, Curve
from infra.crypto.signing import taproot_tweaked_private_key
from infra.errors import InvalidRequest

HERE = Path(__file__).parent
BIP174 = json.loads((HERE / "bip174_vectors.json").read_text())
BIP341 = json.loads((HERE / "bip341_keypath_vectors.json").read_text())
KEY = bytes.fromhex("22" * 32)
PUBLIC = coincurve.PrivateKey(KEY).public_key.format(True)
OTHER = coincurve.PrivateKey(bytes.fromhex("33" * 32)).public_key.format(True)


def _target(public: bytes = PUBLIC,
            fmt: AddressFormat = AddressFormat.BITCOIN_TESTNET_P2WPKH) -> Signer:
    return Signer(Curve.SECP256K1, fmt, True, public, "x")


@pytest.mark.parametrize("case", BIP174["invalid"], ids=lambda c: c["case"][:60])
def test_bip174_invalid_psbts_are_refused(case: dict[str, str]) -> None:
    with pytest.raises(InvalidTransaction):
        decode(case["hex"])


@pytest.mark.parametrize("case", BIP174["valid"], ids=lambda c: c["case"][:60])
def test_bip174_valid_psbts_parse_unless_they_have_nothing_to_sign(case: dict[str, str]) -> None:
    if "0 inputs" in case["case"]:
        with pytest.raises(InvalidTransaction):
            decode(case["hex"])
    else:
        assert decode(case["hex"]).psbt.inputs


def _bip341_psbt(vector: dict) -> Psbt:
    psbt = Psbt(Transaction.parse(bytes.fromhex(BIP341["rawUnsignedTx"])))
    for inp, utxo in zip(psbt.inputs, BIP341["utxosSpent"], strict=True):
        inp.witness_utxo = TransactionOutput(
            utxo["amountSats"], scripts.Script(bytes.fromhex(utxo["scriptPubKey"])))
    if vector["hashType"]:
        psbt.inputs[vector["txinIndex"]].sighash_type = vector["hashType"]
    return psbt


@pytest.mark.parametrize("vector", BIP341["inputs"], ids=lambda v: str(v["txinIndex"]))
def test_bip341_sighashes_match_every_vector(vector: dict) -> None:
    digest = taproot_key_path_sighash(_bip341_psbt(vector), vector["txinIndex"], vector["hashType"])
    assert digest.hex() == vector["sigHash"]


@pytest.mark.parametrize("hash_type", [None, 0x03])
def test_a_bip341_key_path_input_is_signed_and_verifies(hash_type: int | None) -> None:
    vector = next(v for v in BIP341["inputs"] if v["merkleRoot"] is None)
    secret = bytes.fromhex(vector["internalPrivkey"])
    assert taproot_tweaked_private_key(secret).hex() == vector["tweakedPrivkey"]
    public = coincurve.PrivateKey(secret).public_key.format(True)
    psbt = _bip341_psbt(dict(vector, hashType=hash_type or 0))
    tx = decode(psbt.serialize().hex())
    tx.accept(_target(public))
    index = vector["txinIndex"]
    assert [o.index for o in tx.owned_inputs(public)] == [index]
    signed = Psbt.parse(bytes.fromhex(tx.sign(secret, _target(public))))
    sig = signed.inputs[index].unknown[TAP_KEY_SIG]
    tweaked = coincurve.PublicKeyXOnly.from_secret(bytes.fromhex(vector["tweakedPrivkey"]))
    digest = taproot_key_path_sighash(psbt, index, hash_type or 0)
    if hash_type:
        assert digest.hex() == vector["sigHash"] and sig[64] == hash_type
    assert len(sig) == (65 if hash_type else 64) and tweaked.verify(sig[:64], digest)
    assert all(TAP_KEY_SIG not in signed.inputs[i].unknown
               for i in range(len(signed.inputs)) if i != index)


def test_an_unknown_taproot_sighash_type_is_refused() -> None:
    vector = dict(next(v for v in BIP341["inputs"] if v["merkleRoot"] is None), hashType=0x80)
    secret = bytes.fromhex(vector["internalPrivkey"])
    public = coincurve.PrivateKey(secret).public_key.format(True)
    with pytest.raises(InvalidTransaction, match="DEFAULT, ALL, NONE or SINGLE"):
        decode(_bip341_psbt(vector).serialize().hex()).accept(_target(public))


def _psbt(mine: list[str], other: bool = True) -> tuple[str, Transaction]:
    """A PSBT spending the signer's outputs of the given kinds, plus one output of another key."""
    key = ec.PublicKey.parse(PUBLIC)
    outputs = {"p2wpkh": scripts.p2wpkh(key), "p2pkh": scripts.p2pkh(key), "p2tr": scripts.p2tr(key)}
    spend = [outputs[k] for k in mine] + ([scripts.p2wpkh(ec.PublicKey.parse(OTHER))] if other else [])
    prev = Transaction(vin=[TransactionInput(bytes(32), 0)],
                       vout=[TransactionOutput(10_000 + i, s) for i, s in enumerate(spend)])
    tx = Transaction(vin=[TransactionInput(prev.txid(), i) for i in range(len(spend))],
                     vout=[TransactionOutput(5_000, scripts.p2wpkh(ec.PublicKey.parse(OTHER)))])
    psbt = PSBT(tx)
    for i, inp in enumerate(psbt.inputs):
        if spend[i].script_type() == "p2pkh":
            inp.non_witness_utxo = prev
        else:
            inp.witness_utxo = prev.vout[i]
    return psbt.serialize().hex(), prev


def test_p2wpkh_p2pkh_and_p2tr_inputs_are_signed_and_the_other_left() -> None:
    unsigned, _ = _psbt(["p2wpkh", "p2pkh", "p2tr"])
    tx = decode(unsigned)
    tx.accept(_target())
    signed = PSBT.parse(bytes.fromhex(tx.sign(KEY, _target())))
    key = ec.PublicKey.parse(PUBLIC)
    for index in (0, 1):
        der = signed.inputs[index].partial_sigs[key]
        assert der[-1] == 1  # SIGHASH_ALL
        digest = tx.psbt.sighash(index)
        assert coincurve.PublicKey(PUBLIC).verify(der[:-1], digest, hasher=None)
    tap = signed.inputs[2].unknown[TAP_KEY_SIG]
    tweaked = coincurve.PublicKeyXOnly.from_secret(taproot_tweaked_private_key(KEY))
    assert len(tap) == 64 and tweaked.verify(tap, taproot_key_path_sighash(tx.psbt, 2, 0))
    assert not signed.inputs[3].partial_sigs and TAP_KEY_SIG not in signed.inputs[3].unknown
    view = tx.policy_variables(_target())["bitcoin"]["tx"]
    assert view["fee"] == 10_000 + 10_001 + 10_002 + 10_003 - 5_000
    assert view["outputs"][0]["address"].startswith("tb1q")
    assert view["outputs"][0]["address_type"] == "P2WPKH"
    assert view["locktime"] == {"amount": 0, "type": "Blocks"}
    assert view["version"] == "2" and len(view["inputs"]) == 4


def test_a_psbt_without_an_input_of_the_signer_is_refused() -> None:
    unsigned, _ = _psbt([], other=True)
    with pytest.raises(InvalidRequest, match="no input that signWith can sign"):
        decode(unsigned).accept(_target())
    with pytest.raises(InvalidRequest, match="not an account of Bitcoin"):
        decode(unsigned).accept(_target(fmt=AddressFormat.ETHEREUM))


@pytest.mark.parametrize(
    ("unsigned", "fragment"),
    [("zz", "must be hex"), ("0200000001", "not a PSBT"), ("70736274ff0100", "not a valid PSBT")],
)
def test_malformed_psbts(unsigned: str, fragment: str) -> None:
    with pytest.raises(InvalidTransaction, match=fragment):
        decode(unsigned)
