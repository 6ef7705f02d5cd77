"""The intent model of RFC-0013: six types, six states, the transitions the RFC draws,
priorities, epistemic types and the RFC-0003 initial-confidence table.

Kept free of storage so the rules can be read (and tested) in one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from ..core.errors import InvalidInput, InvalidTransition

__all__ = [
    "CLAIM_EVENTS",
    "CONFIDENCE_TABLE",
    "Decision",
    "EpistemicType",
    "Intent",
    "IntentState",
    "IntentType",
    "LifecycleState",
    "Priority",
    "SourceType",
    "Summary",
    "allowed_moves",
    "check_transition",
    "initial_confidence",
    "intent_label",
    "last_hold",
    "open_claim",
    "parse_enum",
]


class IntentType(StrEnum):
    """RFC-0013 section 3."""

    GOAL = "GOAL"
    COMMITMENT = "COMMITMENT"
    OPEN_QUESTION = "OPEN_QUESTION"
    DECISION_IN_PROGRESS = "DECISION_IN_PROGRESS"
    RISK = "RISK"
    FOLLOW_UP = "FOLLOW_UP"

    @property
    def label(self) -> str:
        """``Goal``, ``Open question``: used in completion summaries."""
        return self.value.replace("_", " ").capitalize()


class IntentState(StrEnum):
    """RFC-0013 section 4."""

    ACTIVE = "ACTIVE"
    COMPLETED = "COMPLETED"
    CANCELLED = "CANCELLED"
    ON_HOLD = "ON_HOLD"
    EXPIRED = "EXPIRED"
    SUPERSEDED = "SUPERSEDED"

    @property
    def final(self) -> bool:
        """No longer live: finished, or EXPIRED (which only reopening, or closing out an
        expired risk, leaves). Final intents take no edits, edges or replacement role."""
        return self in _FINAL

    @property
    def finished(self) -> bool:
        """COMPLETED, CANCELLED or SUPERSEDED: nothing leaves these. Unlike EXPIRED, which can
        be reopened, a finished intent can never come back to life."""
        return self in _FINISHED


_FINISHED = frozenset({IntentState.COMPLETED, IntentState.CANCELLED, IntentState.SUPERSEDED})
_FINAL = _FINISHED | {IntentState.EXPIRED}


class LifecycleState(StrEnum):
    """The core (RFC-0001) lifecycle; COMPLETED and CANCELLED intents are ARCHIVED."""

    ACTIVE = "ACTIVE"
    DEPRECATED = "DEPRECATED"
    SUPERSEDED = "SUPERSEDED"
    ARCHIVED = "ARCHIVED"


class Priority(StrEnum):
    LOW = "LOW"
    MEDIUM = "MEDIUM"
    HIGH = "HIGH"
    CRITICAL = "CRITICAL"

    @property
    def rank(self) -> int:
        return _PRIORITY_ORDER.index(self)

    def raised(self) -> Priority:
        """One level up (CRITICAL stays CRITICAL): the organiser's risk escalation."""
        return _PRIORITY_ORDER[min(self.rank + 1, len(_PRIORITY_ORDER) - 1)]


_PRIORITY_ORDER = (Priority.LOW, Priority.MEDIUM, Priority.HIGH, Priority.CRITICAL)


class EpistemicType(StrEnum):
    """RFC-0003. Intents are ASSERTED (stated or confirmed) or INFERRED (extracted);
    a dismissed candidate becomes DEPRECATED, which nothing leaves."""

    OBSERVED = "OBSERVED"
    ASSERTED = "ASSERTED"
    INFERRED = "INFERRED"
    HYPOTHETICAL = "HYPOTHETICAL"
    CONDITIONAL = "CONDITIONAL"
    UNVERIFIED = "UNVERIFIED"
    DEPRECATED = "DEPRECATED"


class SourceType(StrEnum):
    """RFC-0001 source types."""

    USER_STATED = "USER_STATED"
    USER_DEMONSTRATED = "USER_DEMONSTRATED"
    SYSTEM_INFERRED = "SYSTEM_INFERRED"
    EXTERNAL_DOCUMENT = "EXTERNAL_DOCUMENT"
    TOOL_OUTPUT = "TOOL_OUTPUT"
    IMPORTED = "IMPORTED"


