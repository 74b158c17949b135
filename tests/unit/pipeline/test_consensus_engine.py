"""The engine as a table: policies by activities by approvers → outcome (PROTOCOL.md §8).

Each row names where the example comes from: PROTOCOL.md §8 or the Turnkey policy docs it
cites (overview, language, examples/access-control, examples/ethereum, examples/signing-control,
time-based-policies, users/root-quorum, co-signing-transactions).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from infra.activities import registry
from infra.pipeline.engine import (
    EXPLICIT_DENY_MESSAGE,
    IMPLICIT_DENY_MESSAGE,
    Outcome,
    Policy,
    Proposal,
    RootQuorum,
    evaluate,
    evaluate_policy,
    variables_for,
)
from infra.pipeline.gates import IMPORT_OWN_USER
from infra.policy.variables import eip712_variable, eth_tx_variable, user_variable

ALICE = user_variable("alice", tags=["ops"])
BOB = user_variable("bob", tags=["ops"])
CAROL = user_variable("carol", tags=["fin"])
ROOT1 = user_variable("root1")
ROOT2 = user_variable("root2")
QUORUM_1 = RootQuorum(1, frozenset({"root1"}))
QUORUM_2 = RootQuorum(2, frozenset({"root1", "root2"}))
NOON_TUESDAY = datetime(2026, 3, 10, 15, 0, tzinfo=UTC)  # 11:00 in New York

ALLOWED = "0x08d2b0a37f869ff76bacb5bab3278e26ab7067b7"
SIGN_TX = "ACTIVITY_TYPE_SIGN_TRANSACTION_V2"
ETH_PARAMS = {"type": "TRANSACTION_TYPE_ETHEREUM", "signWith": ALLOWED, "unsignedTransaction": ""}
PERMIT2 = {
    "types": {
        "EIP712Domain": [{"name": "name", "type": "string"}],
        "PermitBatchTransferFrom": [
            {"name": "permitted", "type": "TokenPermissions[]"},
            {"name": "spender", "type": "address"},
        ],
        "TokenPermissions": [
            {"name": "token", "type": "address"},
            {"name": "amount", "type": "uint256"},
        ],
    },
    "primaryType": "PermitBatchTransferFrom",
    "domain": {"name": "Permit2", "chainId": 1,
               "verifyingContract": "0x000000000022D473030F116dDEE9F6B43aC78BA3"},
    "message": {
        "permitted": [{"token": "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48", "amount": "1000000"}],
        "spender": "0x00000000000000000000000000000000000000AA",
    },
}  # fmt: skip
USDC = "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"
TEMPO = "ACTIVITY_TYPE_SIGN_TRANSACTION_V2"
# ERC-20 transfer calldata: "0x", selector (8 hex), 24 hex of padding, then the recipient.
TEMPO_INPUT = "0xa9059cbb" + "00" * 12 + ALLOWED[2:] + "00" * 31 + "0a"
TARGET_KEY = "04" + "cd" * 64
PRIVATE_KEY = {"id": "k1", "tags": ["hot"], "imported": False, "exported": False, "label": "k"}
SOLANA_WITH_LOOKUP = {"tx": {
    "account_keys": ["A"], "program_keys": ["P"], "instructions": [], "transfers": [],
    "spl_transfers": [], "recent_blockhash": "H",
    "address_table_lookups": [{"address_table_key": "T", "writable_indexes": [0],
                               "readonly_indexes": []}],
}}  # fmt: skip


def eth_tx(**fields: Any) -> dict[str, Any]:
    base = {"to": ALLOWED, "data": "0xa9059cbb00", "value": 10, "chain_id": 1, "nonce": 0}
    return {"tx": eth_tx_variable({**base, **fields})}


@dataclass(frozen=True)
class Row:
    source: str
    policies: list[Policy]
    activity_type: str
    approvers: list[dict[str, Any]]
    expected: Outcome
    parameters: dict[str, Any] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)
    quorum: RootQuorum | None = QUORUM_1
    rejecters: tuple[str, ...] = ()
    credentials: list[dict[str, Any]] = field(default_factory=list)
    per_policy: tuple[Outcome, ...] | None = None
    features: dict[str, str] = field(default_factory=dict)
    voter_entitled: bool = False

    def proposal(self) -> Proposal:
        requester = str(self.approvers[0]["id"]) if self.approvers else "nobody"
        return Proposal(
            self.activity_type,
            self.parameters,
            requester,
            self.approvers,
            self.credentials,
            self.rejecters,
            self.context,
            NOON_TUESDAY,
            self.features,
            self.voter_entitled,
            resource_action=registry().resource_action(self.activity_type),
        )


def allow(condition: str = "", consensus: str = "", time: str = "", pid: str = "p") -> Policy:
    return Policy(pid, "EFFECT_ALLOW", condition, consensus, time)


def deny(condition: str = "", consensus: str = "", time: str = "", pid: str = "d") -> Policy:
    return Policy(pid, "EFFECT_DENY", condition, consensus, time)


SEND_TO_ALLOWED = allow(f"eth.tx.to == '{ALLOWED}'", "approvers.any(user, user.id == 'alice')")
TWO_OPS = allow(
    "activity.resource == 'POLICY' && activity.action == 'CREATE'",
    "approvers.filter(user, user.tags.contains('ops')).count() >= 2",
)
ANY_SIGN = allow("activity.kind == 'SIGN_TRANSACTION'")
BIZ_HOURS = "CronSpan('0 9 * * 1-5', '8h', 'America/New_York')"

ROWS = [
    # --- overview: allow one user to send to one address -----------------------------------
    Row("overview", [SEND_TO_ALLOWED], SIGN_TX, [ALICE], Outcome.ALLOW, ETH_PARAMS,
        {"eth": eth_tx()}),
    Row("overview: another submitter waits for alice", [SEND_TO_ALLOWED], SIGN_TX, [BOB],
        Outcome.REQUIRES_CONSENSUS, ETH_PARAMS, {"eth": eth_tx()}),
    Row("overview: other address", [SEND_TO_ALLOWED], SIGN_TX, [ALICE], Outcome.DENY_IMPLICIT,
        ETH_PARAMS, {"eth": eth_tx(to="0x" + "11" * 20)}),
    Row("overview: no eth.tx (raw payload) is an ERROR, not a match", [SEND_TO_ALLOWED],
        "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", [ALICE], Outcome.DENY_IMPLICIT,
        per_policy=(Outcome.ERROR,)),
    # --- §8.4 consensus example: two users with a tag ----------------------------------------
    Row("access-control: 1 of 2 ops", [TWO_OPS], "ACTIVITY_TYPE_CREATE_POLICY_V3", [ALICE],
        Outcome.REQUIRES_CONSENSUS),
    Row("access-control: 2 of 2 ops", [TWO_OPS], "ACTIVITY_TYPE_CREATE_POLICY_V3",
        [ALICE, BOB], Outcome.ALLOW),
    Row("access-control: ops + fin is not enough", [TWO_OPS], "ACTIVITY_TYPE_CREATE_POLICIES",
        [ALICE, CAROL], Outcome.REQUIRES_CONSENSUS),
    Row("access-control: POLICY/CREATE does not cover UPDATE", [TWO_OPS],
        "ACTIVITY_TYPE_UPDATE_POLICY_V2", [ALICE, BOB], Outcome.DENY_IMPLICIT),
    # --- §8.4 order: root quorum, deny wins, implicit deny -----------------------------------
    Row("§8.4: root quorum bypasses even a deny", [deny("true")], SIGN_TX, [ROOT1],
        Outcome.ALLOW, per_policy=()),
    Row("§8.4: deny wins over allow", [ANY_SIGN, deny("activity.action == 'SIGN'")], SIGN_TX,
        [ALICE], Outcome.DENY_EXPLICIT, per_policy=(Outcome.ALLOW, Outcome.DENY_EXPLICIT)),
    Row("§8.4: deny wins over consensus needed",
        [allow("true", "approvers.count() >= 2"), deny("true")], SIGN_TX, [ALICE],
        Outcome.DENY_EXPLICIT),
    Row("§8.4: nothing applies", [], SIGN_TX, [ALICE], Outcome.DENY_IMPLICIT),
    Row("§8.4: a non-applicable deny does not deny",
        [ANY_SIGN, deny("activity.action == 'DELETE'")], SIGN_TX, [ALICE], Outcome.ALLOW,
        per_policy=(Outcome.ALLOW, Outcome.DENY_IMPLICIT)),
    Row("§8.4: deny applies only when its consensus holds too",
        [ANY_SIGN, deny("activity.action == 'DELETE'", "approvers.any(u, u.tags.contains('ops'))")],
        "ACTIVITY_TYPE_DELETE_USERS", [CAROL], Outcome.DENY_IMPLICIT),
    Row("access-control: deny all delete actions for a tag",
        [allow("true"), deny("activity.action == 'DELETE'",
                             "approvers.any(user, user.tags.contains('ops'))")],
        "ACTIVITY_TYPE_DELETE_USERS", [ALICE], Outcome.DENY_EXPLICIT),
    # --- root quorum (users/root-quorum, co-signing example) ---------------------------------
    Row("root-quorum: threshold 2, one root waits", [], SIGN_TX, [ROOT1],
        Outcome.REQUIRES_CONSENSUS, quorum=QUORUM_2),
    Row("root-quorum: threshold 2, two roots", [], SIGN_TX, [ROOT1, ROOT2], Outcome.ALLOW,
        quorum=QUORUM_2),
    Row("root-quorum: a policy lets one root act alone", [ANY_SIGN], SIGN_TX, [ROOT1],
        Outcome.ALLOW, quorum=QUORUM_2),
    Row("§8.4 root quorum 2: a deny makes one root's activity wait, not fail", [deny("true")],
        SIGN_TX, [ROOT1], Outcome.REQUIRES_CONSENSUS, quorum=QUORUM_2,
        per_policy=(Outcome.DENY_EXPLICIT,)),
    Row("§8.4 root quorum 2: the second root completes it despite the deny", [deny("true")],
        SIGN_TX, [ROOT1, ROOT2], Outcome.ALLOW, quorum=QUORUM_2, per_policy=()),
    Row("§8.4 root quorum 2: allowed and denied, a root's activity waits for the quorum",
        [ANY_SIGN, deny("activity.action == 'SIGN'")], SIGN_TX, [ROOT1],
        Outcome.REQUIRES_CONSENSUS, quorum=QUORUM_2,
        per_policy=(Outcome.ALLOW, Outcome.DENY_EXPLICIT)),
    Row("§8.4 root quorum 2: a root approving a user's denied activity lets it wait",
        [deny("true")], SIGN_TX, [ALICE, ROOT2], Outcome.REQUIRES_CONSENSUS, quorum=QUORUM_2),
    Row("§8.4 root quorum 2: a non-root's denied activity is still refused", [deny("true")],
        SIGN_TX, [ALICE], Outcome.DENY_EXPLICIT, quorum=QUORUM_2),
    Row("§8.4 root quorum 2: a root's activity a deny does not match is not held",
        [ANY_SIGN, deny("activity.action == 'DELETE'")], SIGN_TX, [ROOT1], Outcome.ALLOW,
        quorum=QUORUM_2),
    Row("root-quorum-only types ignore policies", [allow("true")],
        "ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE", [ALICE], Outcome.DENY_IMPLICIT),
    Row("root-quorum-only types: root allowed", [deny("true")],
        "ACTIVITY_TYPE_UPDATE_ROOT_QUORUM", [ROOT1], Outcome.ALLOW),
    Row("root-quorum-only types wait for more roots", [allow("true")],
        "ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME", [ROOT1], Outcome.REQUIRES_CONSENSUS,
        quorum=QUORUM_2),
    Row("root-quorum-only types: second root completes", [],
        "ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE", [ROOT1, ROOT2], Outcome.ALLOW,
        quorum=QUORUM_2),
    # --- defaults ----------------------------------------------------------------------------
    Row("default: own credentials", [], "ACTIVITY_TYPE_CREATE_API_KEYS_V2", [ALICE],
        Outcome.ALLOW, {"userId": "alice", "apiKeys": []}),
    Row("default: not someone else's credentials", [], "ACTIVITY_TYPE_DELETE_API_KEYS",
        [ALICE], Outcome.DENY_IMPLICIT, {"userId": "bob", "apiKeyIds": ["k"]}),
    Row("default: a deny policy overrides it",
        [deny("activity.resource == 'CREDENTIAL'")], "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2",
        [ALICE], Outcome.DENY_EXPLICIT, {"userId": "alice"}),
    Row("default: an allow policy's consensus governs it",
        [allow("activity.resource == 'CREDENTIAL'", "approvers.count() >= 2")],
        "ACTIVITY_TYPE_CREATE_API_KEYS_V2", [ALICE], Outcome.REQUIRES_CONSENSUS,
        {"userId": "alice"}),
    Row("default: a user entitled to vote on the target may approve", [],
        "ACTIVITY_TYPE_APPROVE_ACTIVITY", [CAROL], Outcome.ALLOW, {"fingerprint": "sha256:00"},
        voter_entitled=True),
    Row("default: a user entitled to vote on the target may reject", [],
        "ACTIVITY_TYPE_REJECT_ACTIVITY", [CAROL], Outcome.ALLOW, {"fingerprint": "sha256:00"},
        voter_entitled=True),
    Row("default: an unrelated user may not approve", [], "ACTIVITY_TYPE_APPROVE_ACTIVITY",
        [CAROL], Outcome.DENY_IMPLICIT, {"fingerprint": "sha256:00"}),
    Row("default: an unrelated user may not reject", [], "ACTIVITY_TYPE_REJECT_ACTIVITY",
        [CAROL], Outcome.DENY_IMPLICIT, {"fingerprint": "sha256:00"}),
    Row("default: a policy may grant voting rights",
        [allow("activity.kind in ['APPROVE_ACTIVITY', 'REJECT_ACTIVITY']")],
        "ACTIVITY_TYPE_REJECT_ACTIVITY", [CAROL], Outcome.ALLOW, {"fingerprint": "sha256:00"}),
    Row("default: a root's vote does not wait for the root quorum", [],
        "ACTIVITY_TYPE_APPROVE_ACTIVITY", [ROOT2], Outcome.ALLOW, {"fingerprint": "sha256:00"},
        quorum=QUORUM_2, voter_entitled=True),
    Row("§8.4: no policy limits a root's vote (it is how the quorum is reached)",
        [deny("true"), allow("true", "approvers.count() >= 5")],
        "ACTIVITY_TYPE_APPROVE_ACTIVITY", [ROOT2], Outcome.ALLOW, {"fingerprint": "sha256:00"},
        quorum=QUORUM_2, voter_entitled=True, per_policy=()),
    Row("a deny does limit a named (non-root) approver's vote", [deny("true")],
        "ACTIVITY_TYPE_APPROVE_ACTIVITY", [CAROL], Outcome.DENY_EXPLICIT,
        {"fingerprint": "sha256:00"}, quorum=QUORUM_2, voter_entitled=True),
    Row("a root not entitled to vote (another organization's target) gets no bypass",
        [deny("true")], "ACTIVITY_TYPE_REJECT_ACTIVITY", [ROOT2], Outcome.REQUIRES_CONSENSUS,
        {"fingerprint": "sha256:00"}, quorum=QUORUM_2),
    Row("default: a root manages own keys without the quorum", [],
        "ACTIVITY_TYPE_CREATE_API_KEYS_V2", [ROOT1], Outcome.ALLOW, {"userId": "root1"},
        quorum=QUORUM_2),
    # --- hard denials and rejections ---------------------------------------------------------
    Row("hard denial: imports target your own user", [allow("true")],
        "ACTIVITY_TYPE_INIT_IMPORT_WALLET", [ROOT1], Outcome.DENY_EXPLICIT, {"userId": "bob"}),
    Row("hard denial: own import is fine", [], "ACTIVITY_TYPE_IMPORT_WALLET", [ROOT1],
        Outcome.ALLOW, {"userId": "root1"}),
    Row("feature gate: email auth switched off beats the root quorum", [allow("true")],
        "ACTIVITY_TYPE_EMAIL_AUTH_V3", [ROOT1], Outcome.DENY_EXPLICIT,
        features={"FEATURE_NAME_EMAIL_AUTH": "false"}),
    Row("feature gate: email auth on", [], "ACTIVITY_TYPE_EMAIL_AUTH_V3", [ROOT1],
        Outcome.ALLOW, features={"FEATURE_NAME_EMAIL_AUTH": "true"}),
    Row("feature gate: SMS OTP off", [], "ACTIVITY_TYPE_INIT_OTP_V3", [ROOT1],
        Outcome.DENY_EXPLICIT, {"otpType": "OTP_TYPE_SMS"},
        features={"FEATURE_NAME_SMS_AUTH": "disabled"}),
    Row("feature gate: SMS off does not close email OTP", [], "ACTIVITY_TYPE_INIT_OTP_V3",
        [ROOT1], Outcome.ALLOW, {"otpType": "OTP_TYPE_EMAIL"},
        features={"FEATURE_NAME_SMS_AUTH": "false"}),
    Row("a reject vote ends it", [ANY_SIGN], SIGN_TX, [ALICE], Outcome.REJECTED,
        rejecters=("bob",)),
    # --- activity.type / kind / resource / action / params (language.mdx) --------------------
    Row("kind matches every version", [allow("activity.kind == 'SIGN_TRANSACTION'")],
        "ACTIVITY_TYPE_SIGN_TRANSACTION", [ALICE], Outcome.ALLOW),
    Row("type pins one version",
        [allow("activity.type == 'ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2'")],
        "ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION", [ALICE], Outcome.DENY_IMPLICIT),
    Row("WALLET/EXPORT", [allow("activity.resource == 'WALLET' && activity.action == 'EXPORT'")],
        "ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT", [ALICE], Outcome.ALLOW),
    Row("PRIVATE_KEY/SIGN covers raw payloads",
        [allow("activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'")],
        "ACTIVITY_TYPE_SIGN_RAW_PAYLOADS", [ALICE], Outcome.ALLOW),
    Row("USER/CREATE", [allow("activity.resource == 'USER' && activity.action == 'CREATE'",
                              "approvers.any(user, user.tags.contains('ops'))")],
        "ACTIVITY_TYPE_CREATE_USERS_V4", [ALICE], Outcome.ALLOW),
    Row("AUTH+OTP in lists", [allow("activity.resource in ['AUTH', 'OTP'] && "
                                    "activity.action in ['CREATE','VERIFY']")],
        "ACTIVITY_TYPE_VERIFY_OTP_V2", [ALICE], Outcome.ALLOW),
    Row("ORGANIZATION/CREATE by an API user",
        [allow("activity.resource == 'ORGANIZATION' && activity.action == 'CREATE'",
               "approvers.any(user, user.id == 'carol')")],
        "ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7", [CAROL], Outcome.ALLOW),
    Row("language.mdx: deny NO_OP hashing (fires)",
        [allow("true"), deny("activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' && "
                             "activity.params.hash_function == 'HASH_FUNCTION_NO_OP' && "
                             "activity.params.encoding != 'PAYLOAD_ENCODING_EIP712'")],
        "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", [ALICE], Outcome.DENY_EXPLICIT,
        {"hashFunction": "HASH_FUNCTION_NO_OP", "encoding": "PAYLOAD_ENCODING_HEXADECIMAL"}),
    Row("language.mdx: deny NO_OP hashing (EIP-712 passes)",
        [allow("true"), deny("activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' && "
                             "activity.params.hash_function == 'HASH_FUNCTION_NO_OP' && "
                             "activity.params.encoding != 'PAYLOAD_ENCODING_EIP712'")],
        "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", [ALICE], Outcome.ALLOW,
        {"hashFunction": "HASH_FUNCTION_NO_OP", "encoding": "PAYLOAD_ENCODING_EIP712"}),
    Row("language.mdx: self-deletion",
        [allow("activity.type == 'ACTIVITY_TYPE_DELETE_USERS' && "
               "activity.params.user_ids.count() == 1 && 'alice' in activity.params.user_ids",
               "approvers.any(user, user.id == 'alice')")],
        "ACTIVITY_TYPE_DELETE_USERS", [ALICE], Outcome.ALLOW, {"userIds": ["alice"]}),
    Row("language.mdx: self-deletion does not cover others",
        [allow("activity.type == 'ACTIVITY_TYPE_DELETE_USERS' && "
               "activity.params.user_ids.count() == 1 && 'alice' in activity.params.user_ids",
               "approvers.any(user, user.id == 'alice')")],
        "ACTIVITY_TYPE_DELETE_USERS", [ALICE], Outcome.DENY_IMPLICIT, {"userIds": ["bob"]}),
    Row("language.mdx: a param not exposed is an ERROR",
        [allow("activity.params.sign_with == 'x'")], SIGN_TX, [ALICE], Outcome.DENY_IMPLICIT,
        ETH_PARAMS, per_policy=(Outcome.ERROR,)),
    Row("language.mdx: session_profile_id defaults to ''",
        [allow("activity.params.session_profile_id == ''")], "ACTIVITY_TYPE_STAMP_LOGIN",
        [ALICE], Outcome.ALLOW, {"publicKey": "02"}),
    # --- credentials (access-control) --------------------------------------------------------
    Row("only passkeys may sign",
        [allow("activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'",
               "credentials.any(credential, credential.type == "
               "'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR')")],
        SIGN_TX, [ALICE], Outcome.REQUIRES_CONSENSUS,
        credentials=[{"id": "c", "user_id": "alice", "type": "CREDENTIAL_TYPE_API_KEY_P256",
                      "credential_id": "", "public_key": "02ab"}]),
    Row("only passkeys may sign (passkey used)",
        [allow("activity.type == 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2'",
               "credentials.any(credential, credential.type == "
               "'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR')")],
        SIGN_TX, [ALICE], Outcome.ALLOW,
        credentials=[{"id": "c", "user_id": "alice",
                      "type": "CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR",
                      "credential_id": "abc", "public_key": "pQEC"}]),
    # --- signing-control -----------------------------------------------------------------------
    Row("signing-control: wallet", [allow("activity.action == 'SIGN' && wallet.id == 'w1'",
                                          "approvers.any(user, user.id == 'alice')")],
        SIGN_TX, [ALICE], Outcome.ALLOW, context={"wallet": {"id": "w1", "imported": False,
                                                              "exported": False, "label": ""}}),
    Row("signing-control: wallet_account", [allow(f"activity.action == 'SIGN' && "
                                                  f"wallet_account.address == '{ALLOWED}'")],
        SIGN_TX, [ALICE], Outcome.ALLOW, context={"wallet_account": {"address": ALLOWED}}),
    Row("signing-control: private key id on a wallet signature is an ERROR",
        [allow("activity.action == 'SIGN' && private_key.id == 'k1'")], SIGN_TX, [ALICE],
        Outcome.DENY_IMPLICIT, context={"wallet": {"id": "w1"}}, per_policy=(Outcome.ERROR,)),
    # --- ethereum examples ---------------------------------------------------------------------
    Row("ethereum: ERC-20 selector", [allow(f"eth.tx.to == '{ALLOWED}' && "
                                            "eth.tx.data[0..10] == '0xa9059cbb'")],
        SIGN_TX, [ALICE], Outcome.ALLOW, ETH_PARAMS, {"eth": eth_tx()}),
    Row("ethereum: sepolia only", [allow("eth.tx.chain_id == 11155111")], SIGN_TX, [ALICE],
        Outcome.DENY_IMPLICIT, ETH_PARAMS, {"eth": eth_tx(chain_id=1)}),
    Row("ethereum: early nonce", [allow("eth.tx.nonce <= 3")], SIGN_TX, [ALICE],
        Outcome.ALLOW, ETH_PARAMS, {"eth": eth_tx(nonce=3)}),
    Row("ethereum: WETH transfer args",
        [allow("eth.tx.contract_call_args['wad'] < 1000000000000000000 && "
               f"eth.tx.contract_call_args['dst'] == '{ALLOWED}'")],
        SIGN_TX, [ALICE], Outcome.ALLOW, ETH_PARAMS,
        {"eth": eth_tx(contract_call_args={"wad": 5, "dst": ALLOWED})}),
    Row("ethereum: EIP-712 Permit2 first token",
        [allow("eth.eip_712.domain.name == 'Permit2' && "
               "eth.eip_712.primary_type == 'PermitBatchTransferFrom' && "
               f"eth.eip_712.message['permitted'][0]['token'] == '{USDC}' && "
               "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'")],
        "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", [ALICE], Outcome.ALLOW,
        context={"eth": {"eip_712": eip712_variable(PERMIT2)}}),
    Row("ethereum: EIP-712 amounts compare as ints",
        [allow(f"eth.eip_712.message['permitted'].any(p, p['token'] == '{USDC}' && "
               "p['amount'] < 100000000) && eth.eip_712.message['permitted'].count() <= 2")],
        "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", [ALICE], Outcome.ALLOW,
        context={"eth": {"eip_712": eip712_variable(PERMIT2)}}),
    # --- time-based policies -------------------------------------------------------------------
    Row("time: March 2026 window", [allow("activity.kind == 'SIGN_TRANSACTION'",
                                          "approvers.any(user, user.id == 'alice')",
                                          "time.now >= Timestamp('2026-03-01T00:00:00Z') && "
                                          "time.now < Timestamp('2026-04-01T00:00:00Z')")],
        SIGN_TX, [ALICE], Outcome.ALLOW),
    Row("time: outside the window",
        [allow("true", "", "time.now < Timestamp('2026-03-01T00:00:00Z')")],
        SIGN_TX, [ALICE], Outcome.DENY_IMPLICIT, per_policy=(Outcome.TIME_INACTIVE,)),
    Row("time: business hours", [allow("activity.kind == 'SIGN_TRANSACTION'", "", BIZ_HOURS)],
        SIGN_TX, [ALICE], Outcome.ALLOW),
    Row("time: an inactive deny does not deny",
        [ANY_SIGN, deny("true", "", f"!{BIZ_HOURS}")], SIGN_TX, [ALICE], Outcome.ALLOW,
        per_policy=(Outcome.ALLOW, Outcome.TIME_INACTIVE)),
    Row("time: overnight window is closed at 11:00", [allow("true", "",
        "CronSpan('0 22 * * *', '8h', 'America/New_York')")], SIGN_TX, [ALICE],
        Outcome.DENY_IMPLICIT),
    # --- §8.2 language examples ---------------------------------------------------------------
    Row("§8.2: tempo slice on a call's input",
        [allow(f"tempo.tx.calls[0].input[34..74] == '{ALLOWED[2:]}'")], TEMPO, [ALICE],
        Outcome.ALLOW, context={"tempo": {"tx": {"calls": [{"input": TEMPO_INPUT}]}}}),
    Row("§8.2: tempo slice, another recipient",
        [allow("tempo.tx.calls[0].input[34..74] == '" + "11" * 20 + "'")], TEMPO, [ALICE],
        Outcome.DENY_IMPLICIT, context={"tempo": {"tx": {"calls": [{"input": TEMPO_INPUT}]}}},
        per_policy=(Outcome.DENY_IMPLICIT,)),
    Row("§8.2: tempo slice past the end is an ERROR",
        [allow("tempo.tx.calls[0].input[34..999] == ''")], TEMPO, [ALICE], Outcome.DENY_IMPLICIT,
        context={"tempo": {"tx": {"calls": [{"input": TEMPO_INPUT}]}}}, per_policy=(Outcome.ERROR,)),
    Row("§8.2: solana address table lookups count() > 0 (deny fires)",
        [allow("true"), deny("solana.tx.address_table_lookups.count() > 0")],
        "ACTIVITY_TYPE_SIGN_TRANSACTION_V2", [ALICE], Outcome.DENY_EXPLICIT,
        {"type": "TRANSACTION_TYPE_SOLANA"}, {"solana": SOLANA_WITH_LOOKUP}),
    Row("§8.2: solana without lookups passes",
        [allow("true"), deny("solana.tx.address_table_lookups.count() > 0")],
        "ACTIVITY_TYPE_SIGN_TRANSACTION_V2", [ALICE], Outcome.ALLOW,
        {"type": "TRANSACTION_TYPE_SOLANA"},
        {"solana": {"tx": {**SOLANA_WITH_LOOKUP["tx"], "address_table_lookups": []}}}),
    Row("§8.2: the `.count == 0` typo reads a missing field: ERROR",
        [allow("solana.tx.address_table_lookups.count == 0")], "ACTIVITY_TYPE_SIGN_TRANSACTION_V2",
        [ALICE], Outcome.DENY_IMPLICIT, {"type": "TRANSACTION_TYPE_SOLANA"},
        {"solana": {"tx": {**SOLANA_WITH_LOOKUP["tx"], "address_table_lookups": []}}},
        per_policy=(Outcome.ERROR,)),
    Row("§8.2: wallet.id when the activity signs with a private key is an ERROR",
        [allow("activity.action == 'SIGN' && wallet.id == 'w1'")], SIGN_TX, [ALICE],
        Outcome.DENY_IMPLICIT, context={"private_key": PRIVATE_KEY}, per_policy=(Outcome.ERROR,)),
    Row("§8.2: an erroring deny does not deny (no short circuit, the policy just errors)",
        [ANY_SIGN, deny("wallet.id == 'w1' || true")], SIGN_TX, [ALICE], Outcome.ALLOW,
        context={"private_key": PRIVATE_KEY}, per_policy=(Outcome.ALLOW, Outcome.ERROR)),
    Row("§8.3: private_key tags of the signer",
        [allow("activity.action == 'SIGN' && private_key.tags.contains('hot')")], SIGN_TX,
        [ALICE], Outcome.ALLOW, context={"private_key": PRIVATE_KEY}),
    # --- §8.3 activity.params ------------------------------------------------------------------
    Row("§8.3 params: CREATE_API_KEYS user_id",
        [allow("activity.params.user_id == 'bob'", "approvers.any(u, u.id == 'alice')")],
        "ACTIVITY_TYPE_CREATE_API_KEYS_V2", [ALICE], Outcome.ALLOW,
        {"userId": "bob", "apiKeys": []}),
    Row("§8.3 params: DELETE_API_KEYS user_id and api_key_ids",
        [allow("activity.params.user_id == 'bob' && activity.params.api_key_ids.count() == 1 "
               "&& activity.params.api_key_ids.contains('k1')")],
        "ACTIVITY_TYPE_DELETE_API_KEYS", [ALICE], Outcome.ALLOW,
        {"userId": "bob", "apiKeyIds": ["k1"]}),
    Row("§8.3 params: DELETE_API_KEYS of two keys does not match count() == 1",
        [allow("activity.params.user_id == 'bob' && activity.params.api_key_ids.count() == 1")],
        "ACTIVITY_TYPE_DELETE_API_KEYS", [ALICE], Outcome.DENY_IMPLICIT,
        {"userId": "bob", "apiKeyIds": ["k1", "k2"]}),
    Row("§8.3 params: EXPORT_WALLET target_public_key",
        [allow(f"activity.params.target_public_key == '{TARGET_KEY}'")],
        "ACTIVITY_TYPE_EXPORT_WALLET", [ALICE], Outcome.ALLOW,
        {"walletId": "w1", "targetPublicKey": TARGET_KEY}),
    Row("§8.3 params: EXPORT_PRIVATE_KEY to another target key",
        [allow(f"activity.params.target_public_key == '{TARGET_KEY}'")],
        "ACTIVITY_TYPE_EXPORT_PRIVATE_KEY", [ALICE], Outcome.DENY_IMPLICIT,
        {"privateKeyId": "k1", "targetPublicKey": "04" + "ab" * 64}),
    Row("§8.3 params: EXPORT_WALLET_ACCOUNT target_public_key",
        [allow(f"activity.params.target_public_key == '{TARGET_KEY}'")],
        "ACTIVITY_TYPE_EXPORT_WALLET_ACCOUNT", [ALICE], Outcome.ALLOW,
        {"address": ALLOWED, "targetPublicKey": TARGET_KEY}),
    Row("§8.3 params: UPDATE_WALLET wallet_id",
        [allow("activity.params.wallet_id == 'w1'")], "ACTIVITY_TYPE_UPDATE_WALLET", [ALICE],
        Outcome.ALLOW, {"walletId": "w1", "walletName": "renamed"}),
    Row("§8.3 params: UPDATE_WALLET of another wallet",
        [allow("activity.params.wallet_id == 'w1'")], "ACTIVITY_TYPE_UPDATE_WALLET", [ALICE],
        Outcome.DENY_IMPLICIT, {"walletId": "w2", "walletName": "renamed"}),
    Row("§8.3 params: UPDATE_WEBHOOK_ENDPOINT endpoint_id",
        [allow("activity.params.endpoint_id == 'e1'")], "ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT",
        [ALICE], Outcome.ALLOW, {"endpointId": "e1", "name": "x"}),
    Row("§8.3 params: DELETE_WEBHOOK_ENDPOINT endpoint_id",
        [allow("activity.resource == 'WEBHOOK_ENDPOINT' && activity.action == 'DELETE' && "
               "activity.params.endpoint_id == 'e1'")],
        "ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT", [ALICE], Outcome.ALLOW, {"endpointId": "e1"}),
    Row("§8.3 params: INIT_OTP_AUTH otp_length",
        [allow("activity.params.otp_length >= 8")], "ACTIVITY_TYPE_INIT_OTP_AUTH_V3", [ALICE],
        Outcome.ALLOW, {"otpType": "OTP_TYPE_EMAIL", "contact": "a@x.io", "otpLength": 9}),
    Row("§8.3 params: a param another type exposes is an ERROR here",
        [allow("activity.params.wallet_id == 'w1'")], "ACTIVITY_TYPE_EXPORT_WALLET", [ALICE],
        Outcome.DENY_IMPLICIT, {"walletId": "w1", "targetPublicKey": TARGET_KEY},
        per_policy=(Outcome.ERROR,)),
    # --- §8.3 resource/action pairs ------------------------------------------------------------
    Row("§8.3: WALLET/EXPORT = EXPORT_WALLET",
        [allow("activity.resource == 'WALLET' && activity.action == 'EXPORT'")],
        "ACTIVITY_TYPE_EXPORT_WALLET", [ALICE], Outcome.ALLOW),
    Row("§8.3: PRIVATE_KEY/EXPORT is not WALLET/EXPORT",
        [allow("activity.resource == 'WALLET' && activity.action == 'EXPORT'")],
        "ACTIVITY_TYPE_EXPORT_PRIVATE_KEY", [ALICE], Outcome.DENY_IMPLICIT),
    Row("§8.3: PRIVATE_KEY/SIGN = SIGN_RAW_PAYLOAD",
        [allow("activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'")],
        "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", [ALICE], Outcome.ALLOW),
    Row("§8.3: PRIVATE_KEY/SIGN = SIGN_TRANSACTION_V2",
        [allow("activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'")], SIGN_TX,
        [ALICE], Outcome.ALLOW),
    Row("§8.3: USER/CREATE = CREATE_USER_TAG",
        [allow("activity.resource == 'USER' && activity.action == 'CREATE'")],
        "ACTIVITY_TYPE_CREATE_USER_TAG", [ALICE], Outcome.ALLOW),
    Row("§8.3: CREDENTIAL/CREATE = CREATE_AUTHENTICATORS",
        [allow("activity.resource == 'CREDENTIAL' && activity.action == 'CREATE'")],
        "ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2", [ALICE], Outcome.ALLOW, {"userId": "bob"}),
    Row("§8.3: CREDENTIAL/CREATE = CREATE_OAUTH_PROVIDERS",
        [allow("activity.resource == 'CREDENTIAL' && activity.action == 'CREATE'")],
        "ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS", [ALICE], Outcome.ALLOW, {"userId": "bob"}),
    Row("§8.3: POLICY/CREATE = CREATE_POLICIES",
        [allow("activity.resource == 'POLICY' && activity.action == 'CREATE'")],
        "ACTIVITY_TYPE_CREATE_POLICIES", [ALICE], Outcome.ALLOW),
    Row("§8.3: POLICY/DELETE = DELETE_POLICIES",
        [allow("activity.resource == 'POLICY' && activity.action == 'DELETE'")],
        "ACTIVITY_TYPE_DELETE_POLICIES", [ALICE], Outcome.ALLOW),
    Row("§8.3: AUTH/CREATE = EMAIL_AUTH_V3",
        [allow("activity.resource == 'AUTH' && activity.action == 'CREATE'")],
        "ACTIVITY_TYPE_EMAIL_AUTH_V3", [ALICE], Outcome.ALLOW),
    Row("§8.3: AUTH/CREATE = OTP_LOGIN_V2",
        [allow("activity.resource == 'AUTH' && activity.action == 'CREATE'")],
        "ACTIVITY_TYPE_OTP_LOGIN_V2", [ALICE], Outcome.ALLOW),
    Row("§8.3: OTP/CREATE = INIT_OTP_V3",
        [allow("activity.resource == 'OTP' && activity.action == 'CREATE'")],
        "ACTIVITY_TYPE_INIT_OTP_V3", [ALICE], Outcome.ALLOW, {"otpType": "OTP_TYPE_EMAIL"}),
    Row("§8.4: UPDATE_ORGANIZATION_NAME ignores a policy that would allow it",
        [allow("activity.type == 'ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME'")],
        "ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME", [ALICE], Outcome.DENY_IMPLICIT,
        {"organizationName": "mine"}, per_policy=()),
    # --- §8.3 other chain variables --------------------------------------------------------------
    Row("§8.3: eth.eip_7702_authorization",
        [allow(f"eth.eip_7702_authorization.address == '{ALLOWED}' && "
               "eth.eip_7702_authorization.chain_id == 1")],
        "ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2", [ALICE], Outcome.ALLOW,
        {"encoding": "PAYLOAD_ENCODING_EIP7702_AUTHORIZATION"},
        {"eth": {"eip_7702_authorization": {"address": ALLOWED, "chain_id": 1, "nonce": 0}}}),
    Row("§8.3: bitcoin.tx outputs",
        [allow("bitcoin.tx.outputs.all(o, o.value < 100000) && bitcoin.tx.fee <= 5000")],
        SIGN_TX, [ALICE], Outcome.ALLOW, {"type": "TRANSACTION_TYPE_BITCOIN"},
        {"bitcoin": {"tx": {"version": 2, "inputs": [], "locktime": 0, "fee": 1200,
                            "outputs": [{"value": 5000}, {"value": 99999}]}}}),
    Row("§8.3: time.now in a policy condition",
        [allow("time.now < Timestamp('2026-03-10T16:00:00Z')")], SIGN_TX, [ALICE],
        Outcome.ALLOW),
    Row("§8.3: wallets of a multi-wallet activity",
        [allow("activity.kind == 'DELETE_WALLETS' && wallets.all(w, !w.exported)")],
        "ACTIVITY_TYPE_DELETE_WALLETS", [ALICE], Outcome.ALLOW, {"walletIds": ["w1", "w2"]},
        {"wallets": [{"id": "w1", "imported": False, "exported": False, "label": "a"},
                     {"id": "w2", "imported": True, "exported": False, "label": "b"}]}),
    Row("§8.3: wallets, one exported",
        [allow("activity.kind == 'DELETE_WALLETS' && wallets.all(w, !w.exported)")],
        "ACTIVITY_TYPE_DELETE_WALLETS", [ALICE], Outcome.DENY_IMPLICIT, {"walletIds": ["w1"]},
        {"wallets": [{"id": "w1", "imported": False, "exported": True, "label": "a"}]}),
    Row("§8.3: tron.tx", [allow("tron.tx.contract[0].type == 'TriggerSmartContract'")], SIGN_TX,
        [ALICE], Outcome.ALLOW, {"type": "TRANSACTION_TYPE_TRON"},
        {"tron": {"tx": {"contract": [{"type": "TriggerSmartContract"}]}}}),
    Row("§8.3 params: SIGN_TRANSACTION_V2 type",
        [allow("activity.params.type == 'TRANSACTION_TYPE_ETHEREUM'")], SIGN_TX, [ALICE],
        Outcome.ALLOW, ETH_PARAMS),
    Row("§8.3 params: SIGN_RAW_PAYLOADS hash_function",
        [allow("activity.params.hash_function != 'HASH_FUNCTION_NO_OP'")],
        "ACTIVITY_TYPE_SIGN_RAW_PAYLOADS", [ALICE], Outcome.DENY_IMPLICIT,
        {"hashFunction": "HASH_FUNCTION_NO_OP", "encoding": "PAYLOAD_ENCODING_HEXADECIMAL",
         "payloads": ["00"]}),
    Row("§8.1: a policy with neither condition nor consensus applies to everything", [allow()],
        "ACTIVITY_TYPE_CREATE_WALLET", [ALICE], Outcome.ALLOW),
    Row("root-quorum.mdx: a policy lets one named root act alone",
        [allow("activity.action == 'SIGN'", "approvers.any(u, u.id == 'root1')")], SIGN_TX,
        [ROOT1], Outcome.ALLOW, quorum=QUORUM_2),
    Row("root-quorum.mdx: the other root is not named, so waits for the quorum",
        [allow("activity.action == 'SIGN'", "approvers.any(u, u.id == 'root1')")], SIGN_TX,
        [ROOT2], Outcome.REQUIRES_CONSENSUS, quorum=QUORUM_2),
    # --- broken policies -----------------------------------------------------------------------
    Row("a stored policy that no longer parses is an ERROR", [allow("activity.kind ==")],
        SIGN_TX, [ALICE], Outcome.DENY_IMPLICIT, per_policy=(Outcome.ERROR,)),
    Row("an unknown effect is an ERROR", [Policy("x", "EFFECT_MAYBE", "true")], SIGN_TX,
        [ALICE], Outcome.DENY_IMPLICIT, per_policy=(Outcome.ERROR,)),
]  # fmt: skip


# §8.3 type → (resource, action) examples, each a row allowed by a resource/action policy.
PAIRS = [
    ("POLICY", "CREATE", ("CREATE_POLICY_V3", "CREATE_POLICIES")),
    ("WALLET", "EXPORT", ("EXPORT_WALLET", "EXPORT_WALLET_ACCOUNT")),
    ("PRIVATE_KEY", "SIGN", ("SIGN_RAW_PAYLOAD_V2", "SIGN_RAW_PAYLOADS", "SIGN_TRANSACTION_V2",
                             "ETH_SEND_TRANSACTION", "SOL_SEND_TRANSACTION")),
    # (CREATE_API_ONLY_USERS is not served: the specs are the table, tests/unit/policy/
    # test_policy_table.py.)
    ("USER", "CREATE", ("CREATE_USERS_V4", "CREATE_USER_TAG")),
    ("CREDENTIAL", "CREATE", ("CREATE_API_KEYS_V2", "CREATE_AUTHENTICATORS_V2",
                              "CREATE_OAUTH_PROVIDERS_V2")),
    ("AUTH", "CREATE", ("EMAIL_AUTH_V3", "INIT_OTP_AUTH_V3", "OTP_AUTH", "OAUTH", "OAUTH_LOGIN",
                        "OTP_LOGIN_V2", "STAMP_LOGIN", "CREATE_READ_WRITE_SESSION_V2")),
    ("OTP", "CREATE", ("INIT_OTP_V3",)),
    ("OTP", "VERIFY", ("VERIFY_OTP_V2",)),
]  # fmt: skip
ROWS += [
    Row(f"§8.3 pair: {resource}/{action} = {kind}",
        [allow(f"activity.resource == '{resource}' && activity.action == '{action}'"),
         deny(f"activity.resource != '{resource}' || activity.action != '{action}'")],
        f"ACTIVITY_TYPE_{kind}", [ALICE], Outcome.ALLOW, {"userId": "bob"},
        per_policy=(Outcome.ALLOW, Outcome.DENY_IMPLICIT))
    for resource, action, kinds in PAIRS for kind in kinds
]


@pytest.mark.parametrize("row", ROWS, ids=[r.source for r in ROWS])
def test_engine_table(row: Row) -> None:
    decision = evaluate(row.policies, row.proposal(), row.quorum)
    assert decision.outcome is row.expected, decision.reason
    if row.per_policy is not None:
        assert tuple(o.outcome for o in decision.policy_outcomes) == row.per_policy


def test_every_policy_gets_an_outcome_in_order() -> None:
    policies = [ANY_SIGN, deny("false", pid="d1"), allow("wallet.id == 'x'", pid="e1")]
    decision = evaluate(policies, Proposal(SIGN_TX, {}, "alice", [ALICE],
                                           resource_action=registry().resource_action(SIGN_TX)), None)
    assert [(o.policy_id, o.outcome) for o in decision.policy_outcomes] == [
        ("p", Outcome.ALLOW), ("d1", Outcome.DENY_IMPLICIT), ("e1", Outcome.ERROR),
    ]  # fmt: skip
    assert "MissingField" in decision.policy_outcomes[2].detail


def test_denials_carry_the_wire_messages() -> None:
    explicit = evaluate([deny("true")], Proposal(SIGN_TX, {}, "alice", [ALICE],
                                                 resource_action=registry().resource_action(SIGN_TX)))
    implicit = evaluate([], Proposal(SIGN_TX, {}, "alice", [ALICE],
                                     resource_action=registry().resource_action(SIGN_TX)))
    assert explicit.denied and explicit.message == EXPLICIT_DENY_MESSAGE
    assert implicit.denied and implicit.message == IMPLICIT_DENY_MESSAGE
    assert not explicit.allowed and not implicit.needs_consensus


def test_feature_gate_reason_names_the_feature() -> None:
    proposal = Proposal("ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY", {}, "root1", [ROOT1],
                        features={"FEATURE_NAME_EMAIL_RECOVERY": "0"},
                        resource_action=registry().resource_action("ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY"))
    decision = evaluate([], proposal, QUORUM_1)
    assert decision.reason == "FEATURE_NAME_EMAIL_RECOVERY is disabled for this organization"


def test_hard_denial_reason_is_reported() -> None:
    decision = evaluate(
        [],
        Proposal("ACTIVITY_TYPE_IMPORT_PRIVATE_KEY", {"userId": "x"}, "alice", [ALICE],
                 resource_action=registry().resource_action("ACTIVITY_TYPE_IMPORT_PRIVATE_KEY")),
        QUORUM_1,
    )
    assert decision.outcome is Outcome.DENY_EXPLICIT
    assert decision.reason == decision.message == IMPORT_OWN_USER


def test_each_vote_reevaluates_with_the_enlarged_approvers() -> None:
    outcomes = [
        evaluate([TWO_OPS], Proposal("ACTIVITY_TYPE_CREATE_POLICY_V3", {}, "alice", voters,
                                     resource_action=registry().resource_action("ACTIVITY_TYPE_CREATE_POLICY_V3"))).outcome
        for voters in ([ALICE], [ALICE, CAROL], [ALICE, CAROL, BOB])
    ]
    assert outcomes == [Outcome.REQUIRES_CONSENSUS, Outcome.REQUIRES_CONSENSUS, Outcome.ALLOW]


def test_variables_for_builds_the_documented_activity_variable() -> None:
    env = variables_for(Proposal(SIGN_TX, ETH_PARAMS, "alice", [ALICE], now=NOON_TUESDAY,
                                 resource_action=registry().resource_action(SIGN_TX)))
    assert env["activity"] == {
        "type": SIGN_TX, "kind": "SIGN_TRANSACTION", "resource": "PRIVATE_KEY",
        "action": "SIGN", "params": {"type": "TRANSACTION_TYPE_ETHEREUM"},
    }  # fmt: skip
    assert env["approvers"] == [ALICE]
    assert env["time"] == {"now": NOON_TUESDAY}


def test_evaluate_policy_does_not_short_circuit_condition_and_consensus() -> None:
    policy = allow("false", "approvers[5].id == 'x'")
    outcome = evaluate_policy(policy, variables_for(Proposal(SIGN_TX, {}, "a", [ALICE],
                                                             resource_action=registry().resource_action(SIGN_TX))))
    assert outcome.outcome is Outcome.ERROR
