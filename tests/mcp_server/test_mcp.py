"""The MCP server through the SDK's in-memory client, and once over a real stdio subprocess."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from intently import Actor, Intently, ManualClock, Permission, PermissionDenied
from intently.mcp_server import TOOLS, build_server
from tests._config import set_config


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def _run(coro: Any) -> Any:
    return anyio.run(coro)


def _agents_may_review(ix: Intently) -> Intently:
    """The same home reopened after its owner set ``[review] agents_may_review = true``."""
    set_config(ix.home.config_path, "review", "agents_may_review", "true")
    return Intently.open(ix.home.path, actor=ix.actor, clock=ix.runtime.clock)


def _stdio(ix: Intently, *args: str, actor: str | None = "user:alice") -> StdioServerParameters:
    """``intently mcp`` as Claude Code starts it: a subprocess over stdio, the home from the environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env["INTENTLY_HOME"] = str(ix.home.path)
    if actor is not None:
        env["INTENTLY_ACTOR"] = actor
    return StdioServerParameters(command=str(Path(sys.executable).parent / "intently"), args=["mcp", *args], env=env)


def test_every_tool_and_prompt_is_listed(ix: Intently) -> None:
    async def go() -> tuple[set[str], set[str], set[str]]:
        async with Client(build_server(ix)) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            resources = {str(r.uri) for r in (await client.list_resources()).resources}
            prompts = {p.name for p in (await client.list_prompts()).prompts}
        return tools, resources, prompts

    tools, resources, prompts = _run(go)
    assert tools == set(TOOLS)
    assert resources == {"intently://goals/active", "intently://requirements"}
    assert prompts == {"context"}


class _Placeholder:
    """An engine facade before the engine is built: no methods."""

    def __init__(self, runtime: object) -> None:
        self._rt = runtime


class _BuildWithoutGoals(Intently):
    @property
    def goals(self) -> _Placeholder:  # type: ignore[override]
        return _Placeholder(self.runtime)


def test_tools_of_missing_engines_return_a_clear_error(ix: Intently) -> None:
    async def go() -> tuple[Any, Any]:
        async with Client(build_server(_BuildWithoutGoals(ix.runtime))) as client:
            tool = await client.call_tool("goals_add", {"text": "Ship the API", "priority": "HIGH"})
            resource = await client.read_resource("intently://goals/active")
            return tool, resource

    tool, resource = _run(go)
    assert tool.is_error
    assert "goals engine is not available" in _text(tool)
    data = json.loads(resource.contents[0].text)
    assert data["available"] is False and "goals engine is not available" in data["error"]


def test_goal_tools_round_trip(ix: Intently) -> None:
    async def go() -> list[Any]:
        async with Client(build_server(ix)) as client:
            made = await client.call_tool("goals_add", {"text": "Ship the billing API v2", "priority": "HIGH"})
            goal_id = json.loads(_text(made))["id"]
            listed = await client.call_tool("goals_list", {})
            active = await client.read_resource("intently://goals/active")
            edited = await client.call_tool("goals_update", {"goal_id": goal_id, "priority": "CRITICAL"})
            stale = await client.call_tool(
                "goals_update", {"goal_id": goal_id, "context_note": "late", "expected_version": 1}
            )
            assert stale.is_error and "version" in _text(stale)  # someone changed it since version 1
            done = await client.call_tool("goals_complete", {"goal_id": goal_id})
            after = await client.call_tool("goals_list", {})
            return [goal_id, listed, active, edited, done, after]

    goal_id, listed, active, edited, done, after = _run(go)
    assert [g["id"] for g in json.loads(_text(listed))["items"]] == [goal_id]
    assert [g["id"] for g in json.loads(active.contents[0].text)["items"]] == [goal_id]
    assert json.loads(_text(edited))["priority"] == "CRITICAL"
    assert json.loads(_text(done))["state"] == "COMPLETED"
    assert json.loads(_text(after))["items"] == []


