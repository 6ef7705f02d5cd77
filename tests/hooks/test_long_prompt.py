"""A very long prompt (a pasted log) is answered in bounded time, and says what it skipped.

The context block and extraction read a prompt of more than ``MAX_PROMPT_READ_CHARS`` as its
head and its tail; the prompt is still recorded whole, and the gate still reads all of it. A
one-shot hook process answers a prompt by its deadline with what it has made so far: a pasted
prompt of megabytes used to keep Claude Code waiting for minutes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from intently import Intently
from intently.gate import default_bundle
from intently.gate._intent import reading_key
from intently.hooks import session_record
from intently.hooks._claude import MAX_PROMPT_READ_CHARS

from .conftest import Handler, event


def _filler(chars: int) -> str:
    """Log lines with none of the tests' trigger words in them."""
    lines = (
        f"step {n}: the build wrote {n % 97} objects to the cache in {n % 13} ms and went on." for n in range(10**7)
    )
    out: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > chars:
            break
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


def _long_prompt(chars: int) -> str:
    head = "Here is the log of the failing run, read it and tell me what broke.\n"
    middle = "\nThe quarterly migration window is mentioned here, deep in the log.\n"
    tail = "\nThat was the log. Before the launch checklist goes out, say what to fix first."
    half = (chars - len(head) - len(middle) - len(tail)) // 2
    return head + _filler(half) + middle + _filler(half) + tail


def test_a_long_prompt_is_read_at_its_head_and_tail_and_recorded_whole(
    ix: Intently, project: Path, handle: Handler
) -> None:
    """The block matches the prompt's head and tail (the question after a pasted log), not
    what lies between, and the user is told how much was skipped; the gate's record keeps it all."""
    tail = ix.triggers.add("Confirm the rollback owner", when="launch checklist", expires="2099-01-01")
    middle = ix.triggers.add("Book the migration window", when="quarterly migration", expires="2099-01-01")
    prompt = _long_prompt(4 * MAX_PROMPT_READ_CHARS)
    done = handle(event("UserPromptSubmit", project, prompt=prompt))
    assert done.exit_code == 0, done.stderr
    answer = json.loads(done.stdout)
    block = answer["hookSpecificOutput"]["additionalContext"]
    assert "Confirm the rollback owner" in block and "Book the migration window" not in block
    assert [ix.triggers.show(i.id).fire_count for i in (tail, middle)] == [1, 0]
    skipped = len(prompt) - MAX_PROMPT_READ_CHARS
    assert f"{len(prompt):,} characters" in answer["systemMessage"]
    assert f"{skipped:,} in between were skipped (the gate reads it all)" in answer["systemMessage"]
    with session_record(ix.home.state_dir, event("UserPromptSubmit", project)["session_id"]) as record:
        assert record.requests == [prompt] and record.gate_session is not None and len(record.readings) == 1


def test_a_prompt_of_normal_length_is_read_whole_without_a_note(ix: Intently, project: Path, handle: Handler) -> None:
    prompt = _long_prompt(MAX_PROMPT_READ_CHARS - 100)
    ix.triggers.add("Book the migration window", when="quarterly migration", expires="2099-01-01")
    done = handle(event("UserPromptSubmit", project, prompt=prompt))
    answer = json.loads(done.stdout)
    assert "Book the migration window" in answer["hookSpecificOutput"]["additionalContext"]
    assert "systemMessage" not in answer and done.stderr == ""


def test_a_huge_prompt_is_answered_by_the_deadline_with_the_context_block(ix: Intently, project: Path) -> None:
    """A prompt of megabytes: the gate's reading of it alone takes far longer than Claude Code
    waits (and the whole hook took minutes). The installed hook answers at its deadline (the
    default, 20 s) with the context block it assembled first (exit 0: blocking a prompt erases
    it) and says what it left undone; the prompt is recorded, so the tool calls still see it as
    the user's request."""
    ix.triggers.add("Confirm the rollback owner", when="launch checklist", expires="2099-01-01")
    # Its reading takes over 20 s of CPU (so over 20 s of wall time on any machine): 4 MB did,
    # before the reading got faster (now about 2 s of CPU per MB of such lines).
    prompt = _long_prompt(12_000_000)
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env.update(INTENTLY_ACTOR="user:alice")
    payload: dict[str, Any] = event("UserPromptSubmit", project, prompt=prompt)
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "intently.hooks", "hook", "claude"],
        input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=project, timeout=90,
    )  # fmt: skip
    elapsed = time.monotonic() - start
    assert done.returncode == 0, done.stderr
    assert elapsed < 40  # the deadline, and the time to start and to take the prompt in
    answer = json.loads(done.stdout)
    message = answer["systemMessage"]
    assert "the gate's reading of the prompt did not finish within 20 s" in message, message
    assert "/clear" in message and "in between were skipped" in message and message.startswith("intently: ")
    assert "Confirm the rollback owner" in answer["hookSpecificOutput"]["additionalContext"]
    assert "did not finish within 20 s" in done.stderr
    with session_record(ix.home.state_dir, payload["session_id"]) as record:
        assert record.requests == [prompt] and record.gate_session is None


def _tool_call(project: Path, session: str) -> dict[str, Any]:
    call = event(
        "PreToolUse", project, tool_name="Write", tool_input={"file_path": str(project / "notes.md"), "content": "x"}
    )
    return {**call, "session_id": session}


def test_after_a_big_prompt_each_tool_call_decides_from_its_kept_reading_as_for_the_short_prompt(
    ix: Intently, project: Path
) -> None:
    """Real hook processes, as Claude Code runs them. The instruction at the head of a pasted
    log of megabytes ("do not create or change any file") decides a tool call as it does alone:
    the gate reads the prompt whole. It is read once (on arrival, or by the first tool call
    when that did not finish) and every later call decides from the kept reading: the proof
    is that a call follows the reading in the session record, not the prompt's text."""
    instruction = "Look at the log below and tell me what broke. Do not create or change any file."
    prompt = instruction + "\n" + _filler(1_000_000) + "\nThat was the log."
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env.update(INTENTLY_ACTOR="user:alice")

    def hook(payload: dict[str, Any]) -> Any:
        return subprocess.run(
            [sys.executable, "-m", "intently.hooks", "hook", "claude"],
            input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=project, timeout=90,
        )  # fmt: skip

    def decided(done: Any) -> tuple[str, str]:
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)["hookSpecificOutput"]
        return answer.get("permissionDecision", "allow"), answer.get("permissionDecisionReason", "")

    short, big = "short-session", "big-session"
    assert hook({**event("UserPromptSubmit", project, prompt=instruction), "session_id": short}).returncode == 0
    expected = decided(hook(_tool_call(project, short)))
    assert expected[0] == "deny" and "the request says not to" in expected[1], expected

    assert hook({**event("UserPromptSubmit", project, prompt=prompt), "session_id": big}).returncode == 0
    first = decided(hook(_tool_call(project, big)))
    assert first[0] == expected[0] and "the request says not to" in first[1], first
    key = reading_key(prompt, default_bundle().vocabulary)
    with session_record(ix.home.state_dir, big) as record:
        assert record.requests == [prompt] and key in record.readings
        # A kept reading without the negation: a call that read the prompt again would still
        # be refused; one that uses the kept reading is not refused for it.
        record.readings[key] = {
            **record.readings[key],
            "clauses": [[t, k, [], o, p] for t, k, _, o, p in record.readings[key]["clauses"]],
        }
    second = decided(hook(_tool_call(project, big)))
    assert "the request says not to" not in second[1], second
