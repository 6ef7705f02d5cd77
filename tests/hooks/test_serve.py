"""``intently hook serve``: the installed hook hands its event to a running server, gets the
same answer, and falls back or fails closed whenever the server cannot be trusted to give it.

Everything is real: the server is ``intently hook serve`` in its own process, the client is
the command ``intently hook install`` writes, and they talk over a Unix socket.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from intently import Intently
from intently.hooks import session_record
from intently.hooks._wire import read_message, socket_path
from tests._config import set_config

from .conftest import INTENTLY, event, run_command
from .test_long_prompt import _long_prompt, late_answer

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="the hook server needs Unix sockets")


@pytest.fixture(autouse=True)
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Sockets of this test only (server, client and this process all read XDG_RUNTIME_DIR),
    in a short folder: a socket path has a length limit pytest's own folders can exceed."""
    folder = Path(tempfile.mkdtemp(prefix="ih-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


class Server:
    def __init__(self, process: subprocess.Popen[str], path: Path) -> None:
        self.process = process
        self.path = path

    def stop(self) -> str:
        """Stop it (SIGTERM, as a service manager does) and return everything it printed."""
        if self.process.poll() is None:
            self.process.terminate()
        out, _ = self.process.communicate(timeout=30)
        return out


def start_server(
    project: Path, *extra: str, actor: str = "user:alice", env_extra: dict[str, str] | None = None
) -> Server:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env["INTENTLY_ACTOR"] = actor
    env.update(env_extra or {})
    process = subprocess.Popen(
        [INTENTLY, "hook", "serve", *extra],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    first = process.stdout.readline()  # printed once clients can connect
    if not first.startswith("Serving Claude Code hook events"):
        raise AssertionError(f"hook serve did not start: {first}{process.communicate()[0]}")
    return Server(process, socket_path(project / ".intently"))


@pytest.fixture
def server(ix: Intently, project: Path) -> Iterator[Server]:
    running = start_server(project)
    yield running
    running.stop()


def installed_hook(payload: dict[str, object], *, actor: str = "user:alice") -> subprocess.CompletedProcess[str]:
    return run_command([sys.executable, "-m", "intently.hooks", "hook", "claude"], payload, actor=actor)


def decision(done: subprocess.CompletedProcess[str]) -> str:
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    return str(answer.get("permissionDecision", "allow"))


def test_the_installed_hook_hands_events_to_the_server_and_gets_the_in_process_answer(
    ix: Intently, project: Path, server: Server
) -> None:
    (project / "notes.md").write_text("# notes\n", encoding="utf-8")
    prompt = event("UserPromptSubmit", project, prompt="Summarise notes.md for me")
    read = event("PreToolUse", project, tool_name="Read", tool_input={"file_path": str(project / "notes.md")})
    wipe = event("PreToolUse", project, tool_name="Bash", tool_input={"command": "rm -rf build"})

    served = [installed_hook(p) for p in (prompt, read, wipe)]
    assert [d.returncode for d in served] == [0, 0, 0], [d.stderr for d in served]
    assert "additionalContext" in json.loads(served[0].stdout)["hookSpecificOutput"]
    assert [decision(d) for d in served[1:]] == ["allow", "deny"]

    # the same events answered in-process by the CLI, which never forwards
    in_process = [run_command([INTENTLY, "hook", "claude"], p) for p in (read, wipe)]
    assert [decision(d) for d in in_process] == ["allow", "deny"]
    reasons = [
        json.loads(d.stdout)["hookSpecificOutput"].get("permissionDecisionReason", "")
        for d in (served[2], in_process[1])
    ]
    assert reasons[0].split(" (decision ")[0] == reasons[1].split(" (decision ")[0]

    log = server.stop()
    assert log.count("answered PreToolUse exit 0") == 2 and "answered UserPromptSubmit exit 0" in log
    assert not server.path.exists()  # removed on the way out
    with Intently.open(ix.home.path, actor="user:alice") as again:
        assert len(again.log.read("proj", op="GATE_DECIDED")) == 4  # every decision logged, served or not
        assert again.log.verify().ok


def test_a_hook_with_another_environment_is_declined_and_answers_itself(
    ix: Intently, project: Path, server: Server
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env.update({"INTENTLY_ACTOR": "user:alice", "INTENTLY_NAMESPACE": "proj"})  # the server has no namespace set
    payload = event("PreToolUse", project, tool_name="Bash", tool_input={"command": "rm -rf build"})
    done = subprocess.run(
        [sys.executable, "-m", "intently.hooks", "hook", "claude"],
        input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and decision(done) == "deny"
    assert "declined: different INTENTLY_* environment" in server.stop()


def test_without_a_server_or_with_a_stale_socket_the_hook_answers_itself(ix: Intently, project: Path) -> None:
    payload = event("PreToolUse", project, tool_name="Bash", tool_input={"command": "rm -rf build"})
    assert decision(installed_hook(payload)) == "deny"  # nothing listening
    path = socket_path(project / ".intently")
    path.parent.mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()  # a socket file nobody listens on, as a killed server leaves it
    done = installed_hook(payload)
    assert done.returncode == 0 and decision(done) == "deny"
    fresh = start_server(project)  # and a new server clears it
    try:
        assert decision(installed_hook(payload)) == "deny"
    finally:
        assert "answered PreToolUse exit 0" in fresh.stop()


def test_a_server_that_takes_the_event_and_gives_no_answer_blocks(ix: Intently, project: Path) -> None:
    path = socket_path(project / ".intently")
    path.parent.mkdir(mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    got: list[dict[str, object]] = []

    def take_and_drop() -> None:
        conn, _ = listener.accept()
        with conn:
            got.append(read_message(conn))  # reads the event, then hangs up without answering

    thread = threading.Thread(target=take_and_drop)
    thread.start()
    try:
        payload = event("PreToolUse", project, tool_name="Read", tool_input={"file_path": str(project / "a.txt")})
        done = installed_hook(payload)
    finally:
        thread.join(timeout=30)
        listener.close()
    assert got and got[0]["stdin"] == json.dumps(payload)
    assert done.returncode == 2 and "blocked to fail closed" in done.stderr


def test_a_server_that_gives_no_answer_to_a_prompt_lets_the_prompt_go_on(ix: Intently, project: Path) -> None:
    """A prompt the server takes and never answers (a prompt of megabytes outlasting the
    client's wait) used to be blocked, and a blocked prompt is erased: it goes on now, with the
    reason in systemMessage. A tool call in the same case still blocks (the test above)."""
    path = socket_path(project / ".intently")
    path.parent.mkdir(mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def take_and_drop() -> None:
        conn, _ = listener.accept()
        with conn:
            read_message(conn)

    thread = threading.Thread(target=take_and_drop)
    thread.start()
    try:
        done = installed_hook(event("UserPromptSubmit", project, prompt="Summarise notes.md for me"))
    finally:
        thread.join(timeout=30)
        listener.close()
    assert done.returncode == 0, done.stderr
    message = json.loads(done.stdout)["systemMessage"]
    assert "the hook server took the prompt but gave no answer" in message and message in done.stderr


def test_a_socket_folder_others_can_enter_is_never_used(ix: Intently, project: Path) -> None:
    folder = socket_path(project / ".intently").parent
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    refused = subprocess.run(
        [INTENTLY, "hook", "serve"], cwd=project, capture_output=True, text=True, timeout=60,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}, "INTENTLY_ACTOR": "user:alice"},
    )  # fmt: skip
    assert refused.returncode != 0 and "mode 0700" in refused.stderr and str(folder) in refused.stderr
    payload = event("PreToolUse", project, tool_name="Bash", tool_input={"command": "rm -rf build"})
    assert decision(installed_hook(payload)) == "deny"  # the client ignores the folder and answers itself


def test_one_server_per_home_and_it_stops_when_idle(ix: Intently, project: Path) -> None:
    first = start_server(project, "--idle-timeout", "6")  # longer than a loaded machine takes to start the second
    try:
        second = subprocess.run(
            [INTENTLY, "hook", "serve"], cwd=project, capture_output=True, text=True, timeout=60,
            env={**{k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}, "INTENTLY_ACTOR": "user:alice"},
        )  # fmt: skip
        assert second.returncode != 0 and "already answers" in second.stderr
        assert first.process.wait(timeout=30) == 0  # idle for 6 s: stopped by itself
        assert "Stopped: 0 answered, 0 declined" in first.stop()
        assert not first.path.exists()
    finally:
        first.stop()


def test_a_stuck_server_blocks_before_claude_code_gives_up_on_the_hook() -> None:
    """Claude Code treats a hook that times out as a non-blocking error (the call would go on):
    the client must give up on the server, and block, first."""
    from intently.hooks._install import _TIMEOUT_S
    from intently.hooks._wire import ANSWER_TIMEOUT_S

    assert ANSWER_TIMEOUT_S < _TIMEOUT_S


def test_after_an_upgrade_the_server_declines_and_stops(ix: Intently, project: Path) -> None:
    """A server must not answer with the code it loaded before intently's files changed."""
    import intently.hooks._wire as wire

    running = start_server(project)
    payload = event("PreToolUse", project, tool_name="Bash", tool_input={"command": "rm -rf build"})
    target = Path(wire.__file__)
    before = target.stat()
    try:
        assert decision(installed_hook(payload)) == "deny"
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))  # as an upgrade rewrites it
        assert decision(installed_hook(payload)) == "deny"  # answered in-process
        assert running.process.wait(timeout=30) == 0
    finally:
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        log = running.stop()
    assert "answered PreToolUse exit 0" in log and "declined: intently's code changed" in log
    assert not running.path.exists()


def test_with_server_true_the_first_hook_starts_one_and_later_hooks_use_it(ix: Intently, project: Path) -> None:
    set_config(ix.home.config_path, "hooks", "server", "true")
    payload = event("PreToolUse", project, tool_name="Bash", tool_input={"command": "rm -rf build"})
    assert decision(installed_hook(payload)) == "deny"  # answered in-process, while a server starts
    path = socket_path(project / ".intently")
    log = project / ".intently" / "state" / "hook-serve.log"
    for _ in range(600):
        if path.exists() and "Serving" in log.read_text(encoding="utf-8"):
            break
        time.sleep(0.05)
    first = log.read_text(encoding="utf-8").splitlines()[0]
    pid = int(first.split("(pid ")[1].split(";")[0])
    try:
        assert decision(installed_hook(payload)) == "deny"
        assert decision(installed_hook(payload)) == "deny"
    finally:
        os.kill(pid, 15)
    for _ in range(600):
        if not path.exists():
            break
        time.sleep(0.05)
    text = log.read_text(encoding="utf-8")
    assert text.count("answered PreToolUse exit 0") == 2, text
    assert not path.exists()


def test_hook_status_says_whether_a_server_answers_and_what_it_did(ix: Intently, project: Path) -> None:
    def status() -> dict[str, object]:
        done = run_command([INTENTLY, "hook", "status", "--json"], "", cwd=project)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    assert status()["running"] is False
    running = start_server(project)
    try:
        payload = event("PreToolUse", project, tool_name="Bash", tool_input={"command": "rm -rf build"})
        assert decision(installed_hook(payload)) == "deny"
        now = status()
        assert now["running"] is True and now["pid"] == running.process.pid
        assert (now["answered"], now["declined"]) == (1, 0)
    finally:
        running.stop()
    assert status()["running"] is False


def test_a_client_that_trickles_its_event_does_not_hold_the_server(ix: Intently, project: Path, server: Server) -> None:
    """The server answers one event at a time: a client that sends a length and then nothing
    is dropped after a short deadline, and the next hook is still answered by the server."""
    slow = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    slow.connect(str(server.path))
    slow.sendall((100).to_bytes(8, "big"))  # promises 100 bytes, sends none
    try:
        read = event("PreToolUse", project, tool_name="Read", tool_input={"file_path": str(project / "a.txt")})
        done = installed_hook(read)
        assert done.returncode == 0, done.stderr
        assert decision(done) in ("allow", "defer", "ask")
    finally:
        slow.close()
    assert "answered PreToolUse" in server.stop()


def test_events_of_concurrent_sessions_are_answered_side_by_side(ix: Intently, project: Path, server: Server) -> None:
    """The server used to answer one event at a time: a session whose event was slow (here,
    waiting on its session file, which another process holds) held every other Claude Code
    session's tool calls in the queue, up to the client's 25 s limit, which then blocks them.
    Each event is now answered in a child of its own."""
    from intently.hooks._record import session_record

    read = {"tool_name": "Read", "tool_input": {"file_path": str(project / "notes.md")}}
    stuck = {**event("PreToolUse", project, **read), "session_id": "stuck-session"}
    other = {**event("PreToolUse", project, **read), "session_id": "other-session"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env["INTENTLY_ACTOR"] = "user:alice"
    stdin = project / "stuck-event.json"
    stdin.write_text(json.dumps(stuck), encoding="utf-8")
    with session_record(ix.home.state_dir, "stuck-session"), stdin.open(encoding="utf-8") as given:
        waiting = subprocess.Popen(
            [sys.executable, "-m", "intently.hooks", "hook", "claude"],
            stdin=given,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        time.sleep(1.0)  # handed over, and waiting for the session file
        began = time.monotonic()
        done = installed_hook(other)
        took = time.monotonic() - began
        assert waiting.poll() is None  # still waiting: the other session did not queue behind it
    assert done.returncode == 0, done.stderr
    assert decision(done) == "allow" and took < 20
    out, err = waiting.communicate(timeout=30)
    assert waiting.returncode == 0, err
    assert decision(subprocess.CompletedProcess([], 0, out, err)) == "allow"
    log = server.stop()
    assert log.count("answered PreToolUse exit 0") == 2, log


def test_a_served_event_gets_its_own_warnings(ix: Intently, project: Path, server: Server) -> None:
    """Events are answered in threads, where ``catch_warnings`` (process-wide) cannot be used:
    each event's warnings still reach its own answer, once, every time."""
    folder = ix.home.path / "requirements"
    folder.mkdir(exist_ok=True)
    (folder / "req-0000000000aa.md").write_text("---\nid: req-0000000000aa\nstatus: actve\n---\nUse pytest.\n")
    start = event("SessionStart", project, source="startup")
    answers = [installed_hook(start) for _ in range(2)]
    for done in answers:
        assert done.returncode == 0, done.stderr
        assert "intently: warning: skipped" in done.stderr and "req-0000000000aa.md" in done.stderr
        assert ".py:" not in done.stderr and done.stderr.count("warning:") == 1
    assert server.stop().count("answered SessionStart exit 0") == 2


def test_a_huge_prompt_is_answered_by_the_server_at_the_deadline_with_the_context_block(
    ix: Intently, project: Path
) -> None:
    """A pasted prompt of megabytes: the server's gate reading of it outlasted the client's 25 s
    wait, so the user got no context block (and the server kept reading at full CPU). The
    server now answers at the one-shot hook's deadline with the block and the same note, once;
    the work it gave up stops, logs no gate session and leaves the session record as the
    answer says (prompt recorded, no gate session, no readings), and the server answers on.

    The server is warmed up first by short prompts until one is answered in full (its first
    prompt loads extraction and the engines behind the block: on a loaded machine more than the
    10 s deadline, which then passed before the huge prompt's block was assembled), and a
    deadline that still passed before the block was assembled is tried again with a longer one
    (:func:`late_answer`), under the client's 25 s wait."""
    ix.triggers.add("Confirm the rollback owner", when="launch checklist", expires="2099-01-01")
    prompt = _long_prompt(8_000_000)  # its gate reading alone takes over 15 s of CPU, so over 10 s
    tries = iter(range(3))
    warm_sessions: list[str] = []

    def run(deadline: float | None) -> tuple[Any, subprocess.CompletedProcess[str], float, str, float, str]:
        seconds = {"INTENTLY_HOOK_DEADLINE_S": f"{deadline:g}"}  # the client's environment must equal the server's
        env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
        env.update(INTENTLY_ACTOR="user:alice", **seconds)

        def hook(payload: dict[str, Any]) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "intently.hooks", "hook", "claude"],
                input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=project, timeout=90,
            )  # fmt: skip

        n = next(tries)
        running = start_server(project, env_extra=seconds)
        try:
            for i in range(6):  # until one is answered in full: the server's one-time loading is done
                warm_sessions.append(f"w{n}-{i}")
                warm = hook(
                    {
                        **event("UserPromptSubmit", project, prompt="What is left to do today?"),
                        "session_id": f"w{n}-{i}",
                    }
                )
                assert warm.returncode == 0, warm.stderr
                if "did not finish" not in warm.stdout:
                    break
            start = time.monotonic()
            done = hook({**event("UserPromptSubmit", project, prompt=prompt), "session_id": f"huge-{n}"})
            elapsed = time.monotonic() - start
            assert done.returncode == 0, done.stderr
            after = hook(event("SessionStart", project))
            assert after.returncode == 0 and "additionalContext" in after.stdout, after.stderr
        finally:
            stopping = time.monotonic()
            running.process.terminate()
            out, _ = running.process.communicate(timeout=180)  # it stops once the given-up reading ends
        return json.loads(done.stdout), done, elapsed, out, time.monotonic() - stopping, f"huge-{n}"

    (answer, done, elapsed, out, stopping, session), seconds = late_answer(run, (10.0, 15.0))
    message = answer["systemMessage"]
    assert f"the gate's reading of the prompt did not finish within {seconds:g} s" in message, message
    assert "in between were skipped" in message and "/clear" in message
    assert "Confirm the rollback owner" in answer["hookSpecificOutput"]["additionalContext"]
    assert f"did not finish within {seconds:g} s" in done.stderr
    assert elapsed < seconds + 12, elapsed  # the deadline and the hand-over, before the client's 25 s
    # The given-up reading stopped at once (before, it read on for the prompt's whole length).
    assert stopping < 8, out
    warm_here = [w for w in warm_sessions if w.startswith(f"w{session.removeprefix('huge-')}-")]
    assert out.count("answered UserPromptSubmit") == len(warm_here) + 1 and "answered SessionStart" in out, out
    with session_record(ix.home.state_dir, session) as record:
        assert record.requests == [prompt] and record.gate_session is None and record.readings == {}
    warmed: set[str | None] = set()
    for name in warm_sessions:
        with session_record(ix.home.state_dir, name) as record:
            warmed.add(record.gate_session)
    opened = {op.target for op in ix.log.read(ix.namespace, op="GATE_SESSION_OPENED")}
    assert opened <= warmed  # the warm-ups' gate sessions only, none for the prompt given up on


def test_a_tool_call_the_server_cannot_decide_by_the_deadline_is_blocked_and_logs_nothing(
    ix: Intently, project: Path
) -> None:
    """After a prompt whose reading the server gave up on, a tool call must read it for the
    gate. The server gave that no deadline of its own: the client blocked at its 25 s wait
    (or, for a reading that finished later, got an answer nobody then asked for), while the
    server's thread read on and could still log a gate session and a decision nobody used.
    Now the server answers a tool call by the one-shot hook's deadline, blocked with the same
    reason; the check it gave up on stops reading and logs nothing."""
    deadline = {"INTENTLY_HOOK_DEADLINE_S": "2"}  # the client's environment must equal the server's
    running = start_server(project, env_extra=deadline)
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env.update(INTENTLY_ACTOR="user:alice", **deadline)

    def hook(payload: dict[str, object]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "intently.hooks", "hook", "claude"],
            input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=project, timeout=90,
        )  # fmt: skip

    try:
        prompt = _long_prompt(5_000_000)  # its reading takes many times 2 s of CPU
        asked = hook(event("UserPromptSubmit", project, prompt=prompt))
        assert asked.returncode == 0 and "did not finish within 2 s" in asked.stdout, asked.stderr
        call = event(
            "PreToolUse",
            project,
            tool_name="Write",
            tool_input={"file_path": str(project / "notes.md"), "content": "x"},
        )
        done = hook(call)
        assert done.returncode == 2, (done.stdout, done.stderr)
        assert "no decision within 2 s, blocked to fail closed" in done.stderr, done.stderr
        assert "no answer" not in done.stderr  # the server's answer, not the client giving up at 25 s
    finally:
        running.process.terminate()
        out, _ = running.process.communicate(timeout=180)  # it stops once the given-up work ends
    assert "answered PreToolUse exit 2" in out, out
    assert ix.log.read(ix.namespace, op="GATE_SESSION_OPENED") == []
    assert ix.log.read(ix.namespace, op="GATE_DECIDED") == []
    with session_record(ix.home.state_dir, call["session_id"]) as record:
        assert record.requests == [prompt] and record.gate_session is None and record.readings == {}
