"""The operation log: one append-only, gap-free stream per namespace, each an RFC 9162
Merkle tree, with signed checkpoints and a tracked witness file.

Engines call :meth:`OperationLog.append` inside the same transaction as their state change,
so a change and its record commit together or not at all.
"""

from __future__ import annotations

import base64
import binascii
import json
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from hashlib import sha256 as _sha256
from pathlib import Path
from typing import Any

from ..core.clock import Clock, format_time
from ..core.errors import (
    BadSignature,
    ConflictError,
    InvalidInput,
    LeafMismatch,
    LogIntegrityError,
    NotFound,
    RolledBack,
    RootMismatch,
    SequenceGap,
    StaleCheckpoint,
    UnattributedOperation,
)
from ..core.files import atomic_write
from ..core.ids import new_id
from ..store import Store, Transaction, register_migration, reject_nul
from ._checkpoint import LEGACY_DATABASE, Checkpoint, Witness
from ._keys import KeyRing
from ._merkle import Frontier, consistency_proof, inclusion_proof, inclusion_proofs, leaf_hash, root_hash
from ._operation import Operation, canonical_json, canonical_operation

__all__ = ["OperationLog", "OtherDatabaseEntry", "StreamReport", "VerifyReport"]

register_migration(
    "log",
    1,
    "CREATE TABLE log_streams (stream TEXT PRIMARY KEY, size {bigint} NOT NULL, frontier TEXT NOT NULL)",
    "CREATE TABLE log_ops (stream TEXT NOT NULL, seq {bigint} NOT NULL, id TEXT NOT NULL UNIQUE, "
    "time TEXT NOT NULL, actor TEXT NOT NULL, op TEXT NOT NULL, target TEXT NOT NULL, payload TEXT NOT NULL, "
    "policy_version TEXT NOT NULL, leaf TEXT NOT NULL, PRIMARY KEY (stream, seq))",
    "CREATE INDEX log_ops_target ON log_ops (stream, target)",
    "CREATE TABLE log_checkpoints (stream TEXT NOT NULL, size {bigint} NOT NULL, root TEXT NOT NULL, "
    "time TEXT NOT NULL, origin TEXT NOT NULL, key_id TEXT NOT NULL, signature TEXT NOT NULL, "
    "PRIMARY KEY (stream, size))",
    description="operation log, Merkle frontier per stream, signed checkpoints",
)
register_migration(
    "log",
    2,
    "CREATE TABLE log_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    description="log meta data: the database's id, which keys its entries in the shared witness file",
)
register_migration(
    "log",
    3,
    "ALTER TABLE log_ops ADD COLUMN key_id TEXT",
    "ALTER TABLE log_ops ADD COLUMN signature TEXT",
    "ALTER TABLE log_checkpoints ADD COLUMN frontier TEXT",
    description="each operation signed by the key of the process that appended it; each checkpoint's frontier",
)

#: The ``log`` schema version from which every operation carries its appender's signature.
SIGNED_OPERATIONS_SCHEMA = 3

NO_KEY_HINT = (
    "this machine holds no signing key for this home's log, so its operations stay unsigned; "
    "run `intently init` in the project to join it with a key of its own"
)

_CHUNK = 5000
#: Above any sequence number a stream reaches (SQLite sorts text and bytes above every number).
_LAST_PLACE = 2**62
#: Rows at a place in the stream: SQLite keeps text, bytes or a real in ``seq`` if tampering
#: writes them, and such a row is at no place (``log verify`` names it by rowid; readers of
#: the log's operations skip it). Always true on PostgreSQL, where ``seq`` is a bigint.
_A_PLACE = "seq = CAST(seq AS {bigint})"
#: ``log_meta`` key (plus the key id) a rotation sets, in its write transaction, for the key it retires.
_RETIRED_META = "retired_key:"


@dataclass
class StreamReport:
    stream: str
    size: int = 0
    checkpoints: int = 0
    witnessed_size: int | None = None
    unsigned_tail: int = 0
    error: str | None = None
    error_type: str | None = None
    bad_seq: int | None = None
    #: The id of the operation stored at ``bad_seq``, if one is: the seq alone moves when rows
    #: are deleted or renumbered, the id names the row an auditor looks up.
    bad_id: str | None = None
    #: Operations past the last checkpoint without a valid signature of their own (appended
    #: without a key, or behind the log's back): no checkpoint will sign them.
    unattributed: int = 0
    #: ``LOG_REPAIRED`` operations in the stream: a repair passes verification, and says so.
    repairs: int = 0
    #: Rows of the stream whose sequence number is not a whole number (text, bytes, a real:
    #: only tampering writes them, and only SQLite keeps them), by rowid: no place in the tree
    #: holds them, so the walk alone would see only the gap they left.
    misplaced: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        return {
            "stream": self.stream,
            "ok": self.ok,
            "size": self.size,
            "checkpoints": self.checkpoints,
            "witnessed_size": self.witnessed_size,
            "unsigned_tail": self.unsigned_tail,
            "error": self.error,
            "error_type": self.error_type,
            "bad_seq": self.bad_seq,
            "bad_id": self.bad_id,
            "unattributed": self.unattributed,
            "repairs": self.repairs,
            "misplaced": self.misplaced,
        }


@dataclass
class OtherDatabaseEntry:
    """A witnessed checkpoint of another database (another clone's log): its signature is
    checked when the key is known, its tree cannot be, so it is reported, not enforced.

    ``error`` is set only for evidence of tampering: a signature that fails under a known
    key, or an entry signed by this machine's own key (this machine's database was replaced).
    """

    database: str
    stream: str
    size: int
    key_id: str
    signature: str = "unchecked"  # "ok", "unknown key" or "bad"
    error: str | None = None
    error_type: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        return {
            "database": self.database,
            "stream": self.stream,
            "ok": self.ok,
            "size": self.size,
            "key_id": self.key_id,
            "signature": self.signature,
            "error": self.error,
            "error_type": self.error_type,
        }


@dataclass
class VerifyReport:
    streams: list[StreamReport] = field(default_factory=list)
    database: str | None = None
    other_databases: list[OtherDatabaseEntry] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(s.ok for s in self.streams) and all(o.ok for o in self.other_databases)

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "database": self.database,
            "streams": [s.to_json() for s in self.streams],
            "other_databases": [o.to_json() for o in self.other_databases],
        }