def test_review_tools_carry_a_turn_through_the_queue(ix: Intently) -> None:
    """An agent harness over MCP, in a home that lets agents review: feed the turn after it
    happens, then the choices (edit, confirm, dismiss) reach the same queue the CLI and HTTP API show."""

    async def go(opted: Intently) -> list[Any]:
        async with Client(build_server(opted)) as client:
            observed = await client.call_tool(
                "review_observe",
                {
                    "text": "I will update the runbook by Friday. Should we drop Node 18?",
                    "speaker": "agent:ci",
                    "time": "2026-03-04T10:00:00Z",
                    "message_id": "chat:7",
                },
            )
            queue = json.loads(_text(await client.call_tool("review_list", {})))["items"]
            by_type = {q["intent_type"]: q["id"] for q in queue}
            edited = await client.call_tool(
                "review_edit", {"candidate_id": by_type["COMMITMENT"], "text": "Update the deploy runbook"}
            )
            confirmed = await client.call_tool("review_confirm", {"candidate_id": by_type["COMMITMENT"]})
            dismissed = await client.call_tool(
                "review_dismiss", {"candidate_id": by_type["OPEN_QUESTION"], "reason": "settled"}
            )
            late = await client.call_tool("review_edit", {"candidate_id": by_type["COMMITMENT"], "text": "late"})
            left = json.loads(_text(await client.call_tool("review_list", {})))["items"]
            return [observed, edited, confirmed, dismissed, late, left]

    with _agents_may_review(ix) as opted:
        observed, edited, confirmed, dismissed, late, left = _run(lambda: go(opted))
    assert json.loads(_text(observed))["evidence_id"] == "chat:7"
    assert json.loads(_text(edited))["value"] == "Update the deploy runbook"
    assert json.loads(_text(confirmed))["epistemic_type"] == "ASSERTED"
    assert json.loads(_text(confirmed))["source_type"] == "SYSTEM_INFERRED"  # an agent's confirmation
    assert json.loads(_text(dismissed))["epistemic_type"] == "DEPRECATED"
    assert late.is_error and "no longer awaiting review" in _text(late)
    assert left == []
    (intent,) = ix.goals.list_intents(owner="agent:ci")
    assert intent.value == "Update the deploy runbook"
    (confirmation,) = [o for o in ix.log.read("proj", op="EPISTEMIC_TRANSITION") if o.payload["to_type"] == "ASSERTED"]
    assert confirmation.actor == "agent:mcp for user:alice" and confirmation.payload["trigger_type"] == "policy"


def test_review_edit_dash_empties_a_candidates_owner_and_due(ix: Intently) -> None:
    """An agent correcting a candidate whose owner or date the extractor misread could change
    them but not remove them: "-" empties them, as on the CLI."""

    async def go(opted: Intently) -> Any:
        async with Client(build_server(opted)) as client:
            await client.call_tool(
                "review_observe", {"text": "Michael to close the issue by Friday.", "time": "2026-03-04T10:00:00Z"}
            )
            (candidate,) = json.loads(_text(await client.call_tool("review_list", {})))["items"]
            assert candidate["owner"] == "user:michael" and candidate["target_completion"]
            return await client.call_tool("review_edit", {"candidate_id": candidate["id"], "owner": "-", "due": "-"})

    with _agents_may_review(ix) as opted:
        edited = json.loads(_text(_run(lambda: go(opted))))
    assert edited["owner"] is None and edited["target_completion"] is None


def test_review_tools_refuse_to_confirm_a_version_the_agent_did_not_see(ix: Intently) -> None:
    """Two reviewers: the tool confirming with the version it listed gets an error naming the
    conflict when the candidate was reworded meanwhile, and nothing is asserted."""
    ix.extraction.observe({"speaker": "bob", "text": "I'll update the runbook.", "message_id": "chat:8"})
    (candidate,) = ix.goals.review_queue()
    ix.goals.edit(candidate.id, text="Update the deploy runbook", awaiting_review=True)

    async def go(opted: Intently) -> Any:
        async with Client(build_server(opted)) as client:
            return await client.call_tool(
                "review_confirm", {"candidate_id": candidate.id, "expected_version": candidate.version}
            )

    with _agents_may_review(ix) as opted:
        stale = _run(lambda: go(opted))
    assert stale.is_error and f"version {candidate.version + 1}, not {candidate.version}" in _text(stale)
    assert ix.goals.get(candidate.id).epistemic_type.value == "INFERRED"


def test_a_decision_an_agent_relays_is_held_not_recorded(ix: Intently) -> None:
    """A recorded decision skips review and becomes a proposed project rule at the next scan, so an agent
    relaying a turn over MCP cannot make one: the decision comes back ``held`` (and the tool says
    so), while the turn's other candidates wait in review as usual."""

    async def go() -> tuple[str, Any]:
        async with Client(build_server(ix)) as client:
            tools = {t.name: t.description or "" for t in (await client.list_tools()).tools}
            observed = await client.call_tool(
                "review_observe", {"text": "We agreed to ship v2 on Monday. I will write the release notes by Friday."}
            )
            return tools["review_observe"], observed

    description, observed = _run(go)
    statuses = {p["candidate"]["type"]: p["status"] for p in json.loads(_text(observed))["proposals"]}
    assert statuses == {"DECISION": "held", "COMMITMENT": "created"}
    assert ix.goals.decisions() == [] and len(ix.goals.review_queue()) == 1
    assert "not recorded from here" in description and "held" in description


def test_standing_intent_tools_for_a_reminder_manager(ix: Intently) -> None:
    async def go() -> list[Any]:
        async with Client(build_server(ix)) as client:
            made = await client.call_tool(
                "intents_create", {"reminder": "Check the rollback plan with Dana", "when": [["launch"]]}
            )
            intent_id = json.loads(_text(made))["id"]
            listed = await client.call_tool("intents_list", {})
            cancelled = await client.call_tool("intents_cancel", {"intent_id": intent_id})
            return [intent_id, listed, cancelled]

    intent_id, listed, cancelled = _run(go)
    assert [t["id"] for t in json.loads(_text(listed))["items"]] == [intent_id]
    assert json.loads(_text(cancelled))["state"] == "cancelled"


