"""``intently eval extraction|triggers|requirements|agentdojo``: quality, measured on data sets.

Each engine's evaluation lives in its own module ``intently.eval.<name>`` exposing
``register(eval_app)``; this module only assembles the group.
"""

from __future__ import annotations

import importlib

import typer

eval_app = typer.Typer(help="Measure quality on a data set (dev data in shared/datasets).", no_args_is_help=True)

EVALUATIONS: tuple[str, ...] = ("extraction", "triggers", "requirements", "agentdojo")


def register(app: typer.Typer) -> None:
    for name in EVALUATIONS:
        importlib.import_module(f"intently.eval.{name}").register(eval_app)
    app.add_typer(eval_app, name="eval")
