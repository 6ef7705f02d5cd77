"""The goals tables, the appliers that change them, and the readers that turn rows into objects.

Every applier rebuilds its change from the operation alone (payload, target and time), so
``intently log replay`` reproduces these tables exactly. Payloads are documented in
``docs/goals.md``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..log import Operation, register_applier
from ..store import Row, Transaction, register_migration
from ._decay import current_salience
from ._model import (
    CLAIM_EVENTS,
    Decision,
    EpistemicType,
    Intent,
    IntentState,
    IntentType,
    LifecycleState,
    Priority,
    SourceType,
    Summary,
    last_hold,
    open_claim,
)
from ._text import terms_of

__all__ = [
    "INTENT_COLUMNS",
    "STUCK_PREREQUISITE",
    "TABLES",
    "load_intent",
    "load_intents",
    "row_to_decision",
    "row_to_summary",
]

register_migration(
    "goals",
    1,
    "CREATE TABLE goals_intents (id TEXT PRIMARY KEY, namespace TEXT NOT NULL, version {bigint} NOT NULL, "
    "intent_type TEXT NOT NULL, state TEXT NOT NULL, lifecycle_state TEXT NOT NULL, epistemic_type TEXT NOT NULL, "
    "source_type TEXT NOT NULL, origin TEXT, asserted_by TEXT NOT NULL, valid_from TEXT NOT NULL, valid_to TEXT, "
    "created_at TEXT NOT NULL, last_modified_at TEXT NOT NULL, superseded_by TEXT, confidence {real} NOT NULL, "
    "salience {real} NOT NULL, value TEXT NOT NULL, norm_key TEXT NOT NULL, structured_value TEXT, "
    "priority TEXT NOT NULL, priority_rank INTEGER NOT NULL, band INTEGER NOT NULL DEFAULT 0, owner TEXT, stakeholders TEXT NOT NULL, "
    "target_completion TEXT, completion_criteria TEXT, context_note TEXT)",
    "CREATE INDEX goals_intents_active ON goals_intents (namespace, state, priority_rank, last_modified_at)",
    "CREATE INDEX goals_intents_due ON goals_intents (namespace, state, target_completion)",
    "CREATE INDEX goals_intents_key ON goals_intents (namespace, norm_key)",
    "CREATE INDEX goals_intents_type ON goals_intents (namespace, intent_type, priority_rank, state)",
    "CREATE INDEX goals_intents_counts ON goals_intents (namespace, state, epistemic_type, priority_rank)",
    "CREATE INDEX goals_intents_band ON goals_intents (namespace, state, epistemic_type, band, last_modified_at, id)",
    "CREATE TABLE goals_evidence (intent_id TEXT NOT NULL, evidence_id TEXT NOT NULL, span TEXT, "
    "added_at TEXT NOT NULL, PRIMARY KEY (intent_id, evidence_id))",
    "CREATE INDEX goals_evidence_by_id ON goals_evidence (evidence_id)",
    "CREATE TABLE goals_edges (namespace TEXT NOT NULL, dependent TEXT NOT NULL, prerequisite TEXT NOT NULL, "
    "created_at TEXT NOT NULL, PRIMARY KEY (dependent, prerequisite))",
    "CREATE INDEX goals_edges_prerequisite ON goals_edges (prerequisite, dependent)",
    "CREATE TABLE goals_terms (namespace TEXT NOT NULL, ref_id TEXT NOT NULL, term TEXT NOT NULL, "
    "is_entity INTEGER NOT NULL, PRIMARY KEY (ref_id, term))",
    "CREATE INDEX goals_terms_term ON goals_terms (namespace, term, is_entity)",
    "CREATE TABLE goals_events (id TEXT PRIMARY KEY, namespace TEXT NOT NULL, intent_id TEXT NOT NULL, "
    "kind TEXT NOT NULL, payload TEXT NOT NULL, time TEXT NOT NULL)",
    "CREATE INDEX goals_events_intent ON goals_events (intent_id, time)",
    "CREATE TABLE goals_risk_sessions (namespace TEXT NOT NULL, session TEXT NOT NULL, intent_id TEXT NOT NULL, "
    "surfaced_at TEXT NOT NULL, PRIMARY KEY (namespace, session, intent_id))",
    "CREATE TABLE goals_decisions (id TEXT PRIMARY KEY, namespace TEXT NOT NULL, text TEXT NOT NULL, "
    "evidence_id TEXT NOT NULL, span TEXT, created_at TEXT NOT NULL, recorded_by TEXT NOT NULL)",
    "CREATE INDEX goals_decisions_time ON goals_decisions (namespace, created_at)",
    "CREATE TABLE goals_summaries (id TEXT PRIMARY KEY, namespace TEXT NOT NULL, intent_id TEXT NOT NULL, "
    "text TEXT NOT NULL, salience {real} NOT NULL, created_at TEXT NOT NULL)",
    description="intents, evidence, dependency edges, term index, events, decisions, summaries",
)

TABLES = (
    "goals_intents",
    "goals_evidence",
    "goals_edges",
    "goals_terms",
    "goals_events",
    "goals_risk_sessions",
    "goals_decisions",
    "goals_summaries",
)

# Fields an INTENT_CREATE payload carries (besides id, version, times, which come from the op).
INTENT_COLUMNS = (
    "intent_type",
    "state",
    "lifecycle_state",
    "epistemic_type",
    "source_type",
    "origin",
    "asserted_by",
    "valid_from",
    "valid_to",
    "superseded_by",
    "confidence",
    "salience",
    "value",
    "structured_value",
    "priority",
    "owner",
    "stakeholders",
    "target_completion",
    "completion_criteria",
    "context_note",
)

# Fields an INTENT_UPDATE may change.
EDITABLE = frozenset(
    {
        "value",
        "intent_type",
        "owner",
        "target_completion",
        "priority",
        "stakeholders",
        "completion_criteria",
        "context_note",
        "salience",
        "structured_value",
        "valid_to",
    }
)
_TEXT_FIELDS = frozenset({"value", "owner", "stakeholders", "completion_criteria", "context_note"})


def _db_value(name: str, value: Any) -> Any:
    if name == "stakeholders":
        return json.dumps(list(value or []))
    if name == "structured_value":
        return None if value is None else json.dumps(value, sort_keys=True)
    return value


def _index_terms(tx: Transaction, namespace: str, ref_id: str, texts: list[str | None]) -> None:
    tx.execute("DELETE FROM goals_terms WHERE ref_id = ?", (ref_id,))
    terms = terms_of(*texts)
    rows = [(namespace, ref_id, t, 1 if t in terms.entities else 0) for t in sorted(terms.words | terms.entities)]
    if rows:
        tx.executemany("INSERT INTO goals_terms (namespace, ref_id, term, is_entity) VALUES (?, ?, ?, ?)", rows)


def _reindex_intent(tx: Transaction, intent_id: str) -> None:
    row = tx.one(
        "SELECT namespace, value, owner, stakeholders, completion_criteria, context_note FROM goals_intents "
        "WHERE id = ?",
        (intent_id,),
    )
    assert row is not None
    people = " ".join(_person(p) for p in [row["owner"], *json.loads(row["stakeholders"])] if p)
    _index_terms(
        tx, row["namespace"], intent_id, [row["value"], row["context_note"], row["completion_criteria"], people]
    )


def _person(actor: str) -> str:
    """``user:sarah`` is matched as the entity ``@sarah``."""
    return "@" + actor.split(":", 1)[-1]


def _bump(tx: Transaction, intent_id: str, version: int, time: str, **fields: Any) -> None:
    sets = ", ".join(f"{k} = ?" for k in fields)
    params = [*fields.values(), version, time, intent_id]
    tx.execute(
        f"UPDATE goals_intents SET {sets + ', ' if sets else ''}version = ?, last_modified_at = ? WHERE id = ?",
        params,
    )


def _refresh_band(tx: Transaction, intent_id: str) -> None:
    """``band`` orders retrieval in one index scan: priority first, risks ahead within a priority."""
    tx.execute(
        "UPDATE goals_intents SET band = priority_rank * 2 + (CASE WHEN intent_type = 'RISK' THEN 1 ELSE 0 END) "
        "WHERE id = ?",
        (intent_id,),
    )


def _event(tx: Transaction, op: Operation, intent_id: str) -> None:
    tx.execute(
        "INSERT INTO goals_events (id, namespace, intent_id, kind, payload, time) VALUES (?, ?, ?, ?, ?, ?)",
        (op.id, op.stream, intent_id, op.op, op.payload_json, op.time),
    )


# -- appliers ---------------------------------------------------------------


def _apply_create(tx: Transaction, op: Operation) -> None:
    data = op.payload["intent"]
    values = {c: _db_value(c, data.get(c)) for c in INTENT_COLUMNS}
    cols = ["id", "namespace", "version", "created_at", "last_modified_at", "norm_key", "priority_rank", *values]
    params = [
        op.target,
        op.stream,
        1,
        op.time,
        op.time,
        terms_of(data["value"]).key,
        Priority(data["priority"]).rank,
        *values.values(),
    ]
    tx.execute(
        f"INSERT INTO goals_intents ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
        params,
    )
    for ev in op.payload["evidence"]:
        tx.execute(
            "INSERT INTO goals_evidence (intent_id, evidence_id, span, added_at) VALUES (?, ?, ?, ?)",
            (op.target, ev["id"], ev.get("span"), op.time),
        )
    _refresh_band(tx, op.target)
    _reindex_intent(tx, op.target)


def _apply_update(tx: Transaction, op: Operation) -> None:
    changes: dict[str, Any] = op.payload["changes"]
    fields = {k: _db_value(k, v) for k, v in changes.items()}
    if "value" in changes:
        fields["norm_key"] = terms_of(changes["value"]).key
    if "priority" in changes:
        fields["priority_rank"] = Priority(changes["priority"]).rank
    _bump(tx, op.target, op.payload["version"], op.time, **fields)
    if {"priority", "intent_type"} & set(changes):
        _refresh_band(tx, op.target)
    if _TEXT_FIELDS & set(changes):
        _reindex_intent(tx, op.target)


def _apply_transition(tx: Transaction, op: Operation) -> None:
    p = op.payload
    fields: dict[str, Any] = {"state": p["to_state"], "lifecycle_state": p["lifecycle_state"]}
    if "superseded_by" in p:
        fields["superseded_by"] = p["superseded_by"]
    if "target_completion" in p:
        fields["target_completion"] = p["target_completion"]
    _bump(tx, op.target, p["version"], op.time, **fields)
    if "claim" in p or "by" in p:  # a completion crediting a claim, a hold or resume: shown with the goal
        _event(tx, op, op.target)


def _apply_claim(tx: Transaction, op: Operation) -> None:
    """COMPLETION_CLAIMED and COMPLETION_CLAIM_REJECTED: shown with the goal (its events), and
    a new version, so a person's form from before the claim is refused rather than deciding blind."""
    _bump(tx, op.target, op.payload["version"], op.time)
    _event(tx, op, op.target)


