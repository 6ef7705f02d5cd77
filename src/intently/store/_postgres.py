"""PostgreSQL backend: psycopg 3 over a connection pool, with SQLite's transaction semantics.

Engine SQL is written once for SQLite; :meth:`PostgresStore.translate` rewrites it:
``?`` and ``:name`` placeholders become ``%s`` and ``%(name)s``, ``%`` is doubled (psycopg
reads ``%`` everywhere, even inside string literals), ``LIKE`` becomes ``ILIKE`` (SQLite's
``LIKE`` ignores ASCII case) and the type tokens become PostgreSQL types. String literals,
quoted identifiers and comments are left alone apart from the ``%`` doubling.

Why the write lock: SQLite's ``BEGIN IMMEDIATE`` admits one writer at a time, and engines
rely on it (read a version, then write the next one). PostgreSQL's default READ COMMITTED
would let two such read-then-write sequences interleave and lose an update, so every write
transaction first takes one transaction-scoped advisory lock. Write transactions run at READ
COMMITTED so each statement sees everything committed before the lock was granted (a
REPEATABLE READ snapshot would be taken *before* the lock wait and be stale). Read
transactions run at REPEATABLE READ: one consistent snapshot, like a SQLite WAL reader, and
they never wait for writers.

A failed write does not poison the transaction (SQLite behaviour): ``execute``, ``executemany``
and ``INSERT/UPDATE/DELETE ... RETURNING`` queries run inside a savepoint, so a caller may catch
:class:`ConflictError` and carry on in the same transaction. A failing plain ``SELECT`` (a
programming error) aborts the transaction: later statements raise :class:`StoreError`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from functools import lru_cache
from typing import Any

import psycopg
import psycopg_pool
from psycopg.adapt import Buffer, Dumper, Loader
from psycopg.rows import DictRow, dict_row, tuple_row

from ..core.errors import ConflictError, StoreError
from ._base import Params, Row, Store, Transaction, reject_nul

__all__ = ["PostgresStore"]

_TOKENS = {"{bigint}": "BIGINT", "{blob}": "BYTEA", "{real}": "DOUBLE PRECISION", "{serial}": "BIGSERIAL"}

# One pass over the statement. Literals, quoted identifiers and comments are matched first so
# nothing inside them is translated; every other alternative is a piece of SQL to rewrite.
_SCAN = re.compile(
    r"""
    (?P<keep>'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|/\*.*?\*/)
  | (?P<token>\{(?:bigint|blob|real|serial)\})
  | (?P<qmark>\?)
  | (?<!:):(?P<named>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<percent>%)
  | (?<![A-Za-z0-9_])(?P<like>LIKE)(?![A-Za-z0-9_])
    """,
    re.VERBOSE | re.DOTALL | re.IGNORECASE,
)

# The one advisory lock every write transaction holds ("intently" as a signed 64-bit integer).
WRITE_LOCK_KEY = int.from_bytes(b"intently", "big", signed=True)

# Text ordering must match SQLite's byte order (ids, RFC 3339 times and names are compared
# and sorted as text). A sample a linguistic collation sorts differently.
_ORDER_SAMPLE = ("b", "B", "a", "A", "-", "_", "Z", "0", "aa", "a-b", "ab", "é", "e")

_WRITES = re.compile(r"\s*(INSERT|UPDATE|DELETE)\b", re.IGNORECASE)

_PASSWORD = re.compile(r"(?<=://)([^:/@]*):[^@/]*@")
_PASSWORD_PARAM = re.compile(r"(?i)\b(password=)[^&\s]*")


@lru_cache(maxsize=4096)
def translate_sql(sql: str) -> str:
    """Rewrite SQLite-flavoured engine SQL for PostgreSQL (see the module docstring)."""

    def rewrite(m: re.Match[str]) -> str:
        if m.group("keep") is not None:
            return m.group("keep").replace("%", "%%")
        if m.group("token") is not None:
            return _TOKENS[m.group("token").lower()]
        if m.group("qmark") is not None:
            return "%s"
        if m.group("named") is not None:
            return f"%({m.group('named')})s"
        if m.group("percent") is not None:
            return "%%"
        return "ILIKE"

    return _SCAN.sub(rewrite, sql)


def redact(url: str) -> str:
    """The URL with any password replaced, fit for messages and ``store status``."""
    return _PASSWORD_PARAM.sub(r"\1***", _PASSWORD.sub(r"\1:***@", url))


class _BoolAsInt(Dumper):
    """Python booleans are stored as 1/0, as SQLite stores them (flags are INTEGER columns)."""

    oid = 20  # int8

    def dump(self, obj: Any) -> Buffer:
        return b"1" if obj else b"0"


class _NumericAsNumber(Loader):
    """NUMERIC results (``SUM`` of integers, ``AVG``) load as int or float, as from SQLite."""

    def load(self, data: Buffer) -> Any:
        text = bytes(data).decode("ascii")
        if text.lstrip("-").isdigit():
            return int(text)
        return float(text)


def _configure(conn: psycopg.Connection[DictRow]) -> None:
    conn.adapters.register_dumper(bool, _BoolAsInt)
    conn.adapters.register_loader("numeric", _NumericAsNumber)
    conn.execute("SET lock_timeout = '30s'")
    conn.execute("SET TIME ZONE 'UTC'")


def _store_error(exc: psycopg.Error, what: str = "postgresql") -> StoreError:
    return StoreError(f"{what}: {str(exc).strip()}")


class _PostgresTx(Transaction):
    def __init__(self, conn: psycopg.Connection[DictRow]) -> None:
        self._conn = conn

    def _run(self, sql: str, params: Params) -> psycopg.Cursor[DictRow]:
        try:
            return self._conn.execute(translate_sql(sql), _params(params))
        except psycopg.IntegrityError as exc:
            raise ConflictError(f"constraint failed: {str(exc).strip()}") from exc
        except psycopg.Error as exc:
            raise _store_error(exc) from exc

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        """Undo only the failed statement, leaving the transaction usable (as SQLite does)."""
        self._conn.execute("SAVEPOINT intently_stmt")
        try:
            yield
        except BaseException:
            with suppress(psycopg.Error):
                self._conn.execute("ROLLBACK TO SAVEPOINT intently_stmt")
                self._conn.execute("RELEASE SAVEPOINT intently_stmt")
            raise
        self._conn.execute("RELEASE SAVEPOINT intently_stmt")

    def execute(self, sql: str, params: Params = ()) -> int:
        with self._savepoint():
            cur = self._run(sql, params)
        return cur.rowcount

    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        with self._savepoint():
            try:
                with self._conn.cursor() as cur:
                    cur.executemany(translate_sql(sql), [_params(r) for r in rows])
            except psycopg.IntegrityError as exc:
                raise ConflictError(f"constraint failed: {str(exc).strip()}") from exc
            except psycopg.Error as exc:
                raise _store_error(exc) from exc

    def query(self, sql: str, params: Params = ()) -> list[Row]:
        # ``INSERT/UPDATE/DELETE ... RETURNING`` may hit a constraint the caller catches; plain
        # reads fail only on a programming error, so they skip the savepoint's two round trips.
        if _WRITES.match(sql):
            with self._savepoint():
                cur = self._run(sql, params)
        else:
            cur = self._run(sql, params)
        if cur.description is None:
            return []
        return [dict(row) for row in cur.fetchall()]

    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        try:
            with self._conn.cursor(row_factory=tuple_row) as cur:
                cur.execute(translate_sql(sql), _params(params))
                return cur.fetchall() if cur.description is not None else []
        except psycopg.Error as exc:
            raise _store_error(exc) from exc


def _params(params: Params) -> Sequence[Any] | Mapping[str, Any]:
    # Always hand psycopg a parameter container, so ``%%`` is read back as ``%`` even
    # for statements without placeholders.
    reject_nul(params)
    if isinstance(params, Mapping):
        return params
    return tuple(params)


class PostgresStore(Store):
    """A shared PostgreSQL database: several processes and machines, one source of truth.

    ``url`` is a libpq URL (``postgresql://user:pass@host:5432/db?sslmode=require``). The
    database must sort text by bytes (``LC_COLLATE 'C'``), as SQLite does; see docs/postgres.md.
    """

    dialect = "postgresql"

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 8,
        connect_timeout: float = 10.0,
        check_collation: bool = True,
    ) -> None:
        self.url = redact(url)
        self._local = threading.local()
        self._closed = False
        self._probe(url, connect_timeout, check_collation)
        try:
            self._pool: psycopg_pool.ConnectionPool[psycopg.Connection[DictRow]] = psycopg_pool.ConnectionPool(
                url,
                connection_class=psycopg.Connection[DictRow],
                kwargs={"autocommit": True, "row_factory": dict_row},
                min_size=min_size,
                max_size=max_size,
                configure=_configure,
                # A pooled connection the server dropped (a restart, an idle timeout) is
                # replaced when handed out, instead of failing the next request with it.
                check=psycopg_pool.ConnectionPool.check_connection,
                timeout=connect_timeout,
                open=False,
                name="intently",
            )
        except psycopg.Error as exc:
            raise StoreError(f"invalid PostgreSQL URL {self.url}: {exc}") from exc
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
        except (psycopg_pool.PoolTimeout, psycopg.Error) as exc:
            self._pool.close()
            raise StoreError(f"cannot connect to PostgreSQL at {self.url} within {connect_timeout:g}s") from exc

    def _probe(self, url: str, timeout: float, check_collation: bool) -> None:
        """Connect once, directly: the pool would retry a wrong URL until its timeout and
        then hide the server's reason (no such database, authentication failed, ...)."""
        try:
            with psycopg.connect(url, connect_timeout=max(1, int(timeout)), autocommit=True) as conn:
                if check_collation:
                    cur = conn.execute("SELECT x FROM unnest(%s::text[]) AS x ORDER BY x", (list(_ORDER_SAMPLE),))
                    got = [str(row[0]) for row in cur.fetchall()]
                else:
                    got = sorted(_ORDER_SAMPLE)
        except psycopg.Error as exc:
            raise _store_error(exc, f"cannot connect to PostgreSQL at {self.url}") from exc
        if got != sorted(_ORDER_SAMPLE):
            raise StoreError(
                f"the database at {self.url} sorts text by a linguistic collation, so ids and times would "
                "compare differently than in SQLite; create it with "
                "CREATE DATABASE name TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"
            )

    def translate(self, sql: str) -> str:
        return translate_sql(sql)

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[Transaction]:
        if self._closed:
            raise StoreError(f"the store {self.url} is closed; open the home again")
        if getattr(self._local, "active", False):
            raise StoreError("nested transactions are not supported; pass the open transaction down")
        self._local.active = True
        try:
            with self._connection() as conn:
                yield from self._run_transaction(conn, write)
        finally:
            self._local.active = False

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[DictRow]]:
        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg_pool.PoolTimeout as exc:
            raise StoreError(f"no PostgreSQL connection available from {self.url}: {exc}") from exc
        except psycopg.OperationalError as exc:
            raise _store_error(exc, f"postgresql connection to {self.url} failed") from exc

    def _run_transaction(self, conn: psycopg.Connection[DictRow], write: bool) -> Iterator[Transaction]:
        try:
            if write:
                conn.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
            else:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        except psycopg.Error as exc:
            with suppress(psycopg.Error):
                conn.execute("ROLLBACK")
            raise _store_error(exc, "postgresql: cannot begin transaction") from exc
        tx = _PostgresTx(conn)
        try:
            yield tx
            tx._run_before_commit()
        except BaseException:
            with suppress(psycopg.Error):
                conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except psycopg.Error as exc:
            with suppress(psycopg.Error):
                conn.execute("ROLLBACK")
            raise _store_error(exc, "postgresql: commit failed") from exc
        for callback in tx._callbacks:
            callback()

    def tables(self) -> Iterator[str]:
        with self.transaction(write=False) as tx:
            rows = tx.query(
                'SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename COLLATE "C"'
            )
        for row in rows:
            yield str(row["tablename"])

    def close(self) -> None:
        """Refuse new transactions; the pool waits for connections in use to come back."""
        self._closed = True
        self._pool.close()

    def __repr__(self) -> str:
        return f"PostgresStore({self.url!r})"
