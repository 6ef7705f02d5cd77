"""Console sessions: the API's bearer token kept in an HttpOnly cookie, plus a CSRF token.

The pasted token never goes into the cookie: logging in opens a console session, a token
of its own derived from the pasted one (:meth:`~intently.server.TokenStore.open_session`),
and the HttpOnly, SameSite=Strict cookie holds that next to a random per-login nonce. Every
state-changing form carries ``csrf = HMAC(home secret, token + nonce)``; a request without
the matching value is refused before any engine is called. The cookie is resolved on every
request through the same :class:`~intently.server.TokenStore` as the API, so logging out
(which revokes the session), revoking the pasted token, or the session's expiry ends the
session at once, in every ``serve --workers`` process.

Each rendered form also carries a one-time form id after the CSRF token
(``csrf~issued.nonce.signature``). A browser without JavaScript sends a form twice on a
double click, and a second "add" made a second goal; the first request to claim the id
acts, a second one with the same id is told it was already sent and changes nothing. The
claim is a file created with ``O_EXCL`` next to ``console.key``, so it holds across
``serve --workers`` processes; ids older than a session are refused and their files pruned.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from starlette.requests import Request

from .._intently import Intently
from ..core.actors import Actor
from ..server import TokenStore

__all__ = ["COOKIE", "ConsoleSession", "CsrfRejected", "LoginRequired", "Sessions"]

COOKIE = "intently_console"
_MAX_COOKIE = 512
FORM_SEP = "~"
#: How long a rendered form may be sent: longer than a console session (12 hours), so a form
#: outlives no session, and its claim file can be pruned after that.
FORM_SECONDS = 13 * 3600
_PRUNE_EVERY = 600.0


class LoginRequired(Exception):
    """No live session: the caller is sent to the login page (``next`` keeps where they were)."""

    def __init__(self, next_path: str) -> None:
        super().__init__("login required")
        self.next_path = next_path


class CsrfRejected(Exception):
    """A form without the session's CSRF token, or posted from another origin."""


@dataclass(frozen=True)
class ConsoleSession:
    """Who the browser acts as, and the CSRF token its forms must carry."""

    actor: Actor
    csrf: str


def _shared_secret(path: Path) -> bytes:
    """The HMAC key for form tokens, one per home on this machine. Every ``serve --workers``
    process must check the tokens the others issued (a per-process key refused half the forms);
    the first one to start writes it (private, created whole by a link so no worker reads a
    half-written file), the others read it."""
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".console-key-")
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_bytes(32).hex())
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)  # atomic; whoever links first wins
    finally:
        os.unlink(tmp)
    return bytes.fromhex(path.read_text(encoding="ascii").strip())