def _apply_archived(tx: Transaction, op: Operation) -> None:
    _bump(tx, op.target, op.payload["version"], op.time, lifecycle_state=op.payload["lifecycle_state"])


def _apply_epistemic(tx: Transaction, op: Operation) -> None:
    p = op.payload
    _bump(
        tx,
        op.target,
        p["version"],
        op.time,
        epistemic_type=p["to_type"],
        confidence=p["confidence_to"],
        source_type=p["source_type"],
        lifecycle_state=p["lifecycle_state"],
    )
    if "endorsed_by" in p:  # a person made an agent's intent their word: shown with the intent
        _event(tx, op, op.target)


def _apply_evidence(tx: Transaction, op: Operation) -> None:
    p = op.payload
    tx.execute(
        "INSERT INTO goals_evidence (intent_id, evidence_id, span, added_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (intent_id, evidence_id) DO NOTHING",
        (op.target, p["evidence_id"], p.get("span"), op.time),
    )
    _bump(tx, op.target, p["version"], op.time)


def _apply_dependency_added(tx: Transaction, op: Operation) -> None:
    p = op.payload
    tx.execute(
        "INSERT INTO goals_edges (namespace, dependent, prerequisite, created_at) VALUES (?, ?, ?, ?)",
        (op.stream, p["dependent"], p["prerequisite"], op.time),
    )
    _bump(tx, p["dependent"], p["dependent_version"], op.time)
    _bump(tx, p["prerequisite"], p["prerequisite_version"], op.time)


