"""Routes over the engines. Each answers 501 (problem+json) until its engine is built.

Route -> library call (the adapter table; it follows the engines' public APIs):

- goals:        GET list -> ``goals.list_intents(state, type, owner, priority)``; POST -> ``goals.add(text, ...)``;
                GET {id} -> ``goals.get(id)``; PATCH {id} -> ``goals.edit(id, ...)``;
                POST {id}/complete -> ``goals.complete(id, reason, expected_version, summary)``;
                POST {id}/claim -> ``goals.claim_completion(id, note, evidence_ids, expected_version)`` (an agent's);
                POST {id}/claim/confirm -> ``goals.confirm_completion(id, ...)``;
                POST {id}/claim/reject -> ``goals.reject_completion(id, reason, expected_version)`` (a person's);
                POST {id}/cancel -> ``goals.cancel(id, reason, expected_version)``;
                POST {id}/archive -> ``goals.archive(id, reason, expected_version)`` (an EXPIRED goal out of view);
                POST {id}/endorse -> ``goals.endorse(id, expected_version)`` (a person's: an agent's goal made theirs)
- review queue: GET -> ``goals.review_queue()``; POST observe -> ``extraction.observe(turn)``;
                PATCH {id} -> ``goals.edit(id, ...)`` (candidates only); POST {id}/confirm -> ``goals.promote(id)``;
                POST {id}/dismiss -> ``goals.dismiss(id)``
- triggers:     GET -> ``triggers.list()``; POST -> ``triggers.add(reminder, when=..., ...)`` (manage-reminders);
                DELETE {id} -> ``triggers.cancel(id)``; POST test -> ``triggers.test(text, ...)``
- requirements: GET -> ``requirements.list(status, domain)``;
                POST preview -> ``requirements.select(task, paths, budget, explain=True, record=False)``
- gate:         POST check -> the shared bridge (:func:`intently.hooks.gate_check`);
                POST approve -> ``gate.approve(decision_id)``
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from ..access import Permission
from ..goals import CLEAR
from ..hooks import Observation, gate_check
from ._deps import NamespaceView, run_engine
from ._models import (
    ACTOR_PATTERN,
    GateApprove,
    GateCheck,
    GoalCancel,
    GoalClaim,
    GoalComplete,
    GoalCreate,
    GoalState,
    GoalUpdate,
    IntentType,
    Priority,
    RequirementPreview,
    RequirementStatus,
    ReviewConfirm,
    TriggerCreate,
    TriggerTest,
    TurnObserve,
)
from ._problems import PROBLEM_RESPONSES

__all__ = ["router"]

router = APIRouter(prefix="/v1/namespaces/{namespace}", responses=PROBLEM_RESPONSES)

Limit = Annotated[int, Query(ge=1, le=500)]
Offset = Annotated[int, Query(ge=0, le=1_000_000)]


def _page(data: Any, offset: int, limit: int) -> dict[str, Any]:
    items = data if isinstance(data, list) else data.get("items", []) if isinstance(data, dict) else []
    page = items[offset : offset + limit]
    return {"items": page, "next_offset": offset + limit if offset + limit < len(items) else None}


# -- goals -------------------------------------------------------------------------------


def _patch(body: GoalUpdate) -> dict[str, Any]:
    """A PATCH as JSON merge patch reads it: a field left out stays, an optional field sent as
    null is removed (owner, due, context note, completion criteria); the library says the latter
    with ``CLEAR``."""
    fields = body.model_dump()
    for name in ("owner", "due", "context_note", "completion_criteria"):
        if name in body.model_fields_set and fields[name] is None:
            fields[name] = CLEAR
    return fields


@router.get("/goals", tags=["goals"])
def goals_list(
    view: NamespaceView,
    state: GoalState | None = Query(None, description="Default: every state."),
    type: IntentType | None = None,
    owner: str | None = Query(None, max_length=140, pattern=ACTOR_PATTERN),
    priority: Priority | None = None,
    offset: Offset = 0,
    limit: Limit = 100,
) -> dict[str, Any]:
    found = run_engine(view, "goals", "list_intents", state=state, type=type, owner=owner, priority=priority)
    return _page(found, offset, limit)


@router.post("/goals", status_code=201, tags=["goals"])
def goals_add(view: NamespaceView, body: GoalCreate) -> Any:
    view.require(Permission.WRITE)
    fields = body.model_dump(exclude={"text"})
    return run_engine(view, "goals", "add", body.text, **fields)


@router.patch("/goals/{goal_id}", tags=["goals"])
def goals_update(view: NamespaceView, goal_id: str, body: GoalUpdate) -> Any:
    view.require(Permission.WRITE)
    return run_engine(view, "goals", "edit", goal_id, **_patch(body))


@router.get("/goals/{goal_id}", tags=["goals"])
def goals_get(view: NamespaceView, goal_id: str) -> Any:
    """One goal with every field and its events; its ``version`` is what a write's
    ``expected_version`` compares against."""
    return run_engine(view, "goals", "get", goal_id)


@router.post("/goals/{goal_id}/complete", tags=["goals"])
def goals_complete(view: NamespaceView, goal_id: str, body: GoalComplete | None = None) -> Any:
    """Complete (archived); with ``expected_version``, 409 if the goal changed since the caller
    read it, so a goal reworded meanwhile is not closed unseen. An agent's completion of a
    person's goal is kept as a completion claim: 403 ``CompletionClaimed`` ("claimed, awaits
    <person>"), whose problem body adds ``awaits``, ``claim`` and ``intent`` (still ACTIVE)."""
    view.require(Permission.WRITE)
    fields = body.model_dump() if body else {}
    return run_engine(view, "goals", "complete", goal_id, **fields)


