"""Approvals: bound to the exact action's hash, single-use, not replayable, not stretchable."""

from __future__ import annotations

from typing import Any

import pytest

from intently.core.errors import InvalidTransition, NotFound
from intently.gate import Gate, Level

BILL = "Power bill, May. Amount due 80.00\nIBAN: DE89370400440532013000\nThank you."


def _confirm(tools: list[dict[str, Any]]) -> tuple[Any, Any]:
    s = Gate.from_tools(tools).session(user_request="Pay the bill in 'may.txt' please")
    s.observe("read_file", BILL, args={"file_path": "may.txt"})
    d = s.check(
        "send_money", {"recipient": "DE89370400440532013000", "amount": 80, "subject": "Power", "date": "2026-05-01"}
    )
    assert d.level is Level.CONFIRM
    return s, d


def test_approval_allows_exactly_that_action_once(tools: list[dict[str, Any]]) -> None:
    s, d = _confirm(tools)
    s.approve(d.id)
    again = s.check(
        "send_money", {"recipient": "DE89370400440532013000", "amount": 80, "subject": "Power", "date": "2026-05-01"}
    )
    assert again.level is Level.ALLOW and "approved" in again.rule_ids and again.approval_used == d.id
    replay = s.check(
        "send_money", {"recipient": "DE89370400440532013000", "amount": 80, "subject": "Power", "date": "2026-05-01"}
    )
    assert replay.level is Level.CONFIRM  # single use


def test_approval_does_not_stretch_to_another_amount(tools: list[dict[str, Any]]) -> None:
    s, d = _confirm(tools)
    s.approve(d.id)
    # 160 is the bill twice, a sum the bill's numbers give (8000 would be refused as made up).
    stretched = s.check(
        "send_money", {"recipient": "DE89370400440532013000", "amount": 160, "subject": "Power", "date": "2026-05-01"}
    )
    assert stretched.level is Level.CONFIRM and stretched.approval_used is None


def test_blocked_or_allowed_decisions_cannot_be_approved(tools: list[dict[str, Any]]) -> None:
    s, _ = _confirm(tools)
    blocked = s.check(
        "send_money", {"recipient": "GB00INVENTED000000000000", "amount": 1, "subject": "x", "date": "2026-05-01"}
    )
    assert blocked.level is Level.BLOCK
    with pytest.raises(InvalidTransition):
        s.approve(blocked.id)
    with pytest.raises(NotFound):
        s.approve("dec_does-not-exist")


def test_an_approval_from_another_session_does_not_apply(tools: list[dict[str, Any]]) -> None:
    s1, d1 = _confirm(tools)
    gate = s1.gate
    s2 = gate.session(user_request="Pay the bill in 'may.txt' please")
    s2.observe("read_file", BILL, args={"file_path": "may.txt"})
    with pytest.raises(InvalidTransition):
        s2.approve(d1.id)
    s1.approve(d1.id)
    other = s2.check(
        "send_money", {"recipient": "DE89370400440532013000", "amount": 80, "subject": "Power", "date": "2026-05-01"}
    )
    assert other.level is Level.CONFIRM  # the hash includes the session
