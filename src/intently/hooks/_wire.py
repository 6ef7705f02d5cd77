"""The hook server's socket and wire format, and the client side, with the standard library only.

Claude Code starts a process for every hook event. Most of that process's time is imports
(docs/integrations.md, "Hook speed"), so ``intently hook serve`` keeps them loaded: the
client (``python -m intently.hooks hook claude``) hands the event over a Unix socket and
prints the answer. This module is all the client imports before it knows whether a server is
there.

The rules that keep that safe:

- **Same answer or no answer.** The server answers only a client whose home, package,
  version and ``INTENTLY_*`` environment equal its own; otherwise it declines and the client
  answers in-process, as it does when no server runs. Either way the same function
  (:func:`handle_claude_event`) decides.
- **Fail closed.** Once the event is handed over, a server that dies or answers garbage is a
  block (exit 2), never a silent pass: the event may already have been acted on. A prompt is
  the exception the in-process hook makes too: blocking it erases it, so it goes on with the
  reason in ``systemMessage``.
- **Only its owner can talk to it.** The socket lives in a per-user directory (mode 0700,
  owned by the user, checked on both sides) under ``$XDG_RUNTIME_DIR`` or the temp folder; its
  name is a hash of the home's path, so short enough for any socket path limit.
- **Only where that holds.** Without Unix sockets or user ids (Windows' Python has neither)
  there is no server (:func:`server_supported`): every event is answered in-process, and
  ``hook serve`` and ``hook status`` say so.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import time
from pathlib import Path
from typing import Any

__all__ = [
    "PROTOCOL",
    "Answer",
    "connect",
    "forward",
    "package_dir",
    "ping",
    "read_message",
    "runtime_dir",
    "server_supported",
    "socket_path",
    "start_wanted",
    "write_message",
]

PROTOCOL = 1
# Bytes of one message at most: a hook event carries a tool's input or output, which can be large.
MAX_MESSAGE = 64 * 1024 * 1024
CONNECT_TIMEOUT_S = 1.0
# Shorter than the 30 s Claude Code gives the hook (``hook install``): a stuck server blocks
# the call here rather than letting Claude Code time the hook out.
ANSWER_TIMEOUT_S = 25.0


class Answer:
    """What the process prints and exits with, as :class:`HookResult` has it. (A plain class:
    ``dataclasses`` alone would add a tenth to the client's start-up.)"""

    __slots__ = ("exit_code", "stderr", "stdout")

    def __init__(self, stdout: str, stderr: str, exit_code: int) -> None:
        self.stdout = stdout
        self.stderr = stderr
        self.exit_code = exit_code


#: What ``hook serve`` and ``hook status`` say on a platform without the server.
SERVER_UNAVAILABLE = (
    "the hook server is not available on this platform: it needs Unix sockets and user ids, which "
    "this Python lacks (Windows); every hook event is answered in-process instead, with the same decisions"
)


def server_supported() -> bool:
    """Whether this platform can run ``intently hook serve``: a Unix socket to listen on, and a
    user id to check that only its owner can reach it (``private_dir_ok``). Without them the
    server would be unguarded, so there is none and the hooks answer in-process."""
    return hasattr(socket, "AF_UNIX") and hasattr(os, "getuid")


def package_dir() -> str:
    """The installed ``intently`` package's folder: a server answers only clients of the same install."""
    return str(Path(__file__).resolve().parent.parent)


def intently_env(environ: dict[str, str] | os._Environ[str] | None = None) -> dict[str, str]:
    """The ``INTENTLY_*`` variables, which choose home, actor, namespace and database."""
    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items() if k.startswith("INTENTLY_")}


def runtime_dir() -> Path:
    """This user's private folder for hook sockets (not created here): under
    ``$XDG_RUNTIME_DIR``, else ``$TMPDIR``, else ``/tmp`` (server and client use this one rule)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or os.environ.get("TMPDIR") or "/tmp"
    return Path(base) / f"intently-{os.getuid()}"


def private_dir_ok(folder: Path) -> bool:
    """Whether ``folder`` is a real directory owned by this user that nobody else can enter."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077 == 0


def socket_path(home: Path) -> Path:
    """The socket of the server for ``home`` (a hash of its resolved path, so always short)."""
    digest = hashlib.sha256(str(home.resolve()).encode("utf-8")).hexdigest()[:16]
    return runtime_dir() / f"{digest}.sock"


def write_message(conn: socket.socket, message: dict[str, Any]) -> None:
    """One JSON object, length-prefixed (8 bytes, big-endian)."""
    body = json.dumps(message, ensure_ascii=False).encode("utf-8")
    conn.sendall(len(body).to_bytes(8, "big") + body)


def _read_exact(conn: socket.socket, size: int, deadline: float | None = None) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("the message did not arrive in time")
            conn.settimeout(remaining)
        chunk = conn.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the other side closed the connection mid-message")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_message(conn: socket.socket, *, within: float | None = None) -> dict[str, Any]:
    """The next message; ``ValueError`` when it is not one JSON object within the size limit.
    ``within`` bounds the whole message, not each read: a client that trickles bytes must not
    hold a one-at-a-time server (and every hook queued behind it) for longer."""
    deadline = None if within is None else time.monotonic() + within
    size = int.from_bytes(_read_exact(conn, 8, deadline), "big")
    if size > MAX_MESSAGE:
        raise ValueError(f"message of {size} bytes is over the {MAX_MESSAGE}-byte limit")
    data = json.loads(_read_exact(conn, size, deadline).decode("utf-8"))
    if not isinstance(data, dict):
        raise ValueError("message is not a JSON object")
    return data