def _apply_dependency_removed(tx: Transaction, op: Operation) -> None:
    p = op.payload
    tx.execute("DELETE FROM goals_edges WHERE dependent = ? AND prerequisite = ?", (p["dependent"], p["prerequisite"]))
    _bump(tx, p["dependent"], p["dependent_version"], op.time)
    _bump(tx, p["prerequisite"], p["prerequisite_version"], op.time)


def _apply_dependency_cancelled(tx: Transaction, op: Operation) -> None:
    _event(tx, op, op.target)


def _apply_risk_alert(tx: Transaction, op: Operation) -> None:
    p = op.payload
    _bump(
        tx, op.target, p["version"], op.time, priority=p["priority_to"], priority_rank=Priority(p["priority_to"]).rank
    )
    _refresh_band(tx, op.target)
    _event(tx, op, op.target)


def _apply_summary(tx: Transaction, op: Operation) -> None:
    p = op.payload
    tx.execute(
        "INSERT INTO goals_summaries (id, namespace, intent_id, text, salience, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (op.target, op.stream, p["intent_id"], p["text"], p["salience"], op.time),
    )
    _index_terms(tx, op.stream, op.target, [p["text"]])


def _apply_risk_surfaced(tx: Transaction, op: Operation) -> None:
    tx.execute(
        "INSERT INTO goals_risk_sessions (namespace, session, intent_id, surfaced_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (namespace, session, intent_id) DO NOTHING",
        (op.stream, op.payload["session"], op.target, op.time),
    )


