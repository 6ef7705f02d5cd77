"""Proof documents as ``intently log proof`` and ``log consistency`` print them: they
verify as issued, and every lie about them is a ProofError naming the stream and seq."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from intently import InvalidInput, NotFound
from intently.core.errors import BadSignature, ProofError
from intently.log import (
    Checkpoint,
    KeyRing,
    canonical_json,
    inclusion_proof,
    leaf_hash,
    root_hash,
    verify_anchored_proof,
    verify_consistency_proof,
    verify_inclusion_proof,
)

from .conftest import STREAM, LoggedHome


def flip_hex(h: str, bit: int = 0) -> str:
    raw = bytearray(bytes.fromhex(h))
    raw[bit // 8] ^= 1 << (bit % 8)
    return raw.hex()


@pytest.fixture
def proofs(logged: LoggedHome) -> dict[int, dict[str, Any]]:
    with logged.open() as ix:
        return {seq: ix.log.inclusion_proof(STREAM, seq) for seq in range(1, 9)}


def expect(proof: dict[str, Any], seq: int) -> None:
    with pytest.raises(ProofError) as caught:
        verify_inclusion_proof(proof)
    assert (caught.value.stream, caught.value.seq) == (STREAM, seq)


def test_issued_proofs_verify_against_the_signed_root(logged: LoggedHome, proofs: dict[int, dict[str, Any]]) -> None:
    with logged.open() as ix:
        signed = ix.log.latest_checkpoints()[STREAM]
    for seq, proof in proofs.items():
        verify_inclusion_proof(proof)
        assert (proof["tree_size"], proof["root"]) == (signed.size, signed.root.hex())
        assert proof["leaf_index"] == seq - 1


@pytest.mark.parametrize("seq", [1, 5, 8])
def test_wrong_leaf_index(proofs: dict[int, dict[str, Any]], seq: int) -> None:
    for index in (seq - 2, seq, seq + 5):
        bad = copy.deepcopy(proofs[seq])
        bad["leaf_index"] = index
        expect(bad, seq)
        bad["seq"] = index + 1  # claim the other position outright: the operation is not there
        bad["operation"]["seq"] = index + 1
        expect(bad, index + 1)


@pytest.mark.parametrize("seq", [1, 3, 8])
@pytest.mark.parametrize("delta", [-1, +1, +8])
def test_truncated_or_extended_tree_size(
    logged: LoggedHome, proofs: dict[int, dict[str, Any]], seq: int, delta: int
) -> None:
    bad = copy.deepcopy(proofs[seq])
    bad["tree_size"] += delta
    if bad["tree_size"] < seq:
        expect(bad, seq)
        return
    # A size alone is not bound by the path: the verifier takes the root for that size
    # from a checkpoint, and the path does not lead there.
    with logged.open() as ix:
        other = ix.log.inclusion_proof(STREAM, 1, size=min(bad["tree_size"], 8)) if bad["tree_size"] <= 8 else None
    bad["root"] = other["root"] if other else flip_hex(bad["root"])
    expect(bad, seq)


@pytest.mark.parametrize("seq", [2, 7])
def test_bit_flipped_proof_elements(proofs: dict[int, dict[str, Any]], seq: int) -> None:
    proof = proofs[seq]
    assert proof["proof"], "a tree of 8 has a path of 3"
    for k in range(len(proof["proof"])):
        for bit in (0, 7, 255):
            bad = copy.deepcopy(proof)
            bad["proof"][k] = flip_hex(bad["proof"][k], bit)
            expect(bad, seq)
    for key in ("root", "leaf_hash"):
        bad = copy.deepcopy(proof)
        bad[key] = flip_hex(bad[key], 9)
        expect(bad, seq)


def test_changed_operation_in_a_proof(proofs: dict[int, dict[str, Any]]) -> None:
    bad = copy.deepcopy(proofs[4])
    bad["operation"]["target"] = "user:mallory"
    expect(bad, 4)


def test_malformed_proofs_are_invalid_input(proofs: dict[int, dict[str, Any]]) -> None:
    bad = copy.deepcopy(proofs[4])
    del bad["tree_size"]
    with pytest.raises(InvalidInput, match="tree_size"):
        verify_inclusion_proof(bad)
    bad = copy.deepcopy(proofs[4])
    bad["proof"][0] = "zz"
    expect(bad, 4)


def test_consistency_proofs_between_checkpoints(logged: LoggedHome) -> None:
    with logged.open() as ix:
        for old in range(1, 9):
            proof = ix.log.consistency_proof(STREAM, old, 8)
            verify_consistency_proof(proof)
            bad = copy.deepcopy(proof)
            bad["old_root"] = flip_hex(bad["old_root"])
            with pytest.raises(ProofError) as caught:
                verify_consistency_proof(bad)
            assert (caught.value.stream, caught.value.seq) == (STREAM, old)
            for k in range(len(proof["proof"])):
                bad = copy.deepcopy(proof)
                bad["proof"][k] = flip_hex(bad["proof"][k], 3)
                with pytest.raises(ProofError):
                    verify_consistency_proof(bad)


def test_proofs_beyond_the_stream_are_not_found(logged: LoggedHome) -> None:
    with logged.open() as ix:
        with pytest.raises(NotFound):
            ix.log.inclusion_proof(STREAM, 9)
        with pytest.raises(NotFound):
            ix.log.inclusion_proof(STREAM, 2, size=20)
        with pytest.raises(NotFound):
            ix.log.consistency_proof(STREAM, 2, 20)


def _made_up_tree(operation: dict[str, Any], seq: int, size: int) -> dict[str, Any]:
    """A forger's proof: ``operation`` placed in a tree of the forger's own making. Its
    arithmetic is flawless; only a signed checkpoint can tell it is not the log's tree."""
    leaves = [bytes([i]) * 32 for i in range(size)]
    leaves[seq - 1] = leaf_hash(canonical_json(operation))
    return {
        "stream": STREAM,
        "seq": seq,
        "leaf_index": seq - 1,
        "tree_size": size,
        "leaf_hash": leaves[seq - 1].hex(),
        "root": root_hash(leaves).hex(),
        "proof": [h.hex() for h in inclusion_proof(leaves, seq - 1)],
        "operation": operation,
    }