def request(raw: str, home: Path, cwd: str) -> dict[str, Any]:
    from .. import __version__

    return {
        "protocol": PROTOCOL,
        "version": __version__,
        "package": package_dir(),
        "home": str(home.resolve()),
        "env": intently_env(),
        "cwd": cwd,
        "stdin": raw,
    }


def connect(home: Path) -> socket.socket | None:
    """A connection to the server for ``home``, its answer timeout set; ``None`` when there is
    none to reach (no server on this platform, no private folder or socket, or nobody listening: a stale
    socket of a server that stopped)."""
    if not server_supported():
        return None
    path = socket_path(home)
    if not private_dir_ok(path.parent) or not path.exists():
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.settimeout(CONNECT_TIMEOUT_S)
        conn.connect(str(path))
    except OSError:
        conn.close()
        return None
    conn.settimeout(ANSWER_TIMEOUT_S)
    return conn


def forward(raw: str, home: Path | None, event: str | None = None) -> Answer | None:
    """Hand one event to the server for ``home``: its answer, or ``None`` when the caller must
    answer in-process (no server, a server for another install or environment, no Unix sockets).

    After the event is sent, anything but a well-formed answer is a block (exit 2), except for
    a ``UserPromptSubmit`` (``event``, the hook's event name): blocking it erases the prompt and
    protects nothing, as the in-process hook reasons for a failure there, so that answer is
    exit 0 with the reason in ``systemMessage``. A prompt of megabytes can take the server past
    :data:`ANSWER_TIMEOUT_S`; the tool calls after it still meet PreToolUse, which blocks.
    """
    if home is None:
        return None
    conn = connect(home)
    if conn is None:
        return None
    try:
        write_message(conn, request(raw, home, os.getcwd()))
        reply = read_message(conn)
    except (OSError, ValueError) as exc:
        return _no_answer(f"{type(exc).__name__}: {exc}", event)
    finally:
        conn.close()
    if reply.get("status") == "declined":
        return None
    out, err, code = reply.get("stdout"), reply.get("stderr"), reply.get("exit_code")
    if reply.get("status") != "answered" or not (
        isinstance(out, str) and isinstance(err, str) and isinstance(code, int) and not isinstance(code, bool)
    ):
        return _no_answer(f"malformed answer {sorted(reply)}", event)
    return Answer(out, err, code)


def _no_answer(why: str, event: str | None) -> Answer:
    """The server took the event and gave no usable answer: a block, but a prompt goes on."""
    if event == "UserPromptSubmit":
        note = (
            f"intently: the hook server took the prompt but gave no answer ({why}); it goes on without the "
            "context block (a very long prompt? give long text as a file)"
        )
        return Answer(json.dumps({"systemMessage": note}, ensure_ascii=False) + "\n", note + "\n", 0)
    return Answer("", _blocked(why), 2)


def ping(home: Path) -> dict[str, Any] | None:
    """What the server for ``home`` says about itself (pid, counts), or ``None`` if none answers."""
    conn = connect(home)
    if conn is None:
        return None
    try:
        write_message(conn, {"protocol": PROTOCOL, "ping": True})
        reply = read_message(conn)
    except (OSError, ValueError):
        return None
    finally:
        conn.close()
    return reply if reply.get("status") == "alive" else None


# A server that cannot start is not started again for this long (each hook would try).
RESPAWN_AFTER_S = 30.0


def start_wanted(home: Path) -> bool:
    """Start a server in the background if ``[hooks] server = true`` and none is listening.

    Returns whether one was started. The event at hand is still answered in-process; the next
    ones go to the server once it is up. Its output goes to ``state/hook-serve.log``.
    """
    if not server_supported():
        return False  # checked first: the socket's path needs a user id
    path = socket_path(home)
    if path.exists() or not _server_wanted(home):
        return False
    state = home / "state"
    marker = state / "hook-serve.started"
    try:
        if time.time() - marker.stat().st_mtime < RESPAWN_AFTER_S:
            return False  # one is starting, or failed a moment ago: see hook-serve.log
    except FileNotFoundError:
        pass
    import subprocess
    import sys

    state.mkdir(parents=True, exist_ok=True)
    marker.touch()
    with open(state / "hook-serve.log", "ab") as log:
        subprocess.Popen(
            [sys.executable, "-c", "import sys; from intently.cli import main; sys.exit(main())", "hook", "serve"],
            cwd=home.parent,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # outlives this hook process, and its terminal's signals
        )
    return True


def _server_wanted(home: Path) -> bool:
    """``[hooks] server`` of the home's ``intently.toml`` is ``true`` (anything unreadable: no)."""
    import tomllib

    try:
        data = tomllib.loads((home / "intently.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False  # the in-process hook reports a broken config
    hooks = data.get("hooks")
    return isinstance(hooks, dict) and hooks.get("server") is True


def _blocked(why: str) -> str:
    return f"intently: the hook server took the event but gave no answer ({why}); blocked to fail closed\n"
