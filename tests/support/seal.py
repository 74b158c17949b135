"""Opening a test deployment's sealed keyring the way a worker does (auto-unseal seals), and
the helpers the seal tests share."""

from __future__ import annotations

from infra.seal.sealed_file import Contents
from infra.seal.state import SealState
from infra.seal.wiring import build_state
from infra.settings import Settings


def unsealed_state(env: dict[str, str]) -> SealState:
    """The seal of a process with ``env`` (static/transit/pkcs11/awskms), unsealed."""
    state = build_state(Settings.from_env(env))
    if not state.try_auto_unseal():
        raise AssertionError(f"the test's seal did not open: {state.reason}")
    return state


def keyring_of(env: dict[str, str]) -> Contents:
    """Every key of the deployment (master versions, webhook seeds, the auth proxy key)."""
    return unsealed_state(env).contents()


def root_key_of(env: dict[str, str]) -> bytes:
    return unsealed_state(env).root_for_operator()[0]
