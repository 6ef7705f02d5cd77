"""Denying a waiting call: logged, final, never approvable after, and rebuilt by replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from intently import Intently
from intently.core.errors import InvalidTransition
from intently.gate import Level

from .conftest import assert_replay_rebuilds

BILL = "Amount due 80.00\nIBAN: DE89370400440532013000"
PAY = {"recipient": "DE89370400440532013000", "amount": 80, "subject": "May", "date": "2026-05-01"}


def _waiting(ix: Intently, tools: list[dict[str, Any]]) -> tuple[Any, Any]:
    s = ix.gate.session(tools, user_request="Pay the bill in 'may.txt'")
    s.observe("read_file", BILL, args={"file_path": "may.txt"})
    d = s.check("send_money", PAY)
    assert d.level is Level.CONFIRM
    return s, d


def test_a_denied_decision_can_never_be_approved(ix: Intently, tools: list[dict[str, Any]]) -> None:
    s, d = _waiting(ix, tools)
    ix.gate.deny(d.id, reason="not this month")
    with pytest.raises(InvalidTransition, match="denied to approved"):
        ix.gate.approve(d.id)
    with pytest.raises(InvalidTransition):
        ix.gate.deny(d.id)  # settled once
    assert s.check("send_money", PAY).level is Level.CONFIRM  # the call still waits; nothing runs
    op = ix.log.read(ix.namespace, op="GATE_DENIED")[-1]
    assert op.target == d.id and op.payload["reason"] == "not this month" and op.actor == "user:alice"


def test_an_approved_decision_cannot_be_denied(ix: Intently, tools: list[dict[str, Any]]) -> None:
    _s, d = _waiting(ix, tools)
    ix.gate.approve(d.id)
    with pytest.raises(InvalidTransition, match="approved to denied"):
        ix.gate.deny(d.id)


def test_only_waiting_decisions_can_be_denied(ix: Intently, tools: list[dict[str, Any]]) -> None:
    s, _ = _waiting(ix, tools)
    allowed = s.check("read_file", {"file_path": "may.txt"})
    assert not allowed.level.needs_approval
    with pytest.raises(InvalidTransition):
        ix.gate.deny(allowed.id)


def test_replay_rebuilds_a_denial(ix: Intently, tools: list[dict[str, Any]], tmp_path: Path) -> None:
    _s, d = _waiting(ix, tools)
    ix.gate.deny(d.id)
    assert_replay_rebuilds(ix, tmp_path)
