"""The five decisions and the record each check returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["Decision", "Level"]


class Level(StrEnum):
    """Allow and warn execute (warn is flagged); confirm and review wait for a person; block never runs."""

    ALLOW = "allow"
    WARN = "warn"
    CONFIRM = "confirm"
    REVIEW = "review"
    BLOCK = "block"

    @property
    def executes(self) -> bool:
        return self in (Level.ALLOW, Level.WARN)

    @property
    def needs_approval(self) -> bool:
        return self in (Level.CONFIRM, Level.REVIEW)


@dataclass(frozen=True)
class Decision:
    """One gate decision: never a bool. Carries the rules, the reason and the provenance relied on."""

    id: str
    session_id: str
    level: Level
    tool: str
    args: dict[str, Any]
    action_hash: str
    rule_ids: tuple[str, ...]
    reason: str
    provenance: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)
    approval_used: str | None = None

    @property
    def executes(self) -> bool:
        """Whether the call may run now: ``allow`` or ``warn``. The one test a harness makes."""
        return self.level.executes

    def __bool__(self) -> bool:
        """Refused: a decision is never a bool.

        A dataclass instance is always truthy, so ``if session.check(...): run_tool()`` would
        run blocked calls. Raising makes that misuse fail loudly (closed) on its first use
        instead of silently allowing; the caller asks the question it means instead.
        """
        raise TypeError(
            f"a gate Decision has no truth value (this one is {self.level}): use decision.executes "
            "to know whether the call may run, or decision.level for the outcome"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session_id": self.session_id,
            "level": str(self.level),
            "tool": self.tool,
            "args": self.args,
            "action_hash": self.action_hash,
            "rule_ids": list(self.rule_ids),
            "reason": self.reason,
            "provenance": self.provenance,
            "facts": self.facts,
            "approval_used": self.approval_used,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Decision:
        return cls(
            id=str(data["id"]),
            session_id=str(data["session_id"]),
            level=Level(data["level"]),
            tool=str(data["tool"]),
            args=dict(data.get("args") or {}),
            action_hash=str(data["action_hash"]),
            rule_ids=tuple(data.get("rule_ids") or ()),
            reason=str(data.get("reason", "")),
            provenance=dict(data.get("provenance") or {}),
            facts=dict(data.get("facts") or {}),
            approval_used=data.get("approval_used"),
        )
