"""``intently store status|upgrade``."""

from __future__ import annotations

import typer

from .._intently import _load_engines
from ..core.config import find_home
from ..store import open_store
from ._common import JsonOpt, emit, out, state, table

store_app = typer.Typer(help="The database behind the home.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(store_app, name="store")


def _open(ctx: typer.Context):  # type: ignore[no-untyped-def]
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
    """Apply pending schema upgrades; refuses a database newer than this intently."""
    store = _open(ctx)
    try:
        applied = store.upgrade()
    finally:
        store.close()
    data = {"applied": [{"component": m.component, "version": m.version} for m in applied]}
    emit(data, as_json, lambda d: out.print(f"{len(d['applied'])} migration(s) applied"))
