"""What every console page shares: templates, the acting view, engine calls that cannot 500.

A page acts as its session's actor in the namespace of its URL, with exactly the
foundation's permissions: a namespace the actor may not read answers 404, worded the same
as one that does not exist. Engine calls go through :func:`attempt`, which turns an engine
that is not built (or not importable) into an "engine not available in this build" panel
and any other failure into a panel naming the error, so one broken engine never takes a
page (or the console) down.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Form
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from .._intently import Intently
from ..access import Permission
from ..context import EngineUnavailable, engine_method
from ..core.errors import IntentlyError, InvalidInput, NotFound, PermissionDenied
from ._auth import ConsoleSession, Sessions
from ._scan_jobs import ScanJobs

__all__ = [
    "VIEWS",
    "Console",
    "CsrfField",
    "Page",
    "PageNotFound",
    "Panel",
    "act",
    "attempt",
    "checked_page",
    "console_of",
    "method",
    "page_for",
    "redirect_with",
    "render",
]

_log = logging.getLogger("intently.console")
_HERE = Path(__file__).parent
FLASH = "intently_flash"
_FLASH_BYTES = 2800  # base64 grows it by a third; browsers keep 4096 bytes a cookie
_VALUE_CHARS = 500

#: (slug, title, shortcut key after "g"); the order of the navigation.
VIEWS: tuple[tuple[str, str, str], ...] = (
    ("goals", "Goals", "g"),
    ("requirements", "Requirements", "r"),
    ("triggers", "Standing intents", "t"),
    ("gate", "Gate runs", "x"),
    ("log", "Log", "l"),
)

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; connect-src 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}

_env = Environment(
    loader=FileSystemLoader(str(_HERE / "templates")),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=2, sort_keys=True, default=str, ensure_ascii=False)
_env.filters["short"] = lambda v, n=8: str(v)[-n:] if v else ""
_env.filters["day"] = lambda v: str(v)[:10] if v else ""
_env.filters["when"] = lambda v: str(v)[:16].replace("T", " ") if v else ""


@dataclass(frozen=True)
class Console:
    """The console's state on the app: the home it serves, its session keeper, its scans."""

    ix: Intently
    sessions: Sessions
    scans: ScanJobs = field(default_factory=ScanJobs)


def console_of(request: Request) -> Console:
    found: Console = request.app.state.intently_console
    return found


class PageNotFound(Exception):
    """A namespace or object this actor cannot see: a 404 page, same as for a missing one."""


@dataclass(frozen=True)
class Panel:
    """Why a section of a page shows no data: ``unavailable``, ``denied`` or ``error``."""

    kind: str
    title: str
    detail: str


@dataclass
class Outcome:
    value: Any = None
    panel: Panel | None = None

    @property
    def ok(self) -> bool:
        return self.panel is None


def attempt(view: Intently, engine: str, method: str, *args: Any, **kwargs: Any) -> Outcome:
    """Call ``view.<engine>.<method>``; never raises, so a section degrades to a panel."""
    try:
        fn = engine_method(view, engine, method)
    except Exception as exc:  # the engine package failed to import or build
        _log.warning("console: %s engine unavailable: %s", engine, exc)
        fn = None
    if fn is None:
        return Outcome(panel=unavailable(engine))
    try:
        return Outcome(value=fn(*args, **kwargs))
    except EngineUnavailable:
        return Outcome(panel=unavailable(engine))
    except (NotFound, PermissionDenied, InvalidInput) as exc:
        return Outcome(
            panel=Panel("denied" if isinstance(exc, PermissionDenied) else "error", type(exc).__name__, str(exc))
        )
    except IntentlyError as exc:
        return Outcome(panel=Panel("error", type(exc).__name__, str(exc)))
    except Exception:
        _log.exception("console: %s.%s failed", engine, method)
        return Outcome(
            panel=Panel("error", "Internal error", f"the {engine} engine failed on this request; see the server log")
        )


def unavailable(engine: str) -> Panel:
    return Panel(
        "unavailable",
        "Engine not available in this build",
        f"The {engine} engine is not built into this installation yet.",
    )


@dataclass
class Page:
    """One request's view of the home: the acting actor in the URL's namespace."""

    request: Request
    view: Intently
    session: ConsoleSession
    namespace: str
    permissions: set[Permission] = field(default_factory=set)
    form_id: str = ""  # the posted form's one-time id (see :meth:`Sessions.check_form`)

    def can(self, permission: Permission) -> bool:
        return permission in self.permissions

    def url(self, slug: str, **query: str) -> str:
        path = f"/ns/{quote(self.namespace)}/{slug}"
        shown = {k: v for k, v in query.items() if v}
        if shown:
            path += "?" + "&".join(f"{quote(k)}={quote(str(v))}" for k, v in shown.items())
        return path


def page_for(request: Request, namespace: str) -> Page:
    """The page context, or :class:`LoginRequired` / :class:`PageNotFound`."""
    console = console_of(request)
    session = console.sessions.current(request)
    try:
        view = console.ix.as_actor(session.actor).in_namespace(namespace)
    except InvalidInput as exc:
        raise PageNotFound(f"namespace {namespace!r} not found") from exc
    held = view.access.permissions(session.actor, view.namespace)
    if Permission.READ not in held or view.namespace not in view.access.readable_namespaces(session.actor):
        # The home's owner may read any name, so a mistyped one (``/ns/nosuch/goals``) showed
        # empty pages as if it held nothing yet. A namespace exists once something was written
        # to it or granted in it; the console only shows those, the same list its menu offers.
        raise PageNotFound(f"namespace {namespace!r} not found")
    return Page(request, view, session, view.namespace, held)


