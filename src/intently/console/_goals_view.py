"""The goals view: a board by state and type, the review queue, the dependency graph, risks.

Confirm, dismiss and edit act on INFERRED candidates through ``goals.promote``,
``goals.dismiss`` and ``goals.edit``; each form carries the CSRF token and the version the
person saw, so an edit based on a stale page is refused by the engine instead of winning.
A person adds an intent (``goals.add``: stated, so ASSERTED) and completes an active one
(``goals.complete``, version-checked the same way).

Each board card shows its provenance as the library records it (epistemic type, source,
confidence, who asserted it, the evidence ids), so a person can tell their own word from an
agent's reading. A goal an agent or a tool asserted carries **Endorse** (``goals.endorse``:
the person makes it their own word) when the console's actor is a person: the library refuses
it to anyone else, so it is not offered to them; an endorsed card names who endorsed it and when.
A card on hold names who held it, when and why, and a resumed one who resumed it (an agent with
write access may hold a person's goal, so the board says who did, as ``goal show`` does).
For the same reason an agent's session is not offered **Complete** on a person's goal
(:func:`intently.goals.refused_person`): it is offered **Claim done** with a note instead
(``goals.claim_completion``), which shows on the card as the claim the person decides. Only a
person is offered **Cancel** (which asks first) and, on a goal an agent claims is done,
**Confirm done** / **Reject claim** (``goals.confirm_completion`` / ``goals.reject_completion``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..access import Permission
from ..context import run_engine
from ..core.clock import format_time
from ..goals import person_of, refused_person
from ._graph import layout
from ._paging import PAGE, Offset, page_of, pager
from ._web import CsrfField, act, attempt, checked_page, console_of, page_for, render

__all__ = ["router"]

router = APIRouter()

STATES = ("ACTIVE", "ON_HOLD", "COMPLETED", "EXPIRED", "CANCELLED", "SUPERSEDED")
TYPES = ("GOAL", "COMMITMENT", "OPEN_QUESTION", "DECISION_IN_PROGRESS", "RISK", "FOLLOW_UP")
PRIORITIES = ("LOW", "MEDIUM", "HIGH", "CRITICAL")
_OPEN = {"ACTIVE", "ON_HOLD"}
#: Board items a page shows (``?offset=`` pages on, as the API's lists do): five thousand
#: goals made a 2 MB page that took seconds to render.
BOARD_PAGE = PAGE
RISKS_SHOWN = 50


def _row(intent: Any, runtime: Any = None) -> dict[str, Any]:
    """The fields the templates show, read by name (the engine's ``Intent``). With the session's
    ``runtime``, ``claimable``: the goal is a person's the session's actor may not complete
    itself, so it is offered **Claim done** instead of **Complete**."""
    return {
        "id": str(intent.id),
        "version": int(intent.version),
        "text": str(intent.value),
        "type": str(intent.intent_type),
        "state": str(intent.state),
        "epistemic": str(intent.epistemic_type),
        "priority": str(intent.priority),
        "owner": intent.owner,
        "due": intent.target_completion,
        "depends_on": [str(d) for d in intent.depends_on],
        "blocks": [str(b) for b in intent.blocks],
        "confidence": float(intent.confidence),
        "evidence": list(intent.evidence_ids),
        "source": str(intent.source_type),
        "asserted_by": str(intent.asserted_by),
        "persons": person_of(intent) is not None,
        "endorsable": _endorsable(intent),
        "created": intent.created_at,
        "events": list(getattr(intent, "events", ()) or ()),
        "claim": getattr(intent, "completion_claim", None),
        "endorsement": getattr(intent, "endorsement", None),
        "hold": getattr(intent, "hold", None),
        "claimable": runtime is not None and refused_person(runtime, intent) is not None,
    }


_PERSON_WORD = {"USER_STATED", "USER_DEMONSTRATED"}
_LIVE = {"ACTIVE", "ON_HOLD", "EXPIRED"}


def _endorsable(intent: Any) -> bool:
    """An asserted, live intent that is not yet a person's own word: what ``goals.endorse``
    takes (a candidate is confirmed in the review queue instead; a finished intent keeps the
    record it closed with)."""
    return (
        str(intent.epistemic_type) == "ASSERTED"
        and str(intent.source_type) not in _PERSON_WORD
        and str(intent.state) in _LIVE
    )


@router.get("/ns/{namespace}/goals", response_class=HTMLResponse)
def goals_page(request: Request, namespace: str, type: str = "", offset: Offset = 0) -> HTMLResponse:
    page = page_for(request, namespace)
    listed = attempt(page.view, "goals", "list_intents")
    queue = attempt(page.view, "goals", "review_queue")
    intents = [_row(i, page.view.runtime) for i in listed.value] if listed.ok else []
    board_items = [i for i in intents if i["epistemic"] != "INFERRED"]
    by_id = {i["id"]: i for i in intents}
    for item in intents:
        item["blocked"] = item["state"] in _OPEN and any(
            by_id.get(d, {}).get("state") in _OPEN for d in item["depends_on"]
        )
    chosen = type.upper() if type.upper() in TYPES else ""
    type_counts = {t: sum(1 for i in board_items if i["type"] == t) for t in TYPES}
    matching = [i for i in board_items if not chosen or i["type"] == chosen]
    # Open intents first (the engine's order within: highest priority, newest), so the first
    # page is the work in progress and closed ones follow on later pages.
    matching.sort(key=lambda i: i["state"] not in _OPEN)
    totals = {s: sum(1 for i in matching if i["state"] == s) for s in STATES}
    shown, offset = page_of(matching, offset, BOARD_PAGE)
    columns = [(s, [i for i in shown if i["state"] == s], totals[s]) for s in STATES]
    columns = [(s, items, total) for s, items, total in columns if items or s in _OPEN]
    now = format_time(console_of(request).ix.runtime.clock.now())
    open_risks = sorted(
        (i for i in board_items if i["type"] == "RISK" and i["state"] in _OPEN | {"EXPIRED"}),
        key=lambda i: (i["due"] is None, i["due"] or "", i["id"]),
    )
    risks = open_risks[:RISKS_SHOWN]  # the soonest due; each needs its events read
    for risk in risks:
        full = attempt(page.view, "goals", "get", risk["id"])
        events = _row(full.value)["events"] if full.ok else []
        risk["escalations"] = [e for e in events if e.get("kind") == "EXPIRED_RISK_ALERT"]
    context = {
        "view": "goals",
        "panel": listed.panel,
        "queue_panel": queue.panel,
        "queue": [_row(i) for i in queue.value] if queue.ok else [],
        "columns": columns,
        "types": TYPES,
        "priorities": PRIORITIES,
        "type_counts": type_counts,
        "chosen_type": chosen,
        "graph": layout(board_items),
        "by_id": by_id,
        "risks": risks,
        "risks_total": len(open_risks),
        "board_pager": pager(page.url, "goals", offset, len(shown), len(matching), BOARD_PAGE, type=chosen),
        "now": now,
        "can_write": page.can(Permission.WRITE),
        "is_person": page.session.actor.is_person,
    }
    return render(page, request, "goals.html", context)


def _form_action(
    request: Request,
    namespace: str,
    csrf: str,
    name: str,
    intent_id: str,
    done: str,
    *,
    anchor: str = "#review",
    **fields: Any,
) -> Response:
    """Run one goals operation a form posted, then show the board at ``anchor`` with ``done``
    (or the library's refusal): the library decides who may, the page only relays it."""
    page = checked_page(request, namespace, csrf)
    back = page.url("goals") + anchor
    return act(page, back, done, lambda: run_engine(page.view, "goals", name, intent_id, **fields))


@router.post("/ns/{namespace}/goals/{intent_id}/confirm")
def confirm(
    request: Request,
    namespace: str,
    intent_id: str,
    version: Annotated[int | None, Form()] = None,
    csrf: CsrfField = "",
) -> Response:
    done = "Confirmed: the intent is now asserted."
    return _form_action(request, namespace, csrf, "promote", intent_id, done, expected_version=version)


@router.post("/ns/{namespace}/goals/{intent_id}/dismiss")
def dismiss(
    request: Request,
    namespace: str,
    intent_id: str,
    version: Annotated[int | None, Form()] = None,
    reason: Annotated[str, Form(max_length=500)] = "",
    csrf: CsrfField = "",
) -> Response:
    done = "Dismissed: it will not be proposed again from the same evidence."
    return _form_action(
        request, namespace, csrf, "dismiss", intent_id, done, expected_version=version, reason=reason.strip() or None
    )


@router.post("/ns/{namespace}/goals/{intent_id}/edit")
def edit(
    request: Request,
    namespace: str,
    intent_id: str,
    text: Annotated[str, Form(min_length=1, max_length=10_000)],
    version: Annotated[int | None, Form()] = None,
    csrf: CsrfField = "",
) -> Response:
    return _form_action(request, namespace, csrf, "edit", intent_id, "Saved.", text=text, expected_version=version)


@router.post("/ns/{namespace}/goals")
def create(
    request: Request,
    namespace: str,
    text: Annotated[str, Form(min_length=1, max_length=10_000)],
    type: Annotated[str, Form(max_length=40)] = "GOAL",
    priority: Annotated[str, Form(max_length=20)] = "MEDIUM",
    due: Annotated[str, Form(max_length=40)] = "",
    csrf: CsrfField = "",
) -> Response:
    """A stated intent: the engine validates type, priority and due and names the bad one."""
    page = checked_page(request, namespace, csrf)
    fields = {"type": type, "priority": priority, "due": due.strip() or None}
    done = f"Added: {text.strip()[:200]}"
    typed = {"text": text, "type": type, "priority": priority, "due": due}
    return act(
        page,
        page.url("goals"),
        done,
        lambda: run_engine(page.view, "goals", "add", text.strip(), **fields),
        typed=typed,
    )


@router.post("/ns/{namespace}/goals/{intent_id}/complete")
def complete(
    request: Request,
    namespace: str,
    intent_id: str,
    version: Annotated[int | None, Form()] = None,
    csrf: CsrfField = "",
) -> Response:
    done = "Completed: it leaves the active board and agents are no longer told to pursue it."
    return _form_action(request, namespace, csrf, "complete", intent_id, done, anchor="", expected_version=version)


@router.post("/ns/{namespace}/goals/{intent_id}/claim")
def claim(
    request: Request,
    namespace: str,
    intent_id: str,
    version: Annotated[int | None, Form()] = None,
    note: Annotated[str, Form(max_length=2000)] = "",
    csrf: CsrfField = "",
) -> Response:
    """An agent's session says a person's goal is done: the claim (with its note) shows on the
    card for the person to confirm or reject; the goal stays open until they do."""
    done = "Claimed: the goal stays open until its person confirms or rejects your claim on its card."
    fields = {"expected_version": version, "note": note.strip() or None}
    return _form_action(request, namespace, csrf, "claim_completion", intent_id, done, anchor="", **fields)


@router.post("/ns/{namespace}/goals/{intent_id}/endorse")
def endorse(
    request: Request,
    namespace: str,
    intent_id: str,
    version: Annotated[int | None, Form()] = None,
    csrf: CsrfField = "",
) -> Response:
    """The person makes an agent's goal their own word; an agent's session is refused by the library."""
    done = "Endorsed: it is now your own word (USER_STATED), and the log names you."
    return _form_action(request, namespace, csrf, "endorse", intent_id, done, anchor="", expected_version=version)


@router.post("/ns/{namespace}/goals/{intent_id}/cancel")
def cancel(
    request: Request,
    namespace: str,
    intent_id: str,
    version: Annotated[int | None, Form()] = None,
    reason: Annotated[str, Form(max_length=500)] = "",
    csrf: CsrfField = "",
) -> Response:
    """A person drops a goal (the card asks first); an agent's session is refused by the library."""
    done = "Cancelled: agents are no longer told to pursue it; goals that depended on it are flagged, not cancelled."
    fields = {"expected_version": version, "reason": reason.strip() or None}
    return _form_action(request, namespace, csrf, "cancel", intent_id, done, anchor="", **fields)


@router.post("/ns/{namespace}/goals/{intent_id}/claim/confirm")
def confirm_claim(
    request: Request,
    namespace: str,
    intent_id: str,
    version: Annotated[int | None, Form()] = None,
    csrf: CsrfField = "",
) -> Response:
    """The person confirms an agent's completion claim: the goal completes, crediting it."""
    done = "Confirmed: the goal is completed, and the log credits the agent's claim."
    return _form_action(
        request, namespace, csrf, "confirm_completion", intent_id, done, anchor="", expected_version=version
    )


@router.post("/ns/{namespace}/goals/{intent_id}/claim/reject")
def reject_claim(
    request: Request,
    namespace: str,
    intent_id: str,
    version: Annotated[int | None, Form()] = None,
    reason: Annotated[str, Form(max_length=500)] = "",
    csrf: CsrfField = "",
) -> Response:
    """The person rejects an agent's completion claim: the goal stays as it was."""
    done = "Rejected: the claim is closed and the goal stays open."
    fields = {"expected_version": version, "reason": reason.strip() or None}
    return _form_action(request, namespace, csrf, "reject_completion", intent_id, done, anchor="", **fields)