# RFC-0003 section 4, initial confidence by (epistemic type, source type). A missing pair is a
# combination the RFC says should not occur ("—"); IMPORTED keeps the value it was imported with.
_E, _S = EpistemicType, SourceType
CONFIDENCE_TABLE: dict[tuple[EpistemicType, SourceType], float] = {
    (_E.OBSERVED, _S.USER_STATED): 0.90,
    (_E.OBSERVED, _S.USER_DEMONSTRATED): 0.85,
    (_E.OBSERVED, _S.EXTERNAL_DOCUMENT): 0.75,
    (_E.OBSERVED, _S.TOOL_OUTPUT): 0.80,
    (_E.ASSERTED, _S.USER_STATED): 0.80,
    (_E.ASSERTED, _S.USER_DEMONSTRATED): 0.75,
    (_E.ASSERTED, _S.SYSTEM_INFERRED): 0.60,
    (_E.ASSERTED, _S.EXTERNAL_DOCUMENT): 0.65,
    (_E.ASSERTED, _S.TOOL_OUTPUT): 0.70,
    (_E.INFERRED, _S.USER_DEMONSTRATED): 0.60,
    (_E.INFERRED, _S.SYSTEM_INFERRED): 0.55,
    (_E.INFERRED, _S.EXTERNAL_DOCUMENT): 0.50,
    (_E.INFERRED, _S.TOOL_OUTPUT): 0.55,
    (_E.HYPOTHETICAL, _S.USER_STATED): 0.35,
    (_E.HYPOTHETICAL, _S.SYSTEM_INFERRED): 0.25,
    (_E.HYPOTHETICAL, _S.EXTERNAL_DOCUMENT): 0.30,
    (_E.CONDITIONAL, _S.USER_STATED): 0.45,
    (_E.CONDITIONAL, _S.SYSTEM_INFERRED): 0.30,
    (_E.CONDITIONAL, _S.EXTERNAL_DOCUMENT): 0.35,
    (_E.CONDITIONAL, _S.TOOL_OUTPUT): 0.40,
    (_E.UNVERIFIED, _S.SYSTEM_INFERRED): 0.20,
    (_E.UNVERIFIED, _S.EXTERNAL_DOCUMENT): 0.25,
    (_E.UNVERIFIED, _S.TOOL_OUTPUT): 0.30,
}


def initial_confidence(epistemic: EpistemicType, source: SourceType) -> float:
    """The RFC-0003 table value, refusing the combinations the table marks as impossible."""
    try:
        return CONFIDENCE_TABLE[(epistemic, source)]
    except KeyError:
        raise InvalidInput(
            f"{epistemic.value} from {source.value} is a combination RFC-0003 rules out", where="source_type"
        ) from None


# RFC-0013 section 4, exactly as drawn, plus the one documented exception: the owner may
# reopen an EXPIRED intent with a new target (checked by the caller, which knows the owner).
# Risks add the section 8 exits below (RISK_TRANSITIONS).
TRANSITIONS: dict[IntentState, frozenset[IntentState]] = {
    IntentState.ACTIVE: frozenset(
        {
            IntentState.COMPLETED,
            IntentState.CANCELLED,
            IntentState.ON_HOLD,
            IntentState.EXPIRED,
            IntentState.SUPERSEDED,
        }
    ),
    IntentState.ON_HOLD: frozenset({IntentState.ACTIVE, IntentState.CANCELLED, IntentState.SUPERSEDED}),
    IntentState.EXPIRED: frozenset({IntentState.ACTIVE}),
    IntentState.COMPLETED: frozenset(),
    IntentState.CANCELLED: frozenset(),
    IntentState.SUPERSEDED: frozenset(),
}

# RFC-0013 section 8: a CRITICAL risk stays in every bundle "until it is COMPLETED, CANCELLED,
# or explicitly downgraded by the user", and an expired risk is escalated (HIGH becomes
# CRITICAL) while it is EXPIRED. Without these two moves an expired risk could never be
# resolved and would be surfaced forever; for other types EXPIRED stays as drawn (reopen only).
# (Downgrading is an edit of the priority alone, allowed on an expired risk by Goals.edit.)
RISK_TRANSITIONS: dict[IntentState, frozenset[IntentState]] = {
    IntentState.EXPIRED: frozenset({IntentState.COMPLETED, IntentState.CANCELLED}),
}


