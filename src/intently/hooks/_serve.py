"""``intently hook serve``: answer Claude Code hook events from one long-lived process.

Each event is still answered by :func:`handle_claude_event` on a freshly opened home, exactly
as in a one-shot hook process (config, policies, session state: all read again per event);
what the server keeps is the imported code and what it loads once per process (the gate's
bundle, the embedding model, the extraction lexicon), which is most of a one-shot hook's
time. Each event is answered in a thread of its own, so the events of concurrent Claude Code
sessions (or parallel tool calls) are answered side by side instead of queueing behind a slow
one: the engines already serve the HTTP API's threads, each event opens its own home (its own
database connection), session files are locked between events as between one-shot hooks, and
nothing changes the process's directory (the hook's own directory is passed to the opener).

Optional: with no server running, the hook answers in-process as before. The server stops
after ``idle_timeout`` seconds without an event, and removes its socket; it also stops, after
declining the event, when intently's installed files change under it (an upgrade).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import socket
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..core.errors import InvalidInput
from ..core.homedir import CONFIG_FILE
from ._claude import HookResult, LateAnswer, LateDecision, handle_claude_event, open_from_environment
from ._watchdog import pre_tool_deadline
from ._wire import (
    PROTOCOL,
    SERVER_UNAVAILABLE,
    connect,
    intently_env,
    package_dir,
    private_dir_ok,
    read_message,
    server_supported,
    socket_path,
    write_message,
)

__all__ = ["ServeReport", "serve_hooks"]


def _load_handlers() -> None:
    """Import now what the one-shot hook imports only for the events that use it (the context
    assembler for a prompt, the assent reader, the scan queue for a session end): the server
    exists to keep imports loaded, so none of them may land inside an event's deadline."""
    for name in ("intently.context", "intently.hooks._assent", "intently.hooks._queue"):
        importlib.import_module(name)


ACCEPT_TICK_S = 1.0
# A hook client writes its whole event at once; one that has not within this long is dropped
# (it answers in-process) rather than holding the queue of hooks behind it.
_READ_WITHIN_S = 2.0
# sun_path holds 108 bytes on Linux and 104 on macOS, the terminating NUL included.
_MAX_SOCKET_PATH = 103
# Events answered at once; a further one waits for one of them to finish (Claude Code runs a
# few tool calls in parallel per session, so this covers several sessions).
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


_THREAD = threading.local()  # the warnings met by the event this thread answers


def _route_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    """``warnings.showwarning`` while a server runs: a warning goes to the event its thread
    answers (and into that hook's answer), never to another event's."""
    caught: list[warnings.WarningMessage] | None = getattr(_THREAD, "warned", None)
    if caught is None:
        _SHOW_WARNING(message, category, filename, lineno, file, line)
    else:
        caught.append(warnings.WarningMessage(message, category, filename, lineno, file, line))


_SHOW_WARNING = warnings.showwarning


def _answer(message: dict[str, Any], began: float | None = None) -> dict[str, Any]:
    """Answer as ``python -m intently.hooks hook claude`` would in the client's directory.

    A prompt is answered by the one-shot hook's deadline (counted from ``began``, when the
    event started to arrive), with what it has then, and a tool call by the same deadline,
    blocked past it: see :func:`_by_deadline`."""
    cwd = Path(message["cwd"])
    raw = message["stdin"]
    name = _event_name(raw)
    if name in ("UserPromptSubmit", "PreToolUse"):
        # A tool call gets the one-shot hook's deadline too: past it, it is blocked with the
        # reason (the client's own wait, 25 s, would block it later and without one), and the
        # check given up on logs nothing (:class:`LateDecision`).
        late = LateAnswer() if name == "UserPromptSubmit" else LateDecision()
        seconds = pre_tool_deadline()
        left = seconds - (time.perf_counter() - began) if began is not None else seconds
        result = _by_deadline(raw, cwd, late, seconds, max(left, 0.0))
    else:
        result = _handle_here(raw, cwd, None)
    return {"status": "answered", "stdout": result.stdout, "stderr": result.stderr, "exit_code": result.exit_code}


def _handle_here(raw: str, cwd: Path, late: LateAnswer | None) -> HookResult:
    """The handler in this thread, its warnings collected for this event alone."""
    _THREAD.warned = []
    try:
        return handle_claude_event(
            raw, lambda start: open_from_environment(start, cwd=cwd), warned=_THREAD.warned, late=late
        )
    finally:
        _THREAD.warned = None


