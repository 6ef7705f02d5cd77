"""``intently hook serve``: answer Claude Code hook events from one long-lived process.

Each event is still answered by :func:`handle_claude_event` on a freshly opened home, exactly
as in a one-shot hook process (config, policies, session state: all read again per event);
what the server keeps is the imported code, which is most of a one-shot hook's time. Events
are answered one at a time, in arrival order, in the client's working directory.

Optional: with no server running, the hook answers in-process as before. The server stops
after ``idle_timeout`` seconds without an event, and removes its socket; it also stops, after
declining the event, when intently's installed files change under it (an upgrade).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.errors import InvalidInput
from ..core.homedir import CONFIG_FILE
from ._claude import handle_claude_event, open_from_environment
from ._wire import (
    PROTOCOL,
    connect,
    intently_env,
    package_dir,
    private_dir_ok,
    read_message,
    socket_path,
    write_message,
)

__all__ = ["ServeReport", "serve_hooks"]

ACCEPT_TICK_S = 1.0
# A hook client writes its whole event at once; one that has not within this long is dropped
# (it answers in-process) rather than holding the queue of hooks behind it.
_READ_WITHIN_S = 2.0
# sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included.
_MAX_SOCKET_PATH = 103


@dataclass
class ServeReport:
    """What a server did before it stopped."""

    home: str
    socket: str
    answered: int = 0
    declined: int = 0
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "home": self.home,
            "socket": self.socket,
            "answered": self.answered,
            "declined": self.declined,
            "reasons": self.reasons,
        }


def _prepare(home: Path, path: Path) -> None:
    """Create the private folder (or refuse one that is not private) and clear a stale socket."""
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if not private_dir_ok(folder):
        raise InvalidInput(
            "the socket folder must be a directory owned by you with mode 0700; remove it or fix it",
            where=str(folder),
        )
    live = connect(home)
    if live is not None:
        live.close()
        raise InvalidInput("a hook server already answers for this home", where=str(path))
    if path.exists() or path.is_symlink():
        path.unlink()  # left by a server that did not stop cleanly


def code_fingerprint() -> tuple[tuple[str, int], ...]:
    """Every source and data file of the installed package with its modification time: an
    upgrade (or an edit to a development install) changes it, and a server must then not answer
    with the code it loaded before."""
    root = Path(package_dir())
    found: list[tuple[str, int]] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".yaml", ".json", ".toml")):
                found.append((os.path.join(folder, name), os.stat(os.path.join(folder, name)).st_mtime_ns))
    return tuple(found)


def _refusal(message: dict[str, Any], home: Path) -> str | None:
    """Why this server must not answer ``message`` (the client then answers in-process)."""
    if message.get("protocol") != PROTOCOL:
        return f"protocol {message.get('protocol')!r}, server speaks {PROTOCOL}"
    if message.get("version") != __version__ or message.get("package") != package_dir():
        return "another intently install or version"
    if message.get("home") != str(home):
        return f"home {message.get('home')!r} is not this server's"
    if message.get("env") != intently_env():
        return "different INTENTLY_* environment"
    if not isinstance(message.get("stdin"), str) or not isinstance(message.get("cwd"), str):
        return "malformed request"
    return None


def _answer(message: dict[str, Any]) -> dict[str, Any]:
    """Answer as ``python -m intently.hooks hook claude`` would in the client's directory."""
    cwd = Path(message["cwd"])
    if cwd.is_dir():
        os.chdir(cwd)

    result = handle_claude_event(message["stdin"], open_from_environment)
    return {"status": "answered", "stdout": result.stdout, "stderr": result.stderr, "exit_code": result.exit_code}


def serve_hooks(
    home: Path,
    *,
    idle_timeout: float = 1800.0,
    on_ready: Callable[[Path], None] | None = None,
    on_event: Callable[[str, float], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> ServeReport:
    """Serve hook events for ``home`` until ``idle_timeout`` seconds pass without one (or
    ``should_stop`` says so). ``on_ready`` gets the socket path once clients can connect;
    ``on_event`` gets each outcome ("answered EVENT exit N" or "declined: why") and its seconds.
    """
    if not hasattr(socket, "AF_UNIX"):
        raise InvalidInput("the hook server needs Unix sockets, which this platform lacks", where="hook serve")
    home = home.resolve()
    if not (home / CONFIG_FILE).is_file():
        raise InvalidInput("no intently.toml here; run `intently init` first", where=str(home))
    path = socket_path(home)
    if len(os.fsencode(path)) > _MAX_SOCKET_PATH:
        raise InvalidInput(
            f"socket path is over {_MAX_SOCKET_PATH} bytes; set XDG_RUNTIME_DIR (for the hooks too) to a shorter folder",
            where=str(path),
        )
    _prepare(home, path)
    report = ServeReport(home=str(home), socket=str(path))
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    start_dir = os.getcwd()
    try:
        old_umask = os.umask(0o177)  # the socket is created 0600
        try:
            server.bind(str(path))
        finally:
            os.umask(old_umask)
        server.listen(16)
        server.settimeout(ACCEPT_TICK_S)
        if on_ready is not None:
            on_ready(path)
        loaded = code_fingerprint()
        last = time.monotonic()
        while time.monotonic() - last < idle_timeout and not (should_stop and should_stop()):
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            last = time.monotonic()
            stale = code_fingerprint() != loaded
            with conn:
                _serve_one(conn, home, report, on_event, stale=stale)
            os.chdir(start_dir)
            if stale:
                break  # the hooks answer in-process until a server with the new code starts
    finally:
        server.close()
        path.unlink(missing_ok=True)
    return report


def _serve_one(
    conn: socket.socket,
    home: Path,
    report: ServeReport,
    on_event: Callable[[str, float], None] | None,
    *,
    stale: bool = False,
) -> None:
    began = time.perf_counter()
    try:
        message = read_message(conn, within=_READ_WITHIN_S)
    except (OSError, ValueError):
        return  # the client gave up, trickled or sent garbage before handing over an event: it answers itself
    conn.settimeout(10.0)  # for the answer: the read's deadline is spent
    if message.get("ping") is True and message.get("protocol") == PROTOCOL:  # `intently hook status`
        alive = {"status": "alive", "pid": os.getpid(), "version": __version__, **report.to_json()}
        with contextlib.suppress(OSError):
            write_message(conn, alive)
        return
    why = "intently's code changed since the server started; restart it" if stale else _refusal(message, home)
    if why is not None:
        reply: dict[str, Any] = {"status": "declined", "reason": why}
        report.declined += 1
        if why not in report.reasons:
            report.reasons.append(why)
        outcome = f"declined: {why}"
    else:
        try:
            reply = _answer(message)
        except Exception as exc:  # the handler never raises; anything around it blocks this call, not the server
            why = f"hook server error, blocked to fail closed: {type(exc).__name__}: {exc}"
            reply = {"status": "answered", "stdout": "", "stderr": f"intently: {why}\n", "exit_code": 2}
        report.answered += 1
        outcome = f"answered {_event_name(message['stdin'])} exit {reply['exit_code']}"
    with contextlib.suppress(OSError):  # the client went away; it blocks on its side
        write_message(conn, reply)
    if on_event is not None:
        on_event(outcome, time.perf_counter() - began)


def _event_name(raw: str) -> str:
    try:
        data = json.loads(raw)
    except ValueError:
        return "event"
    return str(data.get("hook_event_name", "event")) if isinstance(data, dict) else "event"
