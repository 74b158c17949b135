"""The Merkle code against transparency-dev/merkle's test vectors (tests/vectors/transparency-dev-merkle)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from infra.audit import merkle

VECTORS = Path(__file__).resolve().parents[2] / "vectors" / "transparency-dev-merkle"
#: The eight leaves the vectors' happy paths are built from (RFC 6962's test leaves).
LEAVES = [bytes.fromhex(h) for h in (
    "", "00", "10", "2021", "3031", "40414243", "5051525354555657",
    "606162636465666768696a6b6c6d6e6f")]


def _b64(value: str | None) -> bytes:
    return base64.b64decode(value or "")


def _proof(case: dict[str, Any]) -> list[bytes]:
    return [_b64(p) for p in case.get("proof") or []]


def _cases(kind: str) -> list[Any]:
    files = sorted((VECTORS / kind).rglob("*.json"))
    assert len(files) > 50, f"vectors missing under {VECTORS / kind}"
    return [pytest.param(json.loads(f.read_text()), id=str(f.relative_to(VECTORS))) for f in files]


@pytest.mark.parametrize("case", _cases("inclusion"))
def test_inclusion_vectors(case: dict[str, Any]) -> None:
    def check() -> None:
        merkle.verify_inclusion(case["leafIdx"], case["treeSize"], _b64(case["leafHash"]),
                                _proof(case), _b64(case["root"]))
    if case["wantErr"]:
        with pytest.raises(merkle.ProofError):
            check()
    else:
        check()


@pytest.mark.parametrize("case", _cases("consistency"))
def test_consistency_vectors(case: dict[str, Any]) -> None:
    def check() -> None:
        merkle.verify_consistency(case["size1"], case["size2"], _b64(case["root1"]),
                                  _b64(case["root2"]), _proof(case))
    if case["wantErr"]:
        with pytest.raises(merkle.ProofError):
            check()
    else:
        check()


def _tree() -> merkle.MemoryTree:
    tree = merkle.MemoryTree()
    for leaf in LEAVES:
        tree.append(merkle.leaf_hash(leaf))
    return tree


def _happy(kind: str) -> list[dict[str, Any]]:
    return [json.loads(f.read_text()) for f in sorted((VECTORS / kind).rglob("happy-path.json"))]


def test_generated_inclusion_proofs_equal_the_vectors() -> None:
    tree = _tree()
    cases = [c for c in _happy("inclusion") if c["treeSize"] <= len(LEAVES)]
    assert cases
    for case in cases:
        assert tree.root(case["treeSize"]) == _b64(case["root"])
        assert merkle.leaf_hash(LEAVES[case["leafIdx"]]) == _b64(case["leafHash"])
        assert tree.inclusion_proof(case["leafIdx"], case["treeSize"]) == _proof(case)


def test_generated_consistency_proofs_equal_the_vectors() -> None:
    tree = _tree()
    cases = [c for c in _happy("consistency") if c["size2"] <= len(LEAVES)]
    assert cases
    for case in cases:
        assert tree.consistency_proof(case["size1"], case["size2"]) == _proof(case)


def test_every_proof_of_a_grown_tree_verifies() -> None:
    tree = merkle.MemoryTree()
    for i in range(70):
        tree.append(merkle.leaf_hash(i.to_bytes(4, "big")))
    for size in range(1, 71):
        root = tree.root(size)
        for index in range(size):
            merkle.verify_inclusion(index, size, tree.node(0, index),
                                    tree.inclusion_proof(index, size), root)
        for older in range(1, size + 1):
            merkle.verify_consistency(older, size, tree.root(older), root,
                                      tree.consistency_proof(older, size))
    with pytest.raises(merkle.ProofError):
        merkle.verify_consistency(5, 9, tree.root(6), tree.root(9), tree.consistency_proof(5, 9))


def test_nodes_needed_names_only_stored_perfect_subtrees() -> None:
    tree = _tree()
    needed = merkle.nodes_needed(lambda node: merkle.inclusion_proof(2, 7, node))
    assert needed and all(level < len(tree.levels) and index < len(tree.levels[level])
                          for level, index in needed)