class OperationLog:
    """Append, read, checkpoint, prove and verify."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock,
        keyring: KeyRing,
        origin: str,
        witness_path: Path | None = None,
        keys_dir: Path | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.keyring = keyring
        self.origin = origin
        self.witness_path = witness_path
        #: Where the keyring was loaded from: a long-running process (a server) reloads it
        #: when another process rotated the key it holds, instead of signing with a retired key.
        self.keys_dir = keys_dir
        #: False leaves the tracked witness file alone at checkpoints (the checkpoints are still
        #: signed into the database). Claude Code hooks append on every tool call: rewriting a
        #: tracked file each time kept the user's git tree dirty. The next checkpoint with this
        #: left True (any other command that appends, or ``intently log checkpoint``) brings
        #: the file up to every stream's latest checkpoint, these included.
        self.witness_on_checkpoint = True
        self._dirty: set[str] = set()
        self._warned_unsigned = False
        #: Streams whose witnessed checkpoint this handle found the database agreeing with
        #: at its first append (checked once: the witness file is read at most once per stream).
        self._witness_agrees: set[str] = set()
        #: (stream, seq) -> leaf of the operations this process signed and committed since its
        #: last checkpoint: the checkpoint need not check its own signatures again, only that
        #: the stored leaf is still the one it signed (one Ed25519 verify costs ~3 signs).
        self._signed_here: dict[tuple[str, int], str] = {}
        #: stream -> (size, root) of the last checkpoint this process signed or verified: the
        #: next checkpoint extends it without checking its signature again.
        self._trusted: dict[str, tuple[int, str]] = {}
        #: Sign a transaction's appends to a stream with one checkpoint committed with them,
        #: not each append with a signature of its own (:meth:`_seal`). On where many appends
        #: share a transaction: ``[log] group_commit`` homes (the store opened for one says so:
        #: :attr:`Store.group_commit` is the setting's one owner) and batch importers, which
        #: set it. One Ed25519 signature per transaction instead of one per operation, and
        #: nothing left pending.
        self.seal_batches = store.group_commit
        #: A checkpoint was signed inside a transaction since the witness file was last brought
        #: up to date: the next :meth:`checkpoint` writes it even when it signs nothing itself.
        self._witness_due = False

    # -- writing --------------------------------------------------------------

    def append(
        self,
        tx: Transaction,
        *,
        namespace: str,
        actor: str,
        op: str,
        target: str,
        payload: dict[str, Any],
        policy_version: str,
    ) -> Operation:
        """Append one operation to the namespace's stream, inside the caller's transaction."""
        if not op or not op.replace("_", "").isalnum() or op.upper() != op:
            raise InvalidInput(f"op type {op!r} must be UPPER_SNAKE_CASE", where="op")
        payload_json = canonical_json(payload).decode("utf-8")
        # Validate every field before the first write: a caller that catches the error inside
        # its transaction must not be left with a stream header that counts a missing operation.
        reject_nul((namespace, actor, target, policy_version))
        # Read, then write the header once: safe because a write transaction holds the store's
        # write lock from its start (BEGIN IMMEDIATE on SQLite, an advisory lock on PostgreSQL).
        # The same read says whether another process retired the key this one signs with.
        signs = self.keyring.can_sign
        head = tx.one(
            "SELECT s.size, s.frontier, m.value AS retired FROM (SELECT 1 AS one) o "
            "LEFT JOIN log_streams s ON s.stream = ? LEFT JOIN log_meta m ON m.key = ?",
            (namespace, _RETIRED_META + (self.keyring.current_key_id if signs else "")),
        )
        if signs and head is not None and head["retired"] is not None:
            self._refuse_retired(tx)
        row = head if head is not None and head["size"] is not None else None
        size = int(row["size"]) if row else 0
        if namespace not in self._witness_agrees:
            self._check_witness(tx, namespace, size)
        seq = size + 1
        frontier = Frontier.from_hex(size, json.loads(str(row["frontier"])) if row else [])
        now = self.clock.now()
        operation = Operation(
            stream=namespace,
            seq=seq,
            id=new_id(now=now),
            time=format_time(now),
            actor=actor,
            op=op,
            target=target,
            payload_json=payload_json,
            policy_version=policy_version,
            payload=payload,
        )
        try:
            leaf = leaf_hash(operation.canonical())
        except UnicodeEncodeError as exc:
            raise InvalidInput(f"text is not valid Unicode: {exc}", where=f"operation {op} on {target!r}") from exc
        frontier.append(leaf)
        tx.execute(
            "INSERT INTO log_streams (stream, size, frontier) VALUES (?, ?, ?) "
            "ON CONFLICT (stream) DO UPDATE SET size = excluded.size, frontier = excluded.frontier",
            (namespace, seq, json.dumps(frontier.to_hex())),
        )
        self._insert_row(tx, operation, leaf)
        return operation

    def _insert_row(self, tx: Transaction, operation: Operation, leaf: bytes) -> None:
        """Store one operation with this process's signature over its leaf (none without a
        key: such a row stays unattributed until someone adopts it)."""
        key_id: str | None = None
        signature: str | None = None
        if self.keyring.can_sign:
            if self.seal_batches:
                self._batch_of(tx).append((operation.stream, operation.seq, leaf))  # signed at commit
            else:
                key_id, signature = self._sign_leaf(leaf)
        tx.execute(
            "INSERT INTO log_ops (stream, seq, id, time, actor, op, target, payload, policy_version, leaf, "
            "key_id, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                operation.stream,
                operation.seq,
                operation.id,
                operation.time,
                operation.actor,
                operation.op,
                operation.target,
                operation.payload_json,
                operation.policy_version,
                leaf.hex(),
                key_id,
                signature,
            ),
        )
        stream, seq, hexleaf = operation.stream, operation.seq, leaf.hex()

        def committed() -> None:
            self._dirty.add(stream)
            if key_id is not None:
                self._signed_here[(stream, seq)] = hexleaf

        tx.on_commit(committed)

    def _sign_leaf(self, leaf: bytes) -> tuple[str, str]:
        """(key id, base64 signature) of this process's key over one operation's leaf, as a
        ``log_ops`` row stores them: an append and a batch that falls back to per-append
        signatures (:meth:`_seal`) sign the same way."""
        key_id, raw = self.keyring.sign_operation(leaf)
        return key_id, base64.b64encode(raw).decode()

    def _batch_of(self, tx: Transaction) -> list[tuple[str, int, bytes]]:
        """This transaction's appends still to sign, (stream, seq, leaf) in order; the first
        asks the transaction to call :meth:`_seal` just before it commits."""
        batch: list[tuple[str, int, bytes]] | None = getattr(tx, "_intently_log_batch", None)
        if batch is None:
            batch = []
            tx._intently_log_batch = batch  # type: ignore[attr-defined]
            tx.before_commit(lambda: self._seal(tx, batch))
        return batch

    def _seal(self, tx: Transaction, batch: list[tuple[str, int, bytes]]) -> None:
        """Sign, inside the transaction and under its write lock, the operations it appended.

        Per stream, when the stream had nothing pending before this transaction (its last
        checkpoint is just before the first of them) and several were appended: one checkpoint
        over the last checkpoint's proven frontier plus their leaves, held in memory since the
        append, so nobody could have changed them. It commits with them: they are never past a
        checkpoint, so they need no signature of their own, as operations under a checkpoint
        never did. Otherwise (a single append, others' operations pending, a header that is not
        the tree) each gets its own signature as any append does, and the checkpoint at the end
        of the command checks the rest as before."""
        streams: dict[str, list[tuple[int, bytes]]] = {}
        for stream, seq, leaf in batch:
            streams.setdefault(stream, []).append((seq, leaf))
        for stream, rows in streams.items():
            if len(rows) > 1 and self._seal_stream(tx, stream, rows):
                continue
            for seq, leaf in rows:
                key_id, signature = self._sign_leaf(leaf)
                tx.execute(
                    "UPDATE log_ops SET key_id = ?, signature = ? WHERE stream = ? AND seq = ?",
                    (key_id, signature, stream, seq),
                )
                tx.on_commit(lambda key=(stream, seq), hexleaf=leaf.hex(): self._signed_here.__setitem__(key, hexleaf))

    def _seal_stream(self, tx: Transaction, stream: str, rows: list[tuple[int, bytes]]) -> bool:
        """Sign one checkpoint over ``rows`` (this transaction's appends to ``stream``, in order);
        False, signing nothing, when that would not be the tree of exactly what is vouched for."""
        first, last = rows[0][0], rows[-1][0]
        head = tx.one(
            "SELECT s.size, s.frontier, (SELECT MAX(c.size) FROM log_checkpoints c WHERE c.stream = s.stream) "
            "AS signed FROM log_streams s WHERE s.stream = ?",
            (stream,),
        )
        signed = int(head["signed"]) if head is not None and head["signed"] is not None else 0
        if head is None or signed != first - 1 or int(head["size"]) != last or last - first + 1 != len(rows):
            return False
        try:
            frontier = self._signed_frontier(tx, stream, signed)
            for _seq, leaf in rows:
                frontier.append(leaf)
            header = Frontier.from_hex(last, json.loads(str(head["frontier"])))
        except (LogIntegrityError, ValueError, TypeError):
            return False
        if header.root() != frontier.root():
            return False
        self._sign_tree(tx, stream, frontier)
        self._ensure_database_id(tx)
        self._witness_due = True
        return True

    def _refuse_retired(self, tx: Transaction) -> None:
        """Another process retired the key this one holds: load the new key, or append nothing.

        Signing with a retired key would leave operations no checkpoint may sign (a retired
        key may have leaked, so what it signs past its retirement vouches for nothing)."""
        stale = self._retired_elsewhere(tx)
        if stale is not None:
            raise ConflictError(
                f"this process's signing key {stale} was retired by `intently log rotate-key` in another "
                "process and the new key cannot be loaded here; nothing was written: run the command again"
            )

    def _check_witness(self, tx: Transaction, stream: str, size: int) -> None:
        """Refuse to append to a stream the witness file says this database has lost or rewritten.

        The checkpoint after the command would find the same disagreement, but only once the
        change was committed: on a database restored from an older copy every command saved
        its change and then failed, so a user (or an agent) retrying it saved it again and
        again, each change past the witness unprovable. Checked here, under the write lock and
        before any row is written, the command fails and changes nothing. The same rule as
        :meth:`_update_witness`: the database must reach the witnessed size and hold the
        witnessed root there.
        """
        if self.witness_path is None:
            return
        witnessed = self._split_witness(self.read_witness_file(), self._read_database_id(tx))[0].get(stream)
        if witnessed is not None:
            conflict = _witness_conflict(
                tx,
                stream,
                witnessed,
                size,
                held=f"the database holds {size}",
                outcome="nothing was written; run `intently log verify`, and to carry on from this database on "
                f"purpose, remove its entry from {self.witness_path.name} and commit that",
            )
            if conflict is not None:
                raise conflict
        self._witness_agrees.add(stream)

    def copy_operation(self, tx: Transaction, operation: Operation) -> None:
        """Append an operation verbatim (replay and store copy), checking its sequence number."""
        row = tx.one("SELECT size, frontier FROM log_streams WHERE stream = ?", (operation.stream,))
        size = int(row["size"]) if row else 0
        if operation.seq != size + 1:
            raise SequenceGap(
                f"expected seq {size + 1}, got {operation.seq}", stream=operation.stream, seq=operation.seq
            )
        frontier = Frontier.from_hex(size, json.loads(str(row["frontier"])) if row else [])
        leaf = leaf_hash(operation.canonical())
        frontier.append(leaf)
        tx.execute(
            "INSERT INTO log_streams (stream, size, frontier) VALUES (?, ?, ?) "
            "ON CONFLICT (stream) DO UPDATE SET size = excluded.size, frontier = excluded.frontier",
            (operation.stream, frontier.size, json.dumps(frontier.to_hex())),
        )
        # Signed again by this process: replay copies a log it has verified first, so every
        # operation it copies was vouched for by a key or by a checkpoint of the source.
        self._insert_row(tx, operation, leaf)

    # -- checkpoints ----------------------------------------------------------

    def adopt_written_before_signatures(self, sizes: dict[str, int], *, actor: str) -> int:
        """Sign, right after this process applied the migration that made operations carry
        signatures, the operations an older intently had appended but not yet checkpointed (a
        command killed between its change and its checkpoint, a hook that timed out).

        ``sizes`` (from :func:`unsigned_before_upgrade`, read before the migration) bounds them:
        only rows that existed before signatures did, carry none, and hash to their leaf are
        adopted, as the older intently's next checkpoint would have signed them anyway. Nothing
        written since (which must carry a signature) is. It is recorded as a ``LOG_ADOPTED``
        operation (``reason``: ``upgrade``) and said on stderr. Without a key, or when the tail
        is damaged, nothing is adopted and the command that meets it names
        ``intently log checkpoint --adopt`` / ``intently log repair``, as before.

        Returns how many operations were adopted (``intently store upgrade --json`` says it)."""
        if not sizes or not self.keyring.can_sign:
            return 0
        try:
            _made, count = self._checkpoint(set(sizes), adopt=actor, adopt_upto=sizes)
        except LogIntegrityError as exc:
            sys.stderr.write(
                f"intently: warning: operations written before this version signed them not adopted: {exc}\n"
            )
            return 0
        if count:
            sys.stderr.write(
                f"intently: {count} operation(s) an older intently appended without a checkpoint were signed "
                "after the upgrade, recorded as LOG_ADOPTED (`intently log show --op LOG_ADOPTED`)\n"
            )
        return count

    def checkpoint(
        self,
        streams: Iterable[str] | None = None,
        *,
        adopt: str | None = None,
        adopt_upto: dict[str, int] | None = None,
    ) -> list[Checkpoint]:
        """Sign a checkpoint for every stream that grew since its last one, then update the
        tracked witness file (unless :attr:`witness_on_checkpoint` is off). Called at the end
        of every command that appended.

        A checkpoint signs only operations a key vouched for (:meth:`_sign_pending`): one
        without a valid signature of its own, added by someone who could write the database
        but holds no key, stops the stream's checkpoint just before it, and the call raises
        :class:`UnattributedOperation` naming it once the rest is committed. ``adopt`` (the
        actor who vouches, ``intently log checkpoint --adopt`` or joining a home) signs
        operations that carry no signature at all, and records that as a ``LOG_ADOPTED``
        operation; a signature that fails is never adopted. ``adopt_upto`` limits adoption to
        the rows at or below each stream's given size (:meth:`adopt_written_before_signatures`).

        The witness file is written once the new checkpoints are committed, in a write
        transaction of its own: concurrent processes update it one at a time and it never goes
        backwards, and a process killed while writing it cannot leave it witnessing a
        checkpoint the database never committed (every later command would then fail as if
        the database had been rolled back). A witnessed checkpoint the database disagrees with
        (a rolled-back or rewritten database) is kept, not overwritten, and the call raises.
        """
        return self._checkpoint(streams, adopt=adopt, adopt_upto=adopt_upto)[0]

    def _checkpoint(
        self,
        streams: Iterable[str] | None,
        *,
        adopt: str | None = None,
        adopt_upto: dict[str, int] | None = None,
    ) -> tuple[list[Checkpoint], int]:
        """:meth:`checkpoint`, also returning how many operations it adopted (what
        :meth:`adopt_written_before_signatures` reports, without reading the log again)."""
        if not self.keyring.can_sign:
            self._warn_unsigned(streams)
            return [], 0
        wanted = set(streams) if streams is not None else None
        made: list[Checkpoint] = []
        refused: list[LogIntegrityError] = []
        conflicts: list[LogIntegrityError] = []
        stale: str | None = None
        adopted = 0
        with self.store.transaction(write=True) as tx:
            stale = self._retired_elsewhere(tx)
            if stale is None:
                made, refused, adopted = self._sign_pending(tx, wanted, adopt=adopt, adopt_upto=adopt_upto)
            if made:
                self._ensure_database_id(tx)
            # A checkpoint of every stream (``intently log checkpoint``) also catches the
            # witness up with checkpoints signed while it was left alone, even when no stream
            # grew since (a database that never signed has nothing to witness).
            catch_up = wanted is None and self._read_database_id(tx) is not None
        self._dirty.clear()
        self._signed_here.clear()
        if self.witness_path is not None and self.witness_on_checkpoint and (made or catch_up or self._witness_due):
            with self.store.transaction(write=True) as tx:
                conflicts = self._update_witness(tx)
            self._witness_due = False
        if stale is not None and not self._warned_unsigned:
            self._warned_unsigned = True
            sys.stderr.write(
                f"intently: warning: operations not signed: this process's signing key {stale} was retired by "
                "`intently log rotate-key` in another process and the new key cannot be loaded here; the next "
                "command run with the new key signs them\n"
            )
        if refused:  # the operation no key vouched for is the cause: name it first
            raise refused[0]
        if conflicts:
            raise conflicts[0]
        return made, adopted

    def _sign_pending(
        self,
        tx: Transaction,
        wanted: set[str] | None,
        *,
        adopt: str | None = None,
        adopt_upto: dict[str, int] | None = None,
    ) -> tuple[list[Checkpoint], list[LogIntegrityError], int]:
        """Sign, under ``tx``'s write lock, each stream's operations since its last checkpoint
        that a key vouched for; returns (the checkpoints made, why a stream stopped short, how
        many operations without a signature ``adopt`` took in).

        The tree signed is rebuilt from what is vouched for, never taken from the stream
        header (which anyone with the database can rewrite): the last checkpoint (its signature
        checked, its stored frontier checked against its root) plus the leaf of each later
        operation whose own signature verifies. The walk stops at the first operation that has
        none (or a bad one), or at a missing sequence number, and signs what came before.
        """
        made: list[Checkpoint] = []
        refused: list[LogIntegrityError] = []
        adopted_count = 0
        rows = tx.query(
            "SELECT s.stream, s.size, s.frontier, (SELECT MAX(c.size) FROM log_checkpoints c "
            "WHERE c.stream = s.stream) AS signed FROM log_streams s ORDER BY s.stream"
        )
        for row in rows:
            stream = str(row["stream"])
            if wanted is not None and stream not in wanted:
                continue
            size = int(row["size"])
            signed = int(row["signed"]) if row["signed"] is not None else 0
            if size == 0 or signed >= size:
                continue
            try:
                frontier = self._signed_frontier(tx, stream, signed)
                upto = size if adopt_upto is None else adopt_upto.get(stream, 0)
                problem, unsigned = self._extend_vouched(
                    tx, stream, frontier, size, adopt=adopt is not None, adopt_upto=upto
                )
                if unsigned and adopt is not None:
                    payload: dict[str, Any] = {
                        "first_seq": unsigned[0][0],
                        "last_seq": unsigned[-1][0],
                        "count": len(unsigned),
                        "first_id": unsigned[0][1],
                    }
                    if adopt_upto is not None:
                        payload["reason"] = "upgrade"  # written before operations were signed
                    adopted = self.append(
                        tx,
                        namespace=stream,
                        actor=adopt,
                        op="LOG_ADOPTED",
                        target=stream,
                        payload=payload,
                        policy_version="intently@log",
                    )
                    frontier.append(leaf_hash(adopted.canonical()))
                    size += 1
                    adopted_count += len(unsigned)
                    row = dict(row, frontier=tx.scalar("SELECT frontier FROM log_streams WHERE stream = ?", (stream,)))
                if problem is None and frontier.size == size:
                    header = Frontier.from_hex(size, json.loads(str(row["frontier"]))).root()
                    if header != frontier.root():
                        raise RootMismatch(
                            f"the stream header's tree of {size} operations is not the tree of its stored "
                            "operations (the header was rewritten); nothing past the last checkpoint was signed",
                            stream=stream,
                            seq=size,
                        )
            except (LogIntegrityError, ValueError, TypeError) as exc:
                refused.append(
                    exc
                    if isinstance(exc, LogIntegrityError)
                    else LeafMismatch(f"stored leaf does not decode: {exc}", stream=stream, seq=signed + 1)
                )
                continue
            if problem is not None:
                refused.append(problem)
            if frontier.size <= signed:
                continue
            made.append(self._sign_tree(tx, stream, frontier))
        return made, refused, adopted_count

    def _sign_tree(self, tx: Transaction, stream: str, frontier: Frontier) -> Checkpoint:
        root = frontier.root()
        now = format_time(self.clock.now())
        body = Checkpoint.body(self.origin, stream, frontier.size, root, now)
        key_id, signature = self.keyring.sign(body, now)
        cp = Checkpoint(self.origin, stream, frontier.size, root, now, key_id, signature)
        tx.execute(
            "INSERT INTO log_checkpoints (stream, size, root, time, origin, key_id, signature, frontier) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                stream,
                frontier.size,
                root.hex(),
                now,
                self.origin,
                key_id,
                cp.to_json()["signature"],
                json.dumps(frontier.to_hex()),
            ),
        )
        self._trusted[stream] = (frontier.size, root.hex())
        return cp

    def _signed_frontier(self, tx: Transaction, stream: str, signed: int) -> Frontier:
        """The frontier of the stream's last checkpoint, proven: its signature verifies (a row
        put into the table by hand would otherwise let the next checkpoint extend whatever it
        claims) and the frontier's root is the signed root. Checkpoints made before frontiers
        were stored rebuild it from the stored leaves, once."""
        if signed == 0:
            return Frontier()
        row = tx.one("SELECT * FROM log_checkpoints WHERE stream = ? AND size = ?", (stream, signed))
        assert row is not None  # the caller read ``signed`` as MAX(size) in this transaction
        cp = _checkpoint_from_row(row)
        if self._trusted.get(stream) != (cp.size, cp.root.hex()):
            self._verify_signature(cp)
        if row.get("frontier") is not None:
            frontier = Frontier.from_hex(signed, json.loads(str(row["frontier"])))
        else:
            frontier = Frontier()
            for _seq, leaf in _chunked(
                tx,
                "SELECT seq, leaf FROM log_ops WHERE stream = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
                stream,
                0,
                signed,
            ):
                frontier.append(bytes.fromhex(str(leaf)))
        if frontier.size != signed or frontier.root() != cp.root:
            raise RootMismatch(
                f"the stored operations up to the last checkpoint (size {signed}) are not its signed tree; "
                "run `intently log verify`",
                stream=stream,
                seq=signed,
            )
        self._trusted[stream] = (cp.size, cp.root.hex())
        return frontier

    def _extend_vouched(
        self, tx: Transaction, stream: str, frontier: Frontier, size: int, *, adopt: bool, adopt_upto: int = 0
    ) -> tuple[LogIntegrityError | None, list[tuple[int, str]]]:
        """Append to ``frontier`` the leaves of the operations after it, up to ``size``, while
        each is vouched for; returns (why the walk stopped short, the (seq, id) of operations
        without any signature, at or below ``adopt_upto``, taken in because ``adopt``)."""
        unsigned: list[tuple[int, str]] = []
        expected = frontier.size + 1
        for seq, id_, time_, actor, op, target, payload, policy, leaf, key_id, signature in _chunked(
            tx,
            "SELECT seq, id, time, actor, op, target, payload, policy_version, leaf, key_id, signature FROM log_ops "
            "WHERE stream = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
            stream,
            frontier.size,
            size,
        ):
            if seq != expected:
                return SequenceGap(
                    f"operation {expected} is missing (found {seq}); nothing from it on was signed",
                    stream=stream,
                    seq=expected,
                ), unsigned
            # The signature covers the stored leaf, not the stored fields: a row whose fields
            # were edited and its leaf left alone still carries a valid signature. Signed into
            # a checkpoint it would turn an edit of the unsigned tail into a LeafMismatch inside
            # signed history, which nothing can mend; so the leaf is recomputed here too.
            content = _content_leaf(stream, seq, id_, time_, actor, op, target, payload, policy)
            if content != leaf:
                return LeafMismatch(
                    f"stored operation (id {str(id_)[:80]!r}) does not hash to its recorded leaf; nothing from it on "
                    "was signed: run `intently log verify`, then `intently log repair`",
                    stream=stream,
                    seq=expected,
                ), unsigned
            why = self._unvouched(stream, int(seq), str(time_), str(leaf), key_id, signature)
            if why is not None:
                if not (adopt and key_id is None and signature is None and int(seq) <= adopt_upto):
                    return _unattributed(stream, int(seq), str(id_), why), unsigned
                unsigned.append((int(seq), str(id_)[:80]))
            frontier.append(bytes.fromhex(str(leaf)))
            expected += 1
        if expected <= size:
            return SequenceGap(
                f"the stream header says {size} operations but operation {expected} is not stored; "
                "nothing from it on was signed",
                stream=stream,
                seq=expected,
            ), unsigned
        return None, unsigned

    def _unvouched(self, stream: str, seq: int, time: str, leaf: str, key_id: object, signature: object) -> str | None:
        """Why the stored operation's own signature does not vouch for it (``None``: it does)."""
        if key_id is None or signature is None:
            return "carries no signature of a signing key"
        if self._signed_here.get((stream, seq)) == leaf:
            return None  # signed by this process, and the stored leaf is the one it signed
        try:
            raw = base64.b64decode(str(signature), validate=True)
            leaf_bytes = bytes.fromhex(leaf)
        except (binascii.Error, ValueError):
            return "its signature or leaf does not decode"
        return self.keyring.operation_problem(str(key_id), leaf_bytes, raw, stream, seq, time)

    def _retired_elsewhere(self, tx: Transaction) -> str | None:
        """The id of the key this process holds when another process has retired it (``None``
        while it is current). A process that loaded the keyring before a rotation would
        otherwise go on signing with the retired key, and every such checkpoint fails
        verification for good. The new key is loaded from :attr:`keys_dir` when it can be.
        Read under the checkpoint's write lock, which the rotation holds while it retires."""
        kid = self.keyring.current_key_id
        if not _retired(tx, kid):
            return None
        if self.keys_dir is not None:
            fresh = KeyRing.load(self.keys_dir)
            if fresh.can_sign and not _retired(tx, fresh.current_key_id):
                self.keyring = fresh
                return None
        return kid

    def checkpoint_dirty(self) -> list[Checkpoint]:
        """Checkpoint only the streams this process appended to."""
        if not self._dirty:
            if self._witness_due:  # sealed in their transactions: the witness file catches up
                self.checkpoint(set())
            return []
        return self.checkpoint(set(self._dirty))

    def _warn_unsigned(self, streams: Iterable[str] | None) -> None:
        """Say once per log, on stderr, that appended operations cannot be signed here.

        Signing is skipped, not failed: the operations are committed and stay valid, and
        ``intently init`` (joining) signs them later. Silence would hide that nothing
        witnesses them until then; ``log verify --strict`` fails on that unsigned tail.
        """
        if self._warned_unsigned:
            return
        wanted = set(streams) if streams is not None else None
        with self.store.transaction(write=False) as tx:
            rows = tx.query(
                "SELECT s.stream, s.size - COALESCE((SELECT MAX(c.size) FROM log_checkpoints c "
                "WHERE c.stream = s.stream), 0) AS unsigned FROM log_streams s"
            )
        pending = sum(
            int(r["unsigned"])
            for r in rows
            if (wanted is None or str(r["stream"]) in wanted) and int(r["unsigned"]) > 0
        )
        if pending:
            self._warned_unsigned = True
            hint = NO_KEY_HINT
            if self.keyring.private_problem:
                hint = (
                    f"{self.keyring.private_problem}; restore it from a backup, or move it away and run "
                    "`intently init` for a new key of this machine"
                )
            sys.stderr.write(f"intently: warning: {pending} operation(s) not signed: {hint}\n")

    # -- database identity ----------------------------------------------------

    def database_id(self) -> str | None:
        """This database's id (None until its first checkpoint gives it one)."""
        with self.store.transaction(write=False) as tx:
            return self._read_database_id(tx)

    @staticmethod
    def _read_database_id(tx: Transaction) -> str | None:
        value = tx.scalar("SELECT value FROM log_meta WHERE key = 'database_id'")
        return None if value is None else str(value)

    def _ensure_database_id(self, tx: Transaction) -> str:
        """Give the database its random id the first time it signs (lazily, so that
        ``store copy`` carries a database's id over to the copy and an empty store has none)."""
        current = self._read_database_id(tx)
        if current is not None:
            return current
        db_id = new_id(now=self.clock.now())
        tx.execute("INSERT INTO log_meta (key, value) VALUES ('database_id', ?)", (db_id,))
        return db_id

    def _split_witness(
        self, witness: Witness, db_id: str | None
    ) -> tuple[dict[str, Checkpoint], list[tuple[str, Checkpoint]]]:
        """(this database's witnessed checkpoints by stream, every other database's entries).

        Format-1 entries (no database named) are this database's when this machine holds
        the key that signed them, and no newer entry of this database replaces them."""
        mine: dict[str, Checkpoint] = dict(witness.databases.get(db_id, {})) if db_id is not None else {}
        own_key = self.keyring.current_key_id if self.keyring.can_sign else None
        others: list[tuple[str, Checkpoint]] = []
        for db, entries in sorted(witness.databases.items()):
            if db == db_id:
                continue
            for stream, cp in sorted(entries.items()):
                if db == LEGACY_DATABASE and cp.key_id == own_key:
                    mine.setdefault(stream, cp)
                else:
                    others.append((db, cp))
        return mine, others

    def latest_checkpoints(self) -> dict[str, Checkpoint]:
        with self.store.transaction(write=False) as tx:
            return self._latest(tx)

    @staticmethod
    def _latest(tx: Transaction) -> dict[str, Checkpoint]:
        rows = tx.query(
            "SELECT c.* FROM log_checkpoints c JOIN (SELECT stream, MAX(size) AS size FROM log_checkpoints "
            "GROUP BY stream) m ON c.stream = m.stream AND c.size = m.size ORDER BY c.stream"
        )
        return {str(r["stream"]): _checkpoint_from_row(r) for r in rows}

    def checkpoint_at(self, stream: str, size: int) -> Checkpoint | None:
        """The signed checkpoint of ``stream`` at exactly ``size``, if one was made."""
        with self.store.transaction(write=False) as tx:
            row = tx.one("SELECT * FROM log_checkpoints WHERE stream = ? AND size = ?", (stream, size))
        return None if row is None else _checkpoint_from_row(row)

    def write_witness(self) -> None:
        """Bring the tracked witness file up to the database's latest checkpoints.

        Raises the first disagreement between the database and a witnessed checkpoint
        (which is then kept in the file as evidence).
        """
        if self.witness_path is None:
            return
        with self.store.transaction(write=True) as tx:
            conflicts = self._update_witness(tx)
        if conflicts:
            raise conflicts[0]

    def _update_witness(self, tx: Transaction) -> list[LogIntegrityError]:
        """Merge the database's latest checkpoints into the witness file, under ``tx``'s write lock.

        A stream's witnessed checkpoint is replaced only by a newer one that extends it: the
        database must still hold a checkpoint of the witnessed size with the witnessed root
        (verification proves every database checkpoint against the tree). Anything else is a
        conflict: the old entry stays and the conflict is returned.
        """
        assert self.witness_path is not None
        db_id = self._ensure_database_id(tx)
        witness = self.read_witness_file()
        witnessed, _ = self._split_witness(witness, db_id)
        merged = dict(witnessed)
        conflicts: list[LogIntegrityError] = []
        for stream, cp in self._latest(tx).items():
            old = witnessed.get(stream)
            if old is None or (old.size, old.root) == (cp.size, cp.root):
                merged[stream] = cp
                continue
            conflict = _witness_conflict(
                tx,
                stream,
                old,
                cp.size,
                held=f"the database's newest covers {cp.size}",
                outcome="this command's change was saved, but the witness was kept: do not retry it, run "
                "`intently log verify`",
            )
            if conflict is not None:
                conflicts.append(conflict)
                continue
            merged[stream] = cp
        legacy = witness.databases.get(LEGACY_DATABASE, {})
        adopted = [s for s, cp in legacy.items() if merged.get(s) is not None and cp.key_id == merged[s].key_id]
        if merged != witness.databases.get(db_id, {}) or adopted:
            witness.databases[db_id] = merged
            for stream in adopted:  # now kept, extended, under this database's id
                legacy.pop(stream, None)
            # Rewritten at every checkpoint and rebuilt from the database if lost: no fsync.
            atomic_write(self.witness_path, witness.render(), durable=False)
        return conflicts

    def read_witness(self) -> dict[str, Checkpoint]:
        """This database's witnessed checkpoints by stream (empty when the home has no
        witness file yet, or the file holds only other databases' entries)."""
        with self.store.transaction(write=False) as tx:
            db_id = self._read_database_id(tx)
        return self._split_witness(self.read_witness_file(), db_id)[0]

    def read_witness_file(self) -> Witness:
        """Every database's witnessed checkpoints (empty when there is no witness file)."""
        if self.witness_path is None or not self.witness_path.exists():
            return Witness()
        return Witness.parse(self.witness_path.read_text(encoding="utf-8"), str(self.witness_path))

    def rotate_key(self, keys_dir: Path, *, namespace: str, actor: str) -> tuple[str | None, str]:
        """Retire the signing key and make a new one; returns (retired key id, new key id).

        Pending operations are checkpointed with the old key first, each key's signed range
        is recorded from the database, the rotation is itself an operation, and the new key
        signs a checkpoint at once, so the tracked keyring always covers every checkpoint.
        """
        self.checkpoint()
        old = self.keyring.current_key_id if self.keyring.can_sign else None
        # One write transaction from reading what the old key signed to logging the rotation:
        # no other process can sign with the old key in between (it would sign past the
        # recorded bound), and one that tries later finds the key retired (_retired_elsewhere).
        signed_heads: dict[str, dict[str, Any]] = {}
        with self.store.transaction(write=True) as tx:
            # What other processes appended (signed with the old key) since the checkpoint
            # above is signed with the old key too, under this lock: once it is retired, its
            # signatures past what it had signed vouch for nothing.
            held = self.keyring.can_sign and not _retired(tx, self.keyring.current_key_id)
            if held and self._sign_pending(tx, None)[0]:
                self._ensure_database_id(tx)
            ranges = tx.query(
                "SELECT key_id, MIN(time) AS first, MAX(time) AS last FROM log_checkpoints GROUP BY key_id"
            )
            for row in ranges:
                entry = self.keyring.entries.get(str(row["key_id"]))
                if entry is not None:
                    entry.first_signed, entry.last_signed = str(row["first"]), str(row["last"])
            if old is not None and old in self.keyring.entries:
                # What the retiring key signed, per stream: once retired it vouches for nothing
                # larger (a leaked key could otherwise sign new operations dated before retirement).
                # And the root of that last tree: a leaked key could otherwise sign a different tree
                # of a size it had signed (a rewritten history, a forged trace within its seqs).
                heads = tx.query(
                    "SELECT c.stream, c.size, c.root FROM log_checkpoints c JOIN (SELECT stream, MAX(size) AS size "
                    "FROM log_checkpoints WHERE key_id = ? GROUP BY stream) m ON c.stream = m.stream "
                    "AND c.size = m.size ORDER BY c.stream",
                    (old,),
                )
                # One reading of each head, for both the keyring's bounds and the logged payload.
                sizes: dict[str, int] = {}
                roots: dict[str, str] = {}
                for r in heads:
                    stream, size, root = str(r["stream"]), int(r["size"]), str(r["root"]).lower()
                    sizes[stream], roots[stream] = size, root
                    signed_heads[stream] = {"size": size, "root": root}
                retiring = self.keyring.entries[old]
                retiring.signed_sizes, retiring.signed_roots = sizes, roots
            now = format_time(self.clock.now())
            new = self.keyring.generate(now)
            self.keyring.save(keys_dir)
            if old is not None:
                tx.execute(
                    "INSERT INTO log_meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (_RETIRED_META + old, now),
                )
            self.append(
                tx,
                namespace=namespace,
                actor=actor,
                op="KEY_ROTATED",
                target=new,
                payload={"retired": old, "key_id": new, "signed": signed_heads},
                policy_version="intently@keys",
            )
        self.checkpoint()
        self.keyring.save(keys_dir)
        return old, new

    # -- reading --------------------------------------------------------------

    def streams(self) -> list[str]:
        with self.store.transaction(write=False) as tx:
            return [str(r["stream"]) for r in tx.query("SELECT stream FROM log_streams ORDER BY stream")]

    def size(self, stream: str) -> int:
        with self.store.transaction(write=False) as tx:
            value = tx.scalar("SELECT size FROM log_streams WHERE stream = ?", (stream,))
        return int(value or 0)

    def read(
        self,
        stream: str,
        *,
        after: int = 0,
        limit: int | None = None,
        op: str | None = None,
        target: str | None = None,
        newest_first: bool = False,
        ops: Collection[str] = (),
    ) -> list[Operation]:
        """The stream's operations after ``after``, in order; ``op``, ``target`` and ``ops``
        (any of these kinds: one query where a reader needs several kinds) narrow them."""
        sql = f"SELECT * FROM log_ops WHERE stream = ? AND seq > ? AND {_A_PLACE}"
        params: list[Any] = [stream, after]
        if op:
            sql += " AND op = ?"
            params.append(op)
        if ops:
            kinds = sorted(set(ops))
            sql += f" AND op IN ({', '.join('?' for _ in kinds)})"
            params.extend(kinds)
        if target:
            sql += " AND target = ?"
            params.append(target)
        sql += " ORDER BY seq DESC" if newest_first else " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        with self.store.transaction(write=False) as tx:
            rows = tx.query(sql, params)
        return [Operation.from_row(r) for r in rows]

    def iter_stream(self, stream: str) -> Iterator[tuple[Operation, str]]:
        """Every operation of a stream in order, with its stored leaf hash, in chunks."""
        after = 0
        while True:
            with self.store.transaction(write=False) as tx:
                rows = tx.query(
                    f"SELECT * FROM log_ops WHERE stream = ? AND seq > ? AND {_A_PLACE} ORDER BY seq LIMIT ?",
                    (stream, after, _CHUNK),
                )
            if not rows:
                return
            for row in rows:
                yield Operation.from_row(row), str(row["leaf"])
            after = int(rows[-1]["seq"])

    def get(self, stream: str, seq: int) -> Operation:
        with self.store.transaction(write=False) as tx:
            row = tx.one("SELECT * FROM log_ops WHERE stream = ? AND seq = ?", (stream, seq))
        if row is None:
            raise NotFound(f"no operation {seq} in stream {stream!r}")
        return Operation.from_row(row)

    def _leaves(self, stream: str, size: int) -> list[bytes]:
        with self.store.transaction(write=False) as tx:
            rows = tx.query("SELECT leaf FROM log_ops WHERE stream = ? AND seq <= ? ORDER BY seq", (stream, size))
        return [bytes.fromhex(str(r["leaf"])) for r in rows]

    # -- proofs ---------------------------------------------------------------

    def inclusion_proof(self, stream: str, seq: int, size: int | None = None) -> dict[str, Any]:
        """An inclusion proof of operation ``seq`` in the tree of ``size`` (default: the latest checkpoint)."""
        if size is None:
            cp = self.latest_checkpoints().get(stream)
            size = cp.size if cp else self.size(stream)
        if not 1 <= seq <= size:
            raise NotFound(f"no operation {seq} in stream {stream!r} at size {size}")
        leaves = self._leaves(stream, size)
        if len(leaves) < size:
            raise NotFound(f"stream {stream!r} holds {len(leaves)} operations, not {size}")
        operation = self.get(stream, seq)
        return {
            "stream": stream,
            "seq": seq,
            "leaf_index": seq - 1,
            "tree_size": size,
            "leaf_hash": leaf_hash(operation.canonical()).hex(),
            "root": root_hash(leaves).hex(),
            "proof": [h.hex() for h in inclusion_proof(leaves, seq - 1)],
            "operation": operation.to_json(),
        }

    def inclusion_proofs(self, stream: str, seqs: Sequence[int]) -> tuple[Checkpoint, list[list[str]]]:
        """The stream's latest signed checkpoint and the audit path of each operation ``seqs``
        names in its tree, hashing the stream once: what a gate trace carries so that someone
        with only the public keyring can check its operations are the log's
        (:func:`verify_included`). A stream grown past its last checkpoint is checkpointed first,
        so the signed tree holds every one of ``seqs``."""
        needed = max(seqs, default=1)
        cp = self.latest_checkpoints().get(stream)
        if cp is None or cp.size < needed:
            self.checkpoint([stream])
            cp = self.latest_checkpoints().get(stream)
        if cp is None or cp.size < needed:
            raise NotFound(f"no signed checkpoint of stream {stream!r} holds operation {needed}")
        leaves = self._leaves(stream, cp.size)
        if len(leaves) != cp.size or root_hash(leaves) != cp.root:
            raise RootMismatch(
                f"the stored operations are not the tree the checkpoint at size {cp.size} signs; "
                "run `intently log verify`",
                stream=stream,
                seq=cp.size,
            )
        return cp, [[h.hex() for h in path] for path in inclusion_proofs(leaves, [s - 1 for s in seqs])]

    def consistency_proof(self, stream: str, old_size: int, new_size: int | None = None) -> dict[str, Any]:
        """A consistency proof that the tree of ``old_size`` is a prefix of the tree of
        ``new_size`` (default: the stream's size).

        Sizes the asker got wrong (``old_size`` 0 or past ``new_size``) are
        :class:`InvalidInput` naming the argument: the proof code's own check raises
        :class:`ProofError`, a log integrity failure (exit 8), which would tell a script
        that the log was tampered with when only the question was malformed."""
        new = new_size if new_size is not None else self.size(stream)
        if not 1 <= old_size <= new:
            raise InvalidInput(f"must be between 1 and the newer size {new}, got {old_size}", where="old_size")
        leaves = self._leaves(stream, new)
        if len(leaves) < new:
            raise NotFound(f"stream {stream!r} holds {len(leaves)} operations, not {new}")
        return {
            "stream": stream,
            "old_size": old_size,
            "new_size": new,
            "old_root": root_hash(leaves[:old_size]).hex(),
            "new_root": root_hash(leaves).hex(),
            "proof": [h.hex() for h in consistency_proof(leaves, old_size)],
        }

    # -- verification ---------------------------------------------------------

    def verify(
        self,
        streams: Iterable[str] | None = None,
        *,
        progress: Callable[[int], None] | None = None,
        witness_file: Path | None = None,
    ) -> VerifyReport:
        """Recompute every leaf and tree, check every checkpoint and the witness file.

        ``witness_file`` checks against another copy of the witness file instead of the
        home's: whoever can roll the database back can roll the working copy of the file back
        too, but not the copy already pushed (``git show origin/main:.intently/checkpoints.json``).

        Never raises for integrity problems: each stream's report names the first error,
        its type and the first bad sequence number.
        """
        with self.store.transaction(write=False) as tx:
            db_id = self._read_database_id(tx)
        if witness_file is not None:
            if not witness_file.is_file():  # an empty witness would check nothing: not a pass
                raise InvalidInput("no such witness file", where=str(witness_file))
            held = Witness.parse(witness_file.read_text(encoding="utf-8"), str(witness_file))
        else:
            held = self.read_witness_file()
        witness, others = self._split_witness(held, db_id)
        report = VerifyReport(database=db_id)
        names = sorted(self._all_streams() | set(witness)) if streams is None else sorted(set(streams))
        shown = None if streams is None else set(streams)
        report.other_databases = [self._check_other(db, cp) for db, cp in others if shown is None or cp.stream in shown]
        for stream in names:
            rep = StreamReport(stream)
            try:
                self._verify_stream(stream, witness.get(stream), rep, progress)
            except LogIntegrityError as exc:
                rep.error = str(exc)
                rep.error_type = type(exc).__name__
                rep.bad_seq = exc.seq
                rep.bad_id = self._id_at(stream, exc.seq)
                if rep.bad_id is not None:
                    rep.error += f" (operation {rep.bad_id!r})"
                if rep.misplaced:
                    rep.error += "; " + _misplaced_note(rep.misplaced)
            report.streams.append(rep)
        return report

    def _id_at(self, stream: str, seq: int | None) -> str | None:
        """The id stored at ``seq`` (shortened: after tampering it is anyone's text), if any."""
        if seq is None:
            return None
        with self.store.transaction(write=False) as tx:
            value = tx.scalar("SELECT id FROM log_ops WHERE stream = ? AND seq = ?", (stream, seq))
        return None if value is None else str(value)[:80]

    def _check_other(self, database: str, cp: Checkpoint) -> OtherDatabaseEntry:
        """What can be checked of another database's witnessed checkpoint: its signature."""
        entry = OtherDatabaseEntry(database, cp.stream, cp.size, cp.key_id)
        if cp.key_id not in self.keyring.entries:
            entry.signature = "unknown key"
            return entry
        try:
            # Another database's tree is not here to prove a retired key's older checkpoint a
            # prefix of its last one: only its size bound and its last root are checked.
            self._verify_signature(cp, proven=True)
        except LogIntegrityError as exc:
            entry.signature = "bad"
            entry.error, entry.error_type = f"{database}: {exc}", type(exc).__name__
            return entry
        entry.signature = "ok"
        if self.keyring.can_sign and cp.key_id == self.keyring.current_key_id:
            entry.error_type = RolledBack.__name__
            entry.error = (
                f"stream {cp.stream!r}: database {database} was signed by this machine's key up to size {cp.size} "
                "but is not this database (this machine's database was replaced or lost)"
            )
        return entry

    def _all_streams(self) -> set[str]:
        """Every stream any log table mentions, so rows moved to a stream without a header
        are verified too."""
        with self.store.transaction(write=False) as tx:
            rows = tx.query(
                "SELECT stream FROM log_streams UNION SELECT DISTINCT stream FROM log_ops "
                "UNION SELECT DISTINCT stream FROM log_checkpoints"
            )
        return {str(r["stream"]) for r in rows}

    def _leaf_chunks(self, stream: str, upto: int | None = None) -> Iterator[list[tuple[Any, ...]]]:
        """(seq, id, time, actor, op, target, payload, policy_version, leaf) in seq order, a
        chunk at a time: never the whole stream in memory, and no payload parsing. ``upto``
        stops at that seq: what others append while the walk runs is not part of it."""
        after = 0
        last = upto if upto is not None else _LAST_PLACE
        while True:
            with self.store.transaction(write=False) as tx:
                rows = tx.rows(
                    "SELECT seq, id, time, actor, op, target, payload, policy_version, leaf FROM log_ops "
                    "WHERE stream = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
                    (stream, after, last, _CHUNK),
                )
            if not rows:
                return
            yield rows
            after = int(rows[-1][0])

    def _verify_stream(
        self,
        stream: str,
        witnessed: Checkpoint | None,
        rep: StreamReport,
        progress: Callable[[int], None] | None,
    ) -> None:
        """Walk the stream once, in order, so the error raised is the one at the lowest seq.

        A checkpoint's signature is checked when the walk reaches its size, then its root;
        checkpoints beyond the stored operations are checked after the walk.
        """
        with self.store.transaction(write=False) as tx:
            cps = [
                _checkpoint_from_row(r)
                for r in tx.query("SELECT * FROM log_checkpoints WHERE stream = ? ORDER BY size", (stream,))
            ]
            header = tx.one("SELECT size, frontier FROM log_streams WHERE stream = ?", (stream,))
            recorded_size = int(header["size"]) if header is not None else 0
            # Header and last seq from one snapshot: an append commits both together, so they
            # differ only when rows were added or removed behind the log's back.
            stored_last = int(
                tx.scalar(f"SELECT MAX(seq) FROM log_ops WHERE stream = ? AND {_A_PLACE}", (stream,)) or 0
            )
            rep.misplaced = misplaced_rows(tx, stream, dialect=self.store.dialect)
        rep.checkpoints = len(cps)
        rep.size = recorded_size
        if witnessed is not None:
            rep.witnessed_size = witnessed.size
        at_size = {cp.size: cp for cp in cps}
        heads = self._retired_heads(stream, [*cps, *([witnessed] if witnessed is not None else [])])
        frontier = Frontier()
        expected = 1
        append, root = frontier.append, frontier.root
        repairs = 0
        # Appends that commit while the walk runs are beyond the snapshot's size and not walked.
        for rows in self._leaf_chunks(stream, upto=recorded_size):
            for seq, id_, time_, actor, op, target, payload, policy, stored_leaf in rows:
                if seq != expected:
                    kind = "missing" if not isinstance(seq, int) or seq > expected else "repeated or out of order"
                    raise SequenceGap(f"operation {expected} is {kind} (found {seq})", stream=stream, seq=expected)
                try:
                    data = canonical_operation(stream, seq, id_, time_, actor, op, target, payload, policy)
                except (UnicodeError, TypeError) as exc:  # not text we wrote: cannot be the leaf's data
                    raise LeafMismatch(f"stored operation is not valid text: {exc}", stream=stream, seq=seq) from exc
                leaf = _sha256(b"\x00" + data).digest()
                if leaf.hex() != stored_leaf:
                    raise LeafMismatch("stored operation does not hash to its recorded leaf", stream=stream, seq=seq)
                append(leaf)
                if op == "LOG_REPAIRED":
                    repairs += 1
                    rep.repairs = repairs
                for key_id, head_root in heads.get(seq, ()):
                    if head_root != root():
                        raise RootMismatch(
                            f"the tree at size {seq} is not the one key {key_id} last signed before its retirement "
                            "(its root is recorded in keys/public.json): history was rewritten, and a retired key "
                            "may have leaked",
                            stream=stream,
                            seq=seq,
                        )
                signed = at_size.get(seq)
                if signed is not None:
                    self._verify_signature(signed, proven=True)
                    if signed.root != root():
                        raise RootMismatch(
                            f"checkpoint at size {seq} does not match the tree (history was changed at or before here)",
                            stream=stream,
                            seq=seq,
                        )
                if witnessed is not None and seq == witnessed.size:
                    self._verify_signature(witnessed, proven=True)
                    if witnessed.root != root():
                        raise RootMismatch(
                            f"witnessed checkpoint at size {seq} does not match the tree (history was rewritten)",
                            stream=stream,
                            seq=seq,
                        )
                expected += 1
            if progress is not None:
                progress(len(rows))
        size = frontier.size
        rep.size = size
        if stored_last > recorded_size == size:  # the walk stopped at the header; rows lie beyond it
            raise SequenceGap(
                f"stream header says {recorded_size} operations but operation {stored_last} is stored",
                stream=stream,
                seq=recorded_size + 1,
            )
        if recorded_size != size:
            raise SequenceGap(
                f"stream header says {recorded_size} operations but {size} are stored",
                stream=stream,
                seq=min(recorded_size, size) + 1,
            )
        if rep.misplaced:  # every place holds its operation, but rows lie outside them all
            raise SequenceGap("rows are stored outside the stream's sequence", stream=stream, seq=size + 1)
        if header is not None and _json_or_none(header["frontier"]) != frontier.to_hex():
            # The next append and checkpoint build on the header: a rewritten one would have
            # them sign a tree its operations are not (the checkpoint refuses; say so here too).
            raise RootMismatch(
                "the stream header's frontier is not the tree of its stored operations (the header was rewritten)",
                stream=stream,
                seq=size,
            )
        beyond_heads = [n for n in heads if n > size]
        if beyond_heads:
            n = min(beyond_heads)
            raise RolledBack(
                f"key {heads[n][0][0]} signed a tree of {n} operations before its retirement (recorded in "
                f"keys/public.json) but only {size} are stored",
                stream=stream,
                seq=size + 1,
            )
        for cp in cps:
            if cp.size > size or cp.size < 1:
                self._verify_signature(cp, proven=True)
                if cp.size < 1:
                    raise RootMismatch(f"checkpoint of impossible size {cp.size}", stream=stream, seq=1)
                raise RolledBack(
                    f"a signed checkpoint covers {cp.size} operations but only {size} are stored",
                    stream=stream,
                    seq=size + 1,
                )
        if witnessed is not None:
            if witnessed.size > size or witnessed.size < 1:
                self._verify_signature(witnessed, proven=True)
                raise RolledBack(
                    f"the witnessed checkpoint covers {witnessed.size} operations but the database holds {size} "
                    "(database rolled back or truncated)",
                    stream=stream,
                    seq=size + 1,
                )
            newest = cps[-1].size if cps else 0
            if newest < witnessed.size:
                raise StaleCheckpoint(
                    f"the database's newest checkpoint covers {newest} operations, older than the witnessed "
                    f"{witnessed.size} (an old checkpoint was put back)",
                    stream=stream,
                    seq=newest + 1,
                )
        rep.unsigned_tail = size - (cps[-1].size if cps else 0)
        if rep.unsigned_tail:
            self._check_tail(stream, size - rep.unsigned_tail, size, rep, strict=bool(cps) or self.keyring.can_sign)

    def _check_tail(self, stream: str, signed: int, size: int, rep: StreamReport, *, strict: bool) -> None:
        """Check the own signature of each operation no checkpoint covers yet.

        A signature that is there and fails is an error. A missing one is too in a stream a
        key has signed, or when the verifier holds a key: such an operation was not appended by
        a key holder. In a log nobody ever signed (a clone that has not joined) it is only
        the unsigned tail, as before."""
        first: UnattributedOperation | None = None
        with self.store.transaction(write=False) as tx:
            rows = tx.rows(
                "SELECT seq, id, time, leaf, key_id, signature FROM log_ops WHERE stream = ? AND seq > ? "
                "AND seq <= ? ORDER BY seq",
                (stream, signed, size),
            )
        for seq, id_, time_, leaf, key_id, signature in rows:
            why = self._unvouched(stream, int(seq), str(time_), str(leaf), key_id, signature)
            if why is None:
                continue
            rep.unattributed += 1
            if first is None and (strict or key_id is not None or signature is not None):
                first = _unattributed(stream, int(seq), str(id_), why)
        if first is not None:
            raise first

    def _retired_heads(self, stream: str, signers: Iterable[Checkpoint]) -> dict[int, list[tuple[str, bytes]]]:
        return _retired_heads_of(self.keyring, stream, signers)

    def _verify_signature(self, cp: Checkpoint, *, proven: bool = False) -> None:
        """Signature, key validity period and origin of one checkpoint; errors name its size.

        ``proven``: the caller checks the checkpoint's root against this log's tree, and the tree
        against the last head a retired key signed (:meth:`_verify_stream`), so a retired key's
        checkpoint below that head needs no other proof of being a prefix of it."""
        self.keyring.verify(cp.key_id, cp.signed_body(), cp.signature, stream=cp.stream, seq=cp.size)
        self.keyring.check_retirement(cp.key_id, cp.stream, cp.size, cp.time, cp.root, proven=proven)
        if cp.origin != self.origin:
            raise BadSignature(
                f"checkpoint origin {cp.origin!r} is not this log's {self.origin!r}", stream=cp.stream, seq=cp.size
            )


