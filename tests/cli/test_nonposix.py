"""intently on a Python without POSIX-only modules (Windows): the core commands work.

No Windows machine runs these: ``tests/_nonposix.py`` makes ``fcntl``, ``pwd``, ``grp``,
``termios`` and ``resource`` unimportable and takes from ``os`` and ``socket`` what Windows'
Python lacks, then runs the real CLI in a subprocess. Before this was supported, ``init``
already failed (``os.fchmod``), and every command that imports the requirements scan or the
hooks (``fcntl`` at module level) could not even load.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

NONPOSIX = Path(__file__).resolve().parents[1] / "_nonposix.py"


def nonposix(
    *args: str, cwd: Path, stdin: str | None = None, msvcrt: bool = False, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``tests/_nonposix.py ARGS`` (the CLI, ``-m`` or ``-c``) as user:alice in ``cwd``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("INTENTLY_", "NONPOSIX_"))}
    environ |= {"NO_COLOR": "1", "COLUMNS": "200", "INTENTLY_ACTOR": "user:alice"}
    if msvcrt:
        environ["NONPOSIX_MSVCRT"] = "1"
    environ |= env or {}
    return subprocess.run(
        [sys.executable, str(NONPOSIX), *args],
        cwd=cwd,
        env=environ,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
    )


def ok(proc: subprocess.CompletedProcess[str]) -> Any:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.lstrip().startswith(("{", "[")) else proc.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


def test_the_stand_in_really_removes_the_posix_modules(project: Path) -> None:
    """The wrapper does what the other tests rely on: no fcntl, no fchmod, no user ids."""
    code = (
        "import importlib, os, socket\n"
        "for name in ('fcntl', 'pwd', 'grp', 'termios', 'resource'):\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError:\n"
        "        pass\n"
        "    else:\n"
        "        raise SystemExit(name + ' imported')\n"
        "assert not any(hasattr(os, a) for a in ('fchmod', 'getuid', 'fork')) and not hasattr(socket, 'AF_UNIX')\n"
        "from intently.core import locks\n"
        "print(locks.mechanism())\n"
    )
    assert ok(nonposix("-c", code, cwd=project)).strip() == "none"
    assert ok(nonposix("-c", code, cwd=project, msvcrt=True)).strip() == "msvcrt"


def test_core_commands_work_without_posix_modules(project: Path, database_url: str | None) -> None:
    """init, a goal, a requirement and the context block that carries it, a gate check and
    log verify: each exits 0 and does its job."""
    env = {"INTENTLY_DATABASE_URL": database_url} if database_url else None

    def cli(*args: str) -> Any:
        return ok(nonposix(*args, cwd=project, env=env))

    cli("init", "--json")
    assert (project / ".intently" / "intently.toml").is_file()
    goal = cli("goal", "add", "Ship the parser by Friday", "--json")
    req = cli("req", "add", "Never commit secrets to the repository", "--json")
    block = cli("context", "commit the configuration file", "--json")
    assert "Never commit secrets to the repository" in json.dumps(block)
    check = nonposix(
        "gate", "check", "Read", "-r", "read the readme", "--args", '{"file_path": "README.md"}', "--json",
        cwd=project, env=env,
    )  # fmt: skip
    assert ok(check)["outcome"] == "allow"
    verified = cli("log", "verify", "--json")
    assert verified["ok"] is True
    listed = cli("goal", "list", "--json")
    assert goal["id"] in json.dumps(listed)
    assert req["id"] in json.dumps(cli("req", "list", "--json"))


def _event(name: str, cwd: Path, **extra: Any) -> str:
    return json.dumps(
        {
            "session_id": "8a2f7c1e-5b0d-4f2a-9c3e-1d2b3c4d5e6f",
            "transcript_path": str(cwd / "transcript.jsonl"),
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": name,
            **extra,
        }
    )


def test_the_claude_hook_answers_in_process_without_posix_modules(project: Path) -> None:
    """Both hook entry points answer in-process (no hook server there): the prompt gets the
    context block, a read is let through, a destructive command is blocked. Without any file
    lock at all the hook cannot keep the session record safe and blocks instead (fail closed)."""
    ok(nonposix("init", cwd=project))
    ok(nonposix("req", "add", "Never commit secrets to the repository", cwd=project))
    prompt = _event("UserPromptSubmit", project, prompt="commit the configuration file")
    answer = ok(nonposix("hook", "claude", cwd=project, stdin=prompt, msvcrt=True))
    assert "Never commit secrets to the repository" in answer["hookSpecificOutput"]["additionalContext"]

    read = _event("PreToolUse", project, tool_name="Read", tool_input={"file_path": str(project / "README.md")})
    fast = nonposix("-m", "intently.hooks", "hook", "claude", cwd=project, stdin=read, msvcrt=True)
    assert fast.returncode == 0, fast.stderr
    assert "permissionDecision" not in json.loads(fast.stdout)["hookSpecificOutput"]  # let through
    wipe = _event("PreToolUse", project, tool_name="Bash", tool_input={"command": "rm -rf ~"})
    blocked = nonposix("-m", "intently.hooks", "hook", "claude", cwd=project, stdin=wipe, msvcrt=True)
    assert blocked.returncode == 0, blocked.stderr
    assert json.loads(blocked.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"

    unguarded = nonposix("-m", "intently.hooks", "hook", "claude", cwd=project, stdin=read)
    assert unguarded.returncode == 2
    assert "no file locks on this platform" in unguarded.stderr


def test_hook_serve_and_status_say_the_server_is_not_available(project: Path) -> None:
    ok(nonposix("init", cwd=project))
    status = ok(nonposix("hook", "status", "--json", cwd=project))
    assert status["supported"] is False and status["running"] is False and status["socket"] is None
    assert "not available on this platform" in status["detail"]
    assert "answered in-process" in ok(nonposix("hook", "status", cwd=project))

    serve = nonposix("hook", "serve", "--idle-timeout", "1", cwd=project)
    assert serve.returncode != 0
    assert "Traceback" not in serve.stderr
    assert "hook serve: the hook server is not available on this platform" in serve.stderr


def test_a_second_queue_drain_is_busy_on_the_windows_lock(project: Path) -> None:
    """The scan queue's lock on the Windows path: while another process holds ``scan.lock``,
    ``hook scan-queue`` answers busy at once (and leaves the queue as it is)."""
    ok(nonposix("init", cwd=project))
    state = project / ".intently" / "state"
    (state / "scan-queue.jsonl").write_text(
        json.dumps({"session_id": "s", "transcript_path": "t.jsonl", "event": "Stop", "queued_at": "x"}) + "\n",
        encoding="utf-8",
    )
    holder = subprocess.Popen(
        [sys.executable, str(NONPOSIX), "-c", _HOLD, str(state / "scan.lock")],
        env={**os.environ, "NONPOSIX_MSVCRT": "1"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held msvcrt"
        busy = nonposix("hook", "scan-queue", "--json", cwd=project, msvcrt=True)
        assert json.loads(busy.stdout)["status"] == "busy", busy.stdout + busy.stderr
    finally:
        holder.kill()
        holder.wait()
    assert "t.jsonl" in (state / "scan-queue.jsonl").read_text(encoding="utf-8")


# Take the lock on argv[1] through intently's lock module, say so, and hold it until killed.
_HOLD = (
    "import sys, time\n"
    "from intently.core import locks\n"
    "fh = open(sys.argv[1], 'a+')\n"
    "locks.lock(fh)\n"
    "print('held', locks.mechanism(), flush=True)\n"
    "time.sleep(600)\n"
)


# The servers' third-party stacks pick their POSIX branches by sys.platform (Linux here), so
# they are imported before the stand-in; AF_UNIX stays for Linux's socketpair (asyncio).
_SERVER_ENV = {"NONPOSIX_KEEP_AF_UNIX": "1", "NONPOSIX_PREIMPORT": "uvicorn,fastapi,mcp,anyio,httpx"}


def test_the_mcp_server_answers_over_stdio_without_posix_modules(project: Path) -> None:
    ok(nonposix("init", cwd=project))
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "gate_check", "arguments": {
            "user_request": "read the readme", "tool": "Read", "args": {"file_path": "README.md"}}}},
    ]  # fmt: skip
    server = subprocess.Popen(
        [sys.executable, str(NONPOSIX), "mcp"],
        cwd=project,
        env={**os.environ, **_SERVER_ENV, "INTENTLY_ACTOR": "user:alice"},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    try:
        for message in requests:
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
        answers = {}
        while 2 not in answers:
            line = server.stdout.readline()
            assert line, server.stderr.read() if server.stderr else ""
            reply = json.loads(line)
            answers[reply.get("id")] = reply
    finally:
        server.kill()
        server.wait()
    checked = json.loads(answers[2]["result"]["content"][0]["text"])
    assert checked["outcome"] == "allow"


def test_the_http_api_serves_without_posix_modules(project: Path) -> None:
    import socket
    import time
    import urllib.request

    ok(nonposix("init", cwd=project))
    token = ok(nonposix("token", "create", "--actor", "user:alice", "--json", cwd=project))["token"]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, str(NONPOSIX), "serve", "--port", str(port)],
        cwd=project,
        env={**os.environ, **_SERVER_ENV, "INTENTLY_ACTOR": "user:alice"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )

    def get(path: str) -> Any:
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                get("/v1/health")
                break
            except OSError:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.3)
        assert get("/v1/whoami")["actor"] == "user:alice"
        assert get("/v1/namespaces/proj/log/verify")["ok"] is True
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_scan_reads_git_as_utf8_whatever_the_locale(project: Path, database_url: str | None) -> None:
    """Windows decodes a child process's output with its ANSI code page (cp1252), not UTF-8;
    an ASCII locale stands in for that here. git writes commit messages and paths in UTF-8,
    so a scan of a commit saying "Не коммитить секреты — never commit secrets" failed with
    UnicodeDecodeError before git's output was decoded as UTF-8."""
    git = ["git", "-c", "user.email=a@example.com", "-c", "user.name=A"]
    subprocess.run(["git", "init", "-q", "."], cwd=project, check=True)
    (project / "AGENTS.md").write_text("# Rules\n\n- Always run the tests before pushing.\n", encoding="utf-8")
    subprocess.run([*git, "add", "."], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "Не коммитить секреты — never commit secrets"], cwd=project, check=True)
    env = {"INTENTLY_DATABASE_URL": database_url} if database_url else {}
    ok(nonposix("init", cwd=project, env=env))
    ascii_locale = {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    scan = subprocess.run(
        [str(Path(sys.executable).with_name("intently")), "req", "scan", "--json"],
        cwd=project,
        env={**os.environ, **ascii_locale, **env, "INTENTLY_ACTOR": "user:alice"},
        capture_output=True,
        timeout=180,
    )
    assert scan.returncode == 0, scan.stderr.decode("utf-8", "replace")
    statements = [d["statement"] for d in json.loads(scan.stdout)["decisions"]]
    assert "Не коммитить секреты — never commit secrets" in statements


def test_model_weights_are_hashed_every_time_where_owner_and_mode_cannot_be_checked(project: Path) -> None:
    """The record of verified weights is trusted only after its owner and mode are checked; with
    no user ids (Windows) nothing is taken as verified and each load hashes the file again, never
    failing and never skipping the check."""
    weights = project / "weights.bin"
    weights.write_bytes(b"w" * 4096)
    code = (
        "import hashlib, sys\n"
        "from pathlib import Path\n"
        "from intently.embed._verified import read_verified\n"
        "p = Path(sys.argv[1]); pinned = hashlib.sha256(p.read_bytes()).hexdigest()\n"
        "print(read_verified(p, pinned)[1] == pinned, read_verified(p, 'f' * 64)[1] == pinned)\n"
    )
    out = ok(nonposix("-c", code, str(weights), cwd=project, env={"XDG_CACHE_HOME": str(project / "cache")}))
    assert out.split() == ["True", "True"]  # the second call, pinned elsewhere, hashed the file again
