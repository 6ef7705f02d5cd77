"""Copying every table of one store into another (``intently store copy``).

The copy reads the source in one read transaction (one consistent snapshot) and writes the
target in one write transaction, so the target ends up with all of it or none of it. Both
stores must be at the same schema versions, and the target must be empty: the copy never
merges. Verifying the operation log on both sides is the caller's job (the log sits above
the store).

One value cannot cross unchanged: bytes in a text column. SQLite keeps any value in any
column, and ``log repair`` keeps a tampered row's text that is not UTF-8 as its very bytes in
``log_quarantine``; PostgreSQL text holds only UTF-8, and a driver binding the bytes as
``bytea`` into a text column stores their hex spelling, which reads as an ordinary string. So
the copy writes such a value as text with each undecodable byte spelled ``\\xNN`` (as the
signed ``LOG_QUARANTINED`` record already shows it) and names every one it changed: the
caller must say so, never pass it over. The source file keeps the bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.errors import InvalidInput, StoreError
from ._base import Store, Transaction

__all__ = ["CopyReport", "Escaped", "copy_tables"]

_BATCH = 2000
_TEXT_TYPES = frozenset({"text", "character varying", "character"})


@dataclass(frozen=True)
class Escaped:
    """A value of bytes written into a text column as text with its bytes spelled ``\\xNN``."""

    table: str
    column: str
    row: int  # 1-based, in the source's order of that table
    id: str | None  # the row's ``id`` column, when the table has one

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "column": self.column, "row": self.row, "id": self.id}


@dataclass(frozen=True)
class CopyReport:
    """Rows copied per table, and every value that could not cross unchanged."""

    tables: dict[str, int]
    escaped: list[Escaped] = field(default_factory=list)


def copy_tables(source: Store, target: Store, *, batch: int = _BATCH) -> CopyReport:
    """Copy all rows of every table of ``source`` into the empty, migrated ``target``.

    Returns the rows copied per table and the values escaped on the way (module docstring).
    Raises :class:`StoreError` when the schema versions differ and :class:`InvalidInput` when
    the target already holds data.
    """
    _check_versions(source, target)
    names = [t for t in source.tables() if t != "schema_versions"]
    missing = sorted(set(names) - set(target.tables()))
    if missing:
        raise StoreError(f"the target has no table {', '.join(missing)}; are both at the same intently version?")
    report = CopyReport(tables={})
    with source.transaction(write=False) as src, target.transaction(write=True) as dst:
        for name in names:
            held = int(dst.scalar(f"SELECT COUNT(*) FROM {_quote(name)}") or 0)
            if held:
                raise InvalidInput(f"the target is not empty: table {name} holds {held} rows", where=target.url)
        text_columns = _text_columns(dst) if target.dialect == "postgresql" else {}
        for name in names:
            report.tables[name] = _copy_table(src, dst, name, batch, text_columns.get(name, frozenset()), report)
        if target.dialect == "postgresql":
            _advance_sequences(dst)
    return report


def _check_versions(source: Store, target: Store) -> None:
    src = {s.component: s.current for s in source.schema_status()}
    dst = {s.component: s.current for s in target.schema_status()}
    differ = sorted(c for c in set(src) | set(dst) if src.get(c, 0) != dst.get(c, 0))
    if differ:
        detail = ", ".join(f"{c} {src.get(c, 0)} vs {dst.get(c, 0)}" for c in differ)
        raise StoreError(f"schema versions differ between source and target ({detail}); run `intently store upgrade`")


def _text_columns(dst: Transaction) -> dict[str, frozenset[str]]:
    """The target's text columns per table (PostgreSQL): where bytes cannot go unchanged."""
    found: dict[str, set[str]] = {}
    for row in dst.query(
        "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema()"
    ):
        if str(row["data_type"]) in _TEXT_TYPES:
            found.setdefault(str(row["table_name"]), set()).add(str(row["column_name"]))
    return {table: frozenset(columns) for table, columns in found.items()}


def _copy_table(
    src: Transaction, dst: Transaction, name: str, batch: int, text_columns: frozenset[str], report: CopyReport
) -> int:
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
        values = [
            tuple(_crossing(row, c, name, copied + n, text_columns, report) for c in columns)
            for n, row in enumerate(rows, start=1)
        ]
        dst.executemany(sql, values)
        copied += len(rows)


def _crossing(
    row: dict[str, Any], column: str, table: str, number: int, text_columns: frozenset[str], report: CopyReport
) -> Any:
    """``row[column]`` as the target stores it: bytes bound for a text column become text."""
    value = row[column]
    if not isinstance(value, bytes) or column not in text_columns:
        return value
    ident = row.get("id")
    if isinstance(ident, bytes):
        ident = ident.decode("utf-8", "backslashreplace")
    report.escaped.append(Escaped(table, column, number, None if ident is None else str(ident)))
    return value.decode("utf-8", "backslashreplace")


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
