"""What every command shares: global options, opening the home, output and errors.

Results go to stdout (a Rich table for people, JSON with ``--json``); diagnostics go to
stderr; an :class:`IntentlyError` becomes one line and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .._intently import Intently

__all__ = [
    "JsonOpt",
    "State",
    "emit",
    "err",
    "open_home",
    "out",
    "state",
    "table",
]

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Machine output on stdout (stable keys).")]


@dataclass
class State:
    home: str | None = None
    actor: str | None = None
    namespace: str | None = None


def state(ctx: typer.Context) -> State:
    root = ctx.find_root()
    if not isinstance(root.obj, State):
        root.obj = State()
    return root.obj


@contextmanager
def open_home(ctx: typer.Context) -> Iterator[Intently]:
    """Open the home named by the global options; checkpoint and close on the way out."""
    st = state(ctx)
    ix = Intently.open(st.home, actor=st.actor, namespace=st.namespace)
    try:
        yield ix
    finally:
        ix.close()


def emit(data: Any, as_json: bool, render: Callable[[Any], None] | None = None) -> None:
    """``--json``: dump ``data``; otherwise call ``render`` (or print a readable default)."""
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
        return
    if render is not None:
        render(data)
    elif isinstance(data, dict):
        for key, value in data.items():
            out.print(f"[bold]{escape(str(key))}[/bold]: {escape(str(value))}")
    else:
        out.print(escape(str(data)))


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print a Rich table; every cell is escaped, since stored text is untrusted.

    An ``id`` column is never wrapped or cut: it is what a person copies into the next
    command. Rich fits a table to the console, 80 columns when stdout is a pipe, and would
    otherwise print ``d7c97a…`` for an id, which no command accepts.
    """
    cells = [["" if v is None else str(v) for v in row] for row in rows]
    tbl = Table(title=title, title_justify="left")
    for i, col in enumerate(columns):
        if col.lower() == "id":
            tbl.add_column(col, no_wrap=True, min_width=max((len(r[i]) for r in cells), default=0))
        else:
            tbl.add_column(col)
    for row in cells:
        tbl.add_row(*(escape(v) for v in row))
    out.print(tbl)


def home_option() -> Any:
    return typer.Option(None, "--home", envvar="INTENTLY_HOME", help="The .intently home (default: found upward).")


def path_arg(value: str) -> Path:
    return Path(value).expanduser()
