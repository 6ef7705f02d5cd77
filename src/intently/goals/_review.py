"""The review queue: extraction proposes INFERRED intents, the user promotes or dismisses them.

Rules (RFC-0013 section 5, RFC-0003):

- a proposal is INFERRED from SYSTEM_INFERRED at confidence 0.55, awaiting review;
- when a live (ACTIVE or ON_HOLD) intent of the same type already restates it (:func:`near_duplicate`:
  equal normalised words, or Jaccard overlap >= 0.8 of the stemmed content words) the
  evidence is attached to that intent instead (``"attached"``);
- when a proposal with the same normalised words was dismissed before and carried the same
  evidence id, nothing is created (``"suppressed"``), so re-running extraction over the same
  conversation does not bring dismissed candidates back;
- the same candidate from the same evidence (:func:`proposed_before`: the span it was proposed
  from, of the type it was proposed as) is that intent whatever became of it since: a reviewer's
  edit of its text, type or owner does not let it come back as a second candidate, and once it is
  dismissed, done or cancelled it stays so (``"suppressed"``);
- promotion is an EPISTEMIC_TRANSITION to ASSERTED; a human confirming makes the intent
  USER_STATED (confidence 0.80), an agent confirming keeps the source (ASSERTED row of the table);
- dismissal is an EPISTEMIC_TRANSITION to DEPRECATED, which nothing leaves;
- endorsement (:func:`endorse`) is the same EPISTEMIC_TRANSITION for an intent an agent or a
  tool asserted: a person makes it their own word (USER_STATED, confidence 0.80), always a
  person's act, whatever ``agents_may_review`` says;
- confirming, dismissing, editing, completing, cancelling or holding a candidate is a person's
  act (:func:`guard_candidate`): language proposes, people decide. An agent may do them only
  where the home opts in (``[review] agents_may_review = true``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from ..access import require_person, require_reviewer
from ..core.errors import InvalidTransition
from ..store import Transaction
from ._model import EpistemicType, Intent, LifecycleState, SourceType, initial_confidence, intent_label
from ._ops import emit, load_for_write
from ._store import load_intents
from ._text import Terms, near_duplicate, terms_of

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = [
    "ProposeResult",
    "dismiss",
    "endorse",
    "find_restatement",
    "guard_candidate",
    "is_suppressed",
    "promote",
    "proposed_before",
]

INFERRED_CONFIDENCE = initial_confidence(EpistemicType.INFERRED, SourceType.SYSTEM_INFERRED)


@dataclass(frozen=True)
class ProposeResult:
    """``status`` is ``created``, ``attached`` or ``suppressed``; ``intent`` is None when suppressed."""

    status: Literal["created", "attached", "suppressed"]
    intent: Intent | None

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "intent": self.intent.to_json() if self.intent else None}


def is_suppressed(tx: Transaction, namespace: str, terms: Terms, evidence_id: str) -> bool:
    row = tx.one(
        "SELECT i.id FROM goals_intents i JOIN goals_evidence e ON e.intent_id = i.id WHERE i.namespace = ? "
        "AND i.norm_key = ? AND i.epistemic_type = 'DEPRECATED' AND e.evidence_id = ? LIMIT 1",
        (namespace, terms.key, evidence_id),
    )
    return row is not None


def proposed_before(
    rt: Runtime, tx: Transaction, intent_type: str, terms: Terms, evidence_id: str, span: str
) -> tuple[str, bool] | None:
    """The intent this very candidate already became, as ``(id, live)``, or None.

    A candidate is identified by its evidence, the span it was read from and the type it was
    proposed as, not by the intent's fields now: those are what a reviewer corrects. Matching on
    the current text, type or owner (as :func:`is_suppressed` and :func:`find_restatement` do)
    let an edited-then-dismissed candidate, or one edited into another type or owner, come back
    from the same message as a new candidate, and one confirmed and then done or cancelled
    return to the queue when its conversation was observed again. The span is compared exactly
    (in SQL, on the evidence index: a turn can carry hundreds of candidates); the type it was
    proposed as is read from its ``INTENT_CREATE`` operation when it has changed since: one span
    can carry two candidates of different types (a commitment and a goal), which stay two."""
    rows = tx.query(
        "SELECT i.id, i.intent_type, i.state, i.epistemic_type FROM goals_evidence e "
        "JOIN goals_intents i ON i.id = e.intent_id WHERE i.namespace = ? AND e.evidence_id = ? "
        "AND (e.span = ? OR i.norm_key = ?) ORDER BY i.created_at, i.id",
        (rt.namespace, evidence_id, span, terms.key),
    )
    for row in rows:
        if str(row["intent_type"]) != intent_type and _proposed_as(rt, tx, str(row["id"])) != intent_type:
            continue
        live = str(row["state"]) in ("ACTIVE", "ON_HOLD") and str(row["epistemic_type"]) != "DEPRECATED"
        return str(row["id"]), live
    return None


def _proposed_as(rt: Runtime, tx: Transaction, intent_id: str) -> str | None:
    """The type ``intent_id`` was created with (its ``INTENT_CREATE`` in the namespace's log)."""
    row = tx.one(
        "SELECT payload FROM log_ops WHERE stream = ? AND target = ? AND op = 'INTENT_CREATE' LIMIT 1",
        (rt.namespace, intent_id),
    )
    if row is None:
        return None
    created = json.loads(str(row["payload"])).get("intent", {})
    return str(created.get("intent_type")) if isinstance(created, dict) else None


@lru_cache(maxsize=4096)
def _value_terms(value: str) -> Terms:
    """``terms_of`` a stored intent's text, kept: a turn with hundreds of candidates compares each
    with the same live intents (up to 500), and reading their texts again for every candidate
    made observing such a turn quadratic. ``Terms`` is immutable, so sharing it is safe."""
    return terms_of(value)


def find_restatement(
    rt: Runtime, tx: Transaction, intent_type: str, terms: Terms, *, owner: str | None = None
) -> Intent | None:
    """A live (ACTIVE or ON_HOLD), not dismissed intent of the same type that says the same
    thing, if any, and of the same owner when both have one: Dave's "I'll send the invoice" is
    his undertaking, not more evidence for Carol's. A goal put on hold is still the goal: its
    restatement is evidence for it, not a second candidate a reviewer could confirm beside it."""
    words = sorted(set(terms.key.split()))
    if not words:
        return None
    marks = ", ".join("?" for _ in words)
    # Only what the comparison reads: the whole row (and its edges and evidence) is loaded for
    # the one that matches, not for each of up to 500 candidates a busy turn compares against.
    rows = tx.query(
        "SELECT id, value, owner FROM goals_intents WHERE namespace = ? AND intent_type = ? "
        "AND state IN ('ACTIVE', 'ON_HOLD') AND epistemic_type <> 'DEPRECATED' AND id IN "
        f"(SELECT ref_id FROM goals_terms WHERE namespace = ? AND term IN ({marks})) ORDER BY created_at, id LIMIT 500",
        (rt.namespace, intent_type, rt.namespace, *words),
    )
    for row in rows:
        if owner and row["owner"] and str(row["owner"]) != owner:
            continue
        if near_duplicate(terms, _value_terms(str(row["value"]))):
            full = tx.one("SELECT * FROM goals_intents WHERE id = ?", (row["id"],))
            if full is None:  # pragma: no cover - read in the same transaction a moment ago
                return None
            (intent,) = load_intents(tx, [full], rt.clock.now())
            return intent
    return None


_NOT_WAITING = {
    EpistemicType.ASSERTED: "it is already confirmed",
    EpistemicType.DEPRECATED: "it was dismissed or withdrawn; add it again if it holds",
}


def guard_candidate(rt: Runtime, intent: Intent, act: str) -> None:
    """Refuse an agent's ``act`` on a candidate awaiting review, unless the home lets agents review.

    Extraction proposes and a person decides: an agent that could confirm, reword or clear
    candidates could confirm what it proposed itself, or what a prompt injection in a page it
    read made it propose, and the candidate becomes an asserted goal in every context block.
    The refusal tells the person where to decide (``intently review``).
    """
    if intent.epistemic_type is EpistemicType.INFERRED:
        require_reviewer(
            rt.actor,
            rt.config.review.agents_may_review,
            f"{act} candidate {intent.id} awaiting review",
            review_with="`intently review`",
        )


def promote(rt: Runtime, tx: Transaction, intent_id: str, expected_version: int | None) -> None:
    intent = load_for_write(rt, tx, intent_id, expected_version)
    guard_candidate(rt, intent, "confirm")
    if intent.epistemic_type is not EpistemicType.INFERRED:
        raise InvalidTransition(
            f"epistemic type of {intent_label(intent.id)}",
            intent.epistemic_type.value,
            EpistemicType.ASSERTED.value,
            detail=_NOT_WAITING.get(intent.epistemic_type, "only candidates awaiting review can be confirmed"),
        )
    human = rt.actor.is_person
    source = SourceType.USER_STATED if human else intent.source_type
    confidence = max(intent.confidence, initial_confidence(EpistemicType.ASSERTED, source))
    _transition(
        rt,
        tx,
        intent,
        EpistemicType.ASSERTED,
        reason="confirmed by " + ("the user" if human else str(rt.actor)),
        trigger_type="user_correction" if human else "policy",
        confidence=confidence,
        source=source,
        lifecycle=intent.lifecycle_state,
    )


def endorse(rt: Runtime, tx: Transaction, intent_id: str, expected_version: int | None) -> None:
    """A person makes an asserted intent that an agent or a tool stated their own word: the
    source becomes USER_STATED at the RFC-0003 confidence for it (0.80, never lower than it was),
    one EPISTEMIC_TRANSITION naming the person (``triggered_by``, ``endorsed_by``) and the
    source it had (``source_from``); its time is when.

    An agent's goal is its reading of what the user wants (SYSTEM_INFERRED, 0.60), and stays so
    until the user says it is theirs: RFC-0013 section 5 lets the user promote what the system
    inferred by confirming it, and this is that confirmation for what an agent asserted. So it is
    a person's act whatever ``[review] agents_may_review`` says: an agent endorsing would be an
    agent recording the user's word, which is exactly what the source tells apart. A candidate
    awaiting review is confirmed (:func:`promote`, the same act for it). Finished intents keep
    the record they closed with; a dismissed one is gone; the user's own word needs nothing."""
    require_person(
        rt.actor, f"endorse intent {intent_id}", instead=f"the person runs `intently goal endorse {intent_id}`"
    )
    intent = load_for_write(rt, tx, intent_id, expected_version)
    if intent.epistemic_type is EpistemicType.INFERRED:
        promote(rt, tx, intent_id, expected_version)
        return
    to = SourceType.USER_STATED
    if intent.epistemic_type is not EpistemicType.ASSERTED:
        raise InvalidTransition(
            f"epistemic type of {intent_label(intent.id)}",
            intent.epistemic_type.value,
            EpistemicType.ASSERTED.value,
            detail=_NOT_WAITING.get(intent.epistemic_type, "only an asserted intent or a candidate can be endorsed"),
        )
    if intent.source_type in (SourceType.USER_STATED, SourceType.USER_DEMONSTRATED):
        raise InvalidTransition(
            f"source of {intent_label(intent.id)}",
            intent.source_type.value,
            to.value,
            detail="it is already a person's own word",
        )
    if intent.state.finished:
        raise InvalidTransition(
            intent_label(intent.id),
            intent.state.value,
            "endorsed",
            detail="a finished intent keeps the record it closed with",
        )
    _transition(
        rt,
        tx,
        intent,
        EpistemicType.ASSERTED,
        reason=f"endorsed by {rt.actor}",
        trigger_type="user_correction",
        confidence=max(intent.confidence, initial_confidence(EpistemicType.ASSERTED, to)),
        source=to,
        lifecycle=intent.lifecycle_state,
        extra={"source_from": intent.source_type.value, "endorsed_by": str(rt.actor)},
    )


def dismiss(rt: Runtime, tx: Transaction, intent_id: str, reason: str | None, expected_version: int | None) -> None:
    intent = load_for_write(rt, tx, intent_id, expected_version)
    guard_candidate(rt, intent, "dismiss")
    if intent.epistemic_type is not EpistemicType.INFERRED:
        raise InvalidTransition(
            f"epistemic type of {intent_label(intent.id)}",
            intent.epistemic_type.value,
            EpistemicType.DEPRECATED.value,
            detail="only candidates awaiting review can be dismissed; cancel an asserted intent instead",
        )
    _transition(
        rt,
        tx,
        intent,
        EpistemicType.DEPRECATED,
        reason=reason or "dismissed in review",
        trigger_type="user_correction",
        confidence=intent.confidence,
        source=intent.source_type,
        lifecycle=LifecycleState.DEPRECATED,
    )


def _transition(
    rt: Runtime,
    tx: Transaction,
    intent: Intent,
    to: EpistemicType,
    *,
    reason: str,
    trigger_type: str,
    confidence: float,
    source: SourceType,
    lifecycle: LifecycleState,
    extra: dict[str, Any] | None = None,
) -> None:
    """One EPISTEMIC_TRANSITION operation, in the payload shape of RFC-0013 (docs/goals.md);
    ``extra`` adds keys (an endorsement's ``source_from`` and ``endorsed_by``)."""
    emit(
        rt,
        tx,
        "EPISTEMIC_TRANSITION",
        intent.id,
        {
            "from_type": intent.epistemic_type.value,
            "to_type": to.value,
            "reason": reason,
            "evidence_ids": list(intent.evidence_ids),
            "triggered_by": str(rt.actor),
            "trigger_type": trigger_type,
            "confidence_from": intent.confidence,
            "confidence_to": confidence,
            "source_type": source.value,
            "lifecycle_state": lifecycle.value,
            "version": intent.version + 1,
            **(extra or {}),
        },
    )
