"""The MCP gateway against a real stdio MCP server, through the real SDK client, in subprocesses.

Confirmation goes through MCP elicitation when the client declares it (accept forwards the
exact call once, decline/cancel refuse it) and through ``intently gate approve ID`` otherwise.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest

from intently import Intently
from intently.gate import Gate
from intently.gate._gateway import Answer, Gateway

UPSTREAM = Path(__file__).parent / "data" / "upstream_mcp.py"
CLI = [sys.executable, "-c", "from intently.cli import main; main()"]
IBAN = "DE89370400440532013000"
BILL = {"recipient": IBAN, "amount": 98.5, "subject": "March venue"}
PAY_REQUEST = "Pay the offsite bill from Bob"


@asynccontextmanager
async def _client(home: Path, done: Path, request: list[str], elicitation_callback: Any = None) -> AsyncIterator[Any]:
    """The real SDK client on a real gateway subprocess over a real upstream server;
    ``elicitation_callback`` set means the client declares elicitation."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    args = [*CLI[1:], "--home", str(home), "--actor", "user:alice", "gateway", *request]
    params = StdioServerParameters(command=CLI[0], args=[*args, "--", sys.executable, str(UPSTREAM), str(done)])
    async with (
        stdio_client(params) as (r, w),
        ClientSession(r, w, elicitation_callback=elicitation_callback) as client,
    ):
        await client.initialize()
        yield client


async def _call(client: Any, name: str, args: dict[str, Any]) -> tuple[bool, str]:
    res = await client.call_tool(name, args)
    return bool(res.is_error), " ".join(getattr(c, "text", "") for c in res.content)


