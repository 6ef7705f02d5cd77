"""PostToolUse: an approved ``ask`` is recorded in the gate; extraction of tool output waits in review."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from intently import Intently
from tests._config import set_config

from .conftest import Handler, HookRunner, event


def _configure(ix: Intently, hooks: str) -> None:
    key, value = hooks.split(" = ", 1)
    set_config(ix.home.config_path, "hooks", key, value)


def _pre(handle: Handler, project: Path, tool_use_id: str) -> dict[str, Any]:
    call = event("PreToolUse", project, tool_name="Bash", tool_input={"command": "pytest -q"}, tool_use_id=tool_use_id)
    done = handle(call)
    assert done.exit_code == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)["hookSpecificOutput"]
    return answer


def _post(project: Path, tool_use_id: str, **extra: Any) -> dict[str, Any]:
    return event(
        "PostToolUse",
        project,
        tool_name="Bash",
        tool_input={"command": "pytest -q"},
        tool_response={"stdout": "12 passed in 0.4s", "stderr": "", "interrupted": False},
        tool_use_id=tool_use_id,
        **extra,
    )


def test_a_call_that_ran_after_ask_is_recorded_as_the_users_approval(
    ix: Intently, project: Path, handle: Handler
) -> None:
    _configure(ix, 'shell_allowlist = ["pytest"]')
    handle(event("UserPromptSubmit", project, prompt="Run the test suite with pytest"))
    asked = _pre(handle, project, "toolu_01ASK")
    assert asked["permissionDecision"] == "ask"
    decision_id = asked["permissionDecisionReason"].rsplit("(decision ", 1)[1].rstrip(")")
    assert ix.log.read("proj", op="GATE_APPROVED") == []

    done = handle(_post(project, "toolu_01ASK"))
    assert done.exit_code == 0, done.stderr
    assert f"approval of {decision_id} by the user recorded" in done.stderr
    approved = ix.log.read("proj", op="GATE_APPROVED")
    assert [a.target for a in approved] == [decision_id]
    assert approved[0].actor == "user:alice"
    used = [d.payload["decision"] for d in ix.log.read("proj", op="GATE_DECIDED")]
    assert [d["approval_used"] for d in used if d["approval_used"]] == [decision_id]
    # The approval was used up by the call that ran: the next identical call asks again.
    assert _pre(handle, project, "toolu_02ASK")["permissionDecision"] == "ask"


def test_output_without_an_ask_records_no_approval(ix: Intently, project: Path, handle: Handler) -> None:
    _configure(ix, 'shell_allowlist = ["pytest"]')
    handle(event("UserPromptSubmit", project, prompt="Run the test suite with pytest"))
    assert _pre(handle, project, "toolu_01ASK")["permissionDecision"] == "ask"
    done = handle(_post(project, "toolu_OTHER"))  # a different call's output proves nothing
    assert done.exit_code == 0, done.stderr
    assert ix.log.read("proj", op="GATE_APPROVED") == []
    assert len(ix.log.read("proj", op="GATE_OUTPUT_OBSERVED")) == 1


def _web(project: Path, text: str) -> dict[str, Any]:
    return event(
        "PostToolUse",
        project,
        tool_name="WebFetch",
        tool_input={"url": "https://status.example.org/notes", "prompt": "summarise"},
        tool_response={"result": text, "code": 200},
        tool_use_id="toolu_03WEB",
    )


def test_tool_output_is_not_extracted_by_default(ix: Intently, project: Path, handle: Handler) -> None:
    handle(event("UserPromptSubmit", project, prompt="Summarise the status page"))
    before = len(ix.log.read("proj", op="TURN_OBSERVED"))
    done = handle(_web(project, "We will migrate the billing service to Postgres by Friday."))
    assert done.exit_code == 0, done.stderr
    assert len(ix.log.read("proj", op="TURN_OBSERVED")) == before


def test_extracted_tool_output_only_waits_in_review(ix: Intently, project: Path, handle: Handler) -> None:
    _configure(ix, "extract_tool_output = true")
    handle(event("UserPromptSubmit", project, prompt="Summarise the status page"))
    done = handle(_web(project, "We will migrate the billing service to Postgres by Friday."))
    assert done.exit_code == 0, done.stderr
    observed = [o.payload for o in ix.log.read("proj", op="TURN_OBSERVED")]
    assert observed[-1]["channel"] == "claude-code:tool:WebFetch" and observed[-1]["speaker"] is None
    waiting = ix.goals.review_queue()
    assert [i.text for i in waiting if "billing" in i.text] == [
        "We will migrate the billing service to Postgres by Friday"
    ]
    assert all(i.epistemic_type == "INFERRED" for i in waiting)


def test_untrusted_output_never_records_a_decision(ix: Intently, project: Path, handle: Handler) -> None:
    _configure(ix, "extract_tool_output = true")
    handle(event("UserPromptSubmit", project, prompt="Summarise the status page"))
    done = handle(_web(project, "We decided to drop support for Python 3.9."))
    assert done.exit_code == 0, done.stderr
    assert ix.log.read("proj", op="DECISION_RECORDED") == []
    assert ix.goals.decisions() == []


def test_a_bad_setting_is_named_and_blocks_the_next_tool_call(
    ix: Intently, project: Path, run_hook: HookRunner
) -> None:
    """After a tool ran there is nothing to block: the bad key is named to the user, and the next
    call, which meets the same config, fails closed."""
    _configure(ix, 'extract_tool_output = "yes"')
    done = run_hook(_web(project, "anything"), cwd=project)
    assert done.returncode == 0
    assert "hooks.extract_tool_output" in json.loads(done.stdout)["systemMessage"]
    call = event("PreToolUse", project, tool_name="Read", tool_input={"file_path": str(project / "a.txt")})
    blocked = run_hook(call, cwd=project)
    assert blocked.returncode == 2 and "hooks.extract_tool_output" in blocked.stderr


def test_an_approval_after_yes_go_ahead_is_recorded_against_the_same_agreement(
    ix: Intently, project: Path, handle: Handler
) -> None:
    """The call asked about after a bare assent is re-checked, on approval, with that agreement:
    otherwise the re-check would refuse what the user just approved."""
    handle(event("UserPromptSubmit", project, prompt="Why does the CLI crash on empty input?"))
    proposal = "I'll add a test for empty input and fix main. Shall I?"
    line = {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": proposal}]}}
    (project / "transcript.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    handle(event("UserPromptSubmit", project, prompt="Yes please"))
    write = {"file_path": str(project / "tests" / "test_empty.py"), "content": "def test_empty():\n    pass\n"}
    call = event("PreToolUse", project, tool_name="Write", tool_input=write, tool_use_id="toolu_01NEW")
    asked = json.loads(handle(call).stdout)["hookSpecificOutput"]
    assert asked["permissionDecision"] == "ask", asked["permissionDecisionReason"]
    done = handle({**call, "hook_event_name": "PostToolUse", "tool_response": {"type": "create"}})
    assert done.exit_code == 0 and "by the user recorded" in done.stderr, done.stderr
    last = ix.log.read("proj", op="GATE_DECIDED")[-1].payload["decision"]
    assert last["level"] == "allow" and last["approval_used"]
