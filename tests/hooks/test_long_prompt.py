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
from intently.gate import default_bundle, opening_read
from intently.gate._intent import cut_prompt, reading_key, reading_keys
from intently.gate._request_facts import facts_key
from intently.hooks import session_record
from intently.hooks._claude import MAX_PROMPT_READ_CHARS
from intently.hooks._watchdog import PRE_TOOL_DEADLINE_S

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
        assert record.requests == [prompt] and record.gate_session is not None
        assert set(record.readings) == reading_keys([prompt], default_bundle().vocabulary) | {facts_key(prompt)}


def test_a_prompt_of_normal_length_is_read_whole_without_a_note(ix: Intently, project: Path, handle: Handler) -> None:
    prompt = _long_prompt(MAX_PROMPT_READ_CHARS - 100)
    ix.triggers.add("Book the migration window", when="quarterly migration", expires="2099-01-01")
    done = handle(event("UserPromptSubmit", project, prompt=prompt))
    answer = json.loads(done.stdout)
    assert "Book the migration window" in answer["hookSpecificOutput"]["additionalContext"]
    assert "systemMessage" not in answer and done.stderr == ""


#: Deadlines a huge-prompt test tries in turn: the default first, longer ones only when the
#: machine was too loaded to assemble the context block before it (see :func:`late_answer`).
DEADLINES: tuple[float | None, ...] = (None, 40.0, 80.0)


def late_answer(run: Any, deadlines: tuple[float | None, ...] = DEADLINES) -> tuple[Any, float]:
    """``run(deadline)``'s answer (its ``systemMessage`` names the step the deadline cut), for the
    first deadline that passed during the gate's reading of the prompt, and that deadline.

    What these tests check is what a deadline passing *in the reading* answers: the context
    block assembled before it, with the note. The steps before the reading (recording the
    prompt, extraction, the block) cost seconds of start-up each on a loaded machine, and a
    fixed 20 s deadline sometimes passed in them: the hook then rightly answered "assembling
    the context block did not finish", and the test failed on the machine's load, not on the
    hook. So the test waits on that condition: a deadline cut before the reading is tried again
    with a longer one (the reading of these prompts takes far longer still), up to a ceiling;
    any other answer is returned as it is, for the test to check."""
    for deadline in deadlines:
        answer = run(deadline)
        message = str(answer[0].get("systemMessage", "")) if isinstance(answer, tuple) else ""
        early = "did not finish within" in message and "the gate's reading of the prompt" not in message
        if not early:
            return answer, deadline or PRE_TOOL_DEADLINE_S
    return answer, deadline or PRE_TOOL_DEADLINE_S


def test_a_huge_prompt_is_answered_by_the_deadline_with_the_context_block(ix: Intently, project: Path) -> None:
    """A prompt of megabytes: the gate's reading of it alone takes far longer than Claude Code
    waits (and the whole hook took minutes). The installed hook answers at its deadline (the
    default, 20 s; a longer one on a machine too loaded to assemble the block in 20 s) with
    the context block it assembled first (exit 0: blocking a prompt erases it) and says what
    it left undone; the prompt is recorded, so the tool calls still see it as the user's request."""
    ix.triggers.add("Confirm the rollback owner", when="launch checklist", expires="2099-01-01")
    # Its reading takes over 20 s of CPU (so over 20 s of wall time on any machine): 4 MB did,
    # before the reading got faster (now about 2 s of CPU per MB of such lines).
    prompt = _long_prompt(12_000_000)
    tries = iter(range(len(DEADLINES)))

    def run(deadline: float | None) -> tuple[dict[str, Any], subprocess.CompletedProcess[str], float, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
        env.update(INTENTLY_ACTOR="user:alice")
        if deadline is not None:
            env["INTENTLY_HOOK_DEADLINE_S"] = f"{deadline:g}"
        session = f"huge-{next(tries)}"  # each try its own session: the record holds this try's prompt only
        payload: dict[str, Any] = {**event("UserPromptSubmit", project, prompt=prompt), "session_id": session}
        start = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "intently.hooks", "hook", "claude"],
            input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=project, timeout=180,
        )  # fmt: skip
        elapsed = time.monotonic() - start
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout), done, elapsed, session

    (answer, done, elapsed, session), seconds = late_answer(run)
    assert elapsed < seconds + 20  # the deadline, and the time to start and to take the prompt in
    message = answer["systemMessage"]
    assert f"the gate's reading of the prompt did not finish within {seconds:g} s" in message, message
    assert "/clear" in message and "in between were skipped" in message and message.startswith("intently: ")
    assert "Confirm the rollback owner" in answer["hookSpecificOutput"]["additionalContext"]
    assert f"did not finish within {seconds:g} s" in done.stderr
    with session_record(ix.home.state_dir, session) as record:
        assert record.requests == [prompt] and record.gate_session is None