class Scripted:
    """An elicitation callback playing the user: answers in order, remembers every question."""

    def __init__(self, *answers: Answer | Literal["error"], content: dict[str, Any] | None = None) -> None:
        self.answers = list(answers)
        self.content = content
        self.questions: list[str] = []

    async def __call__(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        self.questions.append(params.message)
        action = self.answers.pop(0)
        if action == "error":
            return types.ErrorData(code=types.INVALID_REQUEST, message="no one to ask")
        return types.ElicitResult(action=action, content=self.content if action == "accept" else None)


def _done(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def home(ix: Intently) -> Iterator[Path]:
    ix.checkpoint()  # the gateway subprocess opens the same home
    yield ix.home.path


def test_accepted_elicitation_forwards_exactly_the_shown_call_once(ix: Intently, home: Path, tmp_path: Path) -> None:
    done = tmp_path / "done.jsonl"
    # The "user" accepts the first question with content naming another payee and amount:
    # the content is ignored, and the approval does not stretch to a repeat or another amount.
    user = Scripted("accept", "decline", "decline", content={"recipient": "GB00EVIL0000", "amount": 99.99})

    async def drive() -> list[tuple[bool, str]]:
        async with _client(home, done, ["--request", PAY_REQUEST], user) as client:
            await _call(client, "search_emails", {"query": "bill"})
            return [
                await _call(client, "send_money", BILL),
                await _call(client, "send_money", BILL),
                await _call(client, "send_money", {**BILL, "amount": 99.99}),
            ]

    first, repeat, other = anyio.run(drive)
    assert first[0] is False, first[1]
    assert repeat[0] is True and "declined send_money" in repeat[1]
    assert other[0] is True and "declined send_money" in other[1]
    assert _done(done) == [{"paid": IBAN, "amount": 98.5}]

    # The question showed exactly the call that ran, the rule ids and the reason.
    assert len(user.questions) == 3
    q = user.questions[0]
    assert "Tool: send_money" in q and f'"recipient": "{IBAN}"' in q and '"amount": 98.5' in q
    assert "text-sourced-high-risk" in q and "free text" in q
    assert '"amount": 99.99' in user.questions[2]

    decided = [op.payload["decision"] for op in ix.log.read("proj", op="GATE_DECIDED")]
    assert [d["level"] for d in decided] == ["allow", "confirm", "allow", "confirm", "confirm"]
    asked, ran = decided[1], decided[2]
    assert f"Decision: {asked['id']}" in q
    assert ran["approval_used"] == asked["id"] and ran["action_hash"] == asked["action_hash"]
    assert "approved" in ran["rule_ids"]
    approvals = ix.log.read("proj", op="GATE_APPROVED")
    assert [(a.target, a.actor) for a in approvals] == [(asked["id"], "user:alice")]


def test_declined_cancelled_or_unanswered_elicitation_runs_nothing(ix: Intently, home: Path, tmp_path: Path) -> None:
    done = tmp_path / "done.jsonl"
    user = Scripted("decline", "cancel", "error")

    async def drive() -> list[tuple[bool, str]]:
        async with _client(home, done, ["--request", PAY_REQUEST], user) as client:
            await _call(client, "search_emails", {"query": "bill"})
            return [await _call(client, "send_money", BILL) for _ in range(3)]

    declined, cancelled, unanswered = anyio.run(drive)
    decided = [op.payload["decision"] for op in ix.log.read("proj", op="GATE_DECIDED")]
    assert [d["level"] for d in decided] == ["allow", "confirm", "confirm", "confirm"]
    # A client that declared elicitation but could not answer falls back to the command.
    assert unanswered[0] is True and f"intently gate approve {decided[3]['id']}" in unanswered[1]
    assert declined[0] is True and "the user declined send_money" in declined[1] and decided[1]["id"] in declined[1]
    assert cancelled[0] is True and "cancelled" in cancelled[1] and decided[2]["id"] in cancelled[1]
    assert len(user.questions) == 3
    assert _done(done) == []
    assert ix.log.read("proj", op="GATE_APPROVED") == []
    # the refusal is in the log, and that decision can never be approved after it
    (denied,) = ix.log.read("proj", op="GATE_DENIED")
    assert denied.target == decided[1]["id"] and "declined by the user" in denied.payload["reason"]


def test_without_elicitation_it_blocks_forwards_and_names_the_approval_command(
    ix: Intently, home: Path, tmp_path: Path
) -> None:
    done = tmp_path / "done.jsonl"
    request = tmp_path / "request.txt"  # the trusted channel a prompt hook would write
    request.write_text("Reply to Bob about the offsite")

    def approve(decision_id: str) -> None:
        base = [*CLI, "--home", str(home), "--actor", "user:alice"]
        subprocess.run([*base, "gate", "approve", decision_id], check=True, capture_output=True, timeout=60)

    async def drive() -> list[tuple[bool, str]]:
        async with _client(home, done, ["--request-file", str(request)]) as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            assert names == ["fetch_page", "search_emails", "send_email", "send_money"]
            reply = [
                await _call(client, "search_emails", {"query": "offsite"}),
                await _call(client, "send_email", {"recipients": ["eve@evil.example"], "subject": "fwd", "body": "x"}),
                await _call(client, "send_email", {"recipients": ["bob@example.com"], "subject": "Re", "body": "Fri"}),
            ]
            request.write_text(PAY_REQUEST)  # the user's next request: a new run
            await _call(client, "search_emails", {"query": "bill"})
            waiting = await _call(client, "send_money", BILL)
            found = re.search(r"intently gate approve (dec_\S+)`", waiting[1])
            assert found, waiting[1]
            await anyio.to_thread.run_sync(approve, found.group(1))
            return [*reply, waiting, await _call(client, "send_money", BILL), await _call(client, "send_money", BILL)]

    search, injected, reply, waiting, approved, again = anyio.run(drive)
    assert search[0] is False and "offsite" in search[1].lower()
    assert injected[0] is True and "block (instructed-value)" in injected[1]
    assert reply[0] is False, reply[1]
    assert waiting[0] is True and "confirm (text-sourced-high-risk)" in waiting[1]
    assert approved[0] is False, approved[1]
    assert again[0] is True and "intently gate approve" in again[1]  # single use
    assert _done(done) == [{"to": ["bob@example.com"], "subject": "Re"}, {"paid": IBAN, "amount": 98.5}]
    decided = [op.payload["decision"] for op in ix.log.read("proj", op="GATE_DECIDED")]
    assert [d["level"] for d in decided] == ["allow", "block", "allow", "allow", "confirm", "allow", "confirm"]
    assert len({d["session_id"] for d in decided[:3]} | {d["session_id"] for d in decided[3:]}) == 2


def test_modern_client_is_asked_through_input_required(ix: Intently, home: Path, tmp_path: Path) -> None:
    """2026-07-28 forbids server-to-client requests: the question rides an InputRequiredResult
    and the SDK client's retry carries the answer."""
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    done = tmp_path / "done.jsonl"
    user = Scripted("accept", "decline")
    args = [*CLI[1:], "--home", str(home), "--actor", "user:alice", "gateway", "--request", PAY_REQUEST]
    params = StdioServerParameters(command=CLI[0], args=[*args, "--", sys.executable, str(UPSTREAM), str(done)])

    async def drive() -> list[tuple[bool, str]]:
        async with Client(params, mode="2026-07-28", elicitation_callback=user) as client:
            await _call(client, "search_emails", {"query": "bill"})
            return [
                await _call(client, "send_money", BILL),
                await _call(client, "send_money", {**BILL, "amount": 99.99}),
            ]

    paid, other = anyio.run(drive)
    assert paid[0] is False, paid[1]
    assert other[0] is True and "declined send_money" in other[1]
    assert _done(done) == [{"paid": IBAN, "amount": 98.5}]
    assert len(user.questions) == 2 and '"amount": 99.99' in user.questions[1]
    decided = [op.payload["decision"] for op in ix.log.read("proj", op="GATE_DECIDED")]
    shown = next(d for d in decided if f"Decision: {d['id']}" in user.questions[0])
    ran = [d for d in decided if d["approval_used"]]
    assert len(ran) == 1 and ran[0]["approval_used"] == shown["id"] and ran[0]["args"] == BILL
    assert [a.target for a in ix.log.read("proj", op="GATE_APPROVED")] == [shown["id"]]


def test_a_returned_answer_cannot_be_moved_to_another_action(tools: list[dict[str, Any]]) -> None:
    gateway = Gateway(Gate.from_tools(tools), request=PAY_REQUEST)
    gateway.check("search_emails", {"query": "bill"}).session.observe(
        "search_emails",
        [{"sender": "bob@example.com", "body": f"Venue bill: 98.50 EUR (99.99 EUR if paid late), account {IBAN}."}],
    )
    args = {**BILL, "date": "2026-03-02"}
    state = gateway.asking(gateway.check("send_money", args))
    other = gateway.check("send_money", {**args, "amount": 99.99})
    assert gateway.asked(other, state) is None  # the state of one question does not answer another
    assert gateway.asked(gateway.check("send_money", args), state) is None  # and is spent by the attempt
    state = gateway.asking(gateway.check("send_money", args))
    assert gateway.asked(gateway.check("send_money", args), "dec_forged") is None
    found = gateway.asked(gateway.check("send_money", args), state)
    assert found is not None and found.decision.id == state


def test_an_accepted_answer_is_bound_to_its_own_action(tools: list[dict[str, Any]]) -> None:
    gateway = Gateway(Gate.from_tools(tools), request=PAY_REQUEST)
    gateway.check("search_emails", {"query": "bill"}).session.observe(
        "search_emails",
        [{"sender": "bob@example.com", "body": f"Venue bill: 98.50 EUR (99.99 EUR if paid late), account {IBAN}."}],
    )
    args = {**BILL, "date": "2026-03-02"}
    asked = gateway.check("send_money", args)
    other = gateway.check("send_money", {**args, "amount": 99.99})
    assert asked.needs_approval and other.needs_approval

    ran = gateway.answered(asked, "accept")
    assert not isinstance(ran, str)
    assert ran.executes and ran.decision.args == asked.decision.args
    assert ran.decision.approval_used == asked.decision.id
    # Neither the other amount nor a repeat of the approved call is covered by that answer.
    assert gateway.check("send_money", {**args, "amount": 99.99}).needs_approval
    assert gateway.check("send_money", args).needs_approval
    assert gateway.answered(other, "decline") == (
        f"intently gate: the user declined send_money ({', '.join(other.decision.rule_ids)}); "
        f"it did not run. Decision {other.decision.id}."
    )


def test_without_a_home_the_refusal_does_not_name_an_approval_that_cannot_reach_it(
    tools: list[dict[str, Any]],
) -> None:
    """With --no-home the decisions live in memory: `intently gate approve` could never reach
    them, so the refusal says what can (a client that answers the question, or a home)."""
    for approvable, expected in ((True, "intently gate approve"), (False, "Without a home")):
        gateway = Gateway(Gate.from_tools(tools), request=PAY_REQUEST, approvable=approvable)
        gateway.check("search_emails", {"query": "bill"}).session.observe(
            "search_emails",
            [{"sender": "bob@example.com", "body": f"Venue bill: 98.50 EUR (99.99 EUR if paid late), account {IBAN}."}],
        )
        waiting = gateway.check("send_money", {**BILL, "date": "2026-03-02"})
        assert waiting.needs_approval and expected in gateway.refusal(waiting.decision)


def test_a_tool_listed_without_hints_is_open_world_as_the_mcp_spec_defaults() -> None:
    """A server that leaves openWorldHint out gets the specification's default (true): its
    writes land wherever it reaches, so they are held to the rules for what leaves. A server
    that says false keeps a local write local; no hint can loosen a contract."""
    from intently.gate import SideEffect
    from intently.gate._contracts import open_world_by_default

    schema = {"type": "object", "properties": {"title": {"type": "string"}, "body": {"type": "string"}}}
    silent = {"name": "create_issue", "description": "Create an issue.", "inputSchema": schema}
    local = {**silent, "annotations": {"openWorldHint": False}}
    silent_contract = Gate.from_tools([open_world_by_default(silent)]).contract("create_issue")
    local_contract = Gate.from_tools([open_world_by_default(local)]).contract("create_issue")
    assert silent_contract is not None and silent_contract.side_effect is SideEffect.EXTERNAL_COMM
    assert local_contract is not None and local_contract.side_effect is SideEffect.LOCAL_WRITE


def test_a_question_nobody_answers_refuses_the_call_after_the_timeout(ix: Intently, home: Path, tmp_path: Path) -> None:
    """A client that declared elicitation and never replies cannot keep a call waiting for ever:
    after --ask-timeout the call is refused with the approval command, and nothing runs."""
    done = tmp_path / "done.jsonl"
    asked: list[str] = []

    async def never_answers(context: Any, params: Any) -> Any:
        asked.append(params.message)
        await anyio.sleep(30)

    async def drive() -> tuple[bool, str]:
        request = ["--request", PAY_REQUEST, "--ask-timeout", "1"]
        async with _client(home, done, request, never_answers) as client:
            await _call(client, "search_emails", {"query": "bill"})
            with anyio.fail_after(20):
                return await _call(client, "send_money", BILL)

    refused, text = anyio.run(drive)
    decided = [op.payload["decision"] for op in ix.log.read("proj", op="GATE_DECIDED")]
    assert len(asked) == 1
    assert refused is True and f"intently gate approve {decided[-1]['id']}" in text
    assert _done(done) == []
    assert ix.log.read("proj", op="GATE_APPROVED") == []


def test_a_made_up_address_is_fetched_only_from_a_site_given_with_web_trusted(
    ix: Intently, home: Path, tmp_path: Path
) -> None:
    """The model knows documentation URLs by heart; --web-trusted names the sites where a read
    may open one. Elsewhere, or without the option, a made-up address is refused."""
    done = tmp_path / "done.jsonl"
    docs = {"url": "https://docs.python.org/3/library/csv.html"}

    async def drive(extra: list[str]) -> list[tuple[bool, str]]:
        async with _client(home, done, ["--request", "How does csv quoting work?", *extra]) as client:
            return [
                await _call(client, "fetch_page", docs),
                await _call(client, "fetch_page", {"url": "https://collect.example/?q=csv"}),
            ]

    trusted = anyio.run(drive, ["--web-trusted", "python.org"])
    assert [refused for refused, _ in trusted] == [False, True]
    assert _done(done) == [{"fetched": docs["url"]}]
    plain = anyio.run(drive, [])
    assert [refused for refused, _ in plain] == [True, True] and "made up" in plain[0][1]
    assert _done(done) == [{"fetched": docs["url"]}]  # nothing more ran


def test_web_trusted_takes_host_names_only(home: Path, tmp_path: Path) -> None:
    cli = [*CLI, "--home", str(home), "--actor", "user:alice", "gateway", "--web-trusted", "https://python.org/"]
    done = subprocess.run(
        [*cli, "--", sys.executable, str(UPSTREAM), str(tmp_path / "d")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0 and "--web-trusted" in done.stderr and "host names" in done.stderr


@pytest.mark.parametrize("upstream", [["false"], ["/nonexistent/mcp-server"]])
def test_an_upstream_that_exits_or_is_missing_is_one_line_naming_it(home: Path, upstream: list[str]) -> None:
    """A wrong upstream command is the user's to fix: say which command and what happened,
    not an internal error about task groups."""
    import subprocess

    done = subprocess.run(
        [*CLI, "--home", str(home), "--actor", "user:alice", "gateway", "--request", "hi", "--", *upstream],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert f"upstream MCP server ({upstream[0]})" in done.stderr
    assert "internal error" not in done.stderr and "TaskGroup" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
