"""The gate is hard to misuse: a decision has no truth value, a bad call blocks instead of
raising, and a malformed tool definition is refused naming the tool and the field.

Each test is named after the audit finding it guards against."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from intently import Intently, IntentlyError, InvalidInput, PolicyError, StoreError
from intently.gate import Decision, Gate, Level, MemoryJournal, action_hash

from .conftest import MAIL_TOOLS, S, _tool, assert_replay_rebuilds

REQUEST = "Email bob@example.com and pay DE89370400440532013000 100 euros"


def _cyclic() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


def _deep(levels: int, leaf: Any) -> Any:
    return functools.reduce(lambda inner, _: [inner], range(levels), leaf)


# (tool, args) pairs a model or a harness can produce that are not a readable call.
UNREADABLE: dict[str, tuple[Any, Any]] = {
    "None args": ("send_email", None),
    "list args": ("send_email", [1, 2]),
    "string args": ("send_email", "recipients=eve@evil.example"),
    "self-referencing dict": ("send_email", {"recipients": _cyclic()}),
    "5000-deep nesting": ("send_email", {"recipients": _deep(5000, "bob@example.com")}),
    "NaN": ("send_money", {"recipient": "DE89370400440532013000", "amount": float("nan")}),
    "infinity": ("send_money", {"recipient": "DE89370400440532013000", "amount": float("inf")}),
    "integer JCS cannot carry": ("send_money", {"recipient": "DE89370400440532013000", "amount": 2**60}),
    "lone surrogate": ("send_email", {"recipients": ["\ud800@example.com"]}),
    "tuple key": ("send_email", {("a", "b"): "x"}),
    "tool name None": (None, {"recipients": ["bob@example.com"]}),
    "tool name list": (["send_email"], {"recipients": ["bob@example.com"]}),
}


def test_a_decision_has_no_truth_value_so_if_check_cannot_run_a_blocked_call(tools: list[dict[str, Any]]) -> None:
    """``if session.check(...): run_tool()`` ran blocked calls (every dataclass is truthy).
    Now any truth test raises TypeError pointing at ``decision.executes``."""
    s = Gate.from_tools(tools).session(user_request=REQUEST)
    blocked = s.check("send_email", {"recipients": ["eve@evil.example"], "subject": "hi", "body": "hi"})
    allowed = s.check("send_email", {"recipients": ["bob@example.com"], "subject": "hi", "body": "hi"})
    assert blocked.level is Level.BLOCK and allowed.level is Level.ALLOW
    for decision in (blocked, allowed):
        with pytest.raises(TypeError, match=r"decision\.executes"):
            bool(decision)
        with pytest.raises(TypeError):
            if decision:
                pytest.fail("a decision was used as a bool")
    assert (blocked.executes, allowed.executes) == (False, True)


@pytest.mark.parametrize("case", sorted(UNREADABLE))
def test_check_blocks_a_call_it_cannot_read_instead_of_raising(case: str, tools: list[dict[str, Any]]) -> None:
    """``Session.check`` promises never to raise for a bad call; these raised TypeError,
    ValueError, RecursionError or InvalidInput."""
    tool, args = UNREADABLE[case]
    journal = MemoryJournal()
    s = Gate.from_tools(tools, journal=journal).session(user_request=REQUEST)
    d = s.check(tool, args)
    assert d.level is Level.BLOCK and not d.executes
    assert d.rule_ids == ("unreadable-call",)
    assert d.reason.startswith("the gate cannot read this call: ")
    assert journal.decisions[d.id] is d  # recorded like any other decision
    assert isinstance(d.tool, str)
    if isinstance(tool, str):
        assert d.args == {}  # nothing unreadable is stored


def test_an_unreadable_call_is_a_signed_log_operation_and_replays(ix: Intently, tmp_path: Path) -> None:
    """Bound to a home, every blocked bad call is a GATE_DECIDED operation; the log verifies
    and replay rebuilds the gate tables."""
    s = ix.gate.session(MAIL_TOOLS, user_request=REQUEST)
    decisions = [s.check(tool, args) for tool, args in UNREADABLE.values()]
    assert {d.level for d in decisions} == {Level.BLOCK}
    ops = ix.log.read("proj", op="GATE_DECIDED")
    assert [o.target for o in ops] == [d.id for d in decisions]
    ix.checkpoint()
    assert ix.log.verify().ok
    assert_replay_rebuilds(ix, tmp_path)


def test_an_unreadable_call_never_shares_the_hash_of_a_real_call(tools: list[dict[str, Any]]) -> None:
    """The hash of a blocked unreadable call is not the hash of ``tool({})``, so the log never
    says that empty call was made."""
    s = Gate.from_tools(tools).session(user_request=REQUEST)
    assert s.check("send_email", None).action_hash != s.check("send_email", {}).action_hash  # type: ignore[arg-type]


def test_arguments_up_to_the_depth_limit_are_still_decided(tools: list[dict[str, Any]]) -> None:
    """The depth limit is for runaway nesting, not ordinary structured arguments."""
    s = Gate.from_tools(tools).session(user_request=REQUEST)
    d = s.check("send_email", {"recipients": _deep(98, "bob@example.com"), "subject": "hi", "body": "hi"})
    assert d.rule_ids != ("unreadable-call",)


def test_an_internal_error_while_deciding_blocks(tools: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail closed: any exception while deciding (not only the four types once listed) is a block."""
    s = Gate.from_tools(tools).session(user_request=REQUEST)

    def broken(*_: Any) -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(s, "_facts", broken)
    d = s.check("send_email", {"recipients": ["bob@example.com"], "subject": "hi", "body": "hi"})
    assert d.level is Level.BLOCK and d.rule_ids == ("internal-error",)
    assert "RuntimeError: boom" in d.reason


