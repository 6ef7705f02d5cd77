"""SQLite backend: one file in the home, WAL, busy timeout, foreign keys.

Write transactions use ``BEGIN IMMEDIATE`` so a read-then-write inside one transaction
cannot interleave with another process's writer; readers never block in WAL mode.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from ..core.errors import ConflictError, StoreError
from ._base import Params, Row, Store, Transaction, reject_nul

__all__ = ["SQLiteStore"]

_TOKENS = {"{bigint}": "INTEGER", "{blob}": "BLOB", "{real}": "REAL", "{serial}": "INTEGER"}
_TOKEN_RE = re.compile("|".join(re.escape(t) for t in _TOKENS))


class _SQLiteTx(Transaction):
    def __init__(self, conn: sqlite3.Connection, store: SQLiteStore) -> None:
        self._conn = conn
        self._store = store

    def execute(self, sql: str, params: Params = ()) -> int:
        reject_nul(params)
        try:
            cur = self._conn.execute(self._store.translate(sql), params)
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"constraint failed: {exc}") from exc
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite: {exc}") from exc
        return cur.rowcount

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        reject_nul(rows, many=True)
        try:
            self._conn.executemany(self._store.translate(sql), rows)
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"constraint failed: {exc}") from exc
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite: {exc}") from exc

    def query(self, sql: str, params: Params = ()) -> list[Row]:
        reject_nul(params)
        translated = self._store.translate(sql)
        try:
            cur = self._conn.execute(translated, params)
            rows = cur.fetchall()
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"constraint failed: {exc}") from exc
        except sqlite3.OperationalError as exc:
            if "decode" not in str(exc):
                raise StoreError(f"sqlite: {exc}") from exc
            cur, rows = self._query_lenient(translated, params, exc)
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite: {exc}") from exc
        names = [d[0] for d in cur.description or ()]
        return [dict(zip(names, row, strict=True)) for row in rows]

    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        reject_nul(params)
        translated = self._store.translate(sql)
        try:
            return self._conn.execute(translated, params).fetchall()
        except sqlite3.IntegrityError as exc:
            raise ConflictError(f"constraint failed: {exc}") from exc
        except sqlite3.OperationalError as exc:
            if "decode" not in str(exc):
                raise StoreError(f"sqlite: {exc}") from exc
            return self._query_lenient(translated, params, exc)[1]
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite: {exc}") from exc

    def _query_lenient(self, sql: str, params: Params, first: sqlite3.Error) -> tuple[sqlite3.Cursor, list[Any]]:
        """Re-run a query whose text is not valid UTF-8 (only tampering writes such bytes),
        decoding with ``surrogateescape`` so the reader sees the row and the log verifier can
        name it, instead of the whole read failing."""
        self._conn.text_factory = lambda raw: raw.decode("utf-8", "surrogateescape")
        try:
            cur = self._conn.execute(sql, params)
            return cur, cur.fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite: {exc}") from first
        finally:
            self._conn.text_factory = str


class SQLiteStore(Store):
    """The embedded default."""

    dialect = "sqlite"

    def __init__(self, path: Path | str, *, synchronous: str = "FULL", busy_timeout_ms: int = 30_000) -> None:
        self.path = Path(path)
        self.url = f"sqlite:///{self.path}"
        self._synchronous = synchronous
        self._busy_ms = busy_timeout_ms
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        # close() waits for transactions in flight: closing a connection another thread is
        # using crashes the interpreter (connections are shared with check_same_thread=False).
        self._idle = threading.Condition(self._lock)
        self._in_flight = 0
        self._closed = False
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(
                    str(self.path), isolation_level=None, timeout=self._busy_ms / 1000, check_same_thread=False
                )
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy_ms)}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute(f"PRAGMA synchronous = {self._synchronous}")
                conn.execute("PRAGMA foreign_keys = ON")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot open SQLite database {self.path}: {exc}") from exc
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def translate(self, sql: str) -> str:
        return _TOKEN_RE.sub(lambda m: _TOKENS[m.group(0)], sql)

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[Transaction]:
        with self._lock:
            if self._closed:
                raise StoreError(f"the store {self.path} is closed; open the home again")
            self._in_flight += 1
        try:
            tx = yield from self._transaction(write)
        finally:
            with self._lock:
                self._in_flight -= 1
                self._idle.notify_all()
        for callback in tx._callbacks:
            callback()

    def _transaction(self, write: bool) -> Generator[_SQLiteTx, None, _SQLiteTx]:
        """One transaction; returns it (for its commit callbacks) once it has committed."""
        conn = self._connection()
        if conn.in_transaction:
            raise StoreError("nested transactions are not supported; pass the open transaction down")
        try:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        except sqlite3.Error as exc:
            raise StoreError(f"sqlite: cannot begin transaction: {exc}") from exc
        tx = _SQLiteTx(conn, self)
        try:
            yield tx
            tx._run_before_commit()
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            conn.execute("ROLLBACK")
            raise StoreError(f"sqlite: commit failed: {exc}") from exc
        return tx

    def tables(self) -> Iterator[str]:
        with self.transaction(write=False) as tx:
            rows = tx.query("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        for row in rows:
            name = str(row["name"])
            if not name.startswith("sqlite_"):
                yield name

    def close(self) -> None:
        """Refuse new transactions, wait (up to the busy timeout) for those in flight, then close."""
        with self._lock:
            self._closed = True
            self._idle.wait_for(lambda: self._in_flight == 0, timeout=self._busy_ms / 1000)
            for conn in self._all:
                with suppress(sqlite3.Error):
                    conn.close()
            self._all.clear()
        self._local = threading.local()

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"
