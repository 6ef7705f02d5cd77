"""Login, logout and the start page."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Form
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from ._auth import COOKIE, check_origin, safe_next
from ._web import SECURITY_HEADERS, console_of, page_for, render

__all__ = ["router"]

router = APIRouter()

_SESSION_SECONDS = 12 * 3600


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, next: str = "/") -> HTMLResponse:
    return render(None, request, "login.html", {"next": safe_next(next), "error": None})


@router.post("/login")
def login(
    request: Request,
    token: Annotated[str, Form(max_length=20_000)] = "",
    next: Annotated[str, Form(max_length=2000)] = "/",
) -> Response:
    """Check the pasted token like the API would; keep it only in an HttpOnly cookie. Whatever
    was pasted (nothing, the whole `token create --json` output) gets the login page back with
    a message, never a JSON error."""
    check_origin(request)
    console = console_of(request)
    cleaned = _token_in(token)
    cookie = console.sessions.open(cleaned, _SESSION_SECONDS) if cleaned else None
    if cookie is None:
        why = "Paste the token (itk_...) that `intently token create` printed." if not cleaned else ""
        context = {"next": safe_next(next), "error": why or "That token is unknown or revoked."}
        return render(None, request, "login.html", context, status=401)
    response = RedirectResponse(safe_next(next), status_code=303, headers=SECURITY_HEADERS)
    response.set_cookie(
        COOKIE,
        cookie,
        max_age=_SESSION_SECONDS,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


_TOKEN = re.compile(r"itk_[A-Za-z0-9_-]+")


def _token_in(pasted: str) -> str:
    """The token itself, also when pasted inside `intently token create --json` output."""
    text = pasted.strip()
    if len(text) <= 200 and _TOKEN.fullmatch(text):
        return text
    found = _TOKEN.search(text)
    return found.group(0) if found else ("" if len(text) > 200 else text)


@router.post("/logout")
def logout(request: Request) -> Response:
    """Revoke the session (not the pasted token) and drop the cookie: the same cookie sent
    again, from this browser or a copy of it, is refused."""
    check_origin(request)
    console_of(request).sessions.close(request)
    response = RedirectResponse("/login", status_code=303, headers=SECURITY_HEADERS)
    response.delete_cookie(COOKIE, path="/")
    return response


@router.get("/")
def start(request: Request) -> Response:
    """The home namespace if readable, else the first one this actor can read."""
    console = console_of(request)
    session = console.sessions.current(request)
    view = console.ix.as_actor(session.actor)
    readable = view.access.readable_namespaces(session.actor)
    home = console.ix.namespace
    target = home if home in readable else (readable[0] if readable else None)
    if target is None:
        return render(
            None,
            request,
            "error.html",
            {"title": "No namespaces", "detail": f"{session.actor} may not read any namespace yet."},
            status=404,
        )
    return RedirectResponse(f"/ns/{target}/goals", status_code=303, headers=SECURITY_HEADERS)


@router.get("/ns/{namespace}")
@router.get("/ns/{namespace}/")
def namespace_start(request: Request, namespace: str) -> Response:
    """A namespace's own address opens its first view.

    A person shortens the URL in the address bar to ``/ns/proj``; without this it answered
    the API's JSON 404 instead of a page. Unreadable namespaces still get the HTML 404.
    """
    page = page_for(request, namespace)
    return RedirectResponse(page.url("goals"), status_code=303, headers=SECURITY_HEADERS)