def _tool_call(project: Path, session: str) -> dict[str, Any]:
    call = event(
        "PreToolUse", project, tool_name="Write", tool_input={"file_path": str(project / "notes.md"), "content": "x"}
    )
    return {**call, "session_id": session}


def _run_hook(payload: dict[str, Any], *, env: dict[str, str], project: Path, timeout: float) -> Any:
    """One ``python -m intently.hooks hook claude`` process, as Claude Code runs it."""
    return subprocess.run(
        [sys.executable, "-m", "intently.hooks", "hook", "claude"],
        input=json.dumps(payload), capture_output=True, text=True, env=env, cwd=project, timeout=timeout,
    )  # fmt: skip


def decided(done: Any) -> tuple[str, str]:
    """The permission decision and its reason of a hook process that exited 0."""
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    return answer.get("permissionDecision", "allow"), answer.get("permissionDecisionReason", "")


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
        return _run_hook(payload, env=env, project=project, timeout=90)

    short, big = "short-session", "big-session"
    assert hook({**event("UserPromptSubmit", project, prompt=instruction), "session_id": short}).returncode == 0
    expected = decided(hook(_tool_call(project, short)))
    assert expected[0] == "deny" and "the request says not to" in expected[1], expected

    assert hook({**event("UserPromptSubmit", project, prompt=prompt), "session_id": big}).returncode == 0
    done = hook(_tool_call(project, big))
    for _ in range(10):  # on a loaded machine a call may reach its deadline first: the next goes on from it
        if done.returncode != 2 or "no decision within" not in done.stderr:
            break
        done = hook(_tool_call(project, big))
    first = decided(done)
    assert first[0] == expected[0] and "the request says not to" in first[1], first
    # The prompt is read in chunks, each kept on its own; the instruction is in the first.
    key = reading_key(cut_prompt(prompt)[0][0], default_bundle().vocabulary)
    with session_record(ix.home.state_dir, big) as record:
        assert record.requests == [prompt] and set(record.readings) == reading_keys(
            [prompt], default_bundle().vocabulary
        ) | {facts_key(prompt)}
        # A kept reading without the negation: a call that read the prompt again would still
        # be refused; one that uses the kept reading is not refused for it.
        record.readings[key] = {
            **record.readings[key],
            "clauses": [[t, k, [], o, p] for t, k, _, o, p in record.readings[key]["clauses"]],
        }
    second = decided(hook(_tool_call(project, big)))
    assert "the request says not to" not in second[1], second


def _kept(state_dir: Path, session: str, keys: set[str]) -> set[str]:
    """The chunk readings the session record holds now, read as another process would see it."""
    from intently.hooks._record import _file_for

    path = _file_for(state_dir, session)
    try:
        return set(json.loads(path.read_text(encoding="utf-8"))["readings"]) & keys
    except (FileNotFoundError, json.JSONDecodeError):
        return set()


