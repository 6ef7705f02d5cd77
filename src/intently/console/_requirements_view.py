"""The requirements view: filtered table, edit drawer, enable/disable/supersede, preview.

The drawer posts only what a person can change (statement, rationale, level, domains,
paths, hints) to ``requirements.edit``, which reports the fields that really changed and
sets ``user_edited`` only for a statement or scope change, so saving an untouched drawer
changes nothing. The preview calls ``requirements.select(explain=True, record=False)``:
exactly the block an agent would get for that task, with the reason for every
requirement kept or dropped, and nothing written to the log.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ..access import Permission
from ..context import EngineUnavailable
from ..core.errors import ConflictError
from ._paging import PAGE, Offset, page_of, pager
from ._web import (
    SECURITY_HEADERS,
    CsrfField,
    PageNotFound,
    act,
    attempt,
    checked_page,
    console_of,
    method,
    page_for,
    redirect_with,
    render,
)

__all__ = ["router"]

router = APIRouter()

STATUSES = ("active", "proposed", "disabled", "superseded")
LEVELS = ("project", "domain")
_MAX_PATHS = 50


def _lines(text: str) -> list[str]:
    return [part.strip() for part in text.replace(",", "\n").splitlines() if part.strip()]


def _row(req: Any) -> dict[str, Any]:
    meta = req.meta
    return {
        "id": str(req.id),
        "statement": str(req.statement),
        "rationale": str(req.rationale),
        "status": str(req.status),
        "level": str(meta.scope.level),
        "domains": list(meta.scope.domains),
        "paths": list(meta.scope.paths),
        "languages": list(meta.scope.languages),
        "hints": list(meta.hints),
        "source": str(meta.provenance.kind),
        "ref": str(meta.provenance.ref),
        "confidence": str(meta.confidence),
        "user_edited": bool(meta.user_edited),
        "superseded_by": str(meta.superseded_by),
        "file": req.path.name,
        "content_hash": str(req.content_hash),
    }


@router.get("/ns/{namespace}/requirements", response_class=HTMLResponse)
def requirements_page(
    request: Request,
    namespace: str,
    status: str = "",
    domain: str = "",
    level: str = "",
    source: str = "",
    edit: str = "",
    task: str = "",
    paths: str = "",
    edit_domain: str = "",
    offset: Offset = 0,
) -> HTMLResponse:
    page = page_for(request, namespace)
    listed = attempt(page.view, "requirements", "list")
    everything = [_row(r) for r in listed.value] if listed.ok else []
    matching = [
        r
        for r in everything
        if (not status or r["status"] == status)
        and (not domain or domain in r["domains"])
        and (not level or r["level"] == level)
        and (not source or r["source"] == source)
    ]
    shown, offset = page_of(matching, offset)
    filters = {"status": status, "domain": domain, "level": level, "source": source}
    preview = None
    preview_panel = None
    if task.strip():
        chosen = attempt(
            page.view,
            "requirements",
            "select",
            task[:20_000],
            paths=_lines(paths)[:_MAX_PATHS],
            explain=True,
            record=False,
        )
        preview_panel = chosen.panel
        if chosen.ok:
            preview = _preview(chosen.value, {r["id"]: r for r in everything})
    domains_listed = attempt(page.view, "requirements", "domains")
    last_scan, fresh_ids = _last_scan(page.view)
    context = {
        "view": "requirements",
        "domain_list": [d.model_dump() for d in domains_listed.value] if domains_listed.ok else [],
        "last_scan": last_scan,
        "fresh_ids": fresh_ids,
        "editing_domain": edit_domain,
        "panel": listed.panel,
        "rows": shown,
        "matching": len(matching),
        "total": len(everything),
        "list_pager": pager(page.url, "requirements", offset, len(shown), len(matching), PAGE, **filters),
        "offset": str(offset) if offset else "",
        "filters": filters,
        "statuses": STATUSES,
        "levels": LEVELS,
        "domains": sorted({d for r in everything for d in r["domains"]}),
        "sources": sorted({r["source"] for r in everything}),
        "editing": next((r for r in everything if r["id"] == edit), None),
        "active_ids": [r["id"] for r in everything if r["status"] == "active"],
        "task": task,
        "paths": paths,
        "preview": preview,
        "preview_panel": preview_panel,
        "can_write": page.can(Permission.WRITE),
    }
    return render(page, request, "requirements.html", context)


def _last_scan(view: Any) -> tuple[dict[str, Any] | None, set[str]]:
    """The latest ``REQ_SCAN`` and the ids it records as created (the "new" badges).

    The badges come from the scan's own record only: a scan logged before scans recorded
    their ``created`` ids shows no badges rather than a guess.
    """
    scans = view.log.read(view.namespace, op="REQ_SCAN", newest_first=True, limit=1)
    if not scans:
        return None, set()
    latest = scans[0]
    info = {"time": latest.time, "message": str(latest.payload.get("message", "")), "actor": latest.actor}
    listed = latest.payload.get("created")
    return info, {str(i) for i in listed} if isinstance(listed, list) else set()


def _preview(selection: Any, rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    decisions = [d.to_json() for d in selection.decisions]
    for d in decisions:
        d["statement"] = rows.get(d["id"], {}).get("statement", "")
    kept = [d for d in decisions if d["kept"]]
    dropped = [d for d in decisions if not d["kept"] and d["stage"] not in ("status",)]
    return {
        "block": selection.block,
        "tokens": selection.tokens,
        "omitted": selection.omitted,
        "model": selection.model_id,
        "kept": kept,
        "dropped": dropped,
    }


@router.post("/ns/{namespace}/requirements/{req_id}/edit")
def save(
    request: Request,
    namespace: str,
    req_id: str,
    statement: Annotated[str, Form(min_length=1, max_length=5000)],
    rationale: Annotated[str, Form(max_length=5000)] = "",
    level: Annotated[str, Form(max_length=20)] = "project",
    domains: Annotated[str, Form(max_length=2000)] = "",
    paths: Annotated[str, Form(max_length=5000)] = "",
    hints: Annotated[str, Form(max_length=5000)] = "",
    base: Annotated[str, Form(max_length=128)] = "",
    csrf: CsrfField = "",
) -> Response:
    """Report what really changed: "No change" when the drawer was saved untouched.

    The drawer posts every field, so saving a drawer opened before someone else's save (or a
    scan) would silently put their changes back. ``base`` is the file's content hash when the
    drawer was opened; a requirement that changed since is refused with nothing written."""
    page = checked_page(request, namespace, csrf)
    back = page.url("requirements", edit=req_id)
    outcome: dict[str, list[str]] = {}

    def run() -> None:
        if base and method(page.view, "requirements", "get")(req_id).content_hash != base:
            raise ConflictError(
                f"{req_id} changed after this drawer was opened; nothing was saved: reopen it and edit again"
            )
        _, changed = method(page.view, "requirements", "edit")(
            req_id,
            statement=statement,
            rationale=rationale,
            level=level,
            domains=_lines(domains),
            paths=_lines(paths),
            hints=[h.strip() for h in hints.splitlines() if h.strip()],
        )
        outcome["changed"] = list(changed)

    response = act(page, back, "", run)
    if "changed" not in outcome:
        return response
    changed = outcome["changed"]
    text = (
        f"Saved {req_id}: changed {', '.join(changed)}." if changed else f"No change to {req_id}: nothing was written."
    )
    return redirect_with(back, "ok", text)


def _status_action(
    request: Request, namespace: str, req_id: str, csrf: str, name: str, done: str, **kw: Any
) -> Response:
    page = checked_page(request, namespace, csrf)
    return act(page, page.url("requirements"), done, lambda: method(page.view, "requirements", name)(req_id, **kw))


@router.post("/ns/{namespace}/requirements/{req_id}/disable")
def disable(request: Request, namespace: str, req_id: str, csrf: CsrfField = "") -> Response:
    return _status_action(request, namespace, req_id, csrf, "disable", f"{req_id} disabled: agents no longer get it.")


@router.post("/ns/{namespace}/requirements/{req_id}/enable")
def enable(request: Request, namespace: str, req_id: str, csrf: CsrfField = "") -> Response:
    return _status_action(request, namespace, req_id, csrf, "enable", f"{req_id} enabled.")


@router.post("/ns/{namespace}/requirements/{req_id}/supersede")
def supersede(
    request: Request,
    namespace: str,
    req_id: str,
    by: Annotated[str, Form(min_length=1, max_length=80)],
    csrf: CsrfField = "",
) -> Response:
    done = f"{req_id} superseded by {by.strip()}."
    return _status_action(request, namespace, req_id, csrf, "supersede", done, by=by.strip())


@router.post("/ns/{namespace}/requirements/scan")
def scan(
    request: Request, namespace: str, commit: Annotated[str, Form(max_length=5)] = "", csrf: CsrfField = ""
) -> Response:
    """Start a scan (as ``intently req scan``) in the background and show its progress page."""
    page = checked_page(request, namespace, csrf)
    back = page.url("requirements")
    if not page.can(Permission.WRITE):
        return redirect_with(
            back, "error", f"PermissionDenied: {page.session.actor} lacks write in namespace {page.namespace!r}"
        )
    try:
        run = method(page.view, "requirements", "scan")
    except EngineUnavailable as exc:
        return redirect_with(back, "error", str(exc))
    job = console_of(request).scans.start(
        page.namespace,
        str(page.session.actor),
        lambda progress: run(commit=bool(commit), progress=progress),
        page.view.checkpoint,
    )
    return RedirectResponse(page.url(f"requirements/scan/{job.id}"), status_code=303, headers=SECURITY_HEADERS)


@router.get("/ns/{namespace}/requirements/scan/{job_id}", response_class=HTMLResponse)
def scan_page(request: Request, namespace: str, job_id: str) -> HTMLResponse:
    """The job's progress; reloads itself without JavaScript until the scan is done."""
    page = page_for(request, namespace)
    job = console_of(request).scans.get(page.namespace, job_id)
    if job is None:
        raise PageNotFound(f"no scan {job_id} in this server's memory (it may have restarted)")
    context = {
        "view": "requirements",
        "job": job.to_json(),
        "status_url": page.url(f"requirements/scan/{job_id}/status"),
    }
    return render(page, request, "scan.html", context)


