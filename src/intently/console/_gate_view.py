"""The gate view: runs, every decision with its rule ids and reason, pending confirmations,
and the postcondition results the run recorded (``run["postconditions"]``, shown as is).

An approval is bound to the exact action: the form carries the decision id *and* the
action hash the person saw, and the console refuses it unless the stored decision still
has that hash and still waits, before ``gate.approve`` (single-use, logged) is called.
Deny is bound the same way and calls ``gate.deny``, which settles the decision for good:
the engine refuses any later approval of it.
"""

from __future__ import annotations

import hmac
from typing import Annotated, Any

from fastapi import APIRouter, Form
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..access import Permission
from ..core.errors import InvalidInput, InvalidTransition, NotFound
from ._paging import PAGE, Offset, pager
from ._web import CsrfField, act, attempt, checked_page, method, page_for, render

__all__ = ["router"]

router = APIRouter()

RUNS = 30
_WAITING = ("confirm", "review")
#: ``gate._journal.DENIED``, spelled out so the page does not import an engine that may be missing.
DENIED = "denied"


def _pending(run: dict[str, Any]) -> list[dict[str, Any]]:
    settled = _settled(run)
    return [d for d in run.get("decisions", []) if d.get("level") in _WAITING and str(d.get("id")) not in settled]


def _settled(run: dict[str, Any]) -> dict[str, dict[str, str]]:
    """How each settled decision was settled: ``approved`` or ``denied``, by whom."""
    return {
        str(a["decision_id"]): {
            "how": "denied" if a.get("used_by") == DENIED else "approved",
            "by": str(a.get("approved_by", "")),
        }
        for a in run.get("approvals", [])
    }


@router.get("/ns/{namespace}/gate", response_class=HTMLResponse)
def gate_page(request: Request, namespace: str, run: str = "", offset: Offset = 0, pending: Offset = 0) -> HTMLResponse:
    """The runs, ``offset`` into their list, and the calls waiting for a person, ``pending``
    into theirs: both page, and each reads only the rows its page shows."""
    page = page_for(request, namespace)
    # One more than the page shows, to know whether a next page exists (the engine counts no
    # total). Asked from ``offset``: reading every newer run to slice a page made an old page
    # read the whole list.
    listed = attempt(page.view, "gate", "runs", RUNS + 1, offset)
    fetched = list(listed.value) if listed.ok else []
    runs = fetched[:RUNS]
    more = len(fetched) > RUNS
    # Every waiting decision, not only the listed runs', a page at a time: the list was cut at
    # 500 with no way to the rest, and the badge counted only those 500.
    counted = attempt(page.view, "gate", "waiting_count")
    waiting_total = int(counted.value) if counted.ok else 0
    at = min(pending, max(0, waiting_total - 1) // PAGE * PAGE)  # past the end: the last page
    waiting = attempt(page.view, "gate", "waiting", PAGE, at)
    calls: list[dict[str, Any]] = list(waiting.value) if waiting.ok else []
    kept = {"run": run, "offset": str(offset) if offset else "", "pending": str(at) if at else ""}
    chosen = run or (str(runs[0]["id"]) if runs else "")
    detail = attempt(page.view, "gate", "run", chosen) if chosen else None
    explained = attempt(page.view, "gate", "explain", chosen) if chosen else None
    context = {
        "view": "gate",
        "panel": listed.panel,
        "runs": runs,
        "runs_pager": _runs_pager(page.url, offset, len(runs), more, run, kept["pending"]),
        "runs_offset": kept["offset"],
        "pending": calls,
        "pending_total": waiting_total,
        "pending_offset": kept["pending"],
        "pending_pager": pager(
            page.url, "gate", at, len(calls), waiting_total, PAGE, param="pending", run=run, offset=kept["offset"]
        ),
        "chosen": chosen,
        "run": detail.value if detail is not None and detail.ok else None,
        "settled": _settled(detail.value) if detail is not None and detail.ok else {},
        "run_panel": detail.panel if detail is not None else None,
        "explained": explained.value if explained is not None and explained.ok else None,
        "can_write": page.can(Permission.WRITE),
    }
    return render(page, request, "gate.html", context)


def _runs_pager(url: Any, offset: int, shown: int, more: bool, run: str, pending: str) -> dict[str, Any]:
    """The runs list's links; its total is known only on the last page (``None`` before)."""
    links = pager(url, "gate", offset, shown, offset + shown + (1 if more else 0), RUNS, run=run, pending=pending)
    return {**links, "total": None if more else offset + shown}


@router.post("/ns/{namespace}/gate/approve")
def approve(
    request: Request,
    namespace: str,
    decision_id: Annotated[str, Form(min_length=1, max_length=200)],
    action_hash: Annotated[str, Form(min_length=1, max_length=200)],
    run: Annotated[str, Form(max_length=200)] = "",
    pending: Annotated[str, Form(max_length=20, pattern=r"^[0-9]*$")] = "",
    csrf: CsrfField = "",
) -> Response:
    page = checked_page(request, namespace, csrf)

    def run_approval() -> None:
        _check_bound(page.view, decision_id, action_hash, "approved")
        method(page.view, "gate", "approve")(decision_id)

    done = f"Approved once, for exactly this action (decision {decision_id})."
    return act(page, page.url("gate", run=run, pending=pending), done, run_approval)


@router.post("/ns/{namespace}/gate/deny")
def deny(
    request: Request,
    namespace: str,
    decision_id: Annotated[str, Form(min_length=1, max_length=200)],
    action_hash: Annotated[str, Form(min_length=1, max_length=200)],
    run: Annotated[str, Form(max_length=200)] = "",
    reason: Annotated[str, Form(max_length=2000)] = "",
    pending: Annotated[str, Form(max_length=20, pattern=r"^[0-9]*$")] = "",
    csrf: CsrfField = "",
) -> Response:
    """Settle the decision as denied: the call never runs, and no later approval is accepted."""
    page = checked_page(request, namespace, csrf)

    def run_denial() -> None:
        _check_bound(page.view, decision_id, action_hash, "denied")
        method(page.view, "gate", "deny")(decision_id, reason=reason)

    return act(page, page.url("gate", run=run, pending=pending), f"Denied (decision {decision_id}).", run_denial)


def _check_bound(view: Any, decision_id: str, action_hash: str, to: str) -> None:
    """The decision must still wait, for the very action the person saw.

    Its run is found from the decision itself (``gate.run`` takes a decision id): the list of
    waiting calls shows every waiting decision, however old its run, and looking for it only
    among the newest runs refused to approve or deny the older ones.
    """
    try:
        found = method(view, "gate", "run")(decision_id)
    except NotFound as exc:
        raise InvalidInput("no pending decision with this id", where=decision_id) from exc
    for d in found.get("decisions", []):
        if str(d.get("id")) != decision_id:
            continue
        if not hmac.compare_digest(str(d.get("action_hash", "")), action_hash):
            raise InvalidInput(
                "the action changed since the page was shown; reload and check it again", where=decision_id
            )
        if d not in _pending(found):
            raise InvalidTransition("decision", "settled", to, detail="it no longer waits for a person")
        return
    raise InvalidInput("no pending decision with this id", where=decision_id)
