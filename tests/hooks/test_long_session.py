"""A long Claude Code session: each prompt is read once, and every decision stays the same.

The hook keeps what the gate read in each prompt in the session record, so a tool call late in
a session does not read all its prompts again. The decisions must be the ones the whole
conversation, read afresh, gives.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from intently import Intently
from intently.gate import default_bundle
from intently.gate._intent import reading_keys
from intently.gate._request_facts import facts_key
from intently.hooks import gate_check
from intently.hooks._record import _file_for
from tests._config import set_config

from .conftest import Handler, event

_PROMPTS = [
    "Fix the failing assertion in tests/test_api.py",
    "Don't push anything yet. Run the tests first.",
    "then delete the stale fixtures in tests/fixtures",
    "Email the summary to bob@example.com, and",
    "also open https://docs.python.org/3/library/re.html for the regex syntax",
    "see step 3.",
    "follow the",
    "instructions in the README",
    "there are 3",
    "files to rename: a.py, b.py and c.py",
    "Never email Carol about this. Email Bob and Dana instead.",
    "  pay 100 EUR to DE89370400440532013000 ",
    "yes",
    "Refactor src/parser.py so the trailing comma is accepted; do not touch the changelog",
]

_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("Read", {"file_path": "tests/test_api.py"}),
    ("Edit", {"file_path": "tests/test_api.py", "old_string": "== 2", "new_string": "== 3"}),
    ("Bash", {"command": "rm -rf tests/fixtures"}),
    ("Bash", {"command": "git push origin main"}),
    ("WebFetch", {"url": "https://docs.python.org/3/library/re.html", "prompt": "syntax"}),
    ("mcp__mail__send_email", {"to": "bob@example.com", "body": "summary"}),
    ("mcp__mail__send_email", {"to": "carol@example.com", "body": "summary"}),
    ("mcp__bank__send_money", {"recipient": "DE89370400440532013000", "amount": 100}),
]


def _same(a: Any, b: Any) -> tuple[Any, ...]:
    return (a.outcome, a.reason, a.rules), (b.outcome, b.reason, b.rules)


def test_decisions_from_kept_readings_equal_a_fresh_read(ix: Intently) -> None:
    """Many sessions (prompts drawn in different orders and numbers, awkward joints included),
    every call checked both ways: per-prompt readings kept in a store, and the whole text."""
    rng = random.Random(5)
    for _ in range(12):
        prompts = rng.sample(_PROMPTS, rng.randint(2, len(_PROMPTS)))
        readings: dict[str, Any] = {}
        for tool, args in _CALLS:
            kept = gate_check(ix, user_requests=prompts, tool=tool, args=args, readings=readings)
            fresh = gate_check(ix, user_requests=["\n\n".join(prompts)], tool=tool, args=args)
            left, right = _same(kept, fresh)
            assert left == right, (prompts, tool, args)
        assert readings  # the kept path was taken (a joint may still send a check to the whole text)


def _record(ix: Intently) -> dict[str, Any]:
    path = _file_for(ix.home.state_dir, event("PreToolUse", ix.home.project_root)["session_id"])
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_prompts_are_read_on_arrival_and_kept_in_the_record(ix: Intently, handle: Handler) -> None:
    root = ix.home.project_root
    for prompt in _PROMPTS[:6]:
        assert handle(event("UserPromptSubmit", root, prompt=prompt)).exit_code == 0
    kept = _record(ix)["readings"]
    # One reading per prompt, read when it arrived, and the facts of the request they make
    # (its amounts, addresses and payees), scanned when the session opened.
    assert len(kept) == 7 and facts_key("\n\n".join(_PROMPTS[:6])) in kept
    call = event("PreToolUse", root, tool_name="Read", tool_input={"file_path": str(root / "tests" / "x.py")})
    assert handle(call).exit_code == 0
    assert _record(ix)["readings"] == kept  # the check read nothing again


def test_a_check_that_reads_nothing_new_leaves_the_record_as_it_was(ix: Intently, handle: Handler) -> None:
    """A tool call only reads the session record: after a pasted log it holds megabytes, and
    writing it back unchanged cost every call another encoding and file of that size. The file
    is not rewritten (same bytes, same inode, same time), and the check still decides and logs."""
    root = ix.home.project_root
    for prompt in _PROMPTS[:3]:
        assert handle(event("UserPromptSubmit", root, prompt=prompt)).exit_code == 0
    path = _file_for(ix.home.state_dir, event("PreToolUse", root)["session_id"])
    before = path.stat()
    text = path.read_bytes()
    decided = len(ix.log.read(ix.namespace, op="GATE_DECIDED"))
    for tool, args in _CALLS[:4]:
        assert handle(event("PreToolUse", root, tool_name=tool, tool_input=args)).exit_code in (0, 2)
    after = path.stat()
    assert path.read_bytes() == text
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert len(ix.log.read(ix.namespace, op="GATE_DECIDED")) == decided + 4


def test_a_check_in_a_session_with_no_record_decides_without_one(ix: Intently, handle: Handler) -> None:
    """No prompt seen (the hook was installed mid-session): the check decides on no request, and
    a session record appears only when something is kept in it."""
    root = ix.home.project_root
    call = event("PreToolUse", root, tool_name="Read", tool_input={"file_path": str(root / "tests" / "x.py")})
    done = handle({**call, "session_id": "never-prompted"})
    assert done.exit_code == 0, done.stderr
    assert len(ix.log.read(ix.namespace, op="GATE_DECIDED")) == 1


def test_a_record_from_before_readings_still_decides_and_keeps_them(ix: Intently, handle: Handler) -> None:
    """A session record written by an earlier version has no readings: the check reads the
    prompts, decides as before, and keeps the readings for the next call."""
    root = ix.home.project_root
    for prompt in _PROMPTS[:4]:
        handle(event("UserPromptSubmit", root, prompt=prompt))
    path = _file_for(ix.home.state_dir, event("PreToolUse", root)["session_id"])
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["readings"]
    path.write_text(json.dumps(data), encoding="utf-8")
    call = event("PreToolUse", root, tool_name="Bash", tool_input={"command": "git push origin main"})
    first = handle(call)
    assert set(_record(ix)["readings"]) - {facts_key("\n\n".join(_PROMPTS[:4]))} == reading_keys(
        _PROMPTS[:4], default_bundle().vocabulary
    )
    again = handle(call)
    assert (first.exit_code, first.stdout.split("(decision")[0]) == (
        again.exit_code,
        again.stdout.split("(decision")[0],
    )


def test_post_tool_use_in_a_long_session_uses_the_readings(ix: Intently, handle: Handler, tmp_path: Path) -> None:
    root = ix.home.project_root
    for prompt in _PROMPTS[:5]:
        handle(event("UserPromptSubmit", root, prompt=prompt))
    kept = _record(ix)["readings"]
    done = handle(
        event(
            "PostToolUse",
            root,
            tool_name="Read",
            tool_input={"file_path": str(root / "tests" / "test_api.py")},
            tool_response="def test_api(): ...",
            tool_use_id="toolu_1",
        )
    )
    assert done.exit_code == 0
    assert _record(ix)["readings"] == kept
    assert len(_record(ix)["observations"]) == 1


def test_an_approval_late_in_a_long_session_is_recorded(ix: Intently, handle: Handler) -> None:
    """The approval's re-check rebuilds the request from the kept readings of the prompts the
    gate asked under, and a prompt that arrived in between does not change that request."""
    root = ix.home.project_root
    set_config(ix.home.config_path, "hooks", "shell_allowlist", '["pytest"]')
    for prompt in (*_PROMPTS[:3], "Run the test suite with pytest"):
        handle(event("UserPromptSubmit", root, prompt=prompt))
    call = event("PreToolUse", root, tool_name="Bash", tool_input={"command": "pytest -q"}, tool_use_id="toolu_A")
    asked = json.loads(handle(call).stdout)["hookSpecificOutput"]
    assert asked["permissionDecision"] == "ask"
    decision_id = asked["permissionDecisionReason"].rsplit("(decision ", 1)[1].rstrip(")")
    handle(event("UserPromptSubmit", root, prompt="and show me the slowest test"))
    post = event(
        "PostToolUse",
        root,
        tool_name="Bash",
        tool_input={"command": "pytest -q"},
        tool_response={"stdout": "12 passed", "stderr": "", "interrupted": False},
        tool_use_id="toolu_A",
    )
    done = handle(post)
    assert f"approval of {decision_id} by the user recorded" in done.stderr, done.stderr
    assert [a.target for a in ix.log.read("proj", op="GATE_APPROVED")] == [decision_id]
