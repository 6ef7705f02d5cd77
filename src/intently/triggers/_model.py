"""The standing intent: its fields, states, defaults and limits."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
from typing import Any

from ..core.errors import InvalidInput

__all__ = [
    "DEFAULT_COOLDOWN",
    "DEFAULT_EXPIRY",
    "DEFAULT_MAX_FIRES",
    "LIVE_STATES",
    "MAX_REMINDER_CHARS",
    "Fire",
    "IntentState",
    "Scope",
    "StandingIntent",
]

DEFAULT_EXPIRY = timedelta(days=90)
DEFAULT_MAX_FIRES = 3
DEFAULT_COOLDOWN = timedelta(hours=24)
MAX_REMINDER_CHARS = 500
MAX_EVENT_CHARS = 500
MAX_ENTRIES = 24
MAX_TERMS = 24
MAX_SCOPE_CHARS = 200


class IntentState(StrEnum):
    """``pending`` waits for confirmation; ``armed`` may fire; ``fired`` cools down; the rest are final."""

    PENDING = "pending"
    ARMED = "armed"
    FIRED = "fired"
    DONE = "done"
    CANCELLED = "cancelled"
    EXPIRED = "expired"


LIVE_STATES = (IntentState.PENDING, IntentState.ARMED, IntentState.FIRED)


@dataclass(frozen=True)
class Scope:
    """Where an intent may fire. ``None`` means anywhere / anyone."""

    channel: str | None = None
    conversation: str | None = None
    sender: str | None = None

    @classmethod
    def parse(cls, items: list[str] | tuple[str, ...]) -> Scope:
        """``channel:X``, ``conversation:Y``, ``sender:Z`` (each at most once)."""
        found: dict[str, str] = {}
        for item in items:
            kind, sep, value = item.partition(":")
            kind = kind.strip().lower()
            value = value.strip()
            if not sep or kind not in ("channel", "conversation", "sender") or not value:
                raise InvalidInput(f"scope {item!r} must be channel:ID, conversation:ID or sender:ID", where="scope")
            if kind in found:
                raise InvalidInput(f"scope {kind} given twice", where="scope")
            if len(value) > MAX_SCOPE_CHARS:
                raise InvalidInput(f"scope {kind} longer than {MAX_SCOPE_CHARS} characters", where="scope")
            found[kind] = value
        return cls(**found)

    def allows(self, channel: str | None, conversation: str | None, sender: str | None) -> bool:
        """A scoped intent fires only on turns that name the same place; unknown means no."""
        return (
            (self.channel is None or self.channel == channel)
            and (self.conversation is None or self.conversation == conversation)
            and (self.sender is None or self.sender == sender)
        )

    def describe(self) -> str:
        parts = [
            f"{k}:{v}"
            for k, v in (("channel", self.channel), ("conversation", self.conversation), ("sender", self.sender))
            if v is not None
        ]
        return ", ".join(parts) or "anywhere"

    def to_json(self) -> dict[str, str | None]:
        return {"channel": self.channel, "conversation": self.conversation, "sender": self.sender}


@dataclass(frozen=True)
class Fire:
    """One fire: when, on which entry and terms, where, and a digest of the turn (not its text)."""

    id: str
    fired_at: str
    entry: int
    terms: tuple[str, ...]
    turn_digest: str
    channel: str | None
    conversation: str | None
    sender: str | None
    actor: str

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "fired_at": self.fired_at,
            "entry": self.entry,
            "terms": list(self.terms),
            "turn_digest": self.turn_digest,
            "channel": self.channel,
            "conversation": self.conversation,
            "sender": self.sender,
            "actor": self.actor,
        }


@dataclass(frozen=True)
class StandingIntent:
    """ "When <event> comes up, remind me to <reminder>": what the store holds for one intent."""

    id: str
    namespace: str
    reminder: str
    event: str
    entries: tuple[tuple[str, ...], ...]
    exclusions: tuple[str, ...]
    negation_guard: bool
    scope: Scope
    state: IntentState
    expires_at: str
    max_fires: int
    fire_count: int
    cooldown_seconds: int
    last_fired_at: str | None
    rearm_at: str | None
    snoozed_until: str | None
    creator: str
    source: str
    created_at: str
    updated_at: str
    confirmed_by: str | None
    fires: tuple[Fire, ...] = field(default=())

    @classmethod
    def from_row(cls, row: dict[str, Any], fires: tuple[Fire, ...] = ()) -> StandingIntent:
        return cls(
            id=str(row["id"]),
            namespace=str(row["namespace"]),
            reminder=str(row["reminder"]),
            event=str(row["event"]),
            entries=tuple(tuple(e) for e in json.loads(row["entries"])),
            exclusions=tuple(json.loads(row["exclusions"])),
            negation_guard=bool(row["negation_guard"]),
            scope=Scope(row["channel"], row["conversation"], row["sender"]),
            state=IntentState(row["state"]),
            expires_at=str(row["expires_at"]),
            max_fires=int(row["max_fires"]),
            fire_count=int(row["fire_count"]),
            cooldown_seconds=int(row["cooldown_seconds"]),
            last_fired_at=row["last_fired_at"],
            rearm_at=row["rearm_at"],
            snoozed_until=row["snoozed_until"],
            creator=str(row["creator"]),
            source=str(row["source"]),
            created_at=str(row["created_at"]),
            updated_at=str(row["updated_at"]),
            confirmed_by=row["confirmed_by"],
            fires=fires,
        )

    @property
    def fires_left(self) -> int:
        return max(self.max_fires - self.fire_count, 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "namespace": self.namespace,
            "reminder": self.reminder,
            "event": self.event,
            "when": [list(e) for e in self.entries],
            "exclude": list(self.exclusions),
            "negation_guard": self.negation_guard,
            "scope": self.scope.to_json(),
            "state": self.state.value,
            "expires_at": self.expires_at,
            "max_fires": self.max_fires,
            "fire_count": self.fire_count,
            "cooldown_seconds": self.cooldown_seconds,
            "last_fired_at": self.last_fired_at,
            "rearm_at": self.rearm_at,
            "snoozed_until": self.snoozed_until,
            "creator": self.creator,
            "source": self.source,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "confirmed_by": self.confirmed_by,
            "fires": [f.to_json() for f in self.fires],
        }


def validate_text(value: str, field_name: str, limit: int, *, required: bool) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{field_name} must be a string, got {type(value).__name__}", where=field_name)
    text = value.strip()
    if required and not text:
        raise InvalidInput(f"{field_name} must not be empty", where=field_name)
    if len(text) > limit:
        raise InvalidInput(f"{field_name} has {len(text)} characters; at most {limit}", where=field_name)
    return text


def validate_entries(entries: list[list[str]] | tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
    """Trimmed, non-empty entries of non-empty terms, within the limits; duplicates dropped."""
    from ._terms import MAX_TERM_CHARS

    out: list[tuple[str, ...]] = []
    for i, entry in enumerate(entries):
        terms = tuple(t.strip() for t in entry if t and t.strip())
        if not terms:
            raise InvalidInput("a trigger entry needs at least one word", where=f"when[{i}]")
        if len(terms) > MAX_TERMS:
            raise InvalidInput(f"a trigger entry has more than {MAX_TERMS} terms", where=f"when[{i}]")
        for term in terms:
            if len(term) > MAX_TERM_CHARS:
                raise InvalidInput(f"term {term[:40]!r}... longer than {MAX_TERM_CHARS} characters", where=f"when[{i}]")
        if terms not in out:
            out.append(terms)
    if not out:
        raise InvalidInput("at least one trigger entry (--when) is required", where="when")
    if len(out) > MAX_ENTRIES:
        raise InvalidInput(f"more than {MAX_ENTRIES} trigger entries", where="when")
    return tuple(out)
