"""Copying every table of one store into another (``intently store copy``).

The copy reads the source in one read transaction (one consistent snapshot) and writes the
target in one write transaction, so the target ends up with all of it or none of it. Both
stores must be at the same schema versions, and the target must be empty: the copy never
merges. Verifying the operation log on both sides is the caller's job (the log sits above
the store).
"""

from __future__ import annotations

from ..core.errors import InvalidInput, StoreError
from ._base import Store, Transaction

__all__ = ["copy_tables"]

_BATCH = 2000


def copy_tables(source: Store, target: Store, *, batch: int = _BATCH) -> dict[str, int]:
    """Copy all rows of every table of ``source`` into the empty, migrated ``target``.

    Returns the number of rows copied per table. Raises :class:`StoreError` when the schema
    versions differ and :class:`InvalidInput` when the target already holds data.
    """
    _check_versions(source, target)
    names = [t for t in source.tables() if t != "schema_versions"]
    missing = sorted(set(names) - set(target.tables()))
    if missing:
        raise StoreError(f"the target has no table {', '.join(missing)}; are both at the same intently version?")
    counts: dict[str, int] = {}
    with source.transaction(write=False) as src, target.transaction(write=True) as dst:
        for name in names:
            held = int(dst.scalar(f"SELECT COUNT(*) FROM {_quote(name)}") or 0)
            if held:
                raise InvalidInput(f"the target is not empty: table {name} holds {held} rows", where=target.url)
        for name in names:
            counts[name] = _copy_table(src, dst, name, batch)
        if target.dialect == "postgresql":
            _advance_sequences(dst)
    return counts


def _check_versions(source: Store, target: Store) -> None:
    src = {s.component: s.current for s in source.schema_status()}
    dst = {s.component: s.current for s in target.schema_status()}
    differ = sorted(c for c in set(src) | set(dst) if src.get(c, 0) != dst.get(c, 0))
    if differ:
        detail = ", ".join(f"{c} {src.get(c, 0)} vs {dst.get(c, 0)}" for c in differ)
        raise StoreError(f"schema versions differ between source and target ({detail}); run `intently store upgrade`")


def _copy_table(src: Transaction, dst: Transaction, name: str, batch: int) -> int:
    # Pages of one snapshot: the same query over unchanged data returns rows in the same
    # order, so LIMIT/OFFSET pages neither skip nor repeat a row.
    table = _quote(name)
    copied = 0
    while True:
        rows = src.query(f"SELECT * FROM {table} LIMIT ? OFFSET ?", (batch, copied))
        if not rows:
            return copied
        columns = list(rows[0])
        marks = ", ".join("?" for _ in columns)
        sql = f"INSERT INTO {table} ({', '.join(map(_quote, columns))}) VALUES ({marks})"
        dst.executemany(sql, [tuple(row[c] for c in columns) for row in rows])
        copied += len(rows)


def _advance_sequences(dst: Transaction) -> None:
    """Move each ``{serial}`` column's sequence past the copied ids, so new rows don't collide."""
    serials = dst.query(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND column_default LIKE 'nextval(%'"
    )
    for row in serials:
        table, column = _quote(str(row["table_name"])), str(row["column_name"])
        dst.query(
            f"SELECT setval(pg_get_serial_sequence(?, ?), COALESCE(MAX({_quote(column)}), 0) + 1, false) FROM {table}",
            (table, column),
        )


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'