class Sessions:
    """Makes and checks console cookies for one app (the HMAC secret lives as long as the app)."""

    def __init__(self, ix: Intently) -> None:
        self._ix = ix
        self._secret = _shared_secret(ix.home.state_dir / "console.key")
        self._forms = ix.home.state_dir / "console-forms"
        self._pruned = 0.0

    def cookie_value(self, token: str) -> str:
        return f"{token}.{secrets.token_urlsafe(16)}"

    def open(self, token: str, seconds: int) -> str | None:
        """The cookie of a new session for the pasted API ``token``, or ``None`` if it is not live."""
        issued = TokenStore(self._ix).open_session(token, seconds=seconds)
        if issued is None:
            return None
        self._ix.checkpoint()
        return self.cookie_value(issued.token)

    def close(self, request: Request) -> None:
        """Log out: revoke the session the request's cookie holds, so that cookie (or a copy of
        it) is refused from now on. A cookie that is not a live session needs nothing."""
        token = request.cookies.get(COOKIE, "").rpartition(".")[0]
        if token and len(token) <= _MAX_COOKIE and TokenStore(self._ix).end_session(token):
            self._ix.checkpoint()

    def _csrf(self, cookie: str) -> str:
        return hmac.new(self._secret, cookie.encode("utf-8"), hashlib.sha256).hexdigest()[:40]

    def current(self, request: Request) -> ConsoleSession:
        """The session of this request, or :class:`LoginRequired`."""
        cookie = request.cookies.get(COOKIE, "")
        token, dot, nonce = cookie.rpartition(".")
        if not dot or not nonce or len(cookie) > _MAX_COOKIE:
            raise LoginRequired(_here(request))
        actor = TokenStore(self._ix).resolve_session(token)
        if actor is None:
            raise LoginRequired(_here(request))
        return ConsoleSession(actor, self._csrf(cookie))

    def check_form(self, request: Request, session: ConsoleSession, sent: str | None) -> str:
        """Refuse a POST whose CSRF token differs, or whose Origin is another site; the form's
        one-time id when it carries one (``""`` for a client that sends the bare token)."""
        check_origin(request)
        token, _, form_id = (sent or "").partition(FORM_SEP)
        if not token or not hmac.compare_digest(token, session.csrf):
            raise CsrfRejected("the form's security token is missing or stale; reload the page and try again")
        if form_id and not self._form_id_valid(session, form_id):
            raise CsrfRejected("this form is too old or was altered; reload the page and send it again")
        return form_id

    def form_token(self, session: ConsoleSession) -> str:
        """The value of one rendered form's ``csrf`` field: the session's token and a new form id."""
        issued, nonce = str(int(time.time())), secrets.token_urlsafe(12)
        return f"{session.csrf}{FORM_SEP}{issued}.{nonce}.{self._form_signature(session, issued, nonce)}"

    def _form_signature(self, session: ConsoleSession, issued: str, nonce: str) -> str:
        message = f"form.{session.csrf}.{issued}.{nonce}".encode()
        return hmac.new(self._secret, message, hashlib.sha256).hexdigest()[:24]

    def _form_id_valid(self, session: ConsoleSession, form_id: str) -> bool:
        issued, _, rest = form_id.partition(".")
        nonce, _, signature = rest.partition(".")
        if not issued.isdigit() or not nonce or len(form_id) > 80:
            return False
        if not hmac.compare_digest(signature, self._form_signature(session, issued, nonce)):
            return False
        age = time.time() - int(issued)
        return -300 <= age <= FORM_SECONDS

    def claim_form(self, form_id: str) -> bool:
        """Mark a (checked) form id as used; ``False`` if it already was (the form was sent twice)."""
        self._prune()
        self._forms.mkdir(parents=True, exist_ok=True)
        try:
            os.close(os.open(self._forms / _form_file(form_id), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            return False
        return True

    def release_form(self, form_id: str) -> None:
        """The action failed and changed nothing: the same form may be sent again."""
        with contextlib.suppress(OSError):
            (self._forms / _form_file(form_id)).unlink()

    def _prune(self) -> None:
        """Drop the claims of forms too old to be sent (at most every few minutes per process)."""
        now = time.time()
        if now - self._pruned < _PRUNE_EVERY:
            return
        self._pruned = now
        with contextlib.suppress(OSError):
            for entry in os.scandir(self._forms):
                issued = entry.name.partition(".")[0]
                if issued.isdigit() and now - int(issued) > FORM_SECONDS:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)


def _form_file(form_id: str) -> str:
    """The claim file of a checked form id: ``issued.nonce`` (URL-safe characters only)."""
    issued, _, rest = form_id.partition(".")
    return f"{issued}.{rest.partition('.')[0]}"


def check_origin(request: Request) -> None:
    """Browsers send Origin on POST; when present it must be this server."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        if origin == "null":
            raise CsrfRejected("forms must be posted from this console")
        return
    parts = urlsplit(origin)
    if parts.netloc != request.headers.get("host", ""):
        raise CsrfRejected("forms must be posted from this console")


def safe_next(target: str | None) -> str:
    """Only same-site paths are followed after login (no open redirect)."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def _here(request: Request) -> str:
    query = request.url.query
    return request.url.path + (f"?{query}" if query else "")
