"""Attach the console's routes, static files and error pages to a FastAPI app."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.staticfiles import StaticFiles

from .._intently import Intently
from ._auth import CsrfRejected, LoginRequired, Sessions
from ._form_errors import install_form_errors
from ._gate_view import router as gate_router
from ._goals_view import router as goals_router
from ._log_view import router as log_router
from ._requirements_view import router as requirements_router
from ._scan_jobs import SCAN_JOBS, ScanJobs
from ._session_view import router as session_router
from ._triggers_view import router as triggers_router
from ._web import SECURITY_HEADERS, Console, PageNotFound, render

__all__ = ["STATIC_PATH", "mount_console"]

STATIC_PATH = "/console-static"


def mount_console(app: FastAPI, ix: Intently) -> None:
    """Serve the console at ``/`` of ``app`` for the home ``ix`` opened.

    Pages act as the actor of the API token pasted at ``/login``; ``/v1/...`` is untouched.
    Mounting twice is a no-op, so ``create_app`` may mount it and callers need not know.
    """
    if getattr(app.state, "intently_console", None) is not None:
        return
    # Scan jobs are kept under the home's state folder, so every `serve --workers` process
    # answers for a scan another one started (see console/_scan_jobs.py).
    app.state.intently_console = Console(ix, Sessions(ix), ScanJobs(ix.home.state_dir / SCAN_JOBS))
    app.mount(STATIC_PATH, StaticFiles(directory=str(Path(__file__).parent / "static")), name="console-static")
    for router in (session_router, log_router, goals_router, triggers_router, requirements_router, gate_router):
        app.include_router(router, include_in_schema=False)
    app.add_api_route("/favicon.ico", _no_icon, methods=["GET"], include_in_schema=False)
    app.add_exception_handler(LoginRequired, _to_login)
    app.add_exception_handler(CsrfRejected, _csrf_rejected)
    app.add_exception_handler(PageNotFound, _not_found)
    install_form_errors(app)


async def _no_icon() -> Response:
    """Browsers ask for an icon on every page; "none" is an answer, a 404 is an error in the console."""
    return Response(status_code=204)


async def _to_login(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, LoginRequired)
    return RedirectResponse(f"/login?next={quote(exc.next_path, safe='')}", status_code=303, headers=SECURITY_HEADERS)


async def _csrf_rejected(request: Request, exc: Exception) -> HTMLResponse:
    return render(None, request, "error.html", {"title": "Form refused", "detail": str(exc)}, status=403)


async def _not_found(request: Request, exc: Exception) -> HTMLResponse:
    return render(None, request, "error.html", {"title": "Not found", "detail": str(exc)}, status=404)
