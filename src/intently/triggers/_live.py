"""The process-wide live index of one namespace, kept in step with the store.

One :class:`LiveIndex` per (database, namespace, home) is shared by every facade in the
process. It remembers the change sequence it reflects; :meth:`LiveIndex.sync` asks the
store for the rows changed since then (one indexed query) and applies only those. The
fire path syncs inside its write transaction, so it always sees the authoritative state;
previews sync at most every :data:`POLL_SECONDS`, so a change made by another process is
visible within a second. A changed ``synonyms.yaml`` or a database that went backwards
(restored, replayed) triggers one full rebuild.

A new process does not rebuild when a snapshot of the index (:mod:`._snapshot`) agrees
with the store: it loads it and applies the rows changed since. A full rebuild, or enough
changes applied since the last snapshot, writes a new one after the transaction ends.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

from ..core.gcpause import gc_paused
from ..store import Store, Transaction
from ._matcher import Matcher
from ._model import IntentState, StandingIntent
from ._snapshot import Sample, SnapshotKey, load_snapshot, normaliser_fingerprint, save_snapshot, snapshot_path
from ._store import changed_since, current_seq, list_rows

__all__ = ["POLL_SECONDS", "LiveIndex", "live_index"]

POLL_SECONDS = 0.25
SNAPSHOT_SAMPLE = 16  # rows (the newest changes) a snapshot checks against the store
SNAPSHOT_EVERY = 1_000  # changes applied since the last snapshot before writing a new one
_INDEXED = (IntentState.ARMED, IntentState.FIRED)

_lock = threading.Lock()
_LIVE: dict[tuple[str, str, str], LiveIndex] = {}


class LiveIndex:
    def __init__(self, namespace: str, home_dir: Path, store_url: str = "") -> None:
        self.namespace = namespace
        self.home_dir = home_dir
        self.store_url = store_url
        self.lock = threading.RLock()
        self.matcher = Matcher.for_home(home_dir)
        self._synonyms_mtime = self._read_mtime = self._mtime()
        self._last_poll = 0.0
        self._loaded = False
        self.origin = ""  # how the index was last built: "snapshot" or "store"
        self._snapshot_seq = -1  # the sequence of the newest snapshot this process read or wrote
        self._save_sample: tuple[int, Sample] | None = None

    def _mtime(self) -> float:
        try:
            return (self.home_dir / "synonyms.yaml").stat().st_mtime
        except OSError:
            return 0.0

    @property
    def seq(self) -> int:
        return self.matcher.index.seq

    @property
    def snapshot_file(self) -> Path:
        return snapshot_path(self.home_dir / "index", self.store_url, self.namespace)

    def _key(self) -> SnapshotKey:
        # The database by a hash of its URL: a snapshot file never holds a connection string.
        store = hashlib.sha256(self.store_url.encode()).hexdigest()
        return SnapshotKey(normaliser_fingerprint(self.matcher.synonyms.sources), store, self.namespace)

    def _put(self, intent: StandingIntent) -> None:
        index = self.matcher.index
        if intent.state not in _INDEXED:
            index.remove(intent.id)
            return
        index.upsert(
            self.matcher.compile(
                intent.id,
                intent.entries,
                exclusions=intent.exclusions,
                negation_guard=intent.negation_guard,
                created_at=intent.created_at,
                channel=intent.scope.channel,
                conversation=intent.scope.conversation,
                sender=intent.scope.sender,
            )
        )

    def _rebuild(self, tx: Transaction) -> None:
        with gc_paused():  # millions of containers and no cycles: about 3x the build's CPU otherwise
            self._rebuild_now(tx)

    def _rebuild_now(self, tx: Transaction) -> None:
        """Build the index anew. The synonym table is read again, except for the first build
        when the home's file has not changed since :meth:`__init__` read it: parsing the YAML
        (shipped and home) twice was a tenth of a second of each prompt's hook process."""
        if self._loaded or self._synonyms_mtime != self._read_mtime:
            self.matcher = Matcher.for_home(self.home_dir)
        else:  # the first build: the table read a moment ago, from the file as it still is
            self.matcher = Matcher(self.matcher.synonyms)
        seq = current_seq(tx, self.namespace)
        loaded = load_snapshot(
            self.snapshot_file, self._key(), seq, lambda at, sample: _rows_agree(tx, self.namespace, at, sample)
        )
        self._loaded = True
        if loaded is not None:
            self.matcher.index = loaded
            self._snapshot_seq = loaded.seq
            self.origin = "snapshot"
            self._apply_since(tx, seq)
            return
        for intent in list_rows(tx, self.namespace, [s.value for s in _INDEXED]):
            self._put(intent)
        self.matcher.index.seq = seq
        self.origin = "store"
        self._save_sample = (seq, _sample(tx, self.namespace, seq))

    def _apply_since(self, tx: Transaction, seq: int) -> int:
        changed = 0
        if seq > self.seq:
            for intent in changed_since(tx, self.namespace, self.seq):
                self._put(intent)
                changed += 1
            self.matcher.index.seq = seq
        if seq - self._snapshot_seq >= max(SNAPSHOT_EVERY, len(self.matcher.index) // 10):
            self._save_sample = (seq, _sample(tx, self.namespace, seq))
        return changed

    def sync(self, tx: Transaction) -> int:
        """Bring the index to the store's current sequence; returns how many rows changed."""
        with self.lock:
            mtime = self._mtime()
            seq = current_seq(tx, self.namespace)
            if not self._loaded or mtime != self._synonyms_mtime or seq < self.seq:
                self._synonyms_mtime = mtime
                self._rebuild(tx)
                self._last_poll = time.monotonic()
                return len(self.matcher.index)
            changed = self._apply_since(tx, seq)
            self._last_poll = time.monotonic()
            return changed

    def save_pending_snapshot(self) -> bool:
        """Write the snapshot a rebuild (or enough changes) asked for; call outside transactions."""
        with self.lock:
            pending, self._save_sample = self._save_sample, None
            if pending is None or pending[0] != self.seq:
                return False  # the index moved on since the sample was taken: next time
            if save_snapshot(self.snapshot_file, self._key(), self.matcher.index, pending[1]):
                self._snapshot_seq = pending[0]
                return True
            self._snapshot_seq = self.seq  # cannot write here: do not retry on every sync
            return False

    def invalidate(self) -> None:
        """This process changed the store: the next preview syncs at once."""
        self._last_poll = 0.0

    def maybe_sync(self, store: Store) -> None:
        """Sync unless a sync happened within the last :data:`POLL_SECONDS`; then write the
        snapshot a sync asked for (also one asked for inside a fire transaction)."""
        if not (self._loaded and self._last_poll and time.monotonic() - self._last_poll < POLL_SECONDS):
            with store.transaction(write=False) as tx:
                self.sync(tx)
        if self._save_sample is not None:
            self.save_pending_snapshot()


def _sample(tx: Transaction, namespace: str, seq: int) -> Sample:
    """The rows of the newest changes up to ``seq``: what a snapshot taken now must still find."""
    rows = tx.query(
        "SELECT id, change_seq FROM triggers_intents WHERE namespace = ? AND change_seq <= ? "
        "ORDER BY change_seq DESC LIMIT ?",
        (namespace, seq, SNAPSHOT_SAMPLE),
    )
    return [(str(r["id"]), int(r["change_seq"])) for r in rows]


def _rows_agree(tx: Transaction, namespace: str, seq: int, sample: Sample) -> bool:
    """Is the store a later state of the one the sample was taken from? Each sampled row
    must be there, unchanged or changed after ``seq`` (the delta then carries it)."""
    if not sample:
        return seq == 0
    marks = ", ".join("?" for _ in sample)
    rows = tx.query(
        f"SELECT id, change_seq FROM triggers_intents WHERE namespace = ? AND id IN ({marks})",
        (namespace, *(iid for iid, _ in sample)),
    )
    now = {str(r["id"]): int(r["change_seq"]) for r in rows}
    return all(iid in now and (now[iid] == at or now[iid] > seq) for iid, at in sample)


def live_index(store: Store, namespace: str, home_dir: Path) -> LiveIndex:
    key = (store.url, namespace, str(home_dir))
    with _lock:
        found = _LIVE.get(key)
        if found is None:
            found = LiveIndex(namespace, home_dir, store.url)
            _LIVE[key] = found
        return found


def forget(store: Store) -> None:
    """Drop the live indexes of a database (tests that recreate a file at the same path)."""
    with _lock:
        for key in [k for k in _LIVE if k[0] == store.url]:
            del _LIVE[key]
