"""Mending a damaged unsigned tail: ``intently log repair``.

Someone who can write the database but holds no signing key can delete, edit or add
operations after a stream's last checkpoint. Verification reports it, and checkpoints stop
just before the first such operation, so every later command saves its change and exits 8:
the stream is stuck. Nothing signed can be changed, but the tail is not signed yet.

The repair never hides what it found. Under one write transaction it takes every place
after the last checkpoint that is not an intact operation its key vouches for (a missing
sequence number, a row whose fields no longer hash to its leaf, a row without a valid
signature of its own), moves such a row to ``log_quarantine`` (kept, with the reason, never
deleted), and puts at its sequence number a signed ``LOG_QUARANTINED`` operation naming the
row (id, stored leaf, the leaf its fields hash to, why). The intact operations around it keep
their sequence numbers, leaves and their appenders' signatures. The stream header is rebuilt
from the last checkpoint's proven frontier and those leaves, a ``LOG_REPAIRED`` operation
records the whole repair, and a checkpoint signs it all. ``log verify`` then passes, and the
repair stays in the log for anyone to read.

State is not touched: a set-aside operation's change to the tables (a forged grant, say)
is still there, and a genuine operation that was deleted is no longer in the log although
its change is. ``intently log replay --to`` rebuilds the state the log now carries, without
the set-aside operations, to compare against.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..core.clock import format_time
from ..core.errors import ConflictError, InvalidInput, LogIntegrityError
from ..core.ids import new_id
from ..store import Transaction, register_migration
from ._merkle import leaf_hash
from ._operation import Operation, canonical_json
from ._oplog import NO_KEY_HINT, OperationLog, _content_leaf, _not_a_place, _shown

__all__ = [
    "QUARANTINED_OP",
    "REPAIRED_OP",
    "QuarantinedRow",
    "RepairReport",
    "VoidedPlace",
    "quarantined",
    "repair_log",
]

register_migration(
    "log",
    4,
    "CREATE TABLE log_quarantine (stream TEXT NOT NULL, seq TEXT NOT NULL, id TEXT, time TEXT, actor TEXT, "
    "op TEXT, target TEXT, payload TEXT, policy_version TEXT, leaf TEXT, key_id TEXT, signature TEXT, "
    "reason TEXT NOT NULL, voided_by TEXT NOT NULL, PRIMARY KEY (voided_by))",
    description="operations `intently log repair` set aside from an unsigned tail, kept with the reason",
)

#: The signed operation put at the sequence number of a set-aside (or missing) operation.
QUARANTINED_OP = "LOG_QUARANTINED"
#: The operation that records a repair as a whole, appended at the end of the stream.
REPAIRED_OP = "LOG_REPAIRED"
_POLICY = "intently@log"
#: What verification reports for damage in the unsigned tail; anything else (a rolled-back
#: database, a checkpoint put back) is not mended by voiding operations.
_TAIL_ERRORS = {"SequenceGap", "LeafMismatch", "UnattributedOperation", "RootMismatch"}
_COLUMNS = "seq, id, time, actor, op, target, payload, policy_version, leaf, key_id, signature"


@dataclass
class VoidedPlace:
    """One place after the last checkpoint that held no intact, vouched-for operation."""

    seq: int | str
    reason: str
    #: The set-aside row's fields (``None`` for a missing sequence number).
    row: dict[str, Any] | None = None
    content_leaf: str | None = None

    def to_json(self) -> dict[str, Any]:
        row = self.row or {}
        return {
            "seq": self.seq,
            "reason": _clean(self.reason),
            "missing": self.row is None,
            "id": _short(row.get("id")),
            "leaf": _short(row.get("leaf")),
            "content_leaf": self.content_leaf,
            "key_id": _short(row.get("key_id")),
        }


@dataclass
class RepairReport:
    stream: str
    dry_run: bool
    #: Size of the last checkpoint: everything up to it is signed and left as it is.
    checkpoint: int
    #: What the stream header said before the repair.
    header_size: int
    voided: list[VoidedPlace] = field(default_factory=list)
    kept: int = 0
    repair_id: str | None = None
    repair_seq: int | None = None
    signed_size: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "stream": self.stream,
            "dry_run": self.dry_run,
            "checkpoint": self.checkpoint,
            "header_size": self.header_size,
            "voided": [v.to_json() for v in self.voided],
            "kept": self.kept,
            "repair_id": self.repair_id,
            "repair_seq": self.repair_seq,
            "signed_size": self.signed_size,
        }


@dataclass
class QuarantinedRow:
    """One row ``intently log repair`` moved to ``log_quarantine``: what it was, where it
    stood in the stream, when, by whom and why it was set aside (``intently log quarantine``).

    Stored values are shown as text: after tampering they are anyone's, so bytes that were not
    UTF-8 (kept as their very bytes by the repair) read ``x'..'`` and bad text ``\\xNN``."""

    stream: str
    #: The sequence number the row was stored at, as stored (text, bytes or a real only when
    #: it stood at no place in the stream; then there is no placeholder).
    seq: str | None
    id: str | None
    time: str | None
    actor: str | None
    op: str | None
    target: str | None
    payload: str | None
    policy_version: str | None
    leaf: str | None
    key_id: str | None
    reason: str
    voided_by: str
    #: The seq of the signed ``LOG_QUARANTINED`` operation that took the row's place (``None``
    #: for a row that stood at no place).
    placeholder_seq: int | None = None
    #: The ``LOG_REPAIRED`` operation that recorded the repair, and when and by whom it was made
    #: (``None`` when no record of the stream names the row: the log says so on verify).
    repair_id: str | None = None
    repair_seq: int | None = None
    set_aside_at: str | None = None
    set_aside_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "stream": self.stream,
            "seq": self.seq,
            "id": self.id,
            "time": self.time,
            "actor": self.actor,
            "op": self.op,
            "target": self.target,
            "payload": self.payload,
            "policy_version": self.policy_version,
            "leaf": self.leaf,
            "key_id": self.key_id,
            "reason": self.reason,
            "voided_by": self.voided_by,
            "placeholder_seq": self.placeholder_seq,
            "repair_id": self.repair_id,
            "repair_seq": self.repair_seq,
            "set_aside_at": self.set_aside_at,
            "set_aside_by": self.set_aside_by,
        }


def quarantined(log: OperationLog, streams: Iterable[str] | None = None) -> list[QuarantinedRow]:
    """The rows repairs set aside in the given streams (default: all), oldest repair first.

    Each is tied to the signed record of the repair that moved it: its placeholder (the
    ``LOG_QUARANTINED`` operation whose id is the row's ``voided_by``) and the ``LOG_REPAIRED``
    appended after it, or, for a row that stood at no place, the ``LOG_REPAIRED`` whose payload
    names it. The table alone says what and why; the log says when and who."""
    wanted = sorted(set(streams)) if streams is not None else None
    with log.store.transaction(write=False) as tx:
        rows = tx.query(
            "SELECT q.*, p.seq AS placeholder_seq FROM log_quarantine q "
            "LEFT JOIN log_ops p ON p.stream = q.stream AND p.id = q.voided_by AND p.op = ? "
            "ORDER BY q.stream, q.voided_by",
            (QUARANTINED_OP,),
        )
        if wanted is not None:
            rows = [r for r in rows if r["stream"] in wanted]
        repairs = {
            stream: tx.query(
                "SELECT seq, id, time, actor, payload FROM log_ops WHERE stream = ? AND op = ? ORDER BY seq",
                (stream, REPAIRED_OP),
            )
            for stream in sorted({str(r["stream"]) for r in rows})
        }
    found = [_quarantined_row(row, repairs[str(row["stream"])]) for row in rows]
    last = 2**62
    found.sort(key=lambda q: (q.stream, q.repair_seq or last, q.placeholder_seq or last))
    return found


def _quarantined_row(row: dict[str, Any], repairs: list[dict[str, Any]]) -> QuarantinedRow:
    entry = QuarantinedRow(
        stream=str(row["stream"]),
        seq=_as_text(row["seq"]),
        id=_as_text(row["id"]),
        time=_as_text(row["time"]),
        actor=_as_text(row["actor"]),
        op=_as_text(row["op"]),
        target=_as_text(row["target"]),
        payload=_as_text(row["payload"]),
        policy_version=_as_text(row["policy_version"]),
        leaf=_as_text(row["leaf"]),
        key_id=_as_text(row["key_id"]),
        reason=_clean(row["reason"]),
        voided_by=_clean(row["voided_by"]),
        placeholder_seq=None if row["placeholder_seq"] is None else int(row["placeholder_seq"]),
    )
    record = _repair_of(entry, row, repairs)
    if record is not None:
        entry.repair_id, entry.repair_seq = str(record["id"]), int(record["seq"])
        entry.set_aside_at, entry.set_aside_by = str(record["time"]), str(record["actor"])
    return entry


def _repair_of(entry: QuarantinedRow, row: dict[str, Any], repairs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``LOG_REPAIRED`` record of the repair that set ``row`` aside: the first after its
    placeholder (a repair appends its record after every placeholder it puts), or for a row at
    no place the one whose payload names its id and stored seq."""
    if entry.placeholder_seq is not None:
        return next((r for r in repairs if int(r["seq"]) > int(entry.placeholder_seq)), None)
    ids, seqs = _spellings(row["id"], _short), _spellings(row["seq"], _shown)
    for record in repairs:
        try:
            voided = json.loads(str(record["payload"])).get("voided", [])
        except (ValueError, AttributeError):
            continue
        if any(not v.get("missing") and v.get("id") in ids and str(v.get("seq")) in seqs for v in voided):
            return record
    return None


def _spellings(value: Any, spell: Callable[[Any], str | None]) -> set[str | None]:
    """How the repair's record spelled a stored value: kept bytes were either bytes in the
    row or text that was not UTF-8 (which the record spells with ``\\xNN``)."""
    if isinstance(value, bytes | memoryview):
        raw = bytes(value)
        return {spell(raw), spell(raw.decode("utf-8", "surrogateescape"))}
    return {spell(value)}


def _as_text(value: Any) -> str | None:
    """A kept value as text: bytes as ``x'..'`` hex (they were not UTF-8), numbers as written."""
    if value is None:
        return None
    if isinstance(value, bytes | memoryview):
        return f"x'{bytes(value).hex()}'"
    return _clean(value)


def repair_log(
    log: OperationLog, *, actor: str, streams: Iterable[str] | None = None, dry_run: bool = False
) -> list[RepairReport]:
    """Repair each given stream (default: all) whose unsigned tail is damaged; returns what
    was (or, with ``dry_run``, would be) done. Streams that verify are left alone.

    Refuses, changing nothing, when a stream's damage is at or before its last checkpoint or
    the witness file covers more than the database signed: signed history is evidence, and
    voiding operations there would only make the tampering look mended.
    """
    if not log.keyring.can_sign:
        raise InvalidInput(f"a repair signs what it records; {NO_KEY_HINT}", where="keys")
    names = sorted(set(streams)) if streams is not None else None
    report = log.verify(names)
    witnessed = log.read_witness()
    damaged: dict[str, int] = {}
    latest = log.latest_checkpoints()
    for rep in report.streams:
        if rep.ok and not rep.unattributed:
            continue
        signed = latest[rep.stream].size if rep.stream in latest else 0
        held = witnessed.get(rep.stream)
        if (
            rep.error_type not in _TAIL_ERRORS
            or rep.bad_seq is None
            or rep.bad_seq <= signed
            or (held is not None and held.size > signed)
        ):
            raise LogIntegrityError(
                f"stream {rep.stream!r} cannot be repaired: {rep.error}; the damage is not confined to the "
                f"operations after its last checkpoint (size {signed}), and signed history is never rewritten; "
                "nothing was changed",
                stream=rep.stream,
                seq=rep.bad_seq,
            )
        damaged[rep.stream] = signed
    if not damaged:
        return []
    done: list[RepairReport] = []
    with log.store.transaction(write=not dry_run) as tx:
        for stream, signed in sorted(damaged.items()):
            now_signed = int(tx.scalar("SELECT MAX(size) FROM log_checkpoints WHERE stream = ?", (stream,)) or 0)
            if now_signed != signed:
                raise ConflictError(
                    f"stream {stream!r} was checkpointed while the repair looked at it; nothing was changed: "
                    "run it again"
                )
            done.append(_repair_stream(log, tx, stream, signed, actor=actor, dry_run=dry_run))
    if not dry_run:
        made = {cp.stream: cp.size for cp in log.checkpoint(set(damaged))}
        for repaired in done:
            repaired.signed_size = made.get(repaired.stream)
    return done


def _repair_stream(
    log: OperationLog, tx: Transaction, stream: str, signed: int, *, actor: str, dry_run: bool
) -> RepairReport:
    """Find the tail's bad places and (unless ``dry_run``) set them aside, under ``tx``."""
    header = tx.scalar("SELECT size FROM log_streams WHERE stream = ?", (stream,))
    header_size = int(header) if header is not None else 0
    rep = RepairReport(stream, dry_run, signed, header_size)
    # SQLite keeps any value in any column, and names a row by its rowid; a sequence number
    # that is not a whole number (text, bytes, a real) is no place in the tree, so such a row
    # is found, and later moved, by its rowid.
    rowid = ", rowid AS rowid_" if log.store.dialect == "sqlite" else ""
    rows = tx.query(
        f"SELECT {_COLUMNS}{rowid} FROM log_ops WHERE stream = ? AND seq > ? ORDER BY seq", (stream, signed)
    )
    by_seq: dict[int, dict[str, Any]] = {}
    for row in rows:
        seq = row["seq"]
        if isinstance(seq, int):
            by_seq[seq] = row
        else:  # not a place in the tree at all: set aside
            rep.voided.append(VoidedPlace(_shown(seq), _not_a_place(seq), row))
    end = max([header_size, *by_seq])
    leaves: list[str | None] = []  # per place after the checkpoint; None: a placeholder goes there
    for seq in range(signed + 1, end + 1):
        found = by_seq.get(seq)
        if found is None:
            rep.voided.append(VoidedPlace(seq, "missing: no operation is stored at this sequence number"))
            leaves.append(None)
            continue
        content = _content_leaf(
            stream,
            seq,
            found["id"],
            found["time"],
            found["actor"],
            found["op"],
            found["target"],
            found["payload"],
            found["policy_version"],
        )
        why = (
            "its stored fields do not hash to its recorded leaf (edited)"
            if content is None or content != found["leaf"]
            else log._unvouched(
                stream, seq, str(found["time"]), str(found["leaf"]), found["key_id"], found["signature"]
            )
        )
        if why is None:
            rep.kept += 1
            leaves.append(str(found["leaf"]))
        else:
            rep.voided.append(VoidedPlace(seq, why, found, content))
            leaves.append(None)
    if dry_run:
        return rep
    frontier = log._signed_frontier(tx, stream, signed)
    placeholders = {v.seq: _void(log, tx, stream, v, actor=actor) for v in rep.voided if isinstance(v.seq, int)}
    for v in rep.voided:
        if not isinstance(v.seq, int):
            _quarantine(tx, stream, v, voided_by=new_id(now=log.clock.now()))
    for offset, leaf in enumerate(leaves):
        frontier.append(bytes.fromhex(leaf) if leaf is not None else placeholders[signed + 1 + offset])
    tx.execute(
        "INSERT INTO log_streams (stream, size, frontier) VALUES (?, ?, ?) "
        "ON CONFLICT (stream) DO UPDATE SET size = excluded.size, frontier = excluded.frontier",
        (stream, frontier.size, json.dumps(frontier.to_hex())),
    )
    record = log.append(
        tx,
        namespace=stream,
        actor=actor,
        op=REPAIRED_OP,
        target=stream,
        payload={
            "checkpoint": signed,
            "header_size": header_size,
            "kept": rep.kept,
            "voided": [v.to_json() for v in rep.voided],
        },
        policy_version=_POLICY,
    )
    rep.repair_id, rep.repair_seq = record.id, record.seq
    return rep


def _void(log: OperationLog, tx: Transaction, stream: str, place: VoidedPlace, *, actor: str) -> bytes:
    """Put a signed ``LOG_QUARANTINED`` operation at ``place``'s sequence number, setting the
    row there (if any) aside first; returns the new leaf."""
    assert isinstance(place.seq, int)
    now = log.clock.now()
    payload = place.to_json()
    operation = Operation(
        stream=stream,
        seq=place.seq,
        id=new_id(now=now),
        time=format_time(now),
        actor=actor,
        op=QUARANTINED_OP,
        target=stream,
        payload_json=canonical_json(payload).decode("utf-8"),
        policy_version=_POLICY,
        payload=payload,
    )
    if place.row is not None:
        _quarantine(tx, stream, place, voided_by=operation.id)
    leaf = leaf_hash(operation.canonical())
    log._insert_row(tx, operation, leaf)
    return leaf


def _quarantine(tx: Transaction, stream: str, place: VoidedPlace, *, voided_by: str) -> None:
    """Move a row from ``log_ops`` to ``log_quarantine``, exactly as it was stored."""
    row = place.row
    assert row is not None
    if isinstance(row["seq"], int):
        moved = tx.execute("DELETE FROM log_ops WHERE stream = ? AND seq = ?", (stream, row["seq"]))
    else:  # only SQLite holds such a row; its seq may not even bind back as text
        moved = tx.execute("DELETE FROM log_ops WHERE stream = ? AND rowid = ?", (stream, row["rowid_"]))
    if moved != 1:
        raise ConflictError(f"stream {stream!r}: operation {place.seq} changed during the repair; nothing was changed")
    tx.execute(
        "INSERT INTO log_quarantine (stream, seq, id, time, actor, op, target, payload, policy_version, leaf, "
        "key_id, signature, reason, voided_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            stream,
            str(row["seq"]) if isinstance(row["seq"], int) else _text(row["seq"]),
            *(_text(row[c]) for c in ("id", "time", "actor", "op", "target", "payload", "policy_version")),
            *(_text(row[c]) for c in ("leaf", "key_id", "signature")),
            _clean(place.reason),
            voided_by,
        ),
    )


def _text(value: Any) -> str | bytes | int | float | None:
    """A stored value as it was stored. Text that was not valid UTF-8 (only tampering writes
    it; SQLite reads it back with ``surrogateescape``) is kept as its very bytes, and so are
    bytes; a number stays a number (SQLite keeps any value in any column)."""
    if value is None or isinstance(value, bytes | int | float):
        return value
    text = str(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape")
    return text


def _short(value: Any) -> str | None:
    """A stored value named in the record: bounded (after tampering it is anyone's text) and
    valid text (bytes that were not UTF-8 are shown as ``\\xNN``), so the record can be signed."""
    return None if value is None else _clean(value)[:200]


def _clean(value: Any) -> str:
    return str(value).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
