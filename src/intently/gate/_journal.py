"""Where a gate writes what it did: in memory by default, the home's log when bound to one.

Approvals live here, so that "approved" is a fact of the journal, bound to the exact action
hash, single-use and (for the home journal) persisted across processes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..core.errors import InvalidTransition, NotFound
from ._decision import Decision

__all__ = ["DENIED", "Journal", "MemoryJournal", "postcondition_record"]

#: ``used_by`` of the approval record that settles a denied decision, in every journal: never
#: empty, so no journal hands it out as an open approval, and its presence makes a later
#: approval a refused transition.
DENIED = "denied"


class Journal(Protocol):
    """What a session needs from its storage."""

    def open_session(self, session_id: str, info: dict[str, Any]) -> None: ...

    def observed(self, session_id: str, tool: str, label: str, sha256: str) -> None: ...

    def decided(self, decision: Decision) -> None:
        """Record ``decision``; if it used an approval, mark that approval used in the same step
        (raising :class:`InvalidTransition` if it was already used)."""
        ...

    def decision(self, decision_id: str) -> Decision:
        """The recorded decision, or :class:`NotFound`."""
        ...

    def approve(self, decision: Decision, approver: str) -> None:
        """Grant a single-use approval for ``decision.action_hash``."""
        ...

    def deny(self, decision: Decision, reason: str) -> None:
        """Refuse ``decision`` for good: it can never be approved afterwards."""
        ...

    def open_approval(self, session_id: str, action_hash: str) -> str | None:
        """The id of an unused approval of this exact action in this session, if any."""
        ...

    def postconditions(self, session_id: str, results: list[dict[str, Any]]) -> None:
        """Record the postcondition results of a run (see :func:`postcondition_record`)."""
        ...


def postcondition_record(result: Mapping[str, Any]) -> dict[str, Any]:
    """The stored shape of one postcondition result: check id, decision id, tool, passed, detail.

    One shape for every journal, so the console and ``explain`` read the same fields whether
    the run was kept in memory or in a home's log.
    """
    return {
        "check_id": str(result["id"]),
        "decision_id": str(result.get("decision_id") or ""),
        "tool": str(result["tool"]),
        "passed": bool(result["ok"]),
        "detail": str(result["detail"]),
    }


@dataclass
class _Approval:
    decision_id: str
    session_id: str
    action_hash: str
    approver: str
    used_by: str | None = None


@dataclass
class MemoryJournal:
    """A journal in memory: for the eval harness and for gates not bound to a home."""

    sessions: dict[str, dict[str, Any]] = field(default_factory=dict)
    decisions: dict[str, Decision] = field(default_factory=dict)
    approvals: dict[str, _Approval] = field(default_factory=dict)
    observations: list[tuple[str, str, str, str]] = field(default_factory=list)
    checked: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def open_session(self, session_id: str, info: dict[str, Any]) -> None:
        self.sessions[session_id] = info

    def observed(self, session_id: str, tool: str, label: str, sha256: str) -> None:
        self.observations.append((session_id, tool, label, sha256))

    def decided(self, decision: Decision) -> None:
        if decision.approval_used is not None:
            ap = self.approvals.get(decision.approval_used)
            if ap is None or ap.used_by is not None:
                raise InvalidTransition("approval", "used", "used")
            ap.used_by = decision.id
        self.decisions[decision.id] = decision

    def decision(self, decision_id: str) -> Decision:
        try:
            return self.decisions[decision_id]
        except KeyError:
            raise NotFound(f"no gate decision {decision_id}") from None

    def approve(self, decision: Decision, approver: str) -> None:
        if decision.id in self.approvals:
            raise InvalidTransition("approval", "granted", "granted")
        self.approvals[decision.id] = _Approval(decision.id, decision.session_id, decision.action_hash, approver)

    def deny(self, decision: Decision, reason: str) -> None:
        if decision.id in self.approvals:
            raise InvalidTransition("approval", "settled", "denied")
        denied = _Approval(decision.id, decision.session_id, decision.action_hash, "")
        denied.used_by = DENIED  # never usable: open_approval skips used ones
        self.approvals[decision.id] = denied

    def open_approval(self, session_id: str, action_hash: str) -> str | None:
        for ap in self.approvals.values():
            if ap.session_id == session_id and ap.action_hash == action_hash and ap.used_by is None:
                return ap.decision_id
        return None

    def postconditions(self, session_id: str, results: list[dict[str, Any]]) -> None:
        self.checked.setdefault(session_id, []).extend(postcondition_record(r) for r in results)
