"""The process-wide live index of one namespace, kept in step with the store.

One :class:`LiveIndex` per (database, namespace, home) is shared by every facade in the
process. It remembers the change sequence it reflects; :meth:`LiveIndex.sync` asks the
store for the rows changed since then (one indexed query) and applies only those. The
fire path syncs inside its write transaction, so it always sees the authoritative state;
previews sync at most every :data:`POLL_SECONDS`, so a change made by another process is
visible within a second. A changed ``synonyms.yaml`` or a database that went backwards
(restored, replayed) triggers one full rebuild.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from ..store import Store, Transaction
from ._matcher import Matcher
from ._model import IntentState, StandingIntent
from ._store import changed_since, current_seq, list_rows

__all__ = ["POLL_SECONDS", "LiveIndex", "live_index"]

POLL_SECONDS = 0.25
_INDEXED = (IntentState.ARMED, IntentState.FIRED)

_lock = threading.Lock()
_LIVE: dict[tuple[str, str, str], LiveIndex] = {}


class LiveIndex:
    def __init__(self, namespace: str, home_dir: Path) -> None:
        self.namespace = namespace
        self.home_dir = home_dir
        self.lock = threading.RLock()
        self.matcher = Matcher.for_home(home_dir)
        self.intents: dict[str, StandingIntent] = {}
        self._synonyms_mtime = self._mtime()
        self._last_poll = 0.0
        self._loaded = False

    def _mtime(self) -> float:
        try:
            return (self.home_dir / "synonyms.yaml").stat().st_mtime
        except OSError:
            return 0.0

    @property
    def seq(self) -> int:
        return self.matcher.index.seq

    def _put(self, intent: StandingIntent) -> None:
        index = self.matcher.index
        if intent.state not in _INDEXED:
            index.remove(intent.id)
            self.intents.pop(intent.id, None)
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
        self.intents[intent.id] = intent

    def _rebuild(self, tx: Transaction) -> None:
        self.matcher = Matcher.for_home(self.home_dir)
        self.intents = {}
        seq = current_seq(tx, self.namespace)
        for intent in list_rows(tx, self.namespace, [s.value for s in _INDEXED]):
            self._put(intent)
        self.matcher.index.seq = seq
        self._loaded = True

    def sync(self, tx: Transaction) -> int:
        """Bring the index to the store's current sequence; returns how many rows changed."""
        with self.lock:
            mtime = self._mtime()
            seq = current_seq(tx, self.namespace)
            if not self._loaded or mtime != self._synonyms_mtime or seq < self.seq:
                self._synonyms_mtime = mtime
                self._rebuild(tx)
                self._last_poll = time.monotonic()
                return len(self.intents)
            changed = 0
            if seq > self.seq:
                for intent in changed_since(tx, self.namespace, self.seq):
                    self._put(intent)
                    changed += 1
                self.matcher.index.seq = seq
            self._last_poll = time.monotonic()
            return changed

    def invalidate(self) -> None:
        """This process changed the store: the next preview syncs at once."""
        self._last_poll = 0.0

    def maybe_sync(self, store: Store) -> None:
        """Sync unless a sync happened within the last :data:`POLL_SECONDS`."""
        if self._loaded and self._last_poll and time.monotonic() - self._last_poll < POLL_SECONDS:
            return
        with store.transaction(write=False) as tx:
            self.sync(tx)


def live_index(store: Store, namespace: str, home_dir: Path) -> LiveIndex:
    key = (store.url, namespace, str(home_dir))
    with _lock:
        found = _LIVE.get(key)
        if found is None:
            found = LiveIndex(namespace, home_dir)
            _LIVE[key] = found
        return found


def forget(store: Store) -> None:
    """Drop the live indexes of a database (tests that recreate a file at the same path)."""
    with _lock:
        for key in [k for k in _LIVE if k[0] == store.url]:
            del _LIVE[key]
