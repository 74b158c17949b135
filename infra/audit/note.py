"""C2SP ``tlog-checkpoint`` bodies signed as C2SP ``signed-note``s with Ed25519.

A checkpoint's text is three lines: the log's origin, the tree size in decimal, the root hash
in standard base64. The note is the text, an empty line, then one line per signature:
``— <key name> <base64(key hash (4 bytes) || signature)>``. An Ed25519 key's hash is the
first four bytes of SHA-256(name || 0x0A || 0x01 || public key); its *verifier key* (how a
client pins it, as Go's ``golang.org/x/mod/sumdb/note``) is
``<name>+<key hash hex>+<base64(0x01 || public key)>``.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ED25519: Final = 0x01
DASH: Final = "\u2014"


class NoteError(ValueError):
    """A note or checkpoint that does not parse or whose signature does not verify."""


def raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


def key_hash(name: str, public: bytes) -> bytes:
    """The signed-note key hash of an Ed25519 key (4 bytes)."""
    return hashlib.sha256(name.encode() + b"\n" + bytes([ED25519]) + public).digest()[:4]


def verifier_key(name: str, public: bytes) -> str:
    """``<name>+<hash hex>+<base64(0x01 || key)>``."""
    encoded = base64.b64encode(bytes([ED25519]) + public).decode()
    return f"{name}+{key_hash(name, public).hex()}+{encoded}"


@dataclass(frozen=True)
class Verifier:
    name: str
    hash: bytes
    public: bytes

    @classmethod
    def parse(cls, text: str) -> Verifier:
        try:
            name, hash_hex, encoded = text.strip().split("+", 2)
            raw = base64.b64decode(encoded, validate=True)
            digest = bytes.fromhex(hash_hex)
        except ValueError as err:
            raise NoteError(f"malformed verifier key {text!r}") from err
        if not name or len(raw) != 33 or raw[0] != ED25519:
            raise NoteError(f"verifier key {text!r} is not an Ed25519 key")
        if key_hash(name, raw[1:]) != digest:
            raise NoteError(f"verifier key {text!r} has a wrong key hash")
        return cls(name, digest, raw[1:])

    def __str__(self) -> str:
        return verifier_key(self.name, self.public)


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    def text(self) -> str:
        lines = [self.origin, str(self.size), base64.b64encode(self.root).decode(),
                 *self.extensions]
        return "".join(line + "\n" for line in lines)

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        lines = text.split("\n")
        if len(lines) < 4 or lines[-1] != "":
            raise NoteError("a checkpoint has at least three lines, each ending in a newline")
        origin, size, root, *extensions = lines[:-1]
        if not origin or not size.isdigit() or (size != "0" and size.startswith("0")):
            raise NoteError("malformed checkpoint origin or size")
        try:
            digest = base64.b64decode(root, validate=True)
        except ValueError as err:
            raise NoteError("the checkpoint root is not base64") from err
        if len(digest) != 32:
            raise NoteError("the checkpoint root is not 32 bytes")
        return cls(origin, int(size), digest, tuple(extensions))


def sign(text: str, name: str, key: Ed25519PrivateKey) -> str:
    """The signed note of ``text`` (which must end in a newline)."""
    if not text.endswith("\n"):
        raise ValueError("a note's text ends with a newline")
    public = raw_public(key.public_key())
    signature = key.sign(text.encode())
    encoded = base64.b64encode(key_hash(name, public) + signature).decode()
    return f"{text}\n{DASH} {name} {encoded}\n"


def open_note(note: str, verifier: Verifier) -> str:
    """The text of ``note`` once ``verifier``'s signature on it checks out.

    Raises:
        NoteError: malformed, or no valid signature by ``verifier``.
    """
    text, sep, signatures = note.rpartition("\n\n")
    if not sep or not signatures.endswith("\n"):
        raise NoteError("a signed note is its text, an empty line and signature lines")
    text += "\n"
    for line in signatures[:-1].split("\n"):
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != DASH:
            raise NoteError(f"malformed signature line {line!r}")
        if parts[1] != verifier.name:
            continue
        try:
            raw = base64.b64decode(parts[2], validate=True)
        except ValueError as err:
            raise NoteError("a signature is not base64") from err
        if raw[:4] != verifier.hash:
            continue
        try:
            Ed25519PublicKey.from_public_bytes(verifier.public).verify(raw[4:], text.encode())
        except InvalidSignature as err:
            raise NoteError(f"the signature by {verifier.name} does not verify") from err
        return text
    raise NoteError(f"the note carries no signature by {verifier.name}")


def open_checkpoint(note: str, verifier: Verifier) -> Checkpoint:
    """The checkpoint in a signed note, checked against ``verifier`` (origin = key name)."""
    checkpoint = Checkpoint.parse(open_note(note, verifier))
    if checkpoint.origin != verifier.name:
        raise NoteError(f"checkpoint origin {checkpoint.origin!r} is not {verifier.name!r}")
    return checkpoint
