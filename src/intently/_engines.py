"""The list of engines. Importing one registers its migrations and log appliers."""

from __future__ import annotations

import importlib

__all__ = ["ENGINES", "load"]

ENGINES: tuple[str, ...] = (
    "intently.access",
    "intently.goals",
    "intently.triggers",
    "intently.requirements",
    "intently.gate",
    "intently.extract",
    "intently.server",
)


def load() -> None:
    for name in ENGINES:
        importlib.import_module(name)