def test_intents_create_keeps_the_scope_it_was_given(ix: Intently) -> None:
    """``scope`` was silently dropped: a reminder meant for Bob's conversations was stored
    unscoped and fired in anyone's. It is stored, and a bad scope is a tool error."""

    async def go() -> tuple[Any, Any]:
        async with Client(build_server(ix)) as client:
            made = await client.call_tool(
                "intents_create",
                {"reminder": "Ask Bob about the invoice", "when": [["invoice"]], "scope": ["sender:user:bob"]},
            )
            bad = await client.call_tool(
                "intents_create", {"reminder": "x", "when": [["invoice"]], "scope": ["planet:mars"]}
            )
            return made, bad

    made, bad = _run(go)
    assert not made.is_error, _text(made)
    assert json.loads(_text(made))["scope"] == {"channel": None, "conversation": None, "sender": "user:bob"}
    assert [h.reminder for h in ix.triggers.test("the invoice is late", sender="user:bob").shown] == [
        "Ask Bob about the invoice"
    ]
    assert not ix.triggers.test("the invoice is late", sender="user:eve").shown
    assert bad.is_error and "InvalidInput: scope" in _text(bad)


def test_intents_create_takes_exclusions(ix: Intently) -> None:
    """``exclude`` was not a tool argument: a reminder could not be kept quiet on "draft"."""

    async def go() -> Any:
        async with Client(build_server(ix)) as client:
            return await client.call_tool(
                "intents_create", {"reminder": "Ask about the invoice", "when": [["invoice"]], "exclude": ["draft"]}
            )

    made = _run(go)
    assert not made.is_error, _text(made)
    assert json.loads(_text(made))["exclude"] == ["draft"]
    assert ix.triggers.test("the invoice draft").hits == ()
    assert [h.reminder for h in ix.triggers.test("the invoice is late").shown] == ["Ask about the invoice"]


def test_an_argument_a_tool_does_not_take_is_refused_not_dropped(ix: Intently) -> None:
    """The SDK ignores unknown arguments: a typo (``prority``) used to succeed with the value
    lost. Now the call fails, naming the argument and what the tool takes, and nothing is written."""

    async def go() -> Any:
        async with Client(build_server(ix)) as client:
            return await client.call_tool("goals_add", {"text": "Ship v2", "prority": "HIGH"})

    result = _run(go)
    assert result.is_error and "goals_add does not take prority" in _text(result)
    assert "priority" in _text(result) and ix.goals.list_intents() == []


def test_requirements_preview_and_resource(ix: Intently) -> None:
    req = ix.requirements.add("Never log request bodies of the payments service", level="project")

    async def go() -> tuple[Any, Any, Any]:
        async with Client(build_server(ix)) as client:
            preview = await client.call_tool("requirements_preview", {"task": "add logging to payments"})
            listing = await client.read_resource("intently://requirements")
            tiny = await client.call_tool("requirements_preview", {"task": "add logging", "budget": -5})
            return preview, listing, tiny

    preview, listing, tiny = _run(go)
    assert tiny.is_error and "budget" in _text(tiny)  # the same bounds as the HTTP API, not an empty success
    assert json.loads(_text(preview))["ids"] == [req.id]
    assert [r["id"] for r in json.loads(listing.contents[0].text)["items"]] == [req.id]


def test_standing_intents_need_manage_reminders(ix: Intently) -> None:
    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)

    async def go() -> Any:
        async with Client(build_server(ix.as_actor("agent:claude"))) as client:
            return await client.call_tool(
                "intents_create", {"reminder": "Check the rollback plan", "when": [["launch"]]}
            )

    result = _run(go)
    assert result.is_error
    assert "PermissionDenied" in _text(result) and "manage-reminders" in _text(result)


def test_gate_check_decides_and_logs(ix: Intently) -> None:
    async def go() -> tuple[Any, Any]:
        async with Client(build_server(ix)) as client:
            asked = await client.call_tool(
                "gate_check",
                {
                    "user_request": "email the report to bob@example.com",
                    "tool": "send_email",
                    "args": {"to": "bob@example.com"},
                },
            )
            invented = await client.call_tool(
                "gate_check",
                {
                    "user_request": "email the report to bob@example.com",
                    "tool": "send_email",
                    "args": {"to": "eve@evil.io"},
                },
            )
            return asked, invented

    asked, invented = _run(go)
    assert json.loads(_text(asked))["outcome"] == "allow"
    assert json.loads(_text(invented))["outcome"] == "block"
    assert len(ix.log.read("proj", op="GATE_DECIDED")) == 2


def test_context_prompt_returns_the_block(ix: Intently) -> None:
    async def go() -> Any:
        async with Client(build_server(ix)) as client:
            return await client.get_prompt("context", {"task": "upgrade the database driver"})

    result = _run(go)
    text = result.messages[0].content.text
    assert text.startswith('<intently-context namespace="proj"')


