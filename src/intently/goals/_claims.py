"""Completion claims: an agent says a person's goal is done; the person decides.

Ending a person's goal is their decision (:mod:`._custody`), but an agent that did the work
must be able to say so without the word getting lost in a refusal. So an agent's ``complete``
of a person's goal is kept as a *completion claim* on the goal: one COMPLETION_CLAIMED
operation (the agent is its actor; its note and evidence ids are in the payload), shown with
the goal everywhere it is read (``completion_claim``). The goal stays ACTIVE, in every context
block, until the person decides:

- **confirm** (``goals.confirm_completion``, or simply completing it): the goal completes and
  its INTENT_TRANSITION credits the claim (``claim``: its id, the agent, its note);
- **reject** (``goals.reject_completion``): one COMPLETION_CLAIM_REJECTED, the claim is closed
  and the goal stays as it was.

The agent's call still does not complete the goal, so it still does not succeed:
:class:`CompletionClaimed` (a :class:`PermissionDenied`: HTTP 403, CLI exit 4, an MCP tool
error, as before) says "claimed, awaits <person>" and carries the claim and the goal as it now
stands. An agent that means to claim calls ``goals.claim_completion``, which returns the goal.
Only a person confirms or rejects: a claim an agent could confirm would be no check at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import InvalidInput, InvalidTransition, PermissionDenied
from ..store import Transaction
from ._custody import refused_person
from ._model import Intent, IntentState, check_transition, intent_label, open_claim
from ._ops import emit

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = ["CompletionClaimed", "credit", "evidence_list", "guard_decider", "record_claim", "reject_claim"]

MAX_NOTE = 2000


class CompletionClaimed(PermissionDenied):
    """The goal did not complete: it is a person's, so the agent's completion was kept as a
    claim that awaits them (``awaits``). ``claim`` is the claim as shown on the goal and
    ``intent`` the goal as it now stands (still ACTIVE)."""

    def __init__(self, message: str, *, awaits: str, claim: dict[str, Any], intent: Intent) -> None:
        super().__init__(message)
        self.awaits = awaits
        self.claim = claim
        self.intent = intent


def _note(note: str | None) -> str | None:
    if note is None:
        return None
    if not isinstance(note, str):
        raise InvalidInput(f"expected a string, got {type(note).__name__}", where="note")
    clean = " ".join(note.split())
    if len(clean) > MAX_NOTE:
        raise InvalidInput(f"the note is {len(clean)} characters (at most {MAX_NOTE})", where="note")
    return clean or None


def evidence_list(evidence_ids: Sequence[str] | None) -> list[str]:
    """Evidence ids as given (one string is one id), each non-empty, or refused naming it."""
    if evidence_ids is None:
        return []
    if isinstance(evidence_ids, str):
        evidence_ids = [evidence_ids]
    out: list[str] = []
    for i, e in enumerate(evidence_ids):
        if not isinstance(e, str) or not e.strip():
            raise InvalidInput("an evidence id is a non-empty string", where=f"evidence_ids[{i}]")
        out.append(e.strip())
    return out


def record_claim(
    rt: Runtime, tx: Transaction, intent: Intent, note: str | None, evidence_ids: Sequence[str] | None
) -> str:
    """Append COMPLETION_CLAIMED for ``intent`` (which ``rt.actor`` may not complete itself);
    returns the person it awaits. The move must be one a completion could make (a goal on hold
    or finished cannot be claimed done): the claim is a completion waiting for a yes."""
    person = refused_person(rt, intent)
    if person is None:
        raise InvalidTransition(
            intent_label(intent.id),
            intent.state.value,
            "claimed",
            detail=f"{rt.actor} may complete it itself (intently goal done {intent.id}); a claim is for a person's goal",
        )
    check_transition(intent.state, IntentState.COMPLETED, intent.intent_type, intent.id)
    payload = {
        "claimed_by": str(rt.actor),
        "awaits": person,
        "note": _note(note),
        "evidence_ids": evidence_list(evidence_ids),
        "version": intent.version + 1,
    }
    emit(rt, tx, "COMPLETION_CLAIMED", intent.id, payload)
    return person


def guard_decider(rt: Runtime, intent: Intent, act: str) -> dict[str, Any]:
    """The open claim on ``intent``, when ``rt.actor`` (a person) may ``act`` on it (confirm,
    reject); refused to an agent or a tool, and when no claim is open."""
    if not rt.actor.is_person:
        raise PermissionDenied(
            f"{rt.actor} cannot {act} the completion claim on {intent_label(intent.id)}: only a person decides "
            "whether a person's goal is done; a claim an agent could confirm would check nothing"
        )
    claim = open_claim(intent.state, intent.events)
    if claim is None:
        raise InvalidTransition(
            intent_label(intent.id), intent.state.value, f"claim {act}ed", detail="no completion claim is open on it"
        )
    return claim


def credit(claim: dict[str, Any]) -> dict[str, Any]:
    """What a completion records of the claim it confirms (its id, the agent, its note)."""
    return {"id": claim["id"], "claimed_by": claim["claimed_by"], "note": claim["note"]}


def reject_claim(rt: Runtime, tx: Transaction, intent: Intent, reason: str | None) -> None:
    """Close the open claim without completing the goal (one COMPLETION_CLAIM_REJECTED)."""
    claim = guard_decider(rt, intent, "reject")
    payload = {
        "claim": credit(claim),
        "rejected_by": str(rt.actor),
        "reason": _note(reason),
        "version": intent.version + 1,
    }
    emit(rt, tx, "COMPLETION_CLAIM_REJECTED", intent.id, payload)
