"""``intently eval agentdojo`` (being built)."""

from __future__ import annotations

import typer


def register(eval_app: typer.Typer) -> None:
    """Add the ``agentdojo`` evaluation command to ``eval_app``."""
    del eval_app
