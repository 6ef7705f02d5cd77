"""``intently store status|upgrade|copy``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..access import Permission
from ..core.errors import LogIntegrityError
from ..store import open_store
from ..store._copy import copy_tables
from ._common import JsonOpt, emit, err, escape, open_home, out, state, table

if TYPE_CHECKING:  # loaded by the commands that open a home, not by `intently --help`
    from .._intently import Intently
    from ..log import VerifyReport

store_app = typer.Typer(help="The database behind the home.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(store_app, name="store")


def _open(ctx: typer.Context):  # type: ignore[no-untyped-def]
    from .._intently import _load_engines
    from ..core.config import find_home

    _load_engines()
    home = find_home(None, state(ctx).home)
    return open_store(home.database_url(home.load_config()))


@store_app.command("status")
def status(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Schema version of each component, and what is pending."""
    store = _open(ctx)
    try:
        rows = store.schema_status()
        data = {
            "url": store.url,
            "components": [
                {"component": s.component, "current": s.current, "latest": s.latest, "pending": s.pending} for s in rows
            ],
        }
    finally:
        store.close()
    emit(
        data,
        as_json,
        lambda d: table(
            f"Schema of {d['url']}",
            ["component", "current", "latest", "pending"],
            [[c["component"], c["current"], c["latest"], c["pending"]] for c in d["components"]],
        ),
    )


@store_app.command("upgrade")
def upgrade(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Apply pending schema upgrades; refuses a database newer than this intently.

    For homes with auto_upgrade off, the same upgrade opening a home applies on its own: the
    one that makes operations carry signatures also signs, as LOG_ADOPTED, the operations an
    older intently appended and never checkpointed (`adopted` in --json counts them).
    """
    from .._intently import Intently

    st = state(ctx)
    applied, adopted = Intently.upgrade(st.home, actor=st.actor)
    data = {"applied": [{"component": m.component, "version": m.version} for m in applied], "adopted": adopted}
    emit(data, as_json, _render_upgrade)


def _render_upgrade(data: dict[str, Any]) -> None:
    adopted = f", {data['adopted']} operation(s) written before signatures adopted" if data["adopted"] else ""
    out.print(f"{len(data['applied'])} migration(s) applied{adopted}")


@store_app.command("copy")
def copy(
    ctx: typer.Context,
    to: Annotated[str, typer.Option("--to", help="Empty target: postgresql://... URL or a SQLite file path.")],
    as_json: JsonOpt = False,
) -> None:
    """Copy the home's database into another one, verifying the log before and after.

    The target is migrated, must be empty and receives everything in one transaction.
    Afterwards point the home at it with ``[store] url`` or ``INTENTLY_DATABASE_URL``.
    """
    with open_home(ctx) as ix:
        ix.require(Permission.ADMIN)
        data = copy_home(ix, to if "://" in to else f"sqlite:///{Path(to).expanduser().resolve()}")
    emit(data, as_json, _render_copy)
    for e in data["escaped"]:
        row = f"{e['table']} row {e['row']}" + (f" (id {e['id']})" if e["id"] else "")
        err.print(
            f"warning: {escape(row)} column {escape(e['column'])} held bytes that are not UTF-8 text; the "
            "target's text column got them with each such byte spelled \\xNN (the source keeps the bytes)"
        )
    if not as_json:
        err.print(
            f"Point the home at it: set [store] url in intently.toml or INTENTLY_DATABASE_URL={data['to']}",
            markup=False,
        )


def copy_home(ix: Intently, url: str) -> dict[str, Any]:
    """Verify the home's log, copy every table to ``url``, then verify the copy's log."""
    from .._intently import _load_engines
    from ..log import OperationLog

    _require_verified(ix.log.verify(), "the source")
    _load_engines()  # the target gets every component's tables
    target = open_store(url)
    try:
        target.upgrade()
        copy = copy_tables(ix.store, target)
        copied = OperationLog(
            target,
            clock=ix.runtime.clock,
            keyring=ix.log.keyring,
            origin=ix.log.origin,
            witness_path=ix.home.witness_path,
        )
        report = copied.verify()
        _require_verified(report, "the copy")
        return {
            "from": ix.store.url,
            "to": target.url,
            "tables": copy.tables,
            "streams": {s.stream: s.size for s in report.streams},
            "verified": True,
            "escaped": [e.to_json() for e in copy.escaped],
        }
    finally:
        target.close()


def _require_verified(report: VerifyReport, which: str) -> None:
    bad = next((s for s in report.streams if not s.ok), None)
    if bad is not None:
        raise LogIntegrityError(f"{which} log does not verify: {bad.error}", stream=bad.stream, seq=bad.bad_seq)


def _render_copy(data: dict[str, Any]) -> None:
    table(
        f"Copied {data['from']} to {data['to']} (log verified on both sides)",
        ["table", "rows"],
        [[name, rows] for name, rows in data["tables"].items()],
    )
