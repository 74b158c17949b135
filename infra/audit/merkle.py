"""RFC 6962 / RFC 9162 Merkle trees: hashing, proofs and their verification (pure; no I/O).

A tree of ``n`` leaves is described by its *perfect subtrees*: the node at ``(level, index)``
is the hash of leaves ``[index << level, (index + 1) << level)``. Those nodes never change once
their leaves exist, so a log stores each once (``infra.audit.store``) and every root, inclusion
proof and consistency proof is computed from them. Functions here take ``node(level, index)``;
:func:`nodes_needed` runs a computation with a recording reader to learn which nodes a
database must load in one statement.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Final, TypeVar

HASH_SIZE: Final = 32
NodeReader = Callable[[int, int], bytes]
T = TypeVar("T")


class ProofError(ValueError):
    """A proof or its inputs do not verify; the message says what is wrong."""


def leaf_hash(data: bytes) -> bytes:
    """RFC 6962 leaf hash: SHA-256(0x00 || data)."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """RFC 6962 interior node hash: SHA-256(0x01 || left || right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


EMPTY_ROOT: Final = hashlib.sha256(b"").digest()


def _split(size: int) -> int:
    """The largest power of two strictly smaller than ``size`` (``size`` > 1)."""
    return 1 << ((size - 1).bit_length() - 1)


def subtree_hash(lo: int, hi: int, node: NodeReader) -> bytes:
    """MTH(D[lo:hi]) for a range that RFC 6962's recursion produces."""
    size = hi - lo
    if size <= 0:
        raise ValueError("empty range")
    if size & (size - 1) == 0 and lo % size == 0:
        level = size.bit_length() - 1
        return node(level, lo >> level)
    k = _split(size)
    return node_hash(subtree_hash(lo, lo + k, node), subtree_hash(lo + k, hi, node))


def root(size: int, node: NodeReader) -> bytes:
    """The root hash of the first ``size`` leaves."""
    return EMPTY_ROOT if size == 0 else subtree_hash(0, size, node)


def inclusion_proof(index: int, size: int, node: NodeReader) -> list[bytes]:
    """RFC 9162 §2.1.3.1 PATH(index, D[size])."""
    if not 0 <= index < size:
        raise ProofError(f"leaf {index} is not in a tree of size {size}")
    proof: list[bytes] = []

    def path(m: int, lo: int, hi: int) -> None:
        n = hi - lo
        if n == 1:
            return
        k = _split(n)
        if m < k:
            path(m, lo, lo + k)
            proof.append(subtree_hash(lo + k, hi, node))
        else:
            path(m - k, lo + k, hi)
            proof.append(subtree_hash(lo, lo + k, node))

    path(index, 0, size)
    return proof


def consistency_proof(size1: int, size2: int, node: NodeReader) -> list[bytes]:
    """RFC 9162 §2.1.4.1 PROOF(size1, D[size2]) (empty when ``size1`` is 0 or ``size2``)."""
    if not 0 <= size1 <= size2:
        raise ProofError(f"no consistency proof from size {size1} to size {size2}")
    if size1 in (0, size2):
        return []
    proof: list[bytes] = []

    def sub(m: int, lo: int, hi: int, complete: bool) -> None:
        n = hi - lo
        if m == n:
            if not complete:
                proof.append(subtree_hash(lo, hi, node))
            return
        k = _split(n)
        if m <= k:
            sub(m, lo, lo + k, complete)
            proof.append(subtree_hash(lo + k, hi, node))
        else:
            sub(m - k, lo + k, hi, False)
            proof.append(subtree_hash(lo, lo + k, node))

    sub(size1, 0, size2, True)
    return proof


def nodes_needed(compute: Callable[[NodeReader], T]) -> set[tuple[int, int]]:
    """The ``(level, index)`` nodes ``compute(node)`` reads (run on placeholder hashes)."""
    seen: set[tuple[int, int]] = set()

    def record(level: int, index: int) -> bytes:
        seen.add((level, index))
        return bytes(HASH_SIZE)

    compute(record)
    return seen


def right_edge(size: int) -> list[tuple[int, int]]:
    """The perfect subtrees whose hashes make up the root of ``size`` leaves (largest first);
    also every node an append at ``size`` combines with."""
    out = []
    for level in range(size.bit_length() - 1, -1, -1):
        if size >> level & 1:
            out.append((level, (size >> level) - 1))
    return out


def append_nodes(index: int, leaf: bytes, node: NodeReader) -> list[tuple[int, int, bytes]]:
    """The perfect-subtree nodes that appending leaf hash ``leaf`` at ``index`` completes:
    the leaf itself, then each parent whose right child it finishes (reads left siblings)."""
    out = [(0, index, leaf)]
    level, i, current = 0, index, leaf
    while i & 1:
        current = node_hash(node(level, i - 1), current)
        level, i = level + 1, i >> 1
        out.append((level, i, current))
    return out


def _check_hash(value: bytes, what: str) -> None:
    if len(value) != HASH_SIZE:
        raise ProofError(f"{what} is {len(value)} bytes, not {HASH_SIZE}")


def root_from_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes]) -> bytes:
    """The root that ``proof`` (RFC 9162 §2.1.3.2) implies for ``leaf`` at ``index``."""
    if not 0 <= index < size:
        raise ProofError(f"leaf index {index} is outside a tree of size {size}")
    _check_hash(leaf, "the leaf hash")
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        _check_hash(p, "a proof hash")
        if sn == 0:
            raise ProofError("the inclusion proof is too long")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise ProofError("the inclusion proof is too short")
    return r