def test_anchored_proofs_verify_with_the_public_keyring_alone(logged: LoggedHome) -> None:
    """What an auditor without the database can check: the proof, and that a valid signature
    states each tree head it relates. A proof nothing signed binds nothing."""
    ring = KeyRing.load_public(logged.project / ".intently" / "keys" / "public.json")
    with logged.open() as ix:
        proof = ix.log.inclusion_proof(STREAM, 3)  # in the tree of the latest checkpoint, size 8
        cp4, cp8 = ix.log.checkpoint_at(STREAM, 4), ix.log.checkpoint_at(STREAM, 8)
        consistency = ix.log.consistency_proof(STREAM, 4, 8)
        assert ix.log.checkpoint_at(STREAM, 5) is None
    assert cp4 is not None and cp8 is not None
    done = verify_anchored_proof({**proof, "checkpoint": cp8.to_json()}, ring)
    assert (done["kind"], [c["size"] for c in done["checkpoints"]]) == ("inclusion", [8])
    with pytest.raises(ProofError, match="no signed checkpoint states the tree of size 8"):
        verify_anchored_proof(proof, ring)  # nothing carried, nothing held
    assert verify_anchored_proof(proof, ring, [cp8])["ok"]  # held by the auditor instead

    forged_op = copy.deepcopy(proof["operation"])
    forged_op["payload"]["permission"] = "admin"
    forged = _made_up_tree(forged_op, 3, 8)
    verify_inclusion_proof(forged)  # the path checks out against its own root...
    with pytest.raises(ProofError, match="root at size 8 is not the proof's") as caught:
        verify_anchored_proof({**forged, "checkpoint": cp8.to_json()}, ring)  # ...not against the signed one
    assert (caught.value.stream, caught.value.seq) == (STREAM, 8)
    with pytest.raises(ProofError, match="no signed checkpoint"):
        verify_anchored_proof(forged, ring)
    bad_signature = {**cp8.to_json(), "root": forged["root"]}  # the forger's root in a checkpoint
    with pytest.raises(BadSignature):
        verify_anchored_proof({**forged, "checkpoint": bad_signature}, ring)

    both = {**consistency, "old_checkpoint": cp4.to_json(), "new_checkpoint": cp8.to_json()}
    assert [c["size"] for c in verify_anchored_proof(both, ring)["checkpoints"]] == [4, 8]
    with pytest.raises(ProofError, match="size 4") as caught:
        verify_anchored_proof({**both, "old_checkpoint": None}, ring)
    assert caught.value.seq == 4
    assert verify_anchored_proof({**both, "old_checkpoint": None}, ring, [cp4])["ok"]
    with pytest.raises(ProofError, match="not of a tree this proof relates"):
        verify_anchored_proof(both, ring, [_checkpoint_at_1(logged)])


def _checkpoint_at_1(logged: LoggedHome) -> Checkpoint:
    with logged.open() as ix:
        cp = ix.log.checkpoint_at(STREAM, 1)
    assert cp is not None
    return cp