def unsigned_before_upgrade(store: Store) -> dict[str, int]:
    """Each stream's size when it has operations past its last checkpoint and the database's
    ``log`` schema predates operation signatures: read just before the migration, these are the
    rows an older intently appended and never checkpointed (see
    :meth:`OperationLog.adopt_written_before_signatures`). Empty otherwise."""
    if not 1 <= store.current_versions().get("log", 0) < SIGNED_OPERATIONS_SCHEMA:
        return {}
    with store.transaction(write=False) as tx:
        rows = tx.query(
            "SELECT s.stream, s.size, COALESCE((SELECT MAX(c.size) FROM log_checkpoints c "
            "WHERE c.stream = s.stream), 0) AS signed FROM log_streams s"
        )
    return {str(r["stream"]): int(r["size"]) for r in rows if int(r["size"]) > int(r["signed"])}


def _retired_heads_of(
    keyring: KeyRing, stream: str, signers: Iterable[Checkpoint]
) -> dict[int, list[tuple[str, bytes]]]:
    """size -> [(key id, root)] of the last tree each retired key among ``signers``' keys signed
    of ``stream``, as its rotation recorded it: this log's tree must hold that very root there."""
    out: dict[int, list[tuple[str, bytes]]] = {}
    for key_id in sorted({cp.key_id for cp in signers}):
        entry = keyring.entries.get(key_id)
        head = entry.last_signed_head(stream) if entry is not None else None
        if head is not None and head[0] > 0:
            out.setdefault(head[0], []).append((key_id, head[1]))
    return out


