"""Appending a goals operation and applying it with the same function replay uses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.errors import ConflictError, InvalidInput, NotFound
from ..log import Operation, policy_version, registered_appliers
from ..store import Transaction
from ._graph import MAX_DEPTH, MAX_FAN_IN
from ._model import Intent
from ._store import load_intent

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = ["ORGANISER", "POLICY_VERSION", "emit", "load_for_write"]

POLICY_VERSION = policy_version(
    "goals", "1", {"max_depth": MAX_DEPTH, "max_fan_in": MAX_FAN_IN, "inferred_confidence": 0.55}
)
ORGANISER = "system:organiser"


def emit(
    rt: Runtime, tx: Transaction, op: str, target: str, payload: dict[str, Any], *, actor: str | None = None
) -> Operation:
    """Append ``op`` to the namespace's stream and apply it, in the caller's transaction."""
    operation = rt.log.append(
        tx,
        namespace=rt.namespace,
        actor=actor or str(rt.actor),
        op=op,
        target=target,
        payload=payload,
        policy_version=POLICY_VERSION,
    )
    applier = registered_appliers()[op]
    if applier is not None:
        applier(tx, operation)
    return operation


def load_for_write(rt: Runtime, tx: Transaction, intent_id: str, expected_version: int | None) -> Intent:
    """The intent as this transaction sees it; :class:`ConflictError` when the caller's copy is stale."""
    if not intent_id:
        raise InvalidInput("an intent id is required", where="intent_id")
    intent = load_intent(tx, rt.namespace, intent_id, rt.clock.now())
    if intent is None:
        raise NotFound(f"no intent {intent_id!r} in namespace {rt.namespace!r}")
    if expected_version is not None and intent.version != expected_version:
        raise ConflictError(
            f"intent {intent_id} is at version {intent.version}, not {expected_version}; re-read it and retry"
        )
    return intent
