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


CHAPTERS: list[Chapter] = [_store_and_log]
CLOSING: list[Chapter] = [_verify]


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
