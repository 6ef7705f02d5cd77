"""The walk-through behind ``intently demo``: a sample project in a temp dir, driven through
the public API, printing what a person running agents would want to see.

Each engine adds a chapter as it lands; chapters are plain functions of (Intently, Console).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from ._intently import Intently
from .access import Permission
from .core.actors import Actor

__all__ = ["CHAPTERS", "run"]

Chapter = Callable[[Intently, Console], None]


def _store_and_log(ix: Intently, console: Console) -> None:
    console.print(Panel.fit("Store and log", style="bold"))
    console.print(f"Home: {escape(str(ix.home.path))} (namespace [bold]{ix.namespace}[/bold], owner {ix.actor})")
    console.print(f"Database: {escape(ix.store.url)}")
    ix.access.grant(Actor.parse("agent:claude"), Permission.WRITE)
    console.print("Granted write to agent:claude; the grant is an operation in the log.")
    ix.checkpoint()


def _verify(ix: Intently, console: Console) -> None:
    console.print(Panel.fit("Verify the log", style="bold"))
    ix.checkpoint()  # every command signs on its way out; the demo signs before it verifies
    for operation in ix.log.read(ix.namespace):
        console.print(f"  {operation.seq:>3} {operation.op:<22} {escape(operation.target)}")
    report = ix.log.verify()
    for stream in report.streams:
        status = "[green]verifies[/green]" if stream.ok else f"[red]FAILS[/red]: {escape(stream.error or '')}"
        console.print(
            f"Stream {stream.stream}: {stream.size} operations, {stream.checkpoints} signed checkpoints, {status}"
        )
    proof = ix.log.inclusion_proof(ix.namespace, 1)
    console.print(
        f"Inclusion proof of operation 1 in the tree of size {proof['tree_size']}: {len(proof['proof'])} hashes"
    )


def _tamper(ix: Intently, console: Console) -> None:
    """Show what the log is for: edit a copy of the database as an attacker would, and watch
    verification name the stream and the operation. The home itself is not touched."""
    import sqlite3
    from contextlib import closing

    from .log import OperationLog
    from .store import SQLiteStore

    console.print(Panel.fit("Tamper with a copy", style="bold"))
    source = ix.home.state_dir / "intently.db"
    copy = ix.home.project_root / "tampered-copy.db"
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(copy)) as dst:
        src.backup(dst)
    with closing(sqlite3.connect(copy)) as conn, conn:
        seq = conn.execute("SELECT MAX(seq) FROM log_ops WHERE stream = ?", (ix.namespace,)).fetchone()[0]
        conn.execute("UPDATE log_ops SET actor = 'user:mallory' WHERE stream = ? AND seq = ?", (ix.namespace, seq))
    store = SQLiteStore(copy)
    try:
        forged = OperationLog(store, clock=ix.runtime.clock, keyring=ix.log.keyring, origin=ix.log.origin)
        report = forged.verify([ix.namespace])
    finally:
        store.close()
        copy.unlink()
    (stream,) = report.streams
    console.print(f"Rewrote the actor of operation {seq} to user:mallory in a copy of the database.")
    console.print(
        f"Verify on the copy: [red]{escape(stream.error_type or 'passed?!')}[/red]: {escape(stream.error or '')}"
    )
    if stream.error_type:
        console.print(
            "The one-field edit is caught, as it should be: the real log still verifies. "
            "Next: `intently init` in your own project (README, 'Put intently in front of Claude Code')."
        )


def _engines() -> list[Chapter]:
    from ._demo_engines import ENGINE_CHAPTERS

    return list(ENGINE_CHAPTERS)


CHAPTERS: list[Chapter] = [_store_and_log, *_engines()]
CLOSING: list[Chapter] = [_verify, _tamper]


def run(console: Console | None = None, *, project: Path | None = None) -> int:
    """Run every chapter on a fresh sample project; returns 0 when the log verifies."""
    console = console or Console()
    with tempfile.TemporaryDirectory(prefix="intently-demo-") as tmp:
        root = project or Path(tmp) / "sample-project"
        root.mkdir(parents=True, exist_ok=True)
        with Intently.init(root, actor="user:demo", name="sample") as ix:
            for chapter in [*CHAPTERS, *CLOSING]:
                chapter(ix, console)
            ok = ix.log.verify().ok
    return 0 if ok else 1