@router.get("/ns/{namespace}/requirements/scan/{job_id}/status")
def scan_status(request: Request, namespace: str, job_id: str) -> JSONResponse:
    """What the progress bar polls."""
    page = page_for(request, namespace)
    job = console_of(request).scans.get(page.namespace, job_id)
    if job is None:
        raise PageNotFound(f"no scan {job_id}")
    return JSONResponse(job.to_json(), headers=SECURITY_HEADERS)


@router.post("/ns/{namespace}/requirements/domains")
def domain_add(
    request: Request,
    namespace: str,
    name: Annotated[str, Form(min_length=1, max_length=64)],
    description: Annotated[str, Form(max_length=1000)] = "",
    paths: Annotated[str, Form(max_length=5000)] = "",
    csrf: CsrfField = "",
) -> Response:
    page = checked_page(request, namespace, csrf)

    def add() -> None:
        method(page.view, "requirements", "add_domain")(
            name.strip(), description=description.strip(), paths=_lines(paths)
        )

    return act(page, page.url("requirements") + "#domains", f"Domain {name.strip()} added.", add)


@router.post("/ns/{namespace}/requirements/domains/{name}")
def domain_edit(
    request: Request,
    namespace: str,
    name: str,
    description: Annotated[str, Form(max_length=1000)] = "",
    paths: Annotated[str, Form(max_length=5000)] = "",
    csrf: CsrfField = "",
) -> Response:
    page = checked_page(request, namespace, csrf)

    def save_domain() -> None:
        method(page.view, "requirements", "edit_domain")(name, description=description.strip(), paths=_lines(paths))

    return act(page, page.url("requirements") + "#domains", f"Domain {name} saved.", save_domain)
