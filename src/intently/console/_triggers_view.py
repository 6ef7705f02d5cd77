"""The standing intents view: list, create, cancel, snooze, fire history, "test this text".

Creating needs manage-reminders; the form is shown only to actors who hold it, and the
engine checks again. "Test this text" calls ``triggers.test``, which never fires or
charges anything, so it is a GET form anyone who can read may use.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..access import Permission
from ..context import run_engine
from ._paging import Offset, page_of, pager
from ._web import CsrfField, act, attempt, checked_page, method, page_for, render

__all__ = ["router"]

router = APIRouter()


def _duration(seconds: int) -> str:
    if seconds <= 0:
        return "none"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _row(intent: Any) -> dict[str, Any]:
    scope = intent.scope
    parts = (("channel", scope.channel), ("conversation", scope.conversation), ("sender", scope.sender))
    where = [f"{k} {v}" for k, v in parts if v]
    return {
        "id": str(intent.id),
        "reminder": str(intent.reminder),
        "event": str(intent.event),
        "entries": [" + ".join(e) for e in intent.entries],
        "state": str(intent.state),
        "scope": ", ".join(where) or "anywhere",
        "fires_left": max(0, int(intent.max_fires) - int(intent.fire_count)),
        "max_fires": int(intent.max_fires),
        "cooldown": _duration(int(intent.cooldown_seconds)),
        "expires": intent.expires_at,
        "snoozed": intent.snoozed_until,
        "rearm": intent.rearm_at,
        "creator": intent.creator,
        "fires": [f.to_json() for f in getattr(intent, "fires", ())],
    }


@router.get("/ns/{namespace}/triggers", response_class=HTMLResponse)
def triggers_page(
    request: Request, namespace: str, test: str = "", closed: bool = False, offset: Offset = 0
) -> HTMLResponse:
    page = page_for(request, namespace)
    listed = attempt(page.view, "triggers", "list", include_closed=closed)
    everything = list(listed.value) if listed.ok else []
    on_page, offset = page_of(everything, offset)
    rows = []
    for intent in on_page:  # the fire history of the rows shown only: one query each
        shown = attempt(page.view, "triggers", "show", intent.id)
        rows.append(_row(shown.value if shown.ok else intent))
    tested = attempt(page.view, "triggers", "test", test[:20_000]) if test.strip() else None
    context = {
        "view": "triggers",
        "panel": listed.panel,
        "intents": rows,
        "list_pager": pager(page.url, "triggers", offset, len(rows), len(everything), closed="1" if closed else ""),
        "closed": closed,
        "test": test,
        "tested": tested.value.to_json() if tested is not None and tested.ok else None,
        "test_panel": tested.panel if tested is not None else None,
        "can_manage": page.can(Permission.MANAGE_REMINDERS),
    }
    return render(page, request, "triggers.html", context)


@router.post("/ns/{namespace}/triggers")
def create(
    request: Request,
    namespace: str,
    reminder: Annotated[str, Form(min_length=1, max_length=500)],
    when: Annotated[str, Form(min_length=1, max_length=5000)],
    event: Annotated[str, Form(max_length=1000)] = "",
    expires: Annotated[str, Form(max_length=40)] = "",
    max_fires: Annotated[int | None, Form(ge=1, le=10_000)] = None,
    cooldown: Annotated[str, Form(max_length=40)] = "",
    scope: Annotated[str, Form(max_length=600)] = "",
    csrf: CsrfField = "",
) -> Response:
    """``when``: one entry a line (its words must all come up); ``scope``: e.g. ``channel:ops``."""
    page = checked_page(request, namespace, csrf)
    entries = [line.strip() for line in when.splitlines() if line.strip()]
    fields: dict[str, Any] = {
        "when": entries,
        "event": event.strip() or None,
        "expires": expires.strip() or None,
        "max_fires": max_fires,
        "cooldown": cooldown.strip() or None,
        "scope": scope.split() or None,
    }
    return act(
        page,
        page.url("triggers"),
        "Standing intent created.",
        lambda: run_engine(page.view, "triggers", "add", reminder, **fields),
        need=Permission.MANAGE_REMINDERS,
        typed={
            "reminder": reminder,
            "when": when,
            "event": event,
            "expires": expires,
            "max_fires": "" if max_fires is None else str(max_fires),
            "cooldown": cooldown,
            "scope": scope,
        },
    )


@router.post("/ns/{namespace}/triggers/{intent_id}/confirm")
def confirm(request: Request, namespace: str, intent_id: str, csrf: CsrfField = "") -> Response:
    """Arm a pending proposal (extraction proposes; a reminder manager decides)."""
    page = checked_page(request, namespace, csrf)
    return act(
        page,
        page.url("triggers"),
        "Armed: it will fire when its words come up.",
        lambda: method(page.view, "triggers", "confirm")(intent_id),
        need=Permission.MANAGE_REMINDERS,
    )


@router.post("/ns/{namespace}/triggers/{intent_id}/cancel")
def cancel(request: Request, namespace: str, intent_id: str, csrf: CsrfField = "") -> Response:
    """The engine decides: a reminder manager, or the proposer withdrawing its own proposal."""
    page = checked_page(request, namespace, csrf)
    return act(
        page, page.url("triggers"), "Cancelled.", lambda: method(page.view, "triggers", "cancel")(intent_id), need=None
    )


@router.post("/ns/{namespace}/triggers/{intent_id}/snooze")
def snooze(
    request: Request,
    namespace: str,
    intent_id: str,
    until: Annotated[str, Form(max_length=40)] = "",
    csrf: CsrfField = "",
) -> Response:
    """``until``: a duration (``2d``) or a time; empty lifts the snooze."""
    page = checked_page(request, namespace, csrf)
    value = until.strip() or None
    done = f"Snoozed for {value}." if value else "Snooze lifted."
    return act(
        page,
        page.url("triggers"),
        done,
        lambda: method(page.view, "triggers", "snooze")(intent_id, value),
        need=Permission.MANAGE_REMINDERS,
    )