def allowed_moves(current: IntentState, intent_type: IntentType | None = None) -> frozenset[IntentState]:
    """The states ``current`` may move to: the drawn ones, plus the risk exits of section 8."""
    moves = TRANSITIONS[current]
    if intent_type is IntentType.RISK:
        moves = moves | RISK_TRANSITIONS.get(current, frozenset())
    return moves


def check_transition(
    current: IntentState, requested: IntentState, intent_type: IntentType | None = None, intent_id: str = ""
) -> None:
    """Raise :class:`InvalidTransition` (naming the intent and both states) unless the RFC draws
    the move (for an intent of ``intent_type``: an EXPIRED risk may also be completed or cancelled)."""
    moves = allowed_moves(current, intent_type)
    if requested not in moves:
        detail = "it is final" if not moves else ""
        raise InvalidTransition(intent_label(intent_id), current.value, requested.value, detail=detail)


#: The goals_events kinds that open or close a completion claim (a transition closes one when it
#: credits it); :func:`open_claim` reads them, ``goals._claims`` writes them.
CLAIM_EVENTS = ("COMPLETION_CLAIMED", "COMPLETION_CLAIM_REJECTED", "INTENT_TRANSITION")


def open_claim(state: IntentState, events: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The claim awaiting a decision, from the goal's events (oldest first), or None.

    A newer claim replaces an older open one (the latest note and evidence are what the person
    judges); a rejection or a completion crediting it closes it; a goal that is no longer live
    (cancelled, superseded, expired) has nothing left to confirm."""
    if state not in (IntentState.ACTIVE, IntentState.ON_HOLD):
        return None
    claim: dict[str, Any] | None = None
    for event in events:
        payload = event.get("payload") or {}
        if event.get("kind") == "COMPLETION_CLAIMED":
            claim = {
                "id": event["id"],
                "claimed_by": payload.get("claimed_by"),
                "claimed_at": event.get("time"),
                "note": payload.get("note"),
                "evidence_ids": list(payload.get("evidence_ids") or []),
                "awaits": payload.get("awaits"),
            }
        elif claim is not None and payload.get("claim", {}).get("id") == claim["id"]:
            claim = None  # rejected, or credited by a completion
    return claim


def last_hold(state: IntentState, events: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The hold or resume (an INTENT_TRANSITION carrying ``by``) that left the intent in
    ``state``, from its events (oldest first), or None when the last one led elsewhere."""
    for event in reversed(events):
        payload = event.get("payload") or {}
        if event.get("kind") != "INTENT_TRANSITION" or "by" not in payload:
            continue
        to = payload.get("to_state")
        if to != state.value or to not in (IntentState.ON_HOLD.value, IntentState.ACTIVE.value):
            return None
        action = "held" if to == IntentState.ON_HOLD.value else "resumed"
        return {"action": action, "by": payload["by"], "at": event.get("time"), "reason": payload.get("reason")}
    return None


def intent_label(intent_id: str) -> str:
    """``intent 0190...``: refusals name the intent, so a script or a batch knows which one."""
    return f"intent {intent_id}" if intent_id else "intent"


_EnumT = TypeVar("_EnumT", bound=StrEnum)


def parse_enum(kind: type[_EnumT], value: str | _EnumT, where: str) -> _EnumT:
    """Case-insensitive enum parsing with an error listing the choices."""
    if isinstance(value, kind):
        return value
    text = str(value).strip().upper().replace("-", "_").replace(" ", "_")
    try:
        return kind(text)
    except ValueError:
        choices = ", ".join(m.value for m in kind)
        raise InvalidInput(f"unknown value {value!r} (one of {choices})", where=where) from None


@dataclass(frozen=True)
class Intent:
    """An INTENT object (RFC-0013 section 2): core fields plus the intent-specific ones.

    ``salience`` is the stored (base) salience; ``current_salience`` is decayed to the moment
    the object was read (RFC-0007 computes decay at read time, so nothing is rewritten).
    """

    id: str
    namespace: str
    version: int
    intent_type: IntentType
    state: IntentState
    lifecycle_state: LifecycleState
    epistemic_type: EpistemicType
    source_type: SourceType
    origin: str | None
    evidence_ids: tuple[str, ...]
    asserted_by: str
    valid_from: str
    valid_to: str | None
    created_at: str
    last_modified_at: str
    superseded_by: str | None
    confidence: float
    salience: float
    current_salience: float
    value: str
    structured_value: dict[str, Any] | None
    priority: Priority
    owner: str | None
    stakeholders: tuple[str, ...]
    depends_on: tuple[str, ...]
    blocks: tuple[str, ...]
    target_completion: str | None
    completion_criteria: str | None
    context_note: str | None
    events: tuple[dict[str, Any], ...] = field(default=())
    blocked_by: tuple[dict[str, str], ...] = field(default=())
    """Prerequisites that can no longer be done as they stand (``{"id", "state", "text"}``,
    state CANCELLED, EXPIRED or DISMISSED): RFC-0013 section 6 leaves the dependant as it was
    and its owner to decide, so readers and the context block show what it waits on."""
    completion_claim: dict[str, Any] | None = field(default=None)
    """An agent's claim that this person's goal is done, awaiting the person (``id``,
    ``claimed_by``, ``claimed_at``, ``note``, ``evidence_ids``, ``awaits``), or None
    (``goals._claims``)."""
    endorsement: dict[str, str] | None = field(default=None)
    """Who endorsed this intent as their own word and when (``by``, ``at``), or None."""
    hold: dict[str, Any] | None = field(default=None)
    """Who put this intent in its current state by holding it (ON_HOLD) or resuming it (ACTIVE),
    when and why (``action``: ``held`` or ``resumed``, ``by``, ``at``, ``reason``), or None: an
    agent may hold a person's goal, so every reader (the console's card too) says who did."""

    @property
    def text(self) -> str:
        return self.value

    @property
    def is_risk(self) -> bool:
        return self.intent_type is IntentType.RISK

    @property
    def awaiting_review(self) -> bool:
        return self.epistemic_type is EpistemicType.INFERRED

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "INTENT",
            "namespace": self.namespace,
            "version": self.version,
            "intent_type": self.intent_type.value,
            "state": self.state.value,
            "lifecycle_state": self.lifecycle_state.value,
            "epistemic_type": self.epistemic_type.value,
            "source_type": self.source_type.value,
            "origin": self.origin,
            "evidence_ids": list(self.evidence_ids),
            "asserted_by": self.asserted_by,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "created_at": self.created_at,
            "last_modified_at": self.last_modified_at,
            "superseded_by": self.superseded_by,
            "confidence": self.confidence,
            "salience": self.salience,
            "current_salience": round(self.current_salience, 6),
            "value": self.value,
            "structured_value": self.structured_value,
            "priority": self.priority.value,
            "owner": self.owner,
            "stakeholders": list(self.stakeholders),
            "depends_on": list(self.depends_on),
            "blocks": list(self.blocks),
            "target_completion": self.target_completion,
            "completion_criteria": self.completion_criteria,
            "context_note": self.context_note,
            "events": list(self.events),
            "blocked_by": [dict(b) for b in self.blocked_by],
            "completion_claim": dict(self.completion_claim) if self.completion_claim else None,
            "endorsement": dict(self.endorsement) if self.endorsement else None,
            "hold": dict(self.hold) if self.hold else None,
        }


@dataclass(frozen=True)
class Decision:
    """A decision that was made: a record, not an intent (requirements mine these)."""

    id: str
    namespace: str
    text: str
    evidence_id: str
    span: str | None
    created_at: str
    recorded_by: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "namespace": self.namespace,
            "text": self.text,
            "evidence_id": self.evidence_id,
            "span": self.span,
            "created_at": self.created_at,
            "recorded_by": self.recorded_by,
        }


@dataclass(frozen=True)
class Summary:
    """A completion SUMMARY (RFC-0013 section 9): remembers an achievement after archival."""

    id: str
    namespace: str
    intent_id: str
    text: str
    salience: float
    created_at: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "namespace": self.namespace,
            "intent_id": self.intent_id,
            "text": self.text,
            "salience": self.salience,
            "created_at": self.created_at,
        }
