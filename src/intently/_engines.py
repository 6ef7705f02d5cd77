"""The list of engines. Importing one registers its migrations and log appliers.

Opening a home does not import them all: when the database's schema versions are exactly
:data:`SCHEMA_VERSIONS`, nothing needs migrating and each engine is imported on first use
(a hook answering one tool call then pays only for the gate). Any other state (a new
database, an older one, a newer one) imports every engine, so the full migration registry
decides. ``tests/test_engines.py`` keeps this table equal to the registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._intently import Intently

__all__ = ["ENGINES", "SCHEMA_VERSIONS", "engine_method", "load"]

# The latest migration of every component, as the engines register them.
SCHEMA_VERSIONS: dict[str, int] = {
    "log": 4,
    "access": 1,
    "goals": 1,
    "triggers": 1,
    "requirements": 2,
    "gate": 5,
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


def engine_method(ix: Intently, engine: str, method: str) -> Callable[..., Any] | None:
    """The bound method ``ix.<engine>.<method>``, or ``None`` while that engine is a placeholder.

    This is the one place where the surfaces look for capabilities. It exists only while the
    engines land: each caller turns ``None`` into an explicit "unavailable" answer (a section
    status, an HTTP 501, an MCP tool error, a hook that denies), never a silent no-op.
    """
    facade = getattr(ix, engine)
    found = getattr(facade, method, None)
    return found if callable(found) else None