def _retired(tx: Transaction, key_id: str) -> bool:
    """Whether a rotation (in any process) has retired ``key_id``."""
    return tx.scalar("SELECT value FROM log_meta WHERE key = ?", (_RETIRED_META + key_id,)) is not None


def _witness_conflict(
    tx: Transaction, stream: str, witnessed: Checkpoint, size: int, *, held: str, outcome: str
) -> LogIntegrityError | None:
    """Why a database of ``size`` operations in ``stream`` cannot extend the ``witnessed``
    checkpoint, or ``None`` when it can: it must reach the witnessed size and hold the
    witnessed root there. One rule for the check before an append and the merge after a
    checkpoint; ``held`` says what the database has, ``outcome`` what became of the change."""
    if witnessed.size > size:
        return RolledBack(
            f"the witnessed checkpoint covers {witnessed.size} operations but {held} "
            f"(was it restored from an older copy?); {outcome}",
            stream=stream,
            seq=size + 1,
        )
    root = tx.scalar("SELECT root FROM log_checkpoints WHERE stream = ? AND size = ?", (stream, witnessed.size))
    if root != witnessed.root.hex():
        return RootMismatch(
            f"the database has no checkpoint matching the witnessed one at size {witnessed.size} "
            f"(its history was replaced); {outcome}",
            stream=stream,
            seq=witnessed.size,
        )
    return None