@router.post("/goals/{goal_id}/claim", tags=["goals"])
def goals_claim(view: NamespaceView, goal_id: str, body: GoalClaim | None = None) -> Any:
    """An agent says a person's goal is done: the goal (still ACTIVE) with its
    ``completion_claim``, awaiting the person. 409 for one the caller may complete itself."""
    view.require(Permission.WRITE)
    fields = body.model_dump() if body else {}
    return run_engine(view, "goals", "claim_completion", goal_id, **fields)


@router.post("/goals/{goal_id}/claim/confirm", tags=["goals"])
def goals_claim_confirm(view: NamespaceView, goal_id: str, body: GoalComplete | None = None) -> Any:
    """The person confirms the open completion claim: the goal completes, crediting it. 403 to
    an agent or a tool; 409 when no claim is open."""
    view.require(Permission.WRITE)
    fields = body.model_dump(exclude={"evidence_ids"}) if body else {}
    return run_engine(view, "goals", "confirm_completion", goal_id, **fields)


@router.post("/goals/{goal_id}/claim/reject", tags=["goals"])
def goals_claim_reject(view: NamespaceView, goal_id: str, body: GoalCancel | None = None) -> Any:
    """The person rejects the open completion claim: it is closed, the goal stays as it was."""
    view.require(Permission.WRITE)
    fields = body.model_dump() if body else {}
    return run_engine(view, "goals", "reject_completion", goal_id, **fields)


@router.post("/goals/{goal_id}/cancel", tags=["goals"])
def goals_cancel(view: NamespaceView, goal_id: str, body: GoalCancel | None = None) -> Any:
    view.require(Permission.WRITE)
    fields = body.model_dump() if body else {}
    return run_engine(view, "goals", "cancel", goal_id, **fields)


@router.post("/goals/{goal_id}/archive", tags=["goals"])
def goals_archive(view: NamespaceView, goal_id: str, body: GoalCancel | None = None) -> Any:
    """Put an EXPIRED goal out of the open list (lifecycle ARCHIVED, still EXPIRED): RFC-0013
    draws no cancel from EXPIRED. 409 for any other state or for a risk; the goal's owner only."""
    view.require(Permission.WRITE)
    fields = body.model_dump() if body else {}
    return run_engine(view, "goals", "archive", goal_id, **fields)


@router.post("/goals/{goal_id}/endorse", tags=["goals"])
def goals_endorse(view: NamespaceView, goal_id: str, body: ReviewConfirm | None = None) -> Any:
    """The person the token stands for makes a goal an agent added their own word (source
    USER_STATED, confidence 0.80; one EPISTEMIC_TRANSITION naming them). 403 for an agent's
    token, 409 for a goal already the user's word or finished; ``expected_version`` as for confirm."""
    view.require(Permission.WRITE)
    fields = body.model_dump() if body else {}
    return run_engine(view, "goals", "endorse", goal_id, **fields)


# -- review queue ------------------------------------------------------------------------


@router.post("/review/observe", status_code=201, tags=["review"])
def review_observe(view: NamespaceView, body: TurnObserve) -> Any:
    """Feed one turn: it is recorded as evidence and what it contains waits in the queue."""
    view.require(Permission.WRITE)
    return run_engine(view, "extraction", "observe", body.model_dump(exclude_none=True))  # no time: said now


