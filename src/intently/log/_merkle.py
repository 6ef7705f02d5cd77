"""RFC 9162 Merkle tree hashing, inclusion and consistency proofs.

Leaves hash as SHA-256(0x00 || data) and interior nodes as SHA-256(0x01 || left || right),
so a leaf can never pass for a node. Proof generation and verification follow RFC 9162
sections 2.1.3 and 2.1.4; the verifiers raise :class:`ProofError` naming what failed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from hashlib import sha256 as _sha256

from ..core.errors import ProofError

__all__ = [
    "EMPTY_ROOT",
    "Frontier",
    "consistency_proof",
    "inclusion_proof",
    "inclusion_proofs",
    "leaf_hash",
    "node_hash",
    "root_hash",
    "verify_consistency",
    "verify_inclusion",
]

EMPTY_ROOT = hashlib.sha256(b"").digest()


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


class Frontier:
    """The compact range of a growing tree: the roots of its perfect subtrees, largest first.

    Appending is O(log n) and the root needs no stored leaves, which is what lets every
    command sign a checkpoint without reading the whole stream.
    """

    __slots__ = ("nodes", "size")

    def __init__(self, size: int = 0, nodes: Sequence[bytes] = ()) -> None:
        self.size = size
        self.nodes = list(nodes)
        if len(self.nodes) != bin(size).count("1"):
            raise ProofError(f"frontier of size {size} needs {bin(size).count('1')} nodes, got {len(self.nodes)}")

    def append(self, leaf: bytes) -> None:
        """Add a leaf hash: merge equal-sized subtrees, as a binary counter carries."""
        node = leaf
        size = self.size
        nodes = self.nodes
        while size & 1:
            node = _sha256(b"\x01" + nodes.pop() + node).digest()  # node_hash, inlined: verify's hot loop
            size >>= 1
        nodes.append(node)
        self.size += 1

    def root(self) -> bytes:
        if not self.nodes:
            return EMPTY_ROOT
        acc = self.nodes[-1]
        for node in reversed(self.nodes[:-1]):
            acc = node_hash(node, acc)
        return acc

    def to_hex(self) -> list[str]:
        return [n.hex() for n in self.nodes]

    @classmethod
    def from_hex(cls, size: int, nodes: Iterable[str]) -> Frontier:
        return cls(size, [bytes.fromhex(n) for n in nodes])


def root_hash(leaves: Sequence[bytes]) -> bytes:
    """The Merkle Tree Hash of a list of leaf hashes."""
    frontier = Frontier()
    for leaf in leaves:
        frontier.append(leaf)
    return frontier.root()


def _split(n: int) -> int:
    """Largest power of two strictly less than n (n >= 2)."""
    k = 1
    while k << 1 < n:
        k <<= 1
    return k


def inclusion_proof(leaves: Sequence[bytes], index: int) -> list[bytes]:
    """Audit path for leaf ``index`` in the tree over ``leaves`` (RFC 9162 2.1.3.1)."""
    if not 0 <= index < len(leaves):
        raise ProofError(f"leaf index {index} outside tree of size {len(leaves)}")

    def path(m: int, lo: int, hi: int) -> list[bytes]:
        n = hi - lo
        if n == 1:
            return []
        k = _split(n)
        if m < k:
            return [*path(m, lo, lo + k), root_hash(leaves[lo + k : hi])]
        return [*path(m - k, lo + k, hi), root_hash(leaves[lo : lo + k])]

    return path(index, 0, len(leaves))


def inclusion_proofs(leaves: Sequence[bytes], indices: Iterable[int]) -> list[list[bytes]]:
    """Audit paths of many leaves in one tree, hashing the tree once: the same paths as
    :func:`inclusion_proof` gives one at a time, which rehashes the subtrees beside each leaf
    (a trace of a hundred operations in a long stream would hash the stream a hundred times).

    The RFC 9162 tree (split at the largest power of two below the size) is the tree built level
    by level, pairing nodes left to right and carrying an odd last node up unpaired, so a leaf's
    path is its sibling at each level where it has one, bottom up."""
    levels = [list(leaves)]
    while len(levels[-1]) > 1:
        below = levels[-1]
        above = [node_hash(below[i], below[i + 1]) for i in range(0, len(below) - 1, 2)]
        if len(below) % 2:
            above.append(below[-1])
        levels.append(above)
    paths = []
    for index in indices:
        if not 0 <= index < len(leaves):
            raise ProofError(f"leaf index {index} outside tree of size {len(leaves)}")
        path = []
        for level in levels[:-1]:
            sibling = index ^ 1
            if sibling < len(level):
                path.append(level[sibling])
            index >>= 1
        paths.append(path)
    return paths


def verify_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes], root: bytes) -> None:
    """RFC 9162 2.1.3.2. Raises :class:`ProofError` unless ``leaf`` is at ``index`` under ``root``."""
    if index >= size or index < 0:
        raise ProofError(f"leaf index {index} outside tree of size {size}")
    fn, sn = index, size - 1
    acc = leaf
    for node in proof:
        if sn == 0:
            raise ProofError("inclusion proof is longer than the tree allows")
        if fn & 1 or fn == sn:
            acc = node_hash(node, acc)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            acc = node_hash(acc, node)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("inclusion proof is shorter than the tree needs")
    if acc != root:
        raise ProofError("inclusion proof does not lead to the root")


def consistency_proof(leaves: Sequence[bytes], old_size: int) -> list[bytes]:
    """Proof that the tree of ``old_size`` leaves is a prefix of the tree over ``leaves``."""
    n = len(leaves)
    if not 0 < old_size <= n:
        raise ProofError(f"old size {old_size} must be in 1..{n}")

    def subproof(m: int, lo: int, hi: int, complete: bool) -> list[bytes]:
        size = hi - lo
        if m == size:
            return [] if complete else [root_hash(leaves[lo:hi])]
        k = _split(size)
        if m <= k:
            return [*subproof(m, lo, lo + k, complete), root_hash(leaves[lo + k : hi])]
        return [*subproof(m - k, lo + k, hi, False), root_hash(leaves[lo : lo + k])]

    return subproof(old_size, 0, n, True)


def verify_consistency(old_size: int, new_size: int, old_root: bytes, new_root: bytes, proof: Sequence[bytes]) -> None:
    """RFC 9162 2.1.4.2. Raises :class:`ProofError` unless the old tree is a prefix of the new."""
    if old_size < 1 or old_size > new_size:
        raise ProofError(f"cannot prove size {old_size} consistent with size {new_size}")
    if old_size == new_size:
        if proof:
            raise ProofError("consistency proof between equal sizes must be empty")
        if old_root != new_root:
            raise ProofError("equal sizes but different roots")
        return
    path = list(proof)
    if old_size & (old_size - 1) == 0:  # power of two: the old root is the first node
        path = [old_root, *path]
    if not path:
        raise ProofError("empty consistency proof")
    fn, sn = old_size - 1, new_size - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for node in path[1:]:
        if sn == 0:
            raise ProofError("consistency proof is longer than the trees allow")
        if fn & 1 or fn == sn:
            fr = node_hash(node, fr)
            sr = node_hash(node, sr)
            while fn and not fn & 1:
                fn >>= 1
                sn >>= 1
        else:
            sr = node_hash(sr, node)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("consistency proof is shorter than the trees need")
    if fr != old_root:
        raise ProofError("consistency proof does not reproduce the old root")
    if sr != new_root:
        raise ProofError("consistency proof does not reproduce the new root")
