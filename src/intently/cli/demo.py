"""``intently demo``: the main job on a sample project in a temp dir."""

from __future__ import annotations

import typer

from ..core.errors import LogIntegrityError
from ..demo import run
from ._common import out


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def demo() -> None:
    """Walk through the engines on a sample project and verify the log."""
    if run(out):
        raise LogIntegrityError("the demo's log does not verify")
