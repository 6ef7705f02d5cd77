"""The tamper-evident operation log: RFC 9162 Merkle streams, Ed25519 checkpoints, proofs.

The names below are loaded on first use (PEP 562): every engine registers its operations
through :func:`register_applier` when imported, and ``intently --help`` imports them all, so
an eager package would load the signing keys' cryptography (and the whole log) in processes
that never open one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from ._checkpoint import LEGACY_DATABASE, Checkpoint, Witness
    from ._keys import KeyRing, key_id_of
    from ._merkle import (
        Frontier,
        consistency_proof,
        inclusion_proof,
        leaf_hash,
        node_hash,
        root_hash,
        verify_consistency,
        verify_inclusion,
    )
    from ._operation import Operation, canonical_json, canonical_operation, policy_version
    from ._oplog import NO_KEY_HINT, OperationLog, OtherDatabaseEntry, StreamReport, VerifyReport
    from ._proofs import verify_anchored_proof, verify_consistency_proof, verify_included, verify_inclusion_proof
    from ._repair import QUARANTINED_OP, REPAIRED_OP, QuarantinedRow, RepairReport, VoidedPlace, quarantined, repair_log
    from ._replay import Applier, register_applier, registered_appliers, replay

_WHERE: dict[str, str] = {
    **dict.fromkeys(("LEGACY_DATABASE", "Checkpoint", "Witness"), "._checkpoint"),
    **dict.fromkeys(("KeyRing", "key_id_of"), "._keys"),
    **dict.fromkeys(
        (
            "Frontier",
            "consistency_proof",
            "inclusion_proof",
            "leaf_hash",
            "node_hash",
            "root_hash",
            "verify_consistency",
            "verify_inclusion",
        ),
        "._merkle",
    ),
    **dict.fromkeys(("Operation", "canonical_json", "canonical_operation", "policy_version"), "._operation"),
    **dict.fromkeys(("NO_KEY_HINT", "OperationLog", "OtherDatabaseEntry", "StreamReport", "VerifyReport"), "._oplog"),
    **dict.fromkeys(
        ("verify_anchored_proof", "verify_consistency_proof", "verify_included", "verify_inclusion_proof"), "._proofs"
    ),
    **dict.fromkeys(
        ("QUARANTINED_OP", "REPAIRED_OP", "QuarantinedRow", "RepairReport", "VoidedPlace", "quarantined", "repair_log"),
        "._repair",
    ),
    **dict.fromkeys(("Applier", "register_applier", "registered_appliers", "replay"), "._replay"),
}

__all__ = [
    "LEGACY_DATABASE",
    "NO_KEY_HINT",
    "QUARANTINED_OP",
    "REPAIRED_OP",
    "Applier",
    "Checkpoint",
    "Frontier",
    "KeyRing",
    "Operation",
    "OperationLog",
    "OtherDatabaseEntry",
    "QuarantinedRow",
    "RepairReport",
    "StreamReport",
    "VerifyReport",
    "VoidedPlace",
    "Witness",
    "canonical_json",
    "canonical_operation",
    "consistency_proof",
    "inclusion_proof",
    "key_id_of",
    "leaf_hash",
    "node_hash",
    "policy_version",
    "quarantined",
    "register_applier",
    "registered_appliers",
    "repair_log",
    "replay",
    "root_hash",
    "verify_anchored_proof",
    "verify_consistency",
    "verify_consistency_proof",
    "verify_included",
    "verify_inclusion",
    "verify_inclusion_proof",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals(), __all__)
