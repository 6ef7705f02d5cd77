"""``intently hook serve``: answer Claude Code hook events from one long-lived process.

Each event is still answered by :func:`handle_claude_event` on a freshly opened home, exactly
as in a one-shot hook process (config, policies, session state: all read again per event);
what the server keeps is the imported code, which is most of a one-shot hook's time. Each
event is answered in a child forked for it, in the client's working directory, so events of
concurrent Claude Code sessions (or parallel tool calls) are answered side by side instead of
queueing behind each other: the child has the server's imports but its own working directory,
warnings and state, as a one-shot hook process has, and the session files it shares with other
events are locked as they are between one-shot hooks. Without ``os.fork`` events are answered
one at a time.

Optional: with no server running, the hook answers in-process as before. The server stops
after ``idle_timeout`` seconds without an event, and removes its socket; it also stops, after
declining the event, when intently's installed files change under it (an upgrade).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__, _engines
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
_REAP_TICK_S = 0.02
# A hook client writes its whole event at once; one that has not within this long is dropped
# (it answers in-process) rather than holding the queue of hooks behind it.
_READ_WITHIN_S = 2.0
# sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included.
_MAX_SOCKET_PATH = 103
# Events answered at once; a further one waits for a child to finish (Claude Code runs a few
# tool calls in parallel per session, so this covers several sessions).
MAX_CONCURRENT = 8


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
    children: dict[int, tuple[str, float]] = {}  # pid -> (event, when it arrived)
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
        if hasattr(os, "fork"):
            _warm_up()
        loaded = code_fingerprint()
        last = time.monotonic()
        while time.monotonic() - last < idle_timeout and not (should_stop and should_stop()):
            _reap(children, on_event, block=len(children) >= MAX_CONCURRENT)
            server.settimeout(_REAP_TICK_S if children else ACCEPT_TICK_S)  # report answers promptly
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            last = time.monotonic()
            stale = code_fingerprint() != loaded
            with conn:
                _serve_one(conn, home, report, on_event, stale=stale, server=server, children=children)
            os.chdir(start_dir)
            if stale:
                break  # the hooks answer in-process until a server with the new code starts
    finally:
        server.close()
        path.unlink(missing_ok=True)
        while children:  # stop after the events being answered, never in the middle of one
            _reap(children, on_event, block=True)
    return report


def _warm_up() -> None:
    """Load once, in the server, what each event's child would otherwise load again: the
    engines' modules, the gate's signed bundle, the contracts of Claude Code's tools and the
    patterns they compile (a sample check in a gate with an in-memory journal, which writes
    nothing). A child inherits all of it; what it loads itself dies with it. Only speed
    depends on this, so a failure here leaves the events to load what they need."""
    try:
        _engines.load()
        from ..gate._gate import Gate
        from ._gate import claude_tool_contracts

        gate = Gate.from_tools([], overrides=claude_tool_contracts(), context_objects=("repository",))
        session = gate.session(user_request="Fix the failing test in tests/test_api.py", namespace="warm-up")
        session.check("Read", {"file_path": "tests/test_api.py"})
    except Exception:  # see above: the events still answer, more slowly
        pass


def _reap(
    children: dict[int, tuple[str, float]], on_event: Callable[[str, float], None] | None, *, block: bool
) -> None:
    """Collect the children that finished (waiting for one when ``block``) and report each event.

    Each child is waited for by its pid, never with ``waitpid(-1)``: a process that embeds the
    server may have children of its own, whose exit statuses are not ours to take."""
    while children:
        done = False
        for pid in list(children):
            got, status = os.waitpid(pid, os.WNOHANG)
            if got == 0:
                continue
            done = True
            name, began = children.pop(pid)
            if os.WIFEXITED(status):
                outcome = f"answered {name} exit {os.WEXITSTATUS(status)}"
            else:  # killed: the client got no answer and blocked the call on its side
                outcome = f"answered {name}: its child was killed by signal {os.WTERMSIG(status)}"
            if on_event is not None:
                on_event(outcome, time.perf_counter() - began)
        if done or not block:
            return
        time.sleep(0.005)


def _answer_in_child(conn: socket.socket, server: socket.socket, message: dict[str, Any]) -> int:
    """Fork a child that answers ``message`` on ``conn`` and exits with the hook's exit code."""
    pid = os.fork()
    if pid != 0:
        return pid
    code = 2
    try:
        # Ctrl-C reaches the whole process group: the server stops after this event, and the
        # child finishes answering it rather than leaving the client without an answer.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        server.close()
        reply = _safe_answer(message)
        code = int(reply["exit_code"])
        with contextlib.suppress(OSError):  # the client went away; it blocks on its side
            write_message(conn, reply)
    finally:
        os._exit(code)  # never back into the server's loop, nor its cleanup


def _safe_answer(message: dict[str, Any]) -> dict[str, Any]:
    try:
        return _answer(message)
    except Exception as exc:  # the handler never raises; anything around it blocks this call, not the server
        why = f"hook server error, blocked to fail closed: {type(exc).__name__}: {exc}"
        return {"status": "answered", "stdout": "", "stderr": f"intently: {why}\n", "exit_code": 2}


def _serve_one(
    conn: socket.socket,
    home: Path,
    report: ServeReport,
    on_event: Callable[[str, float], None] | None,
    *,
    stale: bool = False,
    server: socket.socket | None = None,
    children: dict[int, tuple[str, float]] | None = None,
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
    elif server is not None and children is not None and hasattr(os, "fork"):
        pid = _answer_in_child(conn, server, message)
        report.answered += 1
        children[pid] = (_event_name(message["stdin"]), began)  # reported when the child exits
        return
    else:
        reply = _safe_answer(message)
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
