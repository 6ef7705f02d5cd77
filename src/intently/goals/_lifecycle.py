"""Lifecycle moves with side effects (RFC-0013 sections 4, 6 and 9): completion with its
summary, cancellation that notifies instead of cascading, reopening, archiving an expired
intent, superseding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.clock import format_time
from ..core.errors import InvalidInput, InvalidTransition, PermissionDenied
from ..core.ids import new_id
from ..store import Transaction
from ._claims import credit, evidence_list, guard_decider, record_claim
from ._custody import guard_persons_goal, refused_person
from ._model import EpistemicType, Intent, IntentState, LifecycleState, initial_confidence, intent_label
from ._ops import emit, load_for_write
from ._review import guard_candidate
from ._writes import add_edge, create_intent, remove_edge, stated_source, transition

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = ["archive", "cancel", "complete", "move", "reopen", "resume", "supersede"]


def complete(
    rt: Runtime,
    tx: Transaction,
    intent_id: str,
    summary: bool,
    reason: str | None,
    expected_version: int | None,
    *,
    evidence_ids: Sequence[str] | None = None,
    confirming: bool = False,
) -> str | None:
    """-> COMPLETED (archived), and a SUMMARY at half the intent's current salience. From
    ACTIVE, or from EXPIRED for a risk (RFC-0013 section 8: resolving it ends its surfacing).

    An agent's completion of a person's goal is kept as a completion claim instead (nothing
    else is written); the person it awaits is returned, for the caller to say so. A person's
    completion of a goal with an open claim confirms it: the transition credits the claim.
    ``confirming`` requires one (``goals.confirm_completion``)."""
    intent = load_for_write(rt, tx, intent_id, expected_version)
    guard_candidate(rt, intent, "complete")
    if refused_person(rt, intent) is not None:
        if confirming:  # an agent confirming: refused, naming why
            guard_decider(rt, intent, "confirm")
        return record_claim(rt, tx, intent, reason, evidence_ids)
    claim = guard_decider(rt, intent, "confirm") if confirming else intent.completion_claim
    extra: dict[str, Any] = {"claim": credit(claim)} if claim is not None and rt.actor.is_person else {}
    if evidence_ids:  # what shows it is done, recorded with the completion
        extra["evidence_ids"] = evidence_list(evidence_ids)
    transition(rt, tx, intent, IntentState.COMPLETED, reason, **extra)
    if not summary:
        return None
    now = rt.clock.now()
    summary_id = new_id()
    emit(
        rt,
        tx,
        "SUMMARY_CREATED",
        summary_id,
        {
            "summary_id": summary_id,
            "intent_id": intent.id,
            "intent_type": intent.intent_type.value,
            "text": f"{intent.intent_type.label} '{intent.value}' was completed on {now.date().isoformat()}.",
            "salience": round(intent.current_salience * 0.5, 6),
            "completed_at": format_time(now),
        },
    )
    return None


def cancel(rt: Runtime, tx: Transaction, intent_id: str, reason: str | None, expected_version: int | None) -> None:
    """-> CANCELLED (archived). Never cascades: each dependent that is not finished gets a
    DEPENDENCY_CANCELLED event and stays as it was until its owner decides.

    "Not finished" includes EXPIRED (RFC-0013 section 6: the event MUST be generated): an
    expired dependent can be reopened, and must not come back silently depending on a
    cancelled prerequisite. Only COMPLETED, CANCELLED and SUPERSEDED dependents, which nothing
    revives, are skipped."""
    intent = load_for_write(rt, tx, intent_id, expected_version)
    guard_candidate(rt, intent, "cancel")
    guard_persons_goal(rt, intent, "cancel", f"intently goal cancel {intent.id}")
    if intent.state is IntentState.EXPIRED and not intent.is_risk:
        raise InvalidTransition(
            intent_label(intent.id),
            intent.state.value,
            IntentState.CANCELLED.value,
            detail="RFC-0013 draws no move from EXPIRED but reopening; reopen it with a new target "
            "(intently goal reopen ID --due DATE) or archive it to clear it from view (intently goal archive ID)",
        )
    transition(rt, tx, intent, IntentState.CANCELLED, reason)
    for dependent_id in intent.blocks:
        dependent = load_for_write(rt, tx, dependent_id, None)
        if dependent.state.finished:
            continue
        emit(
            rt,
            tx,
            "DEPENDENCY_CANCELLED",
            dependent_id,
            {
                "dependent": dependent_id,
                "cancelled": intent.id,
                "cancelled_text": intent.value,
                "dependent_state": dependent.state.value,
                "reason": reason,
                "decision_needed_by": dependent.owner or str(rt.actor),
            },
        )


def move(
    rt: Runtime,
    tx: Transaction,
    intent_id: str,
    to: IntentState,
    reason: str | None,
    expected_version: int | None,
    *,
    only_from: IntentState | None = None,
) -> None:
    """A plain move (hold); ``only_from`` narrows where it may start."""
    intent = load_for_write(rt, tx, intent_id, expected_version)
    guard_candidate(rt, intent, "hold" if to is IntentState.ON_HOLD else "move")
    if only_from is not None and intent.state is not only_from:
        raise InvalidTransition(
            intent_label(intent.id), intent.state.value, to.value, detail=f"this applies to {only_from.value} intents"
        )
    transition(rt, tx, intent, to, reason, by=str(rt.actor))


def resume(
    rt: Runtime, tx: Transaction, intent_id: str, target: str | None, reason: str | None, expected_version: int | None
) -> None:
    """ON_HOLD -> ACTIVE; with ``target``, a new target date (recorded in the transition, as
    reopen records it). Without one, an intent whose target has passed is refused."""
    intent = load_for_write(rt, tx, intent_id, expected_version)
    guard_candidate(rt, intent, "resume")
    if intent.state is not IntentState.ON_HOLD:
        raise InvalidTransition(
            intent_label(intent.id), intent.state.value, "ACTIVE", detail="this applies to ON_HOLD intents"
        )
    if target is None:
        passed = intent.target_completion
        if passed is not None and passed <= format_time(rt.clock.now()):
            raise InvalidInput(
                f"intent {intent.id}: its target date {passed} passed while it was on hold; "
                "resume it with a new target date (or cancel it)",
                where="due",
            )
        transition(rt, tx, intent, IntentState.ACTIVE, reason, by=str(rt.actor))
    else:
        transition(rt, tx, intent, IntentState.ACTIVE, reason, target_completion=target, by=str(rt.actor))


def reopen(
    rt: Runtime, tx: Transaction, intent_id: str, target: str, reason: str | None, expected_version: int | None
) -> None:
    """EXPIRED -> ACTIVE with a new target; only the intent's owner or the home's owner."""
    if target <= format_time(rt.clock.now()):
        raise InvalidInput("reopening needs a new target date in the future", where="due")
    intent = load_for_write(rt, tx, intent_id, expected_version)
    if intent.state is not IntentState.EXPIRED:
        raise InvalidTransition(
            intent_label(intent.id), intent.state.value, "ACTIVE", detail="only an EXPIRED intent can be reopened"
        )
    if str(rt.actor) != intent.owner and not rt.access.is_owner(rt.actor):
        raise PermissionDenied(f"only the intent's owner ({intent.owner or 'the home owner'}) may reopen it")
    transition(rt, tx, intent, IntentState.ACTIVE, reason, target_completion=target)


def archive(rt: Runtime, tx: Transaction, intent_id: str, reason: str | None, expected_version: int | None) -> None:
    """An EXPIRED intent put out of view: its core lifecycle state becomes ARCHIVED (one
    INTENT_ARCHIVED operation), its intent state stays EXPIRED.

    RFC-0013 section 4 draws no move out of EXPIRED (reopening is this project's documented
    exception), so an expired goal nobody means to pursue could not be cancelled and stayed on
    every open list for good. Cancelling it would record a decision that was never made in
    time and a move the RFC does not draw; archiving is the core model's own way to retire an
    object (the same ARCHIVED that COMPLETED and CANCELLED intents get), and the record stays
    true: it expired unresolved. Reopening still brings it back (ACTIVE, with a new target).
    An expired risk is not archived: section 8 keeps it surfaced until it is completed,
    cancelled or downgraded, which are its exits. Only the intent's owner or the home's owner
    decides, as for reopening."""
    intent = load_for_write(rt, tx, intent_id, expected_version)
    if intent.state is not IntentState.EXPIRED:
        raise InvalidTransition(
            intent_label(intent.id),
            intent.state.value,
            "archived",
            detail="only an EXPIRED intent is archived; complete or cancel a live one (which archives it)",
        )
    if intent.is_risk:
        raise InvalidTransition(
            intent_label(intent.id),
            intent.state.value,
            "archived",
            detail="an expired risk stays surfaced until it is completed, cancelled or downgraded (RFC-0013 section 8)",
        )
    if intent.lifecycle_state is LifecycleState.ARCHIVED:
        raise InvalidTransition(intent_label(intent.id), "ARCHIVED", "archived", detail="it is already archived")
    if str(rt.actor) != intent.owner and not rt.access.is_owner(rt.actor):
        whose = intent.owner or "the home owner"
        if rt.actor.on_behalf_of is not None:
            # The MCP server's agent (``agent:mcp for user:alice``): acting for the owner is not
            # being the owner. Retiring a goal its owner let lapse is their decision (RFC-0013
            # section 6: "the user or owning agent"), not one a steered agent takes for them.
            raise PermissionDenied(
                f"{rt.actor} cannot archive {intent_label(intent.id)}: retiring an expired goal is its "
                f"owner's decision ({whose}), not an agent's acting for them; the owner runs "
                f"`intently goal archive {intent.id}` (or reopens it with a new target)"
            )
        raise PermissionDenied(f"only the intent's owner ({whose}) may archive it")
    emit(
        rt,
        tx,
        "INTENT_ARCHIVED",
        intent.id,
        {
            "state": intent.state.value,
            "lifecycle_from": intent.lifecycle_state.value,
            "lifecycle_state": LifecycleState.ARCHIVED.value,
            "reason": reason,
            "version": intent.version + 1,
        },
    )


def supersede(
    rt: Runtime,
    tx: Transaction,
    intent_id: str,
    by: str | None,
    text: str | None,
    reason: str | None,
    expected_version: int | None,
) -> str:
    """-> SUPERSEDED, pointing at ``by`` or at a new intent made from ``text`` (same type,
    priority, owner, people, criteria and a still-future target), which takes its place in the
    dependency graph (:func:`_carry_edges`). Returns the replacement's id."""
    if (by is None) == (text is None):
        raise InvalidInput("give exactly one of by= (an intent id) or text= (a new intent)", where="supersede")
    intent = load_for_write(rt, tx, intent_id, expected_version)
    guard_persons_goal(rt, intent, "supersede", f"intently goal supersede {intent.id} --text TEXT")
    if by is None:
        by = new_id()
        now = format_time(rt.clock.now())
        create_intent(
            rt,
            tx,
            by,
            str(text),
            intent_type=intent.intent_type,
            priority=intent.priority,
            owner=intent.owner,
            due=intent.target_completion if intent.target_completion and intent.target_completion > now else None,
            stakeholders=intent.stakeholders,
            completion_criteria=intent.completion_criteria,
            context_note=intent.context_note,
            evidence=[{"id": f"stated:{by}"}],
            epistemic=EpistemicType.ASSERTED,
            source=stated_source(rt.actor, None),
            confidence=initial_confidence(EpistemicType.ASSERTED, stated_source(rt.actor, None)),
            origin=None,
            salience=intent.salience,
            structured_value=intent.structured_value,
            valid_to=None,
        )
    elif by == intent_id:
        raise InvalidInput("an intent cannot supersede itself", where=by)
    else:
        replacement = load_for_write(rt, tx, by, None)
        if replacement.state.final:
            # a finished intent replaces nothing: two intents superseding each other would leave
            # no live replacement, and a completed one carries no work forward
            raise InvalidTransition(
                f"replacement {by}", replacement.state.value, "superseding", detail="it is no longer live"
            )
    transition(rt, tx, intent, IntentState.SUPERSEDED, reason, superseded_by=by)
    _carry_edges(rt, tx, intent, by)
    return by


