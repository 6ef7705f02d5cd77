"""``intently demo``: the main job on a sample project in a temp dir."""

from __future__ import annotations

import typer

from ..core.errors import LogIntegrityError
from ._common import out


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)


def demo() -> None:
    """Walk through the engines on a sample project and verify the log."""
    from ..demo import run  # the engines load here, not for `intently --help`

    if run(out):
        raise LogIntegrityError("the demo's log does not verify")