def render(
    page: Page | None, request: Request, name: str, context: Mapping[str, Any], status: int = 200
) -> HTMLResponse:
    """A template rendered with the shared layout context, security headers and the flash."""
    flash = _read_flash(request)
    ctx: dict[str, Any] = {
        "request": request,
        "page": page,
        "views": VIEWS,
        "flash": flash,
        "Permission": Permission,
        "field_errors": flash["fields"] if flash else {},
        "form_values": flash["values"] if flash else {},
    }
    if page is not None:
        ctx["actor"] = str(page.session.actor)
        ctx["csrf"] = page.session.csrf
        sessions, session = console_of(request).sessions, page.session
        ctx["form_token"] = lambda: sessions.form_token(session)  # a new one-time id per form
        ctx["namespace"] = page.namespace
        try:
            ctx["namespaces"] = page.view.access.readable_namespaces(page.session.actor)
        except IntentlyError:
            ctx["namespaces"] = [page.namespace]
    ctx.update(context)
    html = _env.get_template(name).render(ctx)
    response = HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)
    if flash is not None:
        response.delete_cookie(FLASH, path="/")
    return response


def redirect_with(
    target: str,
    kind: str,
    text: str,
    *,
    fields: Mapping[str, str] | None = None,
    values: Mapping[str, str] | None = None,
) -> Response:
    """Post/redirect/get: the outcome of a form travels in a short-lived flash cookie.

    ``fields`` names the fields that failed (shown next to them) and ``values`` what was
    typed, so the page can refill its form; values are dropped first when the cookie
    would grow past what browsers keep.
    """
    response = RedirectResponse(target, status_code=303, headers=SECURITY_HEADERS)
    data: dict[str, Any] = {"kind": kind, "text": text[:1000]}
    if fields:
        data["fields"] = {str(k)[:64]: str(v)[:300] for k, v in list(fields.items())[:20]}
    if values:
        data["values"] = {str(k)[:64]: str(v)[:_VALUE_CHARS] for k, v in list(values.items())[:20]}
    raw = json.dumps(data).encode("utf-8")
    if len(raw) > _FLASH_BYTES:
        data.pop("values", None)
        raw = json.dumps(data).encode("utf-8")
    response.set_cookie(
        FLASH, base64.urlsafe_b64encode(raw).decode(), max_age=60, path="/", httponly=True, samesite="strict"
    )
    return response


def _read_flash(request: Request) -> dict[str, Any] | None:
    raw = request.cookies.get(FLASH)
    if not raw:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(raw.encode()))
    except (ValueError, TypeError):
        return None
    if not isinstance(data, dict) or data.get("kind") not in ("ok", "error"):
        return None
    flash: dict[str, Any] = {"kind": str(data["kind"]), "text": str(data.get("text", ""))}
    for key in ("fields", "values"):
        found = data.get(key)
        flash[key] = {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}
    return flash


def act(
    page: Page,
    back: str,
    done: str,
    fn: Callable[[], Any],
    *,
    need: Permission | None = Permission.WRITE,
    typed: Mapping[str, str] | None = None,
) -> Response:
    """Run one state change for a form, checkpoint, and redirect back with its outcome.

    ``need`` is checked first, as the API checks it before calling the engine (which checks
    again); ``None`` leaves the decision to the engine alone. ``typed`` is what the person
    typed: when the engine refuses one of those fields (a due date in the past), the form
    comes back filled in, with the error next to that field, as for a field the form refused.
    """
    if need is not None and not page.can(need):
        return redirect_with(
            back, "error", f"PermissionDenied: {page.session.actor} lacks {need.value} in namespace {page.namespace!r}"
        )
    sessions = console_of(page.request).sessions
    if page.form_id and not sessions.claim_form(page.form_id):
        return redirect_with(back, "ok", SENT_TWICE)
    response, changed = _run(page, back, done, fn, typed)
    if page.form_id and not changed:
        sessions.release_form(page.form_id)  # nothing was done: sending it again may work
    return response


SENT_TWICE = "Already sent: this form reached the console twice (a double click?) and was acted on once."


def _run(
    page: Page, back: str, done: str, fn: Callable[[], Any], typed: Mapping[str, str] | None
) -> tuple[Response, bool]:
    """The outcome of a form's change, and whether it was made."""
    try:
        fn()
    except EngineUnavailable as exc:
        return redirect_with(back, "error", str(exc)), False
    except IntentlyError as exc:
        if typed:
            where = str(getattr(exc, "where", "") or "")
            name = re.split(r"[.:\s]+", where.strip())[-1] if where else ""
            fields = {name: str(exc).removeprefix(f"{where}: ")} if name in typed else None
            return redirect_with(back, "error", f"{type(exc).__name__}: {exc}", fields=fields, values=typed), False
        return redirect_with(back, "error", f"{type(exc).__name__}: {exc}"), False
    except Exception:
        _log.exception("console: action on %s failed", back)
        return redirect_with(back, "error", "the action failed; see the server log"), False
    page.view.checkpoint()
    return redirect_with(back, "ok", done), True


def method(view: Intently, engine: str, name: str) -> Callable[..., Any]:
    """``view.<engine>.<name>`` for a form action, or :class:`EngineUnavailable`."""
    fn = engine_method(view, engine, name)
    if fn is None:
        raise EngineUnavailable(f"the {engine} engine is not available in this build ({engine}.{name})")
    return fn


#: The CSRF token a form posts (with the form's one-time id after it); optional here so a
#: missing one is refused by :meth:`Sessions.check_form` with an HTML page, not a JSON error.
CsrfField = Annotated[str, Form(max_length=200)]


def checked_page(request: Request, namespace: str, csrf: str) -> Page:
    """The page of a form post, after its CSRF token and Origin are checked."""
    page = page_for(request, namespace)
    page.form_id = console_of(request).sessions.check_form(request, page.session, csrf)
    return page
