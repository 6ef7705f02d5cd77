"""Storage: one small :class:`Store` interface over SQLite (default) and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from ..core.errors import InvalidInput
from ..core.extras import MissingExtra
from ._base import (
    Migration,
    Row,
    SchemaStatus,
    Store,
    Transaction,
    register_migration,
    registered_migrations,
    reject_nul,
)
from ._sqlite import SQLiteStore

__all__ = [
    "Migration",
    "Row",
    "SQLiteStore",
    "SchemaStatus",
    "Store",
    "Transaction",
    "open_store",
    "register_migration",
    "registered_migrations",
    "reject_nul",
]


def open_store(url: str, *, group_commit: bool = False) -> Store:
    """Open the store a URL names: ``sqlite:///path`` or ``postgresql://...``; ``group_commit``
    is ``[log] group_commit``, kept by the store (:attr:`Store.group_commit`)."""
    store: Store
    if url.startswith("sqlite:///"):
        store = SQLiteStore(Path(url[len("sqlite:///") :]), synchronous="NORMAL" if group_commit else "FULL")
    elif url.startswith(("postgresql://", "postgres://")):
        try:
            from ._postgres import PostgresStore  # type: ignore[import-not-found,unused-ignore]
        except ImportError as exc:
            raise MissingExtra("the PostgreSQL backend", "postgres", "psycopg") from exc
        store = PostgresStore(url)
    else:
        raise InvalidInput(f"unsupported database URL {url!r} (sqlite:///PATH or postgresql://...)", where="store.url")
    store.group_commit = group_commit
    return store
