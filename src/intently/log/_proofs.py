"""Checking proofs as ``intently log proof`` / ``log consistency`` print them.

A proof document is self-contained: an inclusion proof carries the operation itself, so a
verifier recomputes its leaf from the RFC 8785 JSON instead of trusting ``leaf_hash``.
Failures are :class:`ProofError` naming the stream and the sequence number concerned.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import BadSignature, InvalidInput, ProofError
from ._checkpoint import Checkpoint
from ._keys import KeyRing
from ._merkle import leaf_hash, verify_consistency, verify_inclusion
from ._operation import canonical_json

__all__ = ["verify_anchored_proof", "verify_consistency_proof", "verify_included", "verify_inclusion_proof"]


def verify_inclusion_proof(proof: Mapping[str, Any]) -> None:
    """Raise :class:`ProofError` unless ``proof['operation']`` is leaf ``seq - 1`` of the tree of
    ``tree_size`` leaves whose root is ``proof['root']``."""
    stream, seq = _field(proof, "stream", str), _field(proof, "seq", int)
    try:
        operation = _field(proof, "operation", dict)
        if operation.get("namespace") != stream or operation.get("seq") != seq:
            raise ProofError("the operation is not the one the proof names", stream=stream, seq=seq)
        if _field(proof, "leaf_index", int) != seq - 1:
            raise ProofError(f"leaf index {proof['leaf_index']} is not seq {seq} - 1", stream=stream, seq=seq)
        leaf = leaf_hash(canonical_json(operation, where="operation"))
        if leaf.hex() != proof.get("leaf_hash"):
            raise ProofError("the operation does not hash to the proof's leaf", stream=stream, seq=seq)
        verify_inclusion(
            leaf, seq - 1, _field(proof, "tree_size", int), _hashes(proof["proof"]), _hash(proof.get("root"))
        )
    except ProofError as exc:
        if exc.stream is not None:
            raise
        raise ProofError(str(exc), stream=stream, seq=seq) from exc


def verify_consistency_proof(proof: Mapping[str, Any]) -> None:
    """Raise :class:`ProofError` unless the tree of ``old_size`` with ``old_root`` is a prefix of
    the tree of ``new_size`` with ``new_root``; errors name the old size as the place."""
    stream, old_size = _field(proof, "stream", str), _field(proof, "old_size", int)
    try:
        verify_consistency(
            old_size,
            _field(proof, "new_size", int),
            _hash(proof.get("old_root")),
            _hash(proof.get("new_root")),
            _hashes(proof.get("proof")),
        )
    except ProofError as exc:
        raise ProofError(str(exc), stream=stream, seq=old_size) from exc


def _field(proof: Mapping[str, Any], name: str, kind: type) -> Any:
    value = proof.get(name)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise InvalidInput(f"missing or not a {kind.__name__}", where=f"proof.{name}")
    return value


def _hash(value: Any) -> bytes:
    try:
        raw = bytes.fromhex(str(value))
    except ValueError as exc:
        raise ProofError(f"not a hex hash: {value!r}") from exc
    if len(raw) != 32:
        raise ProofError(f"a hash has 32 bytes, not {len(raw)}")
    return raw


def _hashes(values: Any) -> list[bytes]:
    if not isinstance(values, list):
        raise InvalidInput("missing or not a list", where="proof.proof")
    return [_hash(v) for v in values]


def verify_anchored_proof(
    proof: Mapping[str, Any], keyring: KeyRing, checkpoints: Sequence[Checkpoint] = ()
) -> dict[str, Any]:
    """Check a proof document offline, with only the public keyring: the proof's arithmetic,
    then that a signed checkpoint states each tree head it relates to (the checkpoints the
    document carries, plus ``checkpoints`` the verifier holds, say from the witness file's git
    history). A proof path alone binds nothing to the log: anyone can build a tree around any
    leaf, so a tree head no valid signature covers is a :class:`ProofError` naming its size.

    Returns what was checked: the kind, stream and each anchoring checkpoint's size and key.
    """
    if "operation" in proof:
        kind = "inclusion"
        verify_inclusion_proof(proof)
        heads = {_field(proof, "tree_size", int): str(proof.get("root")).lower()}
        carried = [proof.get("checkpoint")]
    elif "old_size" in proof:
        kind = "consistency"
        verify_consistency_proof(proof)
        heads = {
            _field(proof, "old_size", int): str(proof.get("old_root")).lower(),
            _field(proof, "new_size", int): str(proof.get("new_root")).lower(),
        }
        carried = [proof.get("old_checkpoint"), proof.get("new_checkpoint")]
    else:
        raise InvalidInput("neither an inclusion proof (operation) nor a consistency proof (old_size)", where="proof")
    stream = _field(proof, "stream", str)
    anchors: list[Checkpoint] = []
    for n, data in enumerate(c for c in carried if c is not None):
        try:
            anchors.append(Checkpoint.from_json(data))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InvalidInput(f"not a checkpoint: {exc}", where=f"proof checkpoint {n + 1}") from exc
    anchored: dict[int, Checkpoint] = {}
    for cp in [*anchors, *checkpoints]:
        keyring.verify(cp.key_id, cp.signed_body(), cp.signature, stream=cp.stream, seq=cp.size)
        # The proof's arithmetic checked: its tree heads are prefixes of one another. So a retired
        # key's checkpoint below the last tree it signed is bound to that tree when the proof
        # also relates the recorded last head (a consistency proof up to it).
        entry = keyring.entries[cp.key_id]
        head = entry.last_signed_head(cp.stream)
        proven = head is not None and cp.stream == stream and heads.get(head[0]) == head[1].hex()
        keyring.check_retirement(cp.key_id, cp.stream, cp.size, cp.time, cp.root, proven=proven)
        if cp.stream != stream or cp.size not in heads:
            raise ProofError(
                f"the checkpoint of stream {cp.stream!r} at size {cp.size} is not of a tree this proof relates "
                f"(sizes {', '.join(map(str, sorted(heads)))})",
                stream=stream,
                seq=cp.size,
            )
        if cp.root.hex() != heads[cp.size]:
            raise ProofError(
                f"the signed checkpoint's root at size {cp.size} is not the proof's", stream=stream, seq=cp.size
            )
        anchored[cp.size] = cp
    for size in sorted(heads):
        if size not in anchored:
            raise ProofError(
                f"no signed checkpoint states the tree of size {size}, so nothing binds the proof to the log "
                "(give one with --checkpoint, e.g. from the witness file's history)",
                stream=stream,
                seq=size,
            )
    return {
        "ok": True,
        "kind": kind,
        "stream": stream,
        "checkpoints": [{"size": s, "key_id": cp.key_id, "time": cp.time} for s, cp in sorted(anchored.items())],
    }


def verify_included(
    operations: Sequence[Mapping[str, Any]],
    inclusion: Any,
    keyring: KeyRing,
    *,
    origin: str,
    consistency: Sequence[Mapping[str, Any]] = (),
) -> list[Checkpoint]:
    """Check offline that each of ``operations`` (as JSON) is a leaf of the log: ``inclusion``
    holds, per stream, a signed checkpoint (tree head) and, per operation in the same order, its
    audit path in that tree (RFC 9162). What a gate trace carries since a signature alone did not
    bind its operations: a leaked, since-retired key could re-sign any operations within the
    sequence numbers it had signed. A path can only be built to the real tree's root, and the
    checkpoint must be one its key may have signed (:meth:`KeyRing.check_retirement`: a retired
    key's only at its last recorded head), so a rewritten operation is a :class:`ProofError`
    naming its stream and sequence number.

    A trace exported while its key was in use may carry a checkpoint below the last tree the key
    signed before its rotation; offline, only a consistency proof from it to that recorded head
    (``consistency``: documents as ``intently log consistency OLD NEW --json`` prints them) shows
    it is a prefix of the head, and without one it is refused, naming the command that makes it.

    Returns the checkpoints the operations were proven in.
    """
    prefixes = set()
    for proof in consistency:
        verify_consistency_proof(proof)
        prefixes.add(
            (
                str(proof["stream"]),
                int(proof["old_size"]),
                str(proof["old_root"]).lower(),
                int(proof["new_size"]),
                str(proof["new_root"]).lower(),
            )
        )
    if not isinstance(inclusion, Mapping):
        raise InvalidInput("must be an object of checkpoints and proofs", where="inclusion")
    heads, paths = inclusion.get("checkpoints"), inclusion.get("proofs")
    if not isinstance(heads, Mapping):
        raise InvalidInput("must map each stream to its signed checkpoint", where="inclusion.checkpoints")
    if not isinstance(paths, list) or len(paths) != len(operations):
        raise InvalidInput(f"must hold one audit path per operation ({len(operations)})", where="inclusion.proofs")
    checkpoints: dict[str, Checkpoint] = {}
    for stream, data in heads.items():
        try:
            cp = Checkpoint.from_json(data)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InvalidInput(f"not a checkpoint: {exc}", where=f"inclusion.checkpoints.{stream}") from exc
        if cp.stream != stream:
            raise InvalidInput(f"a checkpoint of stream {cp.stream!r}", where=f"inclusion.checkpoints.{stream}")
        keyring.verify(cp.key_id, cp.signed_body(), cp.signature, stream=cp.stream, seq=cp.size)
        head = keyring.entries[cp.key_id].last_signed_head(cp.stream)
        proven = head is not None and (cp.stream, cp.size, cp.root.hex(), head[0], head[1].hex()) in prefixes
        if head is not None and cp.size < head[0] and not proven:
            raise BadSignature(
                f"the trace's checkpoint at size {cp.size} is signed by key {cp.key_id}, since retired having "
                f"signed the tree of size {head[0]} (keys/public.json); offline nothing shows this tree is a prefix "
                "of it (a retired key may have leaked): in the home, `intently log consistency "
                f"{cp.size} {head[0]} --json > consistency.json`, then `intently gate verify-trace ... "
                "--consistency consistency.json` (or export the run again)",
                stream=cp.stream,
                seq=cp.size,
            )
        keyring.check_retirement(cp.key_id, cp.stream, cp.size, cp.time, cp.root, proven=proven)
        if cp.origin != origin:
            raise BadSignature(
                f"checkpoint origin {cp.origin!r} is not the trace's {origin!r}", stream=cp.stream, seq=cp.size
            )
        checkpoints[cp.stream] = cp
    for n, (op, path) in enumerate(zip(operations, paths, strict=True)):
        stream, seq = op.get("namespace"), op.get("seq")
        if not isinstance(stream, str) or not isinstance(seq, int) or isinstance(seq, bool):
            raise InvalidInput("an operation without its stream (namespace) and seq", where=f"operations[{n}]")
        anchor = checkpoints.get(stream)
        if anchor is None:
            raise ProofError(
                f"operation seq {seq} ({op.get('id')}) has no signed checkpoint of its stream to be proven in",
                stream=stream,
                seq=seq,
            )
        if not isinstance(path, list):
            raise InvalidInput("an audit path is a list of hex hashes", where=f"inclusion.proofs[{n}]")
        try:
            leaf = leaf_hash(canonical_json(op, where=f"operations[{n}]"))
            verify_inclusion(leaf, seq - 1, anchor.size, [_hash(h) for h in path], anchor.root)
        except ProofError as exc:
            raise ProofError(
                f"operation seq {seq} ({op.get('id')}) is not in the tree of size {anchor.size} that the "
                f"checkpoint signed by key {anchor.key_id} states ({exc}): it is not the log's operation",
                stream=stream,
                seq=seq,
            ) from exc
    return list(checkpoints.values())