def _carry_edges(rt: Runtime, tx: Transaction, old: Intent, replacement: str) -> None:
    """The replacement takes the superseded intent's place in the dependency graph.

    Each live dependent (ACTIVE or ON_HOLD) now depends on the replacement, and the
    replacement on each live prerequisite; those edges leave the superseded intent (one
    DEPENDENCY_REMOVED and one DEPENDENCY_ADDED each, in this transaction). Left where they
    were, a dependent kept waiting on an intent that will never be done, and the replacement
    lost the prerequisites the work still has. Every carried edge is checked like any other:
    one that would close a cycle or break a limit refuses the whole supersede, naming it.
    Edges to finished or EXPIRED intents stay on the superseded one, as its history."""
    for dependent_id in old.blocks:
        if _final(tx, dependent_id):
            continue
        remove_edge(rt, tx, dependent_id, old.id)
        if dependent_id != replacement and not _has_edge(tx, dependent_id, replacement):
            add_edge(rt, tx, dependent_id, replacement, None)
    for prerequisite_id in old.depends_on:
        if _final(tx, prerequisite_id):
            continue
        remove_edge(rt, tx, old.id, prerequisite_id)
        if prerequisite_id != replacement and not _has_edge(tx, replacement, prerequisite_id):
            add_edge(rt, tx, replacement, prerequisite_id, None)


def _final(tx: Transaction, intent_id: str) -> bool:
    state = tx.scalar("SELECT state FROM goals_intents WHERE id = ?", (intent_id,))
    return state is None or IntentState(str(state)).final


def _has_edge(tx: Transaction, dependent_id: str, prerequisite_id: str) -> bool:
    return (
        tx.one(
            "SELECT 1 AS x FROM goals_edges WHERE dependent = ? AND prerequisite = ?", (dependent_id, prerequisite_id)
        )
        is not None
    )
