"""Tables, log operations and their appliers.

Every change to an intent is one log operation, applied by the function replay uses. Each
applier also bumps the namespace's change sequence and stamps the row with it, so any
process can ask "what changed since sequence N?" with one indexed query and keep its
in-memory index current without a rebuild.
"""

from __future__ import annotations

import json
from typing import Any

from ..log import Operation, register_applier
from ..store import Transaction, register_migration
from ._model import Fire, IntentState, StandingIntent

__all__ = ["OPS", "POLICY_VERSION", "changed_since", "current_seq", "load_fires", "load_intent", "next_seq"]

POLICY_VERSION = "triggers@1"

register_migration(
    "triggers",
    1,
    "CREATE TABLE triggers_intents (id TEXT PRIMARY KEY, namespace TEXT NOT NULL, reminder TEXT NOT NULL, "
    "event TEXT NOT NULL, entries TEXT NOT NULL, exclusions TEXT NOT NULL, negation_guard INTEGER NOT NULL, "
    "channel TEXT, conversation TEXT, sender TEXT, "
    "state TEXT NOT NULL CHECK (state IN ('pending','armed','fired','done','cancelled','expired')), "
    "expires_at TEXT NOT NULL, max_fires INTEGER NOT NULL CHECK (max_fires > 0), "
    "fire_count INTEGER NOT NULL DEFAULT 0 CHECK (fire_count >= 0), "
    "cooldown_seconds {bigint} NOT NULL CHECK (cooldown_seconds >= 0), last_fired_at TEXT, rearm_at TEXT, "
    "snoozed_until TEXT, creator TEXT NOT NULL, source TEXT NOT NULL, created_at TEXT NOT NULL, "
    "updated_at TEXT NOT NULL, confirmed_by TEXT, change_seq {bigint} NOT NULL)",
    "CREATE INDEX triggers_intents_changes ON triggers_intents (namespace, change_seq)",
    "CREATE INDEX triggers_intents_expiry ON triggers_intents (namespace, state, expires_at)",
    "CREATE INDEX triggers_intents_rearm ON triggers_intents (namespace, state, rearm_at)",
    "CREATE TABLE triggers_fires (id TEXT PRIMARY KEY, intent_id TEXT NOT NULL, namespace TEXT NOT NULL, "
    "fired_at TEXT NOT NULL, entry INTEGER NOT NULL, terms TEXT NOT NULL, turn_digest TEXT NOT NULL, "
    "channel TEXT, conversation TEXT, sender TEXT, actor TEXT NOT NULL)",
    "CREATE INDEX triggers_fires_intent ON triggers_fires (intent_id, fired_at)",
    "CREATE TABLE triggers_sequence (namespace TEXT PRIMARY KEY, seq {bigint} NOT NULL)",
    description="standing intents, their fire history and a per-namespace change sequence",
)

_COLUMNS = (
    "id, namespace, reminder, event, entries, exclusions, negation_guard, channel, conversation, sender, state, "
    "expires_at, max_fires, fire_count, cooldown_seconds, last_fired_at, rearm_at, snoozed_until, creator, source, "
    "created_at, updated_at, confirmed_by, change_seq"
)


def next_seq(tx: Transaction, namespace: str) -> int:
    row = tx.one("UPDATE triggers_sequence SET seq = seq + 1 WHERE namespace = ? RETURNING seq", (namespace,))
    if row is None:
        tx.execute("INSERT INTO triggers_sequence (namespace, seq) VALUES (?, 1)", (namespace,))
        return 1
    return int(row["seq"])


def current_seq(tx: Transaction, namespace: str) -> int:
    value = tx.scalar("SELECT seq FROM triggers_sequence WHERE namespace = ?", (namespace,))
    return int(value or 0)


def load_intent(tx: Transaction, namespace: str, intent_id: str) -> StandingIntent | None:
    row = tx.one(f"SELECT {_COLUMNS} FROM triggers_intents WHERE namespace = ? AND id = ?", (namespace, intent_id))
    return None if row is None else StandingIntent.from_row(row)


def load_intents(tx: Transaction, namespace: str, ids: list[str]) -> dict[str, StandingIntent]:
    out: dict[str, StandingIntent] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        rows = tx.query(
            f"SELECT {_COLUMNS} FROM triggers_intents WHERE namespace = ? AND id IN ({marks})", (namespace, *chunk)
        )
        for row in rows:
            out[str(row["id"])] = StandingIntent.from_row(row)
    return out


def list_rows(tx: Transaction, namespace: str, states: list[str] | None = None) -> list[StandingIntent]:
    sql = f"SELECT {_COLUMNS} FROM triggers_intents WHERE namespace = ?"
    params: list[Any] = [namespace]
    if states:
        sql += " AND state IN (" + ", ".join("?" for _ in states) + ")"
        params.extend(states)
    sql += " ORDER BY created_at, id"
    return [StandingIntent.from_row(r) for r in tx.query(sql, params)]