def _apply_decision(tx: Transaction, op: Operation) -> None:
    p = op.payload
    tx.execute(
        "INSERT INTO goals_decisions (id, namespace, text, evidence_id, span, created_at, recorded_by) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (op.target, op.stream, p["text"], p["evidence_id"], p.get("span"), op.time, op.actor),
    )


register_applier("INTENT_CREATE", _apply_create)
register_applier("INTENT_UPDATE", _apply_update)
register_applier("INTENT_TRANSITION", _apply_transition)
register_applier("INTENT_ARCHIVED", _apply_archived)
register_applier("COMPLETION_CLAIMED", _apply_claim)
register_applier("COMPLETION_CLAIM_REJECTED", _apply_claim)
register_applier("EPISTEMIC_TRANSITION", _apply_epistemic)
register_applier("EVIDENCE_ATTACHED", _apply_evidence)
register_applier("DEPENDENCY_ADDED", _apply_dependency_added)
register_applier("DEPENDENCY_REMOVED", _apply_dependency_removed)
register_applier("DEPENDENCY_CANCELLED", _apply_dependency_cancelled)
register_applier("EXPIRED_RISK_ALERT", _apply_risk_alert)
register_applier("SUMMARY_CREATED", _apply_summary)
register_applier("RISK_SURFACED", _apply_risk_surfaced)
register_applier("DECISION_RECORDED", _apply_decision)


# -- readers ------------------------------------------------------------------

#: A prerequisite (``p``) its dependants can no longer wait on as it stands: cancelled (RFC-0013
#: section 6, the DEPENDENCY_CANCELLED case), expired unresolved, or a candidate dismissed in
#: review. The dependant stays as it was; its owner decides.
STUCK_PREREQUISITE = "(p.state IN ('CANCELLED', 'EXPIRED') OR p.epistemic_type = 'DEPRECATED')"


def _intent(
    row: Row,
    now: datetime,
    depends_on: list[str],
    blocks: list[str],
    evidence: list[str],
    blocked_by: list[dict[str, str]] | None = None,
) -> Intent:
    itype = IntentType(row["intent_type"])
    state = IntentState(row["state"])
    epistemic = EpistemicType(row["epistemic_type"])
    salience = float(row["salience"])
    return Intent(
        id=row["id"],
        namespace=row["namespace"],
        version=int(row["version"]),
        intent_type=itype,
        state=state,
        lifecycle_state=LifecycleState(row["lifecycle_state"]),
        epistemic_type=epistemic,
        source_type=SourceType(row["source_type"]),
        origin=row["origin"],
        evidence_ids=tuple(evidence),
        asserted_by=row["asserted_by"],
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
        created_at=row["created_at"],
        last_modified_at=row["last_modified_at"],
        superseded_by=row["superseded_by"],
        confidence=float(row["confidence"]),
        salience=salience,
        current_salience=current_salience(salience, itype, epistemic, row["last_modified_at"], now),
        value=row["value"],
        structured_value=json.loads(row["structured_value"]) if row["structured_value"] else None,
        priority=Priority(row["priority"]),
        owner=row["owner"],
        stakeholders=tuple(json.loads(row["stakeholders"])),
        depends_on=tuple(depends_on),
        blocks=tuple(blocks),
        target_completion=row["target_completion"],
        completion_criteria=row["completion_criteria"],
        context_note=row["context_note"],
        blocked_by=() if state.finished else tuple(blocked_by or ()),
    )


