"""RFC 9162 Merkle hashing and proofs: the RFC 6962 reference vectors, a straight
transcription of the MTH definition as reference, and property tests over all sizes."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intently.core.errors import ProofError
from intently.log import (
    Frontier,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root_hash,
    verify_consistency,
    verify_inclusion,
)
from intently.log._merkle import inclusion_proofs

# The RFC 6962 test data (certificate-transparency reference implementation): eight
# leaf inputs, the tree heads of every prefix, and some published proofs.
CT_INPUTS = [
    bytes.fromhex(h)
    for h in ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"]
]
CT_ROOTS = [
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
CT_INCLUSION = [  # (leaf index, tree size, path)
    (
        0,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        5,
        8,
        [
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (2, 3, ["fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (
        1,
        5,
        [
            "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
]
CT_CONSISTENCY = [  # (old size, new size, proof)
    (1, 1, []),
    (
        1,
        8,
        [
            "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
        ],
    ),
    (
        6,
        8,
        [
            "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
            "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
            "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
        ],
    ),
    (
        2,
        5,
        [
            "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
            "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        ],
    ),
]
CT_LEAVES = [leaf_hash(d) for d in CT_INPUTS]


def reference_mth(data: list[bytes]) -> bytes:
    """MTH exactly as RFC 9162 section 2.1.1 defines it, over leaf *inputs*."""
    n = len(data)
    if n == 0:
        return hashlib.sha256(b"").digest()
    if n == 1:
        return hashlib.sha256(b"\x00" + data[0]).digest()
    k = 1
    while k * 2 < n:
        k *= 2
    return hashlib.sha256(b"\x01" + reference_mth(data[:k]) + reference_mth(data[k:])).digest()


def flip(h: bytes, bit: int) -> bytes:
    out = bytearray(h)
    out[bit // 8 % len(out)] ^= 1 << (bit % 8)
    return bytes(out)


def test_leaf_and_node_hashes_are_domain_separated() -> None:
    assert leaf_hash(b"").hex() == CT_ROOTS[1]
    a, b = leaf_hash(b"a"), leaf_hash(b"b")
    assert node_hash(a, b) == hashlib.sha256(b"\x01" + a + b).digest()
    assert node_hash(a, b) != leaf_hash(a + b)


@pytest.mark.parametrize("size", range(9))
def test_ct_reference_roots(size: int) -> None:
    assert root_hash(CT_LEAVES[:size]).hex() == CT_ROOTS[size]
    assert reference_mth(CT_INPUTS[:size]).hex() == CT_ROOTS[size]


@pytest.mark.parametrize(("index", "size", "path"), CT_INCLUSION)
def test_ct_reference_inclusion_proofs(index: int, size: int, path: list[str]) -> None:
    proof = inclusion_proof(CT_LEAVES[:size], index)
    assert [p.hex() for p in proof] == path
    verify_inclusion(CT_LEAVES[index], index, size, proof, bytes.fromhex(CT_ROOTS[size]))


def test_many_paths_at_once_are_the_reference_paths() -> None:
    """A trace's proofs come from one hashing of the tree (:func:`inclusion_proofs`): each path
    must be the one :func:`inclusion_proof` gives alone, the RFC 6962 vectors included, at every
    size and index (odd sizes carry a last node up unpaired)."""
    by_place = {(index, size): path for index, size, path in CT_INCLUSION}
    for size in range(1, 9):
        paths = inclusion_proofs(CT_LEAVES[:size], range(size))
        for index, path in enumerate(paths):
            assert path == inclusion_proof(CT_LEAVES[:size], index)
            assert [p.hex() for p in path] == by_place.get((index, size), [p.hex() for p in path])
    leaves = [leaf_hash(bytes([n])) for n in range(70)]
    for size in range(1, 71):
        assert inclusion_proofs(leaves[:size], range(size)) == [inclusion_proof(leaves[:size], i) for i in range(size)]
    with pytest.raises(ProofError, match="outside tree of size 3"):
        inclusion_proofs(leaves[:3], [3])


@pytest.mark.parametrize(("old", "new", "path"), CT_CONSISTENCY)
def test_ct_reference_consistency_proofs(old: int, new: int, path: list[str]) -> None:
    proof = consistency_proof(CT_LEAVES[:new], old)
    assert [p.hex() for p in proof] == path
    verify_consistency(old, new, bytes.fromhex(CT_ROOTS[old]), bytes.fromhex(CT_ROOTS[new]), proof)


leaf_inputs = st.lists(st.binary(max_size=12), min_size=1, max_size=70)


@settings(max_examples=150, deadline=None)
@given(leaf_inputs)
def test_frontier_root_equals_the_reference_mth_at_every_size(data: list[bytes]) -> None:
    frontier = Frontier()
    for i, d in enumerate(data):
        frontier.append(leaf_hash(d))
        assert frontier.root() == reference_mth(data[: i + 1])
        again = Frontier.from_hex(frontier.size, frontier.to_hex())
        assert again.root() == frontier.root()


@settings(max_examples=100, deadline=None)
@given(leaf_inputs, st.data())
def test_inclusion_proofs_verify_and_any_single_bit_change_fails(data: list[bytes], draw: st.DataObject) -> None:
    leaves = [leaf_hash(d) for d in data]
    size = len(leaves)
    root = reference_mth(data)
    index = draw.draw(st.integers(0, size - 1))
    proof = inclusion_proof(leaves, index)
    verify_inclusion(leaves[index], index, size, proof, root)
    bit = draw.draw(st.integers(0, 255))
    with pytest.raises(ProofError):
        verify_inclusion(flip(leaves[index], bit), index, size, proof, root)
    with pytest.raises(ProofError):
        verify_inclusion(leaves[index], index, size, proof, flip(root, bit))
    for k in range(len(proof)):
        bad = [*proof[:k], flip(proof[k], bit), *proof[k + 1 :]]
        with pytest.raises(ProofError):
            verify_inclusion(leaves[index], index, size, bad, root)
    for wrong_index in {index - 1, index + 1, index ^ 1} - {index}:
        if 0 <= wrong_index < size and leaves[wrong_index] != leaves[index]:
            with pytest.raises(ProofError):
                verify_inclusion(leaves[index], wrong_index, size, proof, root)
    # A proof does not bind the tree size by itself (the root does, through the signed
    # checkpoint that states both): a truncated or extended size fails against that size's root.
    longer = [*data, b"one more leaf"]
    for wrong_size in (size - 1, size + 1):
        if wrong_size > index:
            with pytest.raises(ProofError):
                verify_inclusion(leaves[index], index, wrong_size, proof, reference_mth(longer[:wrong_size]))
    if proof:
        with pytest.raises(ProofError):
            verify_inclusion(leaves[index], index, size, proof[:-1], root)
    with pytest.raises(ProofError):
        verify_inclusion(leaves[index], index, size, [*proof, root], root)


@settings(max_examples=100, deadline=None)
@given(leaf_inputs, st.data())
def test_consistency_proofs_verify_and_any_single_bit_change_fails(data: list[bytes], draw: st.DataObject) -> None:
    leaves = [leaf_hash(d) for d in data]
    new = len(leaves)
    old = draw.draw(st.integers(1, new))
    old_root, new_root = reference_mth(data[:old]), reference_mth(data)
    proof = consistency_proof(leaves, old)
    verify_consistency(old, new, old_root, new_root, proof)
    bit = draw.draw(st.integers(0, 255))
    with pytest.raises(ProofError):
        verify_consistency(old, new, flip(old_root, bit), new_root, proof)
    with pytest.raises(ProofError):
        verify_consistency(old, new, old_root, flip(new_root, bit), proof)
    for k in range(len(proof)):
        bad = [*proof[:k], flip(proof[k], bit), *proof[k + 1 :]]
        with pytest.raises(ProofError):
            verify_consistency(old, new, old_root, new_root, bad)
    longer = [*data, b"one more leaf"]
    with pytest.raises(ProofError):
        verify_consistency(old, new + 1, old_root, reference_mth(longer), proof)
    if old < new:
        with pytest.raises(ProofError):
            verify_consistency(old, new - 1, old_root, reference_mth(data[: new - 1]), proof)
        if old > 1:
            with pytest.raises(ProofError):
                verify_consistency(old - 1, new, reference_mth(data[: old - 1]), new_root, proof)


def test_all_small_trees_exhaustively() -> None:
    """Every (index, size) and (old, new) pair up to 20 leaves, against the reference."""
    data = [bytes([i]) * (i % 5) for i in range(20)]
    leaves = [leaf_hash(d) for d in data]
    roots = {n: reference_mth(data[:n]) for n in range(1, 21)}
    for size in range(1, 21):
        for index in range(size):
            verify_inclusion(leaves[index], index, size, inclusion_proof(leaves[:size], index), roots[size])
        for old in range(1, size + 1):
            verify_consistency(old, size, roots[old], roots[size], consistency_proof(leaves[:size], old))


def test_proof_arguments_out_of_range_are_proof_errors() -> None:
    with pytest.raises(ProofError):
        inclusion_proof(CT_LEAVES, 8)
    with pytest.raises(ProofError):
        verify_inclusion(CT_LEAVES[0], -1, 8, [], bytes(32))
    with pytest.raises(ProofError):
        consistency_proof(CT_LEAVES, 0)
    with pytest.raises(ProofError):
        verify_consistency(5, 4, bytes(32), bytes(32), [])
    with pytest.raises(ProofError):
        verify_consistency(4, 4, bytes(32), bytes(32), [bytes(32)])
    with pytest.raises(ProofError):
        Frontier(3, [bytes(32)])
