"""The organiser (RFC-0013 section 8, RFC-0007): not a daemon.

It runs piggybacked on reads and writes (at most ``PIGGYBACK_BATCH`` intents within
``PIGGYBACK_BUDGET_MS``) and in full from ``Goals.organise()`` / ``intently goal organise``.
Its one job with state: an ACTIVE, ASSERTED intent whose target date has passed becomes EXPIRED
(a candidate still awaiting review waits for its reviewer instead); an
expired RISK also gets an ``EXPIRED_RISK_ALERT`` that raises its priority one level (the only
automatic priority change). It also returns to the review queue any candidate an earlier
version expired (logged, see ``_return_to_review``). Salience decay needs no job: it is
computed at read time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.clock import format_time
from ..store import Transaction
from ._model import IntentState, IntentType
from ._ops import ORGANISER, emit, load_for_write
from ._writes import transition

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = ["PIGGYBACK_BATCH", "PIGGYBACK_BUDGET_MS", "OrganiseReport", "due_exists", "organise"]

PIGGYBACK_BATCH = 50
PIGGYBACK_BUDGET_MS = 200.0
EXPLICIT_BUDGET_MS = 5000.0


@dataclass
class OrganiseReport:
    """What one run changed; ``remaining`` counts overdue intents left for the next run."""

    expired: list[str] = field(default_factory=list)
    risk_alerts: list[str] = field(default_factory=list)
    returned_to_review: list[str] = field(default_factory=list)
    remaining: int = 0
    elapsed_ms: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "expired": self.expired,
            "risk_alerts": self.risk_alerts,
            "returned_to_review": self.returned_to_review,
            "remaining": self.remaining,
            "elapsed_ms": round(self.elapsed_ms, 3),
        }


# Only ASSERTED intents expire. A candidate awaiting review (INFERRED) is nobody's intent yet:
# expired, it left the review queue (ACTIVE and ON_HOLD candidates) unseen, and an extracted
# risk was escalated without anyone having confirmed it. It waits, with its date, for the
# reviewer; confirmed, it is ASSERTED and expires like any other. A dismissed one never does.
_DUE = (
    "SELECT id FROM goals_intents WHERE namespace = ? AND state = 'ACTIVE' AND target_completion IS NOT NULL "
    "AND target_completion <= ? AND epistemic_type = 'ASSERTED' ORDER BY target_completion, id"
)


# Candidates an earlier organiser expired (before only ASSERTED intents did). EXPIRED, they
# left the review queue for good: nothing reviews an EXPIRED candidate, and reopening is the
# owner's act on a confirmed intent. Nothing else makes an INFERRED intent EXPIRED, so each
# such row is one of those, and the organiser returns it to review (see _return_to_review).
_STRANDED = (
    "SELECT id FROM goals_intents WHERE namespace = ? AND state = 'EXPIRED' AND epistemic_type = 'INFERRED' "
    "ORDER BY created_at, id"
)


def due_exists(rt: Runtime) -> bool:
    """Two indexed lookups: is anything overdue, or a candidate still expired by an earlier
    organiser? (Cheap enough to ask on every read.)"""
    now = format_time(rt.clock.now())
    with rt.store.transaction(write=False) as tx:
        if tx.one(_DUE + " LIMIT 1", (rt.namespace, now)) is not None:
            return True
        return tx.one(_STRANDED + " LIMIT 1", (rt.namespace,)) is not None


def organise(rt: Runtime, *, budget_ms: float = EXPLICIT_BUDGET_MS, batch: int = 500) -> OrganiseReport:
    """Expire overdue intents in batches until done or out of time."""
    started = time.perf_counter()
    report = OrganiseReport()
    while True:
        now_dt = rt.clock.now()
        now = format_time(now_dt)
        with rt.store.transaction() as tx:
            stranded = [str(r["id"]) for r in tx.query(_STRANDED + f" LIMIT {int(batch)}", (rt.namespace,))]
            for intent_id in stranded:
                _return_to_review(rt, tx, intent_id)
                report.returned_to_review.append(intent_id)
            ids = [str(r["id"]) for r in tx.query(_DUE + f" LIMIT {int(batch)}", (rt.namespace, now))]
            for intent_id in ids:
                intent = load_for_write(rt, tx, intent_id, None)
                version = intent.version + 1
                emit(
                    rt,
                    tx,
                    "INTENT_TRANSITION",
                    intent.id,
                    {
                        "from_state": intent.state.value,
                        "to_state": IntentState.EXPIRED.value,
                        "lifecycle_state": intent.lifecycle_state.value,
                        "reason": f"target_completion {intent.target_completion} passed",
                        "version": version,
                    },
                    actor=ORGANISER,
                )
                report.expired.append(intent.id)
                if intent.intent_type is IntentType.RISK:
                    raised = intent.priority.raised()
                    emit(
                        rt,
                        tx,
                        "EXPIRED_RISK_ALERT",
                        intent.id,
                        {
                            "intent_id": intent.id,
                            "target_completion": intent.target_completion,
                            "expired_at": now,
                            "priority_from": intent.priority.value,
                            "priority_to": raised.value,
                            "version": version + 1,
                        },
                        actor=ORGANISER,
                    )
                    report.risk_alerts.append(intent.id)
        elapsed = (time.perf_counter() - started) * 1000
        if (len(ids) < batch and len(stranded) < batch) or elapsed >= budget_ms:
            break
    with rt.store.transaction(write=False) as tx:
        report.remaining = len(tx.query(_DUE + " LIMIT 10000", (rt.namespace, format_time(rt.clock.now()))))
        report.remaining += len(tx.query(_STRANDED + " LIMIT 10000", (rt.namespace,)))
    report.elapsed_ms = (time.perf_counter() - started) * 1000
    return report


def _return_to_review(rt: Runtime, tx: Transaction, intent_id: str) -> None:
    """EXPIRED -> ACTIVE for a candidate an earlier organiser expired: one INTENT_TRANSITION by
    ``system:organiser`` saying why, so the repair is in the log like the expiry it undoes.

    Back in the review queue it keeps its (passed) date and, for a risk, the priority the old
    escalation gave it: the reviewer sees both and decides (confirmed with the date still
    passed, it expires like any confirmed intent; edit the date first to keep it active)."""
    intent = load_for_write(rt, tx, intent_id, None)
    transition(
        rt,
        tx,
        intent,
        IntentState.ACTIVE,
        "a candidate awaiting review does not expire; an earlier organiser expired it, "
        "so it returns to the review queue",
        actor=ORGANISER,
    )