def _by_deadline(raw: str, cwd: Path, late: LateAnswer, seconds: float, left: float) -> HookResult:
    """A UserPromptSubmit or a PreToolUse answered within ``left`` seconds, as the one-shot hook
    answers by its deadline: a pasted prompt of megabytes kept the handler reading (the gate's
    reading of it) past the client's wait, and the user got no context block at all; a tool
    call after it waited for the client to give up at 25 s while the server's thread read on,
    and could still log a gate session and a decision nobody used. A tool call past the
    deadline is blocked with the reason (:class:`LateDecision`).

    The handler runs in a thread of its own; past the deadline the answer made so far (the
    context block once assembled) goes out with the note of the step left undone, and the
    work is given up (:meth:`LateAnswer.give_up`): it logs no gate session and leaves the
    session record as that answer says, and only this thread ever answers. A thread cannot be
    stopped from outside, so the step under way (one prompt's reading) still runs to its end;
    this event's slot is held until it does, so such leftovers never outnumber the server's
    slots, and the server's stop waits for them, never ending one in the middle of a write."""
    done: list[HookResult] = []

    def work() -> None:
        try:
            result = _handle_here(raw, cwd, late)
        except BaseException as exc:  # handle_claude_event never raises; fail closed if it did
            why = f"hook server error, blocked to fail closed: {type(exc).__name__}: {exc}"
            result = HookResult(2, "", f"intently: {why}\n")
        done.append(result)
        late.finish()

    worker = threading.Thread(target=work, name="intently-hook-deadline-work")
    worker.start()
    worker.join(left)
    expired = late.give_up(seconds)
    if expired is None:
        worker.join()  # finished: its answer is in ``done`` (or about to be, under the lock's release)
        return done[0]
    stdout, stderr, code = expired
    _LEFTOVER.worker = worker
    return HookResult(code, stdout, stderr)


_LEFTOVER = threading.local()  # the given-up work of the event this thread answered, if any


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
    if not server_supported():
        raise InvalidInput(SERVER_UNAVAILABLE, where="hook serve")
    _load_handlers()
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
    slots = threading.BoundedSemaphore(MAX_CONCURRENT)
    workers: list[threading.Thread] = []
    lock = threading.Lock()  # the report and on_event, shared by the events' threads
    # The server's whole run: the filters and showwarning set below come back after it.
    with warnings.catch_warnings():
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
            warnings.simplefilter("always", UserWarning)  # as each one-shot hook does, for this process
            warnings.showwarning = _route_warning
            loaded = code_fingerprint()
            last = time.monotonic()
            while time.monotonic() - last < idle_timeout and not (should_stop and should_stop()):
                workers = [w for w in workers if w.is_alive()]
                if not slots.acquire(timeout=ACCEPT_TICK_S):
                    continue  # every slot busy: the next clients wait in the backlog
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    slots.release()
                    continue
                last = time.monotonic()
                stale = code_fingerprint() != loaded
                worker = threading.Thread(
                    target=_serve_in_thread,
                    args=(conn, home, report, on_event, stale, lock, slots),
                    name="intently-hook-event",
                )
                worker.start()
                workers.append(worker)
                if stale:
                    break  # the hooks answer in-process until a server with the new code starts
        finally:
            server.close()
            path.unlink(missing_ok=True)
            for worker in workers:  # stop after the events being answered, never in the middle of one
                worker.join()
    return report


def _serve_in_thread(
    conn: socket.socket,
    home: Path,
    report: ServeReport,
    on_event: Callable[[str, float], None] | None,
    stale: bool,
    lock: threading.Lock,
    slots: threading.BoundedSemaphore,
) -> None:
    _LEFTOVER.worker = None
    try:
        with conn:
            _serve_one(conn, home, report, on_event, stale=stale, lock=lock)
        leftover: threading.Thread | None = _LEFTOVER.worker
        if leftover is not None:  # a prompt answered at its deadline: its slot is free once the work stops
            leftover.join()
    finally:
        slots.release()


def _safe_answer(message: dict[str, Any], began: float | None = None) -> dict[str, Any]:
    try:
        return _answer(message, began)
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
    lock: threading.Lock | None = None,
) -> None:
    began = time.perf_counter()
    try:
        message = read_message(conn, within=_READ_WITHIN_S)
    except (OSError, ValueError):
        return  # the client gave up, trickled or sent garbage before handing over an event: it answers itself
    conn.settimeout(10.0)  # for the answer: the read's deadline is spent
    guard = lock if lock is not None else contextlib.nullcontext()
    if message.get("ping") is True and message.get("protocol") == PROTOCOL:  # `intently hook status`
        with guard:
            alive = {"status": "alive", "pid": os.getpid(), "version": __version__, **report.to_json()}
        with contextlib.suppress(OSError):
            write_message(conn, alive)
        return
    why = "intently's code changed since the server started; restart it" if stale else _refusal(message, home)
    if why is not None:
        reply: dict[str, Any] = {"status": "declined", "reason": why}
        with guard:
            report.declined += 1
            if why not in report.reasons:
                report.reasons.append(why)
        outcome = f"declined: {why}"
    else:
        reply = _safe_answer(message, began)
        with guard:
            report.answered += 1
        outcome = f"answered {_event_name(message['stdin'])} exit {reply['exit_code']}"
    with contextlib.suppress(OSError):  # the client went away; it blocks on its side
        write_message(conn, reply)
    if on_event is not None:
        with guard:
            on_event(outcome, time.perf_counter() - began)


def _event_name(raw: str) -> str:
    try:
        data = json.loads(raw)
    except ValueError:
        return "event"
    return str(data.get("hook_event_name", "event")) if isinstance(data, dict) else "event"
