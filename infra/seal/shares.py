"""Splitting a 256-bit secret into SLIP-39 mnemonics and putting it back together.

SatoshiLabs' reference implementation (``shamir-mnemonic``): one group, ``threshold`` of
``shares`` members, no passphrase (the shares are the only factor). Every mnemonic carries an
RS1024 checksum, so a mistyped or corrupted word is refused on its own, and the set's
identifier, so a share of another set is refused before any combination is tried.

Recovery keys (auto-unseal types) use the same split; what the sealed keyring keeps of a
recovery key is only a verifier (HMAC-SHA256 of a fixed label), so the shares authorise
rekey and migration but cannot decrypt anything.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass

import shamir_mnemonic
from shamir_mnemonic.share import Share

from infra.seal.errors import BadShare

SECRET_BYTES = 32
_RECOVERY_LABEL = b"walletd/recovery-key/v1"


def split(secret: bytes, shares: int, threshold: int) -> list[str]:
    """``shares`` mnemonics, any ``threshold`` of which give back ``secret``."""
    if not 1 <= threshold <= shares <= 16:
        raise BadShare("shares must be between 1 and 16 and the threshold between 1 and shares")
    if threshold == 1 and shares > 1:
        raise BadShare("a threshold of 1 with several shares is one secret copied: use "
                       "--shares 1 --threshold 1, or a threshold of at least 2")
    groups = shamir_mnemonic.generate_mnemonics(1, [(threshold, shares)], secret,
                                                extendable=False, iteration_exponent=0)
    return list(groups[0])


def parse(mnemonic: str) -> Share:
    """Decode one mnemonic (words, checksum); never echoes it in the error."""
    try:
        return Share.from_mnemonic(" ".join(mnemonic.split()).lower())
    except (shamir_mnemonic.MnemonicError, ValueError, KeyError):
        raise BadShare("the share is not a valid SLIP-39 mnemonic (a word or the checksum is "
                       "wrong)") from None


def combine(mnemonics: list[str]) -> bytes:
    """The secret behind ``mnemonics`` (at least the threshold of one set)."""
    try:
        return shamir_mnemonic.combine_mnemonics([" ".join(m.split()).lower() for m in mnemonics])
    except (shamir_mnemonic.MnemonicError, ValueError):
        raise BadShare("the shares do not combine (too few, repeated, or of different sets)") from None


@dataclass
class Progress:
    """Shares collected towards a threshold, in memory only."""

    threshold: int = 0
    identifier: int | None = None
    collected: list[str] | None = None
    started: float = 0.0

    @property
    def count(self) -> int:
        return len(self.collected or [])

    def reset(self) -> None:
        if self.collected:
            self.collected.clear()
        self.collected = None
        self.identifier = None
        self.started = 0.0

    def add(self, mnemonic: str, now: float) -> bool:
        """Add a share; ``True`` once the threshold is reached."""
        share = parse(mnemonic)
        if self.identifier is not None and share.identifier != self.identifier:
            raise BadShare("this share belongs to another set than the shares entered before")
        normal = " ".join(mnemonic.split()).lower()
        if self.collected and any(parse(m).index == share.index for m in self.collected):
            raise BadShare("this share was entered already")
        if self.collected is None:
            self.collected, self.started = [], now
        self.identifier = share.identifier
        self.threshold = share.member_threshold
        self.collected.append(normal)
        return self.count >= self.threshold

    def take(self) -> list[str]:
        """The collected shares, forgetting them."""
        shares = list(self.collected or [])
        self.reset()
        return shares


def new_secret() -> bytes:
    return os.urandom(SECRET_BYTES)


def recovery_verifier(recovery_key: bytes) -> str:
    """What the sealed keyring keeps of a recovery key (cannot decrypt anything)."""
    return hmac.new(recovery_key, _RECOVERY_LABEL, hashlib.sha256).hexdigest()


def check_recovery(recovery_key: bytes, verifier: str) -> bool:
    return hmac.compare_digest(recovery_verifier(recovery_key), verifier)