def verify_inclusion(index: int, size: int, leaf: bytes, proof: Sequence[bytes],
                     expected_root: bytes) -> None:
    """Raise :class:`ProofError` unless ``leaf`` is at ``index`` of the tree ``expected_root``."""
    if root_from_inclusion(index, size, leaf, proof) != expected_root:
        raise ProofError(f"leaf {index} is not included in the tree of size {size}")


def verify_consistency(size1: int, size2: int, root1: bytes, root2: bytes,
                       proof: Sequence[bytes]) -> None:
    """Raise :class:`ProofError` unless the tree ``root2`` of ``size2`` extends ``root1``
    of ``size1`` (RFC 9162 §2.1.4.2). As transparency-dev/merkle, a proof from size 0 to a
    larger size is refused: callers accept any first tree without asking for one."""
    if size2 < size1 or size1 < 0:
        raise ProofError(f"size {size2} is smaller than size {size1}: not an extension")
    if size1 == 0:
        raise ProofError("nothing to prove from the empty tree (any tree extends it)")
    if size1 == size2:
        if proof:
            raise ProofError("a proof between equal sizes must be empty")
        if root1 != root2:
            raise ProofError(f"two different roots for the same size {size1}")
        return
    if not proof:
        raise ProofError("the consistency proof is empty")
    for p in proof:
        _check_hash(p, "a proof hash")
    path = list(proof)
    if size1 & (size1 - 1) == 0:
        path.insert(0, root1)
    fn, sn = size1 - 1, size2 - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("the consistency proof is too long")
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not fn & 1 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:
        raise ProofError("the consistency proof is too short")
    if fr != root1:
        raise ProofError(f"the tree of size {size2} does not start with the tree of size {size1}")
    if sr != root2:
        raise ProofError(f"the consistency proof does not lead to the root of size {size2}")


class MemoryTree:
    """A whole tree in memory (verifiers recompute the log with it)."""

    def __init__(self) -> None:
        self.levels: list[list[bytes]] = [[]]

    @property
    def size(self) -> int:
        return len(self.levels[0])

    def node(self, level: int, index: int) -> bytes:
        return self.levels[level][index]

    def append(self, leaf: bytes) -> None:
        for level, index, value in append_nodes(self.size, leaf, self.node):
            if level == len(self.levels):
                self.levels.append([])
            assert len(self.levels[level]) == index
            self.levels[level].append(value)

    def root(self, size: int | None = None) -> bytes:
        return root(self.size if size is None else size, self.node)

    def inclusion_proof(self, index: int, size: int) -> list[bytes]:
        return inclusion_proof(index, size, self.node)

    def consistency_proof(self, size1: int, size2: int) -> list[bytes]:
        return consistency_proof(size1, size2, self.node)
