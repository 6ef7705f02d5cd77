"""A console form that fails validation comes back as its page, with the error by the field.

FastAPI answers a form field that breaks its declared bounds (an empty reminder, a
non-number in a number field) with a JSON 422, which is right for the API and useless to a
person in a browser. For console form posts this handler redirects back to the page the
form was on, carrying which fields failed, why, and what was typed (so the form refills);
A console page whose query is out of bounds gets an HTML error page naming the parameter.
API requests keep the API's own handler. Nothing is written: the engine never ran.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI
from fastapi.exception_handlers import request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from starlette.requests import Request
from starlette.responses import Response

from ._auth import CsrfRejected, LoginRequired
from ._web import console_of, redirect_with, render

__all__ = ["install_form_errors"]

Handler = Callable[[Request, Any], Response | Awaitable[Response]]

#: Fields that are the form's plumbing, never typed by a person (and never echoed back).
_PLUMBING = {"csrf", "version", "action_hash", "decision_id", "run", "base"}


def install_form_errors(app: FastAPI) -> None:
    """Route validation errors of console form posts here; everything else as before."""
    previous: Handler | None = app.exception_handlers.get(RequestValidationError)

    async def on_invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        if request.url.path.startswith("/ns/"):
            if request.method == "POST":
                return _back_to_form(request, exc)
            detail = "; ".join(f"{name}: {why}" for name, why in _field_errors(exc).items())
            return render(None, request, "error.html", {"title": "Bad address", "detail": detail}, status=422)
        if previous is None:
            return await request_validation_exception_handler(request, exc)
        answered = previous(request, exc)
        return await answered if inspect.isawaitable(answered) else answered

    app.add_exception_handler(RequestValidationError, on_invalid)


def _back_to_form(request: Request, exc: RequestValidationError) -> Response:
    body: Mapping[str, Any] = exc.body if isinstance(exc.body, Mapping) else {}
    console = console_of(request)
    try:
        session = console.sessions.current(request)
        sent = body.get("csrf")
        console.sessions.check_form(request, session, sent if isinstance(sent, str) else None)
    except LoginRequired:
        return redirect_with("/login", "error", "Log in again: the session ended.")
    except CsrfRejected as rejected:
        return render(None, request, "error.html", {"title": "Form refused", "detail": str(rejected)}, status=403)
    fields = _field_errors(exc)
    values = {k: v for k, v in body.items() if k not in _PLUMBING and isinstance(v, str)}
    text = "Check the form: " + "; ".join(f"{name}: {why}" for name, why in fields.items())
    return redirect_with(_origin_page(request), "error", text, fields=fields, values=values)


def _field_errors(exc: RequestValidationError) -> dict[str, str]:
    """``{field name: what is wrong}`` in words, first error per field."""
    found: dict[str, str] = {}
    for error in exc.errors():
        loc = [str(part) for part in error.get("loc", ()) if part not in ("body", "query")]
        name = loc[-1] if loc else "form"
        kind = str(error.get("type", ""))
        if kind == "missing" or (kind == "string_too_short" and error.get("ctx", {}).get("min_length") == 1):
            why = "required: it cannot be empty"
        else:
            why = str(error.get("msg", "invalid")).rstrip(".")
        found.setdefault(name, why)
    return found or {"form": "invalid"}


def _origin_page(request: Request) -> str:
    """The page the form was on: its Referer when same-site, else the view of the form's URL."""
    referer = request.headers.get("referer", "")
    parts = urlsplit(referer)
    if referer and parts.netloc == request.headers.get("host", "") and parts.path.startswith("/ns/"):
        return parts.path + (f"?{parts.query}" if parts.query else "")
    segments = request.url.path.split("/")  # "", "ns", namespace, view, ...
    return "/".join(segments[:4])
