"""The one small :class:`Store` interface every backend implements.

The store knows connections, transactions and schema versions; each engine owns its own
tables and registers its migrations. Engine SQL is written once, with ``?`` placeholders
and the type tokens below, and each backend translates it for its dialect.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import InvalidInput, SchemaTooNew, StoreError

__all__ = ["Migration", "Row", "Store", "Transaction", "register_migration", "registered_migrations"]

Row = dict[str, Any]
Params = Sequence[Any] | Mapping[str, Any]


@dataclass(frozen=True)
class Migration:
    """One schema step of one component. ``statements`` may use the type tokens
    ``{bigint}``, ``{blob}``, ``{real}`` and ``{serial}``, which each dialect fills in."""

    component: str
    version: int
    statements: tuple[str, ...]
    description: str = ""


_REGISTRY: dict[str, dict[int, Migration]] = {}


def register_migration(component: str, version: int, *statements: str, description: str = "") -> None:
    """Register a schema step. Versions of a component run in order, each exactly once."""
    steps = _REGISTRY.setdefault(component, {})
    existing = steps.get(version)
    mig = Migration(component, version, tuple(statements), description)
    if existing is not None and existing != mig:
        raise StoreError(f"two different migrations registered for {component} v{version}")
    steps[version] = mig


def registered_migrations() -> dict[str, list[Migration]]:
    """Each component's steps in version order, the log's first: other components' steps may
    read its tables (the gate's fills its prompt table from ``log_ops``), and components are
    otherwise registered in import order, so ``import intently.gate`` before ``Intently.init``
    created a fresh home's gate tables before the log's, and the init failed."""
    components = sorted(_REGISTRY, key=lambda c: c != "log")  # stable: the rest keep their order
    return {c: [_REGISTRY[c][v] for v in sorted(_REGISTRY[c])] for c in components}


def reject_nul(params: Params | Sequence[Params], *, many: bool = False) -> None:
    """Refuse text holding a NUL character on every backend alike: PostgreSQL cannot store it,
    and a value that exists on one backend but not the other would break ``store copy``."""
    rows: Sequence[Params] = params if many else (params,)  # type: ignore[assignment]
    for row in rows:
        values = row.values() if isinstance(row, Mapping) else row
        for value in values:
            if isinstance(value, str) and "\x00" in value:
                raise InvalidInput("text may not contain a NUL character", where="value")


class Transaction(ABC):
    """A unit of work: everything in it commits together or not at all."""

    @abstractmethod
    def execute(self, sql: str, params: Params = ()) -> int:
        """Run a statement; return the number of rows it changed."""

    @abstractmethod
    def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        """Run one statement for many parameter rows."""

    @abstractmethod
    def query(self, sql: str, params: Params = ()) -> list[Row]:
        """Run a query; return rows as dicts."""

    def rows(self, sql: str, params: Params = ()) -> list[tuple[Any, ...]]:
        """Run a query; return rows as tuples in column order. For hot loops (log verification
        reads a million rows): backends may skip building dicts; this default builds them."""
        return [tuple(r.values()) for r in self.query(sql, params)]

    def one(self, sql: str, params: Params = ()) -> Row | None:
        rows = self.query(sql, params)
        return rows[0] if rows else None

    def scalar(self, sql: str, params: Params = ()) -> Any:
        row = self.one(sql, params)
        return None if row is None else next(iter(row.values()))

    def on_commit(self, callback: Any) -> None:
        """Run ``callback()`` once the transaction has committed (not on rollback)."""
        self._callbacks.append(callback)

    @property
    def _callbacks(self) -> list[Any]:
        if not hasattr(self, "_after_commit"):
            self._after_commit: list[Any] = []
        return self._after_commit

    def before_commit(self, callback: Any) -> None:
        """Run ``callback()`` inside the transaction once its body has finished, just before it
        commits: what it writes commits with the rest, and an error from it rolls everything back.
        The log signs a batch of appends there once, instead of each append on its own."""
        if not hasattr(self, "_before_commit"):
            self._before_commit: list[Any] = []
        self._before_commit.append(callback)

    def _run_before_commit(self) -> None:
        for callback in getattr(self, "_before_commit", ()):
            callback()


@dataclass
class SchemaStatus:
    component: str
    current: int
    latest: int
    pending: list[int] = field(default_factory=list)


class Store(ABC):
    """A database behind one small interface. Backends: SQLite (default) and PostgreSQL."""

    dialect: str
    url: str
    #: ``[log] group_commit``, as :func:`open_store` was asked: SQLite syncs less
    #: (``synchronous=NORMAL``) and the log signs each transaction's appends with one
    #: checkpoint (``OperationLog.seal_batches`` starts from it). The setting's one owner: the
    #: log used to be told it again, beside the store, by whoever opened both.
    group_commit: bool = False

    @abstractmethod
    def transaction(self, *, write: bool = True) -> AbstractContextManager[Transaction]:
        """A transaction. Write transactions take the write lock up front, so
        read-then-write sequences inside one never interleave with another writer."""

    @abstractmethod
    def close(self) -> None:
        """Release connections."""

    @abstractmethod
    def translate(self, sql: str) -> str:
        """Dialect-specific rewrite of engine SQL (placeholders, type tokens)."""

    # -- schema ---------------------------------------------------------------

    def _ensure_schema_table(self, tx: Transaction) -> None:
        tx.execute("CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)")

    def current_versions(self) -> dict[str, int]:
        """The schema version of each component as this database records it."""
        with self.transaction(write=True) as tx:
            self._ensure_schema_table(tx)
            return {r["component"]: int(r["version"]) for r in tx.query("SELECT * FROM schema_versions")}

    def schema_status(self) -> list[SchemaStatus]:
        known = registered_migrations()
        current = self.current_versions()
        out: list[SchemaStatus] = []
        for comp in sorted(set(known) | set(current)):
            steps = known.get(comp, [])
            latest = steps[-1].version if steps else 0
            cur = current.get(comp, 0)
            out.append(SchemaStatus(comp, cur, latest, [m.version for m in steps if m.version > cur]))
        return out

    def check_not_newer(self) -> None:
        for status in self.schema_status():
            if status.current > status.latest:
                raise SchemaTooNew(
                    f"the database's {status.component!r} schema is version {status.current}, but this "
                    f"intently knows only up to {status.latest}; upgrade intently (the database was not touched)"
                )

    def upgrade(self) -> list[Migration]:
        """Apply every pending migration, each in its own transaction. Refuses newer databases."""
        self.check_not_newer()
        applied: list[Migration] = []
        for comp, steps in registered_migrations().items():
            for mig in steps:
                with self.transaction(write=True) as tx:
                    self._ensure_schema_table(tx)
                    cur = tx.scalar("SELECT version FROM schema_versions WHERE component = ?", (comp,))
                    if cur is not None and int(cur) >= mig.version:
                        continue
                    for stmt in mig.statements:
                        tx.execute(stmt)
                    tx.execute(
                        "INSERT INTO schema_versions (component, version) VALUES (?, ?) "
                        "ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                        (comp, mig.version),
                    )
                    applied.append(mig)
        return applied

    def tables(self) -> Iterator[str]:
        """Names of the tables in the database (for dumps and tests)."""
        raise NotImplementedError