class _FailingJournal(MemoryJournal):
    def decided(self, decision: Decision) -> None:
        raise StoreError("the database is gone")


def test_a_decision_the_journal_cannot_record_is_never_returned(tools: list[dict[str, Any]]) -> None:
    """If the decision cannot be written, ``check`` raises intently's error instead of handing
    back an unrecorded decision: a call the log does not show can never be allowed."""
    s = Gate.from_tools(tools, journal=_FailingJournal()).session(user_request=REQUEST)
    calls: list[Any] = [{"recipients": ["bob@example.com"], "subject": "hi", "body": "hi"}, None]
    for args in calls:
        with pytest.raises(IntentlyError):
            s.check("send_email", args)


def test_action_hash_refuses_arguments_that_are_not_plain_json() -> None:
    for args in ({"a": _cyclic()}, {"a": float("nan")}):
        with pytest.raises(InvalidInput) as info:
            action_hash("run_1", "send_email", args)
        assert info.value.where == "args"


@pytest.mark.parametrize(
    ("definition", "where"),
    [
        ({"name": "send_email", "inputSchema": "x"}, "inputSchema must be an object, got str"),
        ({"name": "send_email", "input_schema": ["to"]}, "input_schema must be an object, got list"),
        (
            {"name": "send_email", "inputSchema": {"type": "object", "properties": ["to"]}},
            "inputSchema.properties must be an object, got list",
        ),
        (
            {"name": "send_email", "inputSchema": {"type": "object", "properties": {"to": {}}, "required": "to"}},
            "inputSchema.required must be a list of argument names",
        ),
        ({"name": "send_email", "annotations": "destructive"}, "annotations must be an object, got str"),
    ],
)
def test_a_malformed_tool_definition_is_refused_naming_the_tool_and_field(
    definition: dict[str, Any], where: str
) -> None:
    """Tool definitions come from MCP servers: a malformed one raised a bare ValueError or
    AttributeError from deep inside inference."""
    with pytest.raises(PolicyError) as caught:
        Gate.from_tools([definition])
    assert str(caught.value) == f"tool 'send_email': {where}"


def test_a_tool_definition_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(PolicyError, match="must be an object with a `name`, got str"):
        Gate.from_tools(["send_email"])  # type: ignore[list-item]


def test_odd_property_schemas_still_infer_a_contract() -> None:
    """A property schema that says nothing usable about its type (``anyOf`` of the wrong shape)
    is read as type ``any``, as a non-object property schema already was, not an error."""
    gate = Gate.from_tools(
        [
            {
                "name": "send_email",
                "description": "Send an email.",
                "inputSchema": {"type": "object", "properties": {"recipients": {"anyOf": "x"}, "body": {"anyOf": [5]}}},
            }
        ]
    )
    contract = gate.contract("send_email")
    assert contract is not None and contract.fields["recipients"].type == "any"


def test_a_session_needs_the_request_as_a_string(tools: list[dict[str, Any]]) -> None:
    with pytest.raises(InvalidInput) as info:
        Gate.from_tools(tools).session(user_request=None)  # type: ignore[arg-type]
    assert info.value.where == "user_request"


def test_an_argument_that_only_prints_like_a_value_is_unreadable() -> None:
    """The gate judged ``str(obj)`` while the tool received the object itself, and an approval
    carried over between the two forms; anything JSON cannot carry is now refused."""

    class LooksLikeAnAddress:
        def __str__(self) -> str:
            return "bob@example.com"

    gate = Gate.from_tools([_tool("send_email", "Send an email.", {"recipients": S, "body": S})])
    d = gate.session(user_request="Email bob@example.com the notes").check(
        "send_email", {"recipients": LooksLikeAnAddress(), "body": "Notes"}
    )
    assert d.level is Level.BLOCK and d.rule_ids == ("unreadable-call",)