def _killed_once_it_kept_part(
    payload: dict[str, Any], env: dict[str, str], project: Path, state_dir: Path, keys: set[str], before: set[str]
) -> set[str]:
    """Run one hook process and end it (SIGKILL, as Claude Code or the watchdog would at the
    deadline) as soon as its record shows more chunks read than ``before``, but not all:
    the readings it kept, or what it kept when it ended on its own."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "intently.hooks", "hook", "claude"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=project, text=True,
    )  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(payload))
    proc.stdin.close()
    try:
        while proc.poll() is None:
            kept = _kept(state_dir, payload["session_id"], keys)
            if before < kept < keys:
                proc.kill()
                break
            time.sleep(0.05)
    finally:
        proc.kill()
        proc.wait(timeout=60)
    return _kept(state_dir, payload["session_id"], keys)


def test_a_prompt_read_across_killed_processes_is_decided_once_all_its_chunks_are_read(
    ix: Intently, project: Path
) -> None:
    """Real hook processes, each ended in the middle of the gate's reading of a pasted log of
    megabytes (a loaded machine gives a hook about 3 s of CPU in its 20 s): before, a process
    kept nothing of a reading it did not finish, so every call started over and was blocked at
    its deadline, for good. Now each keeps the chunks it read, the next goes on from there,
    and the call after the last chunk is decided as for the instruction alone, from the kept
    readings (a marker put in a kept reading shows up in what the gate logged). The prompt is
    logged once: the later calls go to the session the first decided call opened."""
    instruction = "Look at the log below and tell me what broke. Do not create or change any file."
    prompt = instruction + "\n" + _filler(3_000_000) + "\nThat was the log."
    vocab = default_bundle().vocabulary
    keys = reading_keys([prompt], vocab)
    assert len(keys) > 20
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env.update(INTENTLY_ACTOR="user:alice", INTENTLY_HOOK_DEADLINE_S="300")  # the test ends the processes

    def hook(payload: dict[str, Any]) -> Any:
        return _run_hook(payload, env=env, project=project, timeout=300)

    short, big = "short-session", "big-session"
    assert hook({**event("UserPromptSubmit", project, prompt=instruction), "session_id": short}).returncode == 0
    expected = decided(hook(_tool_call(project, short)))
    assert expected[0] == "deny" and "the request says not to" in expected[1], expected
    opened_before = len(ix.log.read(ix.namespace, op="GATE_SESSION_OPENED"))

    state = ix.home.state_dir
    prompted = {**event("UserPromptSubmit", project, prompt=prompt), "session_id": big}
    first = _killed_once_it_kept_part(prompted, env, project, state, keys, set())
    assert set() < first < keys  # the prompt's process ended midway and kept what it read
    marker = "a marker in a kept reading"
    with session_record(state, big) as record:
        assert record.requests == [prompt] and record.gate_session is None
        one = sorted(first)[0]
        record.readings[one] = {
            **record.readings[one],
            "clauses": [*record.readings[one]["clauses"], [marker, [], [], [], False]],
        }
    second = _killed_once_it_kept_part(_tool_call(project, big), env, project, state, keys, first)
    assert first < second < keys  # the next process went on from there: nothing lost, more read

    call = decided(hook(_tool_call(project, big)))
    assert call[0] == expected[0] and "the request says not to" in call[1], call
    assert _kept(state, big, keys) == keys
    opened = ix.log.read(ix.namespace, op="GATE_SESSION_OPENED")[opened_before:]
    assert len(opened) == 1 and opening_read(ix.log, opened[0])[0] == prompt
    assert marker in opening_read(ix.log, opened[0])[1]["unplaced"]  # decided from the kept readings

    again = decided(hook(_tool_call(project, big)))
    assert again[0] == call[0] and again[1].split(" (decision")[0] == call[1].split(" (decision")[0]
    assert len(ix.log.read(ix.namespace, op="GATE_SESSION_OPENED")) == opened_before + 1  # not logged again
    with session_record(state, big) as record:
        assert record.gate_session == opened[0].target


def test_after_a_prompt_not_read_on_arrival_the_request_is_logged_once(
    ix: Intently, project: Path, handle: Handler
) -> None:
    """A prompt whose reading did not finish on arrival left the session without a gate
    session, and every tool call after it opened and logged its own, the whole request in each
    ``GATE_SESSION_OPENED`` (megabytes again at every call after a pasted log). The first
    decided call's session is now the session's: the outputs seen and the later decisions go
    there, and the request is logged once."""
    prompt = "Look at the notes and tell me what broke. Do not create or change any file."
    session = event("UserPromptSubmit", project)["session_id"]
    with session_record(ix.home.state_dir, session) as record:
        record.requests.append(prompt)  # as a UserPromptSubmit past its deadline leaves it
    read = event("PreToolUse", project, tool_name="Read", tool_input={"file_path": str(project / "notes.md")})
    write = _tool_call(project, session)
    assert handle(read).exit_code == 0
    handle({**read, "hook_event_name": "PostToolUse", "tool_response": {"content": "the build broke at step 3"}})
    denied = json.loads(handle(write).stdout)["hookSpecificOutput"]
    assert denied["permissionDecision"] == "deny" and "the request says not to" in denied["permissionDecisionReason"]
    handle(read)
    opened = ix.log.read(ix.namespace, op="GATE_SESSION_OPENED")
    assert [opening_read(ix.log, o)[0] for o in opened] == [prompt]
    sessions = {o.payload["decision"]["session_id"] for o in ix.log.read(ix.namespace, op="GATE_DECIDED")}
    sessions |= {o.target for o in ix.log.read(ix.namespace, op="GATE_OUTPUT_OBSERVED")}
    assert sessions == {opened[0].target}
    assert len(ix.log.read(ix.namespace, op="GATE_DECIDED")) == 3