def test_reader_without_access_sees_not_found(ix: Intently) -> None:
    async def go() -> Any:
        async with Client(build_server(ix.as_actor("user:mallory"))) as client:
            return await client.call_tool("requirements_preview", {"task": "x"})

    result = _run(go)
    assert result.is_error and "NotFound" in _text(result)


def test_over_a_real_stdio_subprocess(ix: Intently, project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env["INTENTLY_HOME"] = str(ix.home.path)
    env["INTENTLY_ACTOR"] = "user:alice"
    params = StdioServerParameters(command=str(Path(sys.executable).parent / "intently"), args=["mcp"], env=env)

    async def go() -> tuple[set[str], Any]:
        async with Client(params) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            checked = await client.call_tool("gate_check", {"user_request": "list files", "tool": "Bash"})
        return tools, checked

    tools, checked = _run(go)
    assert tools == set(TOOLS)
    assert json.loads(_text(checked))["outcome"] in ("allow", "warn", "confirm", "review", "block")


def test_streamable_http_behind_the_flag(ix: Intently) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env.update(INTENTLY_HOME=str(ix.home.path), INTENTLY_ACTOR="user:alice")
    cmd = [str(Path(sys.executable).parent / "intently"), "mcp", "--http", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "the MCP HTTP server did not start"
                time.sleep(0.2)

        async def go() -> set[str]:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                return {t.name for t in (await client.list_tools()).tools}

        assert _run(go) == set(TOOLS)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_context_prompt_is_an_injection_and_fires(ix: Intently) -> None:
    """The prompt's text goes into the model's context: its reminders are charged like any
    injection (it used to preview, showing a reminder past its budget on every call)."""
    intent = ix.triggers.add("Check the rollback plan with Dana", when=["launch"], max_fires=1)

    async def go() -> list[str]:
        async with Client(build_server(ix)) as client:
            texts = []
            for _ in range(2):
                result = await client.get_prompt("context", {"task": "plan the launch"})
                texts.append(result.messages[0].content.text)
            return texts

    first, second = _run(go)
    assert "rollback plan with Dana" in first
    assert "rollback plan with Dana" not in second  # its one fire is spent
    assert ix.triggers.show(intent.id).fire_count == 1


def test_a_reminder_scoped_to_the_person_fires_through_the_context_prompt(ix: Intently) -> None:
    """The prompt matched the turn with no sender and no channel, so a reminder scoped to the
    person the server acts for (how a shared home keeps one to one person) or to channel mcp
    could never fire over MCP; another person's still does not."""
    mine = ix.triggers.add("Ask Dana about the rollback plan", when="launch", scope="sender:user:alice")
    here = ix.triggers.add("Run the smoke tests first", when="launch", scope="channel:mcp")
    bobs = ix.triggers.add("Bob's own reminder", when="launch", scope="sender:user:bob")

    async def go() -> str:
        async with Client(build_server(ix)) as client:
            result = await client.get_prompt("context", {"task": "plan the launch"})
            return str(result.messages[0].content.text)

    block = _run(go)
    assert "Ask Dana about the rollback plan" in block and "Run the smoke tests first" in block
    assert "Bob's own reminder" not in block
    assert [ix.triggers.show(i.id).fire_count for i in (mine, here, bobs)] == [1, 1, 0]
    fire = ix.triggers.show(mine.id).fires[0]
    assert (fire.sender, fire.channel, fire.actor) == ("user:alice", "mcp", "agent:mcp for user:alice")


def test_a_reader_cannot_spend_a_reminder_through_the_context_prompt(ix: Intently) -> None:
    """The prompt charges the reminders it shows; a read-only actor used to do that through it
    (a TRIGGER_FIRE by the reader, the reminder's one fire spent), where HTTP asks for write."""
    intent = ix.triggers.add("Check the rollback plan with Dana", when=["launch"], max_fires=1)
    ix.access.grant(Actor.parse("user:bob"), Permission.READ)

    async def go() -> tuple[str, Any]:
        async with Client(build_server(ix.as_actor("user:bob"))) as client:
            try:
                await client.get_prompt("context", {"task": "plan the launch"})
            except Exception as exc:  # the SDK raises the server's error
                error = str(exc)
            else:
                error = ""
            preview = await client.call_tool("requirements_preview", {"task": "plan the launch"})
            return error, preview

    error, preview = _run(go)
    assert "lacks write" in error and "requirements_preview" in error
    assert not preview.is_error  # the reader's way to look
    assert ix.triggers.show(intent.id).fire_count == 0
    assert ix.log.read("proj", op="TRIGGER_FIRE") == []


def test_a_refused_prompt_or_resource_says_why(ix: Intently) -> None:
    """A prompt or resource has no error result; the SDK answered a refusal with a bare
    "Internal server error" or "Error reading resource ..."."""

    async def go() -> list[str]:
        errors = []
        async with Client(build_server(ix.as_actor("user:mallory"))) as client:
            for read in (
                client.get_prompt("context", {"task": "plan the launch"}),
                client.read_resource("intently://goals/active"),
                client.read_resource("intently://requirements"),
            ):
                try:
                    await read
                except Exception as exc:
                    errors.append(str(exc))
        return errors

    errors = _run(go)
    assert len(errors) == 3
    assert all("NotFound: namespace 'proj' not found" in e for e in errors), errors


def test_goal_tools_empty_fields_and_refuse_a_stale_completion(ix: Intently) -> None:
    """goals_update takes "-" to empty the owner, due date or note (as review_edit and the CLI
    do; it was refused as an actor name), and goals_complete / goals_cancel take
    expected_version, so an agent cannot close a goal someone reworded since it read it. The
    goals are the agent's own (it added them; a person's goal is not its to close)."""
    from intently.mcp_server import acting_view

    agent = acting_view(ix).goals
    goal = agent.add("Ship the billing API v2", owner="agent:ci", due="2099-01-02", context_note="after the freeze")
    other = agent.add("Retire the old API")
    ix.checkpoint()

    async def go() -> list[Any]:
        async with Client(build_server(ix)) as client:
            emptied = await client.call_tool(
                "goals_update", {"goal_id": goal.id, "owner": "-", "due": "-", "context_note": "-"}
            )
            stale_done = await client.call_tool(
                "goals_complete", {"goal_id": goal.id, "expected_version": goal.version}
            )
            stale_cancel = await client.call_tool(
                "goals_cancel", {"goal_id": other.id, "expected_version": other.version + 1}
            )
            fresh = json.loads(_text(emptied))["version"]
            done = await client.call_tool(
                "goals_complete", {"goal_id": goal.id, "expected_version": fresh, "reason": "shipped"}
            )
            return [emptied, stale_done, stale_cancel, done]

    emptied, stale_done, stale_cancel, done = _run(go)
    assert not emptied.is_error, _text(emptied)
    data = json.loads(_text(emptied))
    assert data["owner"] is None and data["target_completion"] is None and data["context_note"] is None
    assert stale_done.is_error and "version" in _text(stale_done)
    assert stale_cancel.is_error and "version" in _text(stale_cancel)
    assert ix.goals.get(other.id).state.value == "ACTIVE"
    assert json.loads(_text(done))["state"] == "COMPLETED"
    (op,) = ix.log.read("proj", op="INTENT_TRANSITION", target=goal.id)
    assert op.payload["reason"] == "shipped"


def test_over_stdio_the_agent_acts_for_the_person_and_the_log_says_so(ix: Intently) -> None:
    """`intently mcp` acted as the person (the OS user, or INTENTLY_ACTOR): everything the model
    wrote through it was logged as the person's own act. It acts as `agent:mcp for user:alice`,
    with her permissions, and every operation it appends names both; `--agent` names the agent."""

    async def go(params: StdioServerParameters) -> Any:
        async with Client(params) as client:
            made = await client.call_tool("goals_add", {"text": "Ship the billing API v2"})
            listed = await client.call_tool("goals_list", {})
            return made, listed

    made, listed = _run(lambda: go(_stdio(ix)))
    assert not made.is_error, _text(made)
    assert [g["value"] for g in json.loads(_text(listed))["items"]] == ["Ship the billing API v2"]
    (created,) = ix.log.read("proj", op="INTENT_CREATE")
    assert created.actor == "agent:mcp for user:alice"
    # the agent's goal is its reading of what alice wants, not her word (RFC-0003 table: 0.60)
    assert created.payload["intent"]["source_type"] == "SYSTEM_INFERRED"
    assert created.payload["intent"]["confidence"] == 0.60
    _run(lambda: go(_stdio(ix, "--agent", "claude-code")))
    assert [o.actor for o in ix.log.read("proj", op="INTENT_CREATE")][-1] == "agent:claude-code for user:alice"


def test_over_stdio_the_agent_cannot_confirm_what_it_proposed(ix: Intently) -> None:
    """Language proposes, people decide: the model could feed a turn (its own words, or an
    instruction a web page planted) and then confirm the candidate itself, which became an
    asserted commitment in every later context block. Confirm, dismiss and edit are refused
    with a message sending the person to `intently review`; the candidate waits for them."""

    async def go() -> list[Any]:
        async with Client(_stdio(ix)) as client:
            tools = {t.name: t.description or "" for t in (await client.list_tools()).tools}
            await client.call_tool("review_observe", {"text": "I will rotate the signing keys by Friday."})
            (candidate,) = json.loads(_text(await client.call_tool("review_list", {})))["items"]
            cid = candidate["id"]
            return [
                tools,
                cid,
                await client.call_tool("review_confirm", {"candidate_id": cid}),
                await client.call_tool("review_dismiss", {"candidate_id": cid}),
                await client.call_tool("review_edit", {"candidate_id": cid, "text": "Rotate nothing"}),
                await client.call_tool("goals_complete", {"goal_id": cid}),
            ]

    tools, cid, *refused = _run(go)
    for result in refused:
        assert result.is_error
        assert "PermissionDenied: agent:mcp for user:alice cannot" in _text(result)
        assert "`intently review`" in _text(result) and "agents_may_review" in _text(result)
    assert "intently review" in tools["review_confirm"]
    (waiting,) = ix.goals.review_queue()
    assert (waiting.id, waiting.value) == (cid, "I will rotate the signing keys by Friday")
    assert ix.log.read("proj", op="EPISTEMIC_TRANSITION") == []
    confirmed = ix.goals.promote(cid)  # the person, in `intently review`
    assert confirmed.source_type.value == "USER_STATED"


def test_over_stdio_a_home_may_let_its_agent_review(ix: Intently) -> None:
    """The documented opt-in: with `[review] agents_may_review = true` the agent confirms, and the
    log still tells it from the person (the agent's name, `policy`, the inferred source kept)."""
    ix.goals.propose("COMMITMENT", "I will rotate the signing keys", evidence_id="chat:1")
    (candidate,) = ix.goals.review_queue()
    set_config(ix.home.config_path, "review", "agents_may_review", "true")

    async def go() -> Any:
        async with Client(_stdio(ix)) as client:
            return await client.call_tool("review_confirm", {"candidate_id": candidate.id})

    confirmed = _run(go)
    assert not confirmed.is_error, _text(confirmed)
    assert json.loads(_text(confirmed))["epistemic_type"] == "ASSERTED"
    (op,) = ix.log.read("proj", op="EPISTEMIC_TRANSITION")
    assert op.actor == "agent:mcp for user:alice" and op.payload["trigger_type"] == "policy"
    assert op.payload["source_type"] == "SYSTEM_INFERRED"


def test_over_stdio_an_agent_actor_acts_as_itself(ix: Intently) -> None:
    """`intently --actor agent:ci mcp` (INTENTLY_ACTOR=agent:ci) still works as before: the agent
    acts as itself, with its own grants, and is not made an agent for anybody."""
    ix.access.grant(Actor.parse("agent:ci"), Permission.READ)

    async def go() -> tuple[Any, Any]:
        async with Client(_stdio(ix, actor="agent:ci")) as client:
            return await client.call_tool("goals_list", {}), await client.call_tool("goals_add", {"text": "x"})

    listed, added = _run(go)
    assert not listed.is_error
    assert added.is_error and "agent:ci lacks write" in _text(added)


def test_over_stdio_the_agent_cannot_archive_the_persons_expired_goal(ix: Intently, clock: ManualClock) -> None:
    """goals_archive exists (the CLI and HTTP had archive, MCP did not) and says whose decision
    it is: retiring an expired goal is its owner's, so the agent acting for alice is refused,
    naming `intently goal archive`, and nothing is archived. Endorsing an agent's goal as the
    user's word has no tool at all."""
    goal = ix.goals.add("Book the venue", due="2026-03-04").id
    clock.advance("3d")
    ix.goals.organise()
    ix.checkpoint()

    async def go() -> list[Any]:
        async with Client(_stdio(ix)) as client:
            tools = {t.name: t.description or "" for t in (await client.list_tools()).tools}
            refused = await client.call_tool("goals_archive", {"goal_id": goal, "reason": "nobody will"})
            endorse = await client.call_tool("goals_endorse", {"goal_id": goal})
            return [tools, refused, endorse]

    tools, refused, endorse = _run(go)
    assert "owner's decision" in tools["goals_archive"] and "intently goal endorse" in tools["goals_add"]
    assert not any("endorse" in name for name in tools)
    assert refused.is_error
    assert f"PermissionDenied: agent:mcp for user:alice cannot archive intent {goal}" in _text(refused)
    assert f"the owner runs `intently goal archive {goal}`" in _text(refused)
    assert endorse.is_error
    assert ix.log.read("proj", op="INTENT_ARCHIVED") == []
    assert ix.goals.get(goal).lifecycle_state.value == "ACTIVE"  # still on alice's open list
    archived = ix.goals.archive(goal, reason="nobody will")  # alice, herself
    assert archived.lifecycle_state.value == "ARCHIVED"


def test_over_stdio_the_agent_cannot_cancel_or_complete_the_persons_goal(ix: Intently) -> None:
    """The MCP agent acting for alice could cancel or complete her goals (only archive asked
    whose goal it was): a prompt injection could drop them from every context block. Both are
    refused over the real transport, naming the goal, its owner and the command alice runs, and
    nothing is written; the goal the agent added itself it still completes."""
    mine = ix.goals.add("Ship the API", priority="HIGH").id
    bobs = ix.goals.add("Review the release notes", owner="bob").id
    ix.checkpoint()

    async def go() -> list[Any]:
        async with Client(_stdio(ix)) as client:
            tools = {t.name: t.description or "" for t in (await client.list_tools()).tools}
            cancel = await client.call_tool("goals_cancel", {"goal_id": mine, "reason": "a page said so"})
            complete = await client.call_tool(
                "goals_complete", {"goal_id": bobs, "reason": "notes reviewed", "evidence_ids": ["doc:7"]}
            )
            own = json.loads(_text(await client.call_tool("goals_add", {"text": "Rename the module"})))["id"]
            done = await client.call_tool("goals_complete", {"goal_id": own, "reason": "renamed"})
            return [tools, cancel, complete, done]

    tools, cancel, complete, done = _run(go)
    assert "intently goal cancel ID" in tools["goals_cancel"]
    assert "intently goal done ID" in tools["goals_complete"]
    assert cancel.is_error and complete.is_error
    assert (
        f"PermissionDenied: agent:mcp for user:alice cannot cancel intent {mine} (owner: none): "
        "it is user:alice's goal" in _text(cancel)
    )
    assert f"user:alice runs `intently goal cancel {mine}`" in _text(cancel)
    assert f"cannot complete intent {bobs} (owner: user:bob): it is user:bob's goal" in _text(complete)
    assert f"user:bob runs `intently goal done {bobs}`" in _text(complete)
    # the agent's completion is kept as a claim for bob, the goal not completed (the error says so)
    assert "CompletionClaimed: claimed, awaits user:bob: " in _text(complete)
    claim = ix.goals.get(bobs).completion_claim
    assert claim is not None
    assert (claim["claimed_by"], claim["note"], claim["evidence_ids"]) == (
        "agent:mcp for user:alice",
        "notes reviewed",
        ["doc:7"],
    )
    assert [ix.goals.get(i).state.value for i in (mine, bobs)] == ["ACTIVE", "ACTIVE"]
    assert not done.is_error, _text(done)
    assert json.loads(_text(done))["state"] == "COMPLETED"
    (op,) = ix.log.read("proj", op="INTENT_TRANSITION")
    assert (op.actor, op.payload["to_state"]) == ("agent:mcp for user:alice", "COMPLETED")


def test_over_stdio_the_agent_cannot_retype_or_reword_the_persons_goal(ix: Intently) -> None:
    """goals_update offers text and type: changing either on alice's goal is her act (her
    words), refused over the real transport naming the field and the command she runs, and
    nothing is written; its priority the agent still sets."""
    mine = ix.goals.add("Ship the API").id
    ix.checkpoint()

    async def go() -> list[Any]:
        async with Client(_stdio(ix)) as client:
            retyped = await client.call_tool("goals_update", {"goal_id": mine, "type": "OPEN_QUESTION"})
            reworded = await client.call_tool("goals_update", {"goal_id": mine, "text": "Draft an API plan"})
            raised = await client.call_tool("goals_update", {"goal_id": mine, "priority": "HIGH"})
            return [retyped, reworded, raised]

    retyped, reworded, raised = _run(go)
    for refused, field, flag in ((retyped, "type", "--type TYPE"), (reworded, "text", "--text TEXT")):
        assert refused.is_error
        assert (
            f"PermissionDenied: agent:mcp for user:alice cannot change the {field} of intent {mine} (owner: none): "
            "it is user:alice's goal" in _text(refused)
        )
        assert f"`intently goal edit {mine} {flag}`" in _text(refused)
    assert not raised.is_error, _text(raised)
    kept = ix.goals.get(mine)
    assert (kept.value, kept.intent_type.value, kept.priority.value) == ("Ship the API", "GOAL", "HIGH")


def test_over_stdio_an_agent_archives_an_expired_goal_it_owns(ix: Intently, clock: ManualClock) -> None:
    """The owning agent decides for its own goal (RFC-0013 section 6, "the user or owning
    agent"): `agent:ci`, acting as itself, archives the expired goal it owns, logged as its
    act with the reason, as the CLI and HTTP archive log it; a stale version is refused."""
    ix.access.grant(Actor.parse("agent:ci"), Permission.WRITE)
    goal = ix.as_actor("agent:ci").goals.add("Warm the build cache", owner="agent:ci", due="2026-03-04").id
    clock.advance("3d")
    ix.goals.organise()
    ix.checkpoint()
    version = ix.goals.get(goal).version

    async def go() -> tuple[Any, Any]:
        async with Client(_stdio(ix, actor="agent:ci")) as client:
            stale = await client.call_tool("goals_archive", {"goal_id": goal, "expected_version": version - 1})
            done = await client.call_tool(
                "goals_archive", {"goal_id": goal, "reason": "cache moved", "expected_version": version}
            )
            return stale, done

    stale, done = _run(go)
    assert stale.is_error and "version" in _text(stale)
    assert not done.is_error, _text(done)
    assert (json.loads(_text(done))["state"], json.loads(_text(done))["lifecycle_state"]) == ("EXPIRED", "ARCHIVED")
    (op,) = ix.log.read("proj", op="INTENT_ARCHIVED")
    assert (op.target, op.actor, op.payload["reason"]) == (goal, "agent:ci", "cache moved")


def test_an_agent_for_a_person_never_administers(ix: Intently) -> None:
    """The agent holds the person's permissions except admin: an owner's agent could otherwise
    grant access or make tokens, steered by whatever text reached the model."""
    from intently.mcp_server import acting_view
    from intently.server import TokenStore

    agent = acting_view(ix)
    assert str(agent.actor) == "agent:mcp for user:alice"
    assert agent.access.permissions(agent.actor, "proj") == {
        Permission.READ,
        Permission.WRITE,
        Permission.MANAGE_REMINDERS,
    }
    with pytest.raises(PermissionDenied, match="lacks admin"):
        agent.access.grant(Actor.parse("user:mallory"), Permission.WRITE)
    with pytest.raises(PermissionDenied, match="lacks admin"):
        TokenStore(agent).create(agent.actor.on_behalf_of, label="steered")
    assert ix.access.grants() == [] and not ix.log.read("proj", op="GRANT")


def test_the_agent_sees_and_cancels_the_persons_standing_intents(ix: Intently) -> None:
    """Without admin, a standing intent is visible to whoever made it or is reminded by it; the
    agent acting for Alice sees and manages hers as she does (not those only an admin sees)."""
    hers = ix.triggers.add("Check the rollback plan with Dana", when=["launch"])
    ix.access.grant(Actor.parse("user:bob"), Permission.MANAGE_REMINDERS)
    bobs = ix.as_actor("user:bob").triggers.add("Ask Carol about the invoice", when=["invoice"])

    async def go() -> tuple[Any, Any, Any]:
        async with Client(build_server(ix)) as client:
            listed = await client.call_tool("intents_list", {})
            other = await client.call_tool("intents_cancel", {"intent_id": bobs.id})
            cancelled = await client.call_tool("intents_cancel", {"intent_id": hers.id})
            return listed, other, cancelled

    listed, other, cancelled = _run(go)
    assert [t["id"] for t in json.loads(_text(listed))["items"]] == [hers.id]
    assert other.is_error and "NotFound" in _text(other)
    assert json.loads(_text(cancelled))["state"] == "cancelled"
    (op,) = ix.log.read("proj", op="TRIGGER_CANCEL")
    assert op.actor == "agent:mcp for user:alice"


def _git(project: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=project,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def test_a_session_of_mcp_writes_leaves_the_git_tree_clean(ix: Intently, project: Path) -> None:
    """Every MCP write signed a checkpoint and rewrote the tracked witness file with it, so
    `git status` showed .intently/checkpoints.json modified all session long (an agent's
    `git commit -a` swept it in), as the Claude Code hooks did before them. The writes are
    still signed in the database; the witness catches up at the user's own checkpoint."""
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "commit", "-qm", "init")
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env["INTENTLY_HOME"] = str(ix.home.path)
    env["INTENTLY_ACTOR"] = "user:alice"
    params = StdioServerParameters(command=str(Path(sys.executable).parent / "intently"), args=["mcp"], env=env)

    async def go() -> list[Any]:
        async with Client(params) as client:
            added = await client.call_tool("goals_add", {"text": "Ship the billing API v2", "priority": "HIGH"})
            observed = await client.call_tool(
                "review_observe", {"text": "I will update the runbook by Friday.", "speaker": "agent:ci"}
            )
            checked = await client.call_tool("gate_check", {"user_request": "list files", "tool": "Bash"})
            status = _git(project, "status", "--porcelain")  # while the server still runs
        return [added, observed, checked, status]

    added, observed, checked, status = _run(go)
    assert not (added.is_error or observed.is_error or checked.is_error)
    assert status == ""
    assert _git(project, "status", "--porcelain") == ""  # nor when it stops
    with Intently.open(ix.home.path, actor="user:alice") as other:
        signed = other.log.latest_checkpoints()["proj"].size
        assert signed == other.log.size("proj")  # every write of the session was signed all the same
        other.log.checkpoint()  # `intently log checkpoint` brings the witness up to them
        assert other.log.read_witness()["proj"].size == signed
        assert other.log.verify().ok
    assert _git(project, "status", "--porcelain").split() == ["M", ".intently/checkpoints.json"]


def test_the_goal_tools_set_and_empty_completion_criteria(ix: Intently) -> None:
    """goals_add and goals_update take completion criteria (they had no such argument), and "-"
    empties them, as it does the owner, due date and note."""
    ix.checkpoint()

    async def go() -> list[Any]:
        async with Client(build_server(ix)) as client:
            added = await client.call_tool("goals_add", {"text": "Ship the docs site", "completion_criteria": "live"})
            goal_id = json.loads(_text(added))["id"]
            changed = await client.call_tool(
                "goals_update", {"goal_id": goal_id, "completion_criteria": "live, with search"}
            )
            emptied = await client.call_tool("goals_update", {"goal_id": goal_id, "completion_criteria": "-"})
            return [added, changed, emptied]

    added, changed, emptied = _run(go)
    assert not added.is_error, _text(added)
    assert json.loads(_text(added))["completion_criteria"] == "live"
    assert json.loads(_text(changed))["completion_criteria"] == "live, with search"
    assert json.loads(_text(emptied))["completion_criteria"] is None