def load_intents(tx: Transaction, rows: list[Row], now: datetime) -> list[Intent]:
    """Rows of ``goals_intents`` to :class:`Intent` objects, with edges and evidence attached."""
    if not rows:
        return []
    ids = [r["id"] for r in rows]
    deps: dict[str, list[str]] = {i: [] for i in ids}
    blocks: dict[str, list[str]] = {i: [] for i in ids}
    evidence: dict[str, list[str]] = {i: [] for i in ids}
    stuck: dict[str, list[dict[str, str]]] = {i: [] for i in ids}
    claim_events: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        for e in tx.query(
            f"SELECT dependent, prerequisite FROM goals_edges WHERE dependent IN ({marks}) "
            f"OR prerequisite IN ({marks}) ORDER BY created_at, dependent, prerequisite",
            [*chunk, *chunk],
        ):
            if e["dependent"] in deps:
                deps[e["dependent"]].append(e["prerequisite"])
            if e["prerequisite"] in blocks:
                blocks[e["prerequisite"]].append(e["dependent"])
        for ev in tx.query(
            f"SELECT intent_id, evidence_id FROM goals_evidence WHERE intent_id IN ({marks}) "
            "ORDER BY added_at, evidence_id",
            chunk,
        ):
            evidence[ev["intent_id"]].append(ev["evidence_id"])
        for b in tx.query(
            "SELECT e.dependent, p.id, p.state, p.epistemic_type, p.value FROM goals_edges e "
            f"JOIN goals_intents p ON p.id = e.prerequisite WHERE e.dependent IN ({marks}) "
            f"AND {STUCK_PREREQUISITE} ORDER BY e.created_at, p.id",
            chunk,
        ):
            state = "DISMISSED" if b["epistemic_type"] == "DEPRECATED" else str(b["state"])
            stuck[b["dependent"]].append({"id": str(b["id"]), "state": state, "text": str(b["value"])})
        kinds = ", ".join(f"'{k}'" for k in (*CLAIM_EVENTS, "EPISTEMIC_TRANSITION"))
        for c in tx.query(
            f"SELECT id, intent_id, kind, payload, time FROM goals_events WHERE intent_id IN ({marks}) "
            f"AND kind IN ({kinds}) ORDER BY time, id",
            chunk,
        ):
            claim_events[c["intent_id"]].append(
                {"id": c["id"], "kind": c["kind"], "time": c["time"], "payload": json.loads(c["payload"])}
            )
    return [
        replace(
            _intent(r, now, deps[r["id"]], blocks[r["id"]], evidence[r["id"]], stuck[r["id"]]),
            completion_claim=open_claim(IntentState(r["state"]), claim_events[r["id"]]),
            endorsement=_endorsement(claim_events[r["id"]]),
            hold=last_hold(IntentState(r["state"]), claim_events[r["id"]]),
        )
        for r in rows
    ]


def _endorsement(events: list[dict[str, Any]]) -> dict[str, str] | None:
    """Who made an agent's intent their word, and when (the last endorsement), or None: the
    board shows it on the card, as ``goal show`` does, not a bare "endorsed"."""
    for event in reversed(events):
        who = event["payload"].get("endorsed_by") if event["kind"] == "EPISTEMIC_TRANSITION" else None
        if who:
            return {"by": str(who), "at": str(event["time"])}
    return None


def load_intent(tx: Transaction, namespace: str, intent_id: str, now: datetime) -> Intent | None:
    row = tx.one("SELECT * FROM goals_intents WHERE id = ? AND namespace = ?", (intent_id, namespace))
    if row is None:
        return None
    (intent,) = load_intents(tx, [row], now)
    events = tx.query(
        "SELECT id, kind, payload, time FROM goals_events WHERE intent_id = ? ORDER BY time, id", (intent_id,)
    )
    return _with_events(intent, events)


def _with_events(intent: Intent, events: list[Row]) -> Intent:
    return replace(
        intent,
        events=tuple(
            {"id": e["id"], "kind": e["kind"], "time": e["time"], "payload": json.loads(e["payload"])} for e in events
        ),
    )


def row_to_decision(row: Row) -> Decision:
    return Decision(
        id=row["id"],
        namespace=row["namespace"],
        text=row["text"],
        evidence_id=row["evidence_id"],
        span=row["span"],
        created_at=row["created_at"],
        recorded_by=row["recorded_by"],
    )


def row_to_summary(row: Row) -> Summary:
    return Summary(
        id=row["id"],
        namespace=row["namespace"],
        intent_id=row["intent_id"],
        text=row["text"],
        salience=float(row["salience"]),
        created_at=row["created_at"],
    )