def changed_since(tx: Transaction, namespace: str, seq: int) -> list[StandingIntent]:
    rows = tx.query(
        f"SELECT {_COLUMNS} FROM triggers_intents WHERE namespace = ? AND change_seq > ? ORDER BY change_seq",
        (namespace, seq),
    )
    return [StandingIntent.from_row(r) for r in rows]


def load_fires(tx: Transaction, intent_id: str) -> tuple[Fire, ...]:
    rows = tx.query(
        "SELECT id, fired_at, entry, terms, turn_digest, channel, conversation, sender, actor FROM triggers_fires "
        "WHERE intent_id = ? ORDER BY fired_at, id",
        (intent_id,),
    )
    return tuple(
        Fire(
            id=str(r["id"]),
            fired_at=str(r["fired_at"]),
            entry=int(r["entry"]),
            terms=tuple(json.loads(r["terms"])),
            turn_digest=str(r["turn_digest"]),
            channel=r["channel"],
            conversation=r["conversation"],
            sender=r["sender"],
            actor=str(r["actor"]),
        )
        for r in rows
    )


# -- appliers ------------------------------------------------------------------------------


def _apply_create(tx: Transaction, op: Operation) -> None:
    p = op.payload
    tx.execute(
        f"INSERT INTO triggers_intents ({_COLUMNS}) VALUES ({', '.join('?' for _ in range(24))})",
        (
            op.target,
            op.stream,
            p["reminder"],
            p["event"],
            json.dumps(p["entries"]),
            json.dumps(p["exclusions"]),
            1 if p["negation_guard"] else 0,
            p["channel"],
            p["conversation"],
            p["sender"],
            p["state"],
            p["expires_at"],
            p["max_fires"],
            0,
            p["cooldown_seconds"],
            None,
            None,
            None,
            op.actor,
            p["source"],
            op.time,
            op.time,
            op.actor if p["state"] == IntentState.ARMED.value else None,
            next_seq(tx, op.stream),
        ),
    )


def _set(tx: Transaction, op: Operation, fields: dict[str, Any]) -> None:
    fields = {**fields, "updated_at": op.time, "change_seq": next_seq(tx, op.stream)}
    assignments = ", ".join(f"{k} = ?" for k in fields)
    tx.execute(
        f"UPDATE triggers_intents SET {assignments} WHERE namespace = ? AND id = ?",
        (*fields.values(), op.stream, op.target),
    )


_UPDATABLE = {
    "reminder": "reminder",
    "event": "event",
    "entries": "entries",
    "exclusions": "exclusions",
    "negation_guard": "negation_guard",
    "channel": "channel",
    "conversation": "conversation",
    "sender": "sender",
    "expires_at": "expires_at",
    "max_fires": "max_fires",
    "cooldown_seconds": "cooldown_seconds",
    "state": "state",
    "rearm_at": "rearm_at",
}


def _apply_update(tx: Transaction, op: Operation) -> None:
    fields: dict[str, Any] = {}
    for key, value in op.payload["fields"].items():
        column = _UPDATABLE[key]
        if key in ("entries", "exclusions"):
            value = json.dumps(value)
        elif key == "negation_guard":
            value = 1 if value else 0
        fields[column] = value
    _set(tx, op, fields)


def _apply_confirm(tx: Transaction, op: Operation) -> None:
    _set(tx, op, {"state": IntentState.ARMED.value, "confirmed_by": op.actor})


def _apply_snooze(tx: Transaction, op: Operation) -> None:
    _set(tx, op, {"snoozed_until": op.payload["until"]})


def _apply_state(tx: Transaction, op: Operation) -> None:
    """CANCEL, EXPIRE, REARM: the payload names the new state."""
    fields: dict[str, Any] = {"state": op.payload["to"]}
    if op.payload["to"] == IntentState.ARMED.value:
        fields["rearm_at"] = None
    _set(tx, op, fields)


def _apply_fire(tx: Transaction, op: Operation) -> None:
    p = op.payload
    _set(
        tx,
        op,
        {
            "state": p["to"],
            "fire_count": p["fire_count"],
            "last_fired_at": op.time,
            "rearm_at": p["rearm_at"],
        },
    )
    tx.execute(
        "INSERT INTO triggers_fires (id, intent_id, namespace, fired_at, entry, terms, turn_digest, channel, "
        "conversation, sender, actor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            op.id,
            op.target,
            op.stream,
            op.time,
            p["entry"],
            json.dumps(p["terms"]),
            p["turn_digest"],
            p["channel"],
            p["conversation"],
            p["sender"],
            op.actor,
        ),
    )


OPS = {
    "TRIGGER_CREATE": _apply_create,
    "TRIGGER_UPDATE": _apply_update,
    "TRIGGER_CONFIRM": _apply_confirm,
    "TRIGGER_SNOOZE": _apply_snooze,
    "TRIGGER_CANCEL": _apply_state,
    "TRIGGER_EXPIRE": _apply_state,
    "TRIGGER_REARM": _apply_state,
    "TRIGGER_FIRE": _apply_fire,
}

for _name, _applier in OPS.items():
    register_applier(_name, _applier)
