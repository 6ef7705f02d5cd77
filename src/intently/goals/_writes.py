"""The writes other goals operations are built from: creating an intent, moving it through the
state machine, adding a checked dependency edge. Each appends its operation and applies it in
the caller's transaction."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from ..core.actors import Actor, ActorKind
from ..core.clock import format_time, parse_time
from ..core.errors import InvalidInput, InvalidTransition, NotFound
from ..store import Transaction
from ._graph import check_new_edge
from ._model import (
    EpistemicType,
    Intent,
    IntentState,
    IntentType,
    LifecycleState,
    Priority,
    SourceType,
    check_transition,
    intent_label,
    parse_enum,
)
from ._ops import emit, load_for_write

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = [
    "MAX_TEXT",
    "actor_text",
    "add_edge",
    "clean_text",
    "create_intent",
    "remove_edge",
    "stated_source",
    "to_time",
    "transition",
]

MAX_TEXT = 2000


def clean_text(value: str, where: str) -> str:
    """Whitespace collapsed; empty or over-long text is refused, naming the field.

    Text that is not a string is refused too: coercing it stored ``goals.add(None)`` as the
    goal 'None'."""
    if not isinstance(value, str):
        raise InvalidInput(f"expected a string, got {type(value).__name__}", where=where)
    clean = " ".join(value.split())
    if not clean:
        raise InvalidInput("text is empty", where=where)
    if len(clean) > MAX_TEXT:
        raise InvalidInput(f"text is {len(clean)} characters (at most {MAX_TEXT})", where=where)
    return clean


def to_time(value: datetime | date | str | None, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and not _DAY.fullmatch(value.strip()):
        return format_time(parse_time(value, where=where))
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, date | str):
        # A day, not an instant: due *by* that day, so its last second (UTC), as extraction
        # resolves "by Friday"; its first second would make the intent overdue a day early.
        day = parse_time(str(value).strip(), where=where)
        return format_time(day.replace(hour=23, minute=59, second=59, microsecond=0))
    raise InvalidInput(f"expected a date or an RFC 3339 time, got {type(value).__name__}", where=where)


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def people(value: str | Sequence[str]) -> list[str]:
    """Stakeholders as actors; one name given as a string is one person, not its letters."""
    names = [value] if isinstance(value, str) else list(value)
    return sorted({str(actor_text(s, where=f"stakeholders[{i}]")) for i, s in enumerate(names)})


def actor_text(value: str | None, *, where: str = "owner") -> str | None:
    """``bob`` -> ``user:bob``: owners and stakeholders are stored as actors.

    A name that is no actor is refused naming the field it came in (``owner``,
    ``stakeholders[1]``), not ``actor``, which a caller of ``add`` never passed."""
    if value is None:
        return None
    try:
        return str(Actor.parse(value))
    except InvalidInput as exc:
        message = str(exc).removeprefix(f"{exc.where}: ") if exc.where else str(exc)
        raise InvalidInput(message, where=where) from exc


# What a statement is worth depends on who makes it (RFC-0001 source types, RFC-0003 table):
# a person's own word is USER_STATED; what a tool reports is TOOL_OUTPUT; what an agent (alone
# or acting for a person) or the system states is SYSTEM_INFERRED: the agent's reading of what
# the user wants, not the user's word.
_PERSON_SOURCES = frozenset({SourceType.USER_STATED, SourceType.USER_DEMONSTRATED})


def stated_source(actor: Actor, requested: SourceType | str | None) -> SourceType:
    """The source type an intent stated by ``actor`` is recorded with.

    Without ``requested``: USER_STATED for a person acting for themself, TOOL_OUTPUT for a
    ``tool:`` actor, SYSTEM_INFERRED for anyone else (an agent, ``agent:mcp for user:alice``,
    the system). Recording an agent's goal as USER_STATED gave it the confidence of the user's
    own word (0.80, not 0.60) and showed it in every context block as if the user had said it.
    A non-person asking for a person's source (USER_STATED, USER_DEMONSTRATED) is refused:
    only the person can give their word; an agent's goal becomes theirs when they state it."""
    if requested is None:
        if actor.is_person:
            return SourceType.USER_STATED
        return SourceType.TOOL_OUTPUT if actor.kind is ActorKind.TOOL else SourceType.SYSTEM_INFERRED
    source = parse_enum(SourceType, requested, "source_type")
    if source in _PERSON_SOURCES and not actor.is_person:
        raise InvalidInput(
            f"{actor} cannot record an intent as {source.value}: only a person's own statement is; "
            "leave source_type out (an agent's intent is SYSTEM_INFERRED)",
            where="source_type",
        )
    return source