def _chunked(tx: Transaction, sql: str, stream: str, after: int, upto: int) -> Iterator[tuple[Any, ...]]:
    """The rows of ``sql`` (seq first; parameters stream, after, upto, limit) a chunk at a time,
    within one transaction: a first checkpoint over a large imported stream holds no more
    than a chunk in memory."""
    while True:
        rows = tx.rows(sql, (stream, after, upto, _CHUNK))
        yield from rows
        if len(rows) < _CHUNK:
            return
        after = int(rows[-1][0])


def misplaced_rows(tx: Transaction, stream: str, *, dialect: str) -> list[dict[str, Any]]:
    """The rows of ``stream`` whose sequence number is not a whole number, with their rowid and
    what is wrong, so a reader can find each one. Only SQLite can hold them (it keeps any value
    in any column); PostgreSQL's ``seq`` is a ``bigint``, so there it is always empty."""
    if dialect != "sqlite":
        return []
    found = tx.rows(
        "SELECT rowid, seq FROM log_ops WHERE stream = ? AND typeof(seq) <> 'integer' ORDER BY rowid", (stream,)
    )
    return [{"rowid": int(rowid), "seq": _shown(seq), "problem": _not_a_place(seq)} for rowid, seq in found]


def _not_a_place(value: Any) -> str:
    if isinstance(value, bytes):
        return "its sequence number is bytes (a blob), not a number"
    if isinstance(value, float):
        return "its sequence number is a real number, not a whole one"
    try:
        str(value).encode("utf-8")
    except UnicodeEncodeError:
        return "its sequence number is text that is not valid UTF-8, not a number"
    return "its sequence number is text, not a number"


