"""The list of engines. Importing one registers its migrations and log appliers.

Opening a home does not import them all: when the database's schema versions are exactly
:data:`SCHEMA_VERSIONS`, nothing needs migrating and each engine is imported on first use
(a hook answering one tool call then pays only for the gate). Any other state (a new
database, an older one, a newer one) imports every engine, so the full migration registry
decides. ``tests/test_engines.py`` keeps this table equal to the registry.
"""

from __future__ import annotations

import importlib

__all__ = ["ENGINES", "SCHEMA_VERSIONS", "load"]

# The latest migration of every component, as the engines register them.
SCHEMA_VERSIONS: dict[str, int] = {
    "log": 4,
    "access": 1,
    "goals": 1,
    "triggers": 1,
    "requirements": 2,
    "gate": 2,
}

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