def create_intent(
    rt: Runtime,
    tx: Transaction,
    intent_id: str,
    text: str,
    *,
    intent_type: IntentType,
    priority: Priority,
    owner: str | None,
    due: datetime | str | None,
    stakeholders: Sequence[str],
    completion_criteria: str | None,
    context_note: str | None,
    evidence: list[dict[str, Any]],
    epistemic: EpistemicType,
    source: SourceType,
    confidence: float,
    origin: str | None,
    salience: float,
    structured_value: dict[str, Any] | None,
    valid_to: datetime | str | None,
) -> None:
    """Append and apply INTENT_CREATE for a new ACTIVE intent (validating target, salience, evidence)."""
    now = rt.clock.now()
    target = to_time(due, "due")
    if target is not None and target <= format_time(now):
        raise InvalidInput(f"the target date {target} has already passed", where="due")
    if not 0.0 <= salience <= 1.0:
        raise InvalidInput(f"salience {salience} is outside [0, 1]", where="salience")
    if not evidence or any(not str(e["id"]).strip() for e in evidence):
        raise InvalidInput("at least one non-empty evidence id is required", where="evidence_ids")
    payload = {
        "intent": {
            "intent_type": intent_type.value,
            "state": IntentState.ACTIVE.value,
            "lifecycle_state": LifecycleState.ACTIVE.value,
            "epistemic_type": epistemic.value,
            "source_type": source.value,
            "origin": origin,
            "asserted_by": str(rt.actor),
            "valid_from": format_time(now),
            "valid_to": to_time(valid_to, "valid_to"),
            "superseded_by": None,
            "confidence": confidence,
            "salience": salience,
            "value": clean_text(text, "text"),
            "structured_value": structured_value,
            "priority": priority.value,
            "owner": actor_text(owner),
            "stakeholders": people(stakeholders),
            "target_completion": target,
            "completion_criteria": completion_criteria,
            "context_note": context_note,
        },
        "evidence": evidence,
    }
    emit(rt, tx, "INTENT_CREATE", intent_id, payload)


def transition(
    rt: Runtime,
    tx: Transaction,
    intent: Intent,
    to: IntentState,
    reason: str | None,
    *,
    actor: str | None = None,
    **extra: Any,
) -> int:
    """Append and apply INTENT_TRANSITION after checking the move (for the intent's type: an
    expired risk may still be completed or cancelled); returns the new version."""
    check_transition(intent.state, to, intent.intent_type, intent.id)
    lifecycle = {
        IntentState.COMPLETED: LifecycleState.ARCHIVED,
        IntentState.CANCELLED: LifecycleState.ARCHIVED,
        IntentState.SUPERSEDED: LifecycleState.SUPERSEDED,
    }.get(to, LifecycleState.ACTIVE)
    if intent.epistemic_type is EpistemicType.DEPRECATED:
        lifecycle = LifecycleState.DEPRECATED
    version = intent.version + 1
    payload = {
        "from_state": intent.state.value,
        "to_state": to.value,
        "lifecycle_state": lifecycle.value,
        "reason": reason,
        "version": version,
        **extra,
    }
    emit(rt, tx, "INTENT_TRANSITION", intent.id, payload, actor=actor)
    return version


def add_edge(
    rt: Runtime, tx: Transaction, dependent_id: str, prerequisite_id: str, expected_version: int | None
) -> None:
    # A light read (versions only): bulk imports add hundreds of thousands of edges.
    rows = tx.query(
        "SELECT id, version, state FROM goals_intents WHERE namespace = ? AND id IN (?, ?)",
        (rt.namespace, dependent_id, prerequisite_id),
    )
    versions = {str(r["id"]): int(r["version"]) for r in rows}
    states = {str(r["id"]): str(r["state"]) for r in rows}
    for intent_id in (dependent_id, prerequisite_id):
        if intent_id not in versions:
            raise NotFound(f"no intent {intent_id!r} in namespace {rt.namespace!r}")
        if IntentState(states[intent_id]).final:
            # a finished intent takes no new edges: an edge would change (and version) what is final
            raise InvalidTransition(
                intent_label(intent_id),
                states[intent_id],
                "linked",
                detail="it is finished; dependencies are for live intents",
            )
    if expected_version is not None and versions[dependent_id] != expected_version:
        load_for_write(rt, tx, dependent_id, expected_version)  # raises the ConflictError
    if tx.one(
        "SELECT 1 AS x FROM goals_edges WHERE dependent = ? AND prerequisite = ?", (dependent_id, prerequisite_id)
    ):
        raise InvalidInput(f"{dependent_id} already depends on {prerequisite_id}", where=dependent_id)
    check_new_edge(tx, dependent_id, prerequisite_id)
    emit(
        rt,
        tx,
        "DEPENDENCY_ADDED",
        dependent_id,
        {
            "dependent": dependent_id,
            "prerequisite": prerequisite_id,
            "dependent_version": versions[dependent_id] + 1,
            "prerequisite_version": versions[prerequisite_id] + 1,
        },
    )


def remove_edge(rt: Runtime, tx: Transaction, dependent_id: str, prerequisite_id: str) -> None:
    """Append and apply DEPENDENCY_REMOVED for an existing edge (both intents' versions move).

    Unlike :func:`add_edge` this takes finished intents too: dropping an edge to a closed
    intent is how a dependent is freed of it."""
    rows = tx.query(
        "SELECT id, version FROM goals_intents WHERE namespace = ? AND id IN (?, ?)",
        (rt.namespace, dependent_id, prerequisite_id),
    )
    versions = {str(r["id"]): int(r["version"]) for r in rows}
    for intent_id in (dependent_id, prerequisite_id):
        if intent_id not in versions:
            raise NotFound(f"no intent {intent_id!r} in namespace {rt.namespace!r}")
    if not tx.one(
        "SELECT 1 AS x FROM goals_edges WHERE dependent = ? AND prerequisite = ?", (dependent_id, prerequisite_id)
    ):
        raise NotFound(f"{dependent_id} does not depend on {prerequisite_id}")
    emit(
        rt,
        tx,
        "DEPENDENCY_REMOVED",
        dependent_id,
        {
            "dependent": dependent_id,
            "prerequisite": prerequisite_id,
            "dependent_version": versions[dependent_id] + 1,
            "prerequisite_version": versions[prerequisite_id] + 1,
        },
    )
