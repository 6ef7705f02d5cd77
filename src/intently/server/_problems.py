"""Errors as ``application/problem+json`` (RFC 9457) and the request size limit.

Every :class:`IntentlyError` maps to one status; anything unexpected is a 500 whose body
names no internals. A caller that may not read a namespace gets the same 404 as for a
namespace that does not exist.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..context import EngineUnavailable
from ..core.errors import (
    ConflictError,
    IntentlyError,
    InvalidInput,
    InvalidTransition,
    LogIntegrityError,
    NotFound,
    PermissionDenied,
    PolicyError,
    StoreError,
)
from ..goals import CompletionClaimed

__all__ = ["PROBLEM_JSON", "PROBLEM_RESPONSES", "BodyLimit", "Problem", "Unauthorized", "install_handlers", "problem"]

PROBLEM_JSON = "application/problem+json"
_log = logging.getLogger("intently.server")

_STATUS: tuple[tuple[type[IntentlyError], int], ...] = (
    (InvalidInput, 422),
    (NotFound, 404),
    (PermissionDenied, 403),
    (InvalidTransition, 409),
    (ConflictError, 409),
    (PolicyError, 422),
    (StoreError, 503),
    (LogIntegrityError, 500),
)


class Problem(BaseModel):
    """An error (RFC 9457). ``where`` names the field, file:line or id at fault, when known."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str = ""
    error: str | None = None
    where: str | None = None


_PROBLEM_SCHEMA = Problem.model_json_schema()

#: The errors every route may answer, documented in the OpenAPI schema as problem+json.
PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"description": description, "content": {PROBLEM_JSON: {"schema": _PROBLEM_SCHEMA}}}
    for code, description in (
        (401, "No bearer token, or an unknown or revoked one."),
        (403, "The caller may read the namespace but lacks the permission for this."),
        (404, "No such object, or a namespace the caller may not read (indistinguishable)."),
        (409, "A lifecycle move that is not allowed, or a lost race."),
        (413, "The request body is larger than the server accepts."),
        (422, "Invalid input; `where` names the field."),
        (501, "The engine behind this route is not in this build."),
    )
}


class Unauthorized(IntentlyError):
    """No bearer token, or one that is unknown or revoked."""


def problem(status: int, title: str, detail: str = "", **extra: Any) -> JSONResponse:
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail, **extra}
    headers = {"WWW-Authenticate": 'Bearer realm="intently"'} if status == 401 else None
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def _status_of(exc: IntentlyError) -> int:
    if isinstance(exc, Unauthorized):
        return 401
    if isinstance(exc, EngineUnavailable):
        return 501
    for kind, status in _STATUS:
        if isinstance(exc, kind):
            return status
    return 400


def install_handlers(app: FastAPI) -> None:
    async def on_intently(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, IntentlyError)
        extra: dict[str, Any] = {"error": type(exc).__name__}
        where = getattr(exc, "where", None)
        if where:
            extra["where"] = where
        if isinstance(exc, CompletionClaimed):  # the goal did not complete, but the claim is kept
            extra.update(awaits=exc.awaits, claim=exc.claim, intent=exc.intent.to_json())
        return problem(_status_of(exc), type(exc).__name__, str(exc), **extra)

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = [_field_error(e, request.headers.get("content-type")) for e in exc.errors()]
        first = errors[0] if errors else {"where": "request", "message": "invalid"}
        # ``error`` and ``where`` as every other problem has them (the docs promise ``where``).
        detail = f"{first['where']}: {first['message']}"
        return problem(422, "InvalidInput", detail, error="InvalidInput", where=first["where"], errors=errors)

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        if exc.status_code == 400 and exc.detail == _UNPARSABLE:
            # FastAPI's answer to a body its JSON parser gave up on (nested too deep): invalid
            # input like any other, so the documented 422 naming the body, not a bare 400.
            message = "the body could not be parsed as JSON (nested too deeply?)"
            return problem(
                422,
                "InvalidInput",
                f"body: {message}",
                error="InvalidInput",
                where="body",
                errors=[{"where": "body", "message": message}],
            )
        return problem(exc.status_code, str(exc.detail), str(exc.detail))

    async def on_other(request: Request, exc: Exception) -> JSONResponse:
        _log.exception("internal error on %s %s", request.method, request.url.path)
        answer = problem(500, "InternalError", "the server failed on this request; see its log")
        # Starlette answers an unhandled error outside every middleware, NoSniff included.
        answer.headers["X-Content-Type-Options"] = "nosniff"
        return answer

    app.add_exception_handler(IntentlyError, on_intently)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(Exception, on_other)


_UNPARSABLE = "There was an error parsing the body"


def _field_error(error: Mapping[str, Any], content_type: str | None = None) -> dict[str, str]:
    """One validation error as ``where`` and ``message``. A body that is not JSON at all comes
    from FastAPI located at ("body", character offset), which read as a field named ``body.0``;
    it is the body that is wrong, at that character, for the parser's own reason. A JSON body
    sent without ``Content-Type: application/json`` (curl's ``-d`` sends a form type) is not
    read at all, and FastAPI's "Input should be a valid dictionary" did not say why."""
    loc = tuple(error.get("loc", ()))
    if loc == ("body",) and error.get("type") in _NOT_AN_OBJECT and not _is_json(content_type):
        sent = f"Content-Type {content_type!r}" if content_type else "no Content-Type"
        return {
            "where": "body",
            "message": f"a JSON body needs Content-Type: application/json (this request sent {sent})",
        }
    if error.get("type") == "json_invalid":
        at = f" at character {loc[1]}" if len(loc) > 1 else ""
        reason = str((error.get("ctx") or {}).get("error", "")) or "JSON decode error"
        return {"where": "body", "message": f"not valid JSON{at}: {reason}"}
    return {"where": ".".join(str(p) for p in loc), "message": str(error.get("msg", ""))}


_NOT_AN_OBJECT = {"model_attributes_type", "dict_type", "model_type"}


def _is_json(content_type: str | None) -> bool:
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` with 413, whether or not Content-Length is sent."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
        # No trusted length: read the body here, up to the limit, then hand it on in one piece.
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, receive, send)  # a disconnect: let the app see it
                return
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > self.max_bytes:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = problem(413, "PayloadTooLarge", f"request bodies are limited to {self.max_bytes} bytes")
        await response(scope, receive, send)