@router.patch("/review/{candidate_id}", tags=["review"])
def review_edit(view: NamespaceView, candidate_id: str, body: GoalUpdate) -> Any:
    """Correct a candidate before confirming it (text, type, owner, due...). An intent that
    was already confirmed or dismissed is not in the queue: 409 (edit a goal under /goals)."""
    view.require(Permission.WRITE)
    return run_engine(view, "goals", "edit", candidate_id, **_patch(body), awaiting_review=True)


@router.get("/review", tags=["review"])
def review_list(view: NamespaceView, offset: Offset = 0, limit: Limit = 100) -> dict[str, Any]:
    return _page(run_engine(view, "goals", "review_queue"), offset, limit)


@router.post("/review/{candidate_id}/confirm", tags=["review"])
def review_confirm(view: NamespaceView, candidate_id: str, body: ReviewConfirm | None = None) -> Any:
    """Confirm a candidate; with ``expected_version``, 409 if it changed since the reviewer read it."""
    view.require(Permission.WRITE)
    fields = body.model_dump() if body else {}
    return run_engine(view, "goals", "promote", candidate_id, **fields)


@router.post("/review/{candidate_id}/dismiss", tags=["review"])
def review_dismiss(view: NamespaceView, candidate_id: str, body: GoalCancel | None = None) -> Any:
    """Dismiss a candidate: ``reason`` is recorded in the log, as ``intently review dismiss
    --reason`` and the MCP tool record it; ``expected_version`` as for confirm."""
    view.require(Permission.WRITE)
    fields = body.model_dump() if body else {}
    return run_engine(view, "goals", "dismiss", candidate_id, **fields)


# -- standing intents --------------------------------------------------------------------


@router.get("/triggers", tags=["triggers"])
def triggers_list(view: NamespaceView, offset: Offset = 0, limit: Limit = 100) -> dict[str, Any]:
    return _page(run_engine(view, "triggers", "list"), offset, limit)


@router.post("/triggers", status_code=201, tags=["triggers"])
def triggers_add(view: NamespaceView, body: TriggerCreate) -> Any:
    view.require(Permission.MANAGE_REMINDERS)
    return run_engine(view, "triggers", "add", body.reminder, **body.model_dump(exclude={"reminder"}))


@router.delete("/triggers/{trigger_id}", tags=["triggers"])
def triggers_cancel(view: NamespaceView, trigger_id: str) -> Any:
    view.require(Permission.MANAGE_REMINDERS)
    return run_engine(view, "triggers", "cancel", trigger_id)


@router.post("/triggers/test", tags=["triggers"])
def triggers_test(view: NamespaceView, body: TriggerTest) -> Any:
    """Which entry would fire on this text, and why, without firing."""
    return run_engine(
        view, "triggers", "test", body.text, channel=body.channel, conversation=body.conversation, sender=body.sender
    )


# -- requirements ------------------------------------------------------------------------


@router.get("/requirements", tags=["requirements"])
def requirements_list(
    view: NamespaceView,
    status: RequirementStatus | None = Query(None, description="Default: every status."),
    domain: str | None = Query(None, max_length=100),
    offset: Offset = 0,
    limit: Limit = 100,
) -> dict[str, Any]:
    return _page(run_engine(view, "requirements", "list", status=status, domain=domain), offset, limit)


@router.post("/requirements/preview", tags=["requirements"])
def requirements_preview(view: NamespaceView, body: RequirementPreview) -> Any:
    return run_engine(
        view, "requirements", "select", body.task, paths=body.paths, budget=body.budget, explain=True, record=False
    )


# -- gate --------------------------------------------------------------------------------


@router.post("/gate/check", tags=["gate"])
def gate_check_route(view: NamespaceView, body: GateCheck) -> dict[str, Any]:
    """The gate's decision on one proposed call. Without a gate the answer is ``block`` (fail closed)."""
    answer = gate_check(
        view,
        user_requests=[body.user_request],
        tool=body.tool,
        args=body.args,
        observations=[Observation(o.tool, o.output) for o in body.observed],
        tools=None if body.tools is None else [t.model_dump() for t in body.tools],
        session_id=body.session_id,
    )
    view.checkpoint()
    return answer.to_json()


@router.post("/gate/approve", tags=["gate"])
def gate_approve(view: NamespaceView, body: GateApprove) -> Any:
    view.require(Permission.WRITE)
    return run_engine(view, "gate", "approve", body.decision_id)