def _shown(value: Any) -> str:
    """A stored value as printable, valid text: bounded (after tampering it is anyone's), bytes
    as ``x'..'`` hex and text that was not UTF-8 with ``\\xNN`` escapes, so JSON can carry it."""
    if isinstance(value, bytes):
        return f"x'{value[:100].hex()}'"
    return str(value).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")[:200]


def _misplaced_note(misplaced: list[dict[str, Any]]) -> str:
    shown = ", ".join(f"rowid {m['rowid']} (seq {m['seq']}: {m['problem']})" for m in misplaced[:5])
    more = f" and {len(misplaced) - 5} more" if len(misplaced) > 5 else ""
    return f"{len(misplaced)} row(s) stored at no place in the stream: {shown}{more}"


def _content_leaf(stream: str, seq: Any, *fields: Any) -> str | None:
    """The hex leaf a stored operation's fields hash to (``None``: they are not text we wrote)."""
    try:
        return leaf_hash(canonical_operation(stream, seq, *fields)).hex()
    except (UnicodeError, TypeError, ValueError):
        return None


def _unattributed(stream: str, seq: int, id_: str, why: str) -> UnattributedOperation:
    return UnattributedOperation(
        f"operation {seq} (id {id_[:80]!r}) {why}: it was not appended by a holder of a signing key (written "
        "behind the log's back, where no key was loaded, or by an intently older than operation signatures and "
        "never checkpointed), so no checkpoint signs it or anything after it; "
        "run `intently log verify`, and to vouch for operations written without a key run "
        "`intently log checkpoint --adopt`; to set aside operations nobody vouches for, `intently log repair`",
        stream=stream,
        seq=seq,
    )


def _checkpoint_from_row(row: dict[str, Any]) -> Checkpoint:
    """A stored checkpoint; one whose fields no longer decode is a :class:`BadSignature` at its size."""
    try:
        return Checkpoint.from_json(
            {
                "origin": row["origin"],
                "stream": row["stream"],
                "size": row["size"],
                "root": row["root"],
                "time": row["time"],
                "key_id": row["key_id"],
                "signature": row["signature"],
            }
        )
    except (ValueError, TypeError) as exc:
        raise BadSignature(
            f"stored checkpoint does not decode: {exc}", stream=str(row["stream"]), seq=_int_or_none(row["size"])
        ) from exc


def _json_or_none(text: Any) -> Any:
    try:
        return json.loads(str(text))
    except ValueError:
        return None


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# The log's migration 4 (the table `intently log repair` sets operations aside in) is registered
# by ``_repair``, which builds on this module. The package loads its names on first use, so
# ``_repair`` is loaded here, with the log itself: every process that opens a log has the log's
# whole migration registry, as when the package imported everything.
from . import _repair  # noqa: E402, F401
