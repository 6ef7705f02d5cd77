"""intently: the intent layer for AI agents.

One store and one tamper-evident log under four engines: goals, requirements, standing
intents and the tool-call gate. Start with :class:`Intently`.

The names below are loaded on first use (PEP 562), so that ``import intently.hooks`` in the
Claude Code hook client, which runs before every tool call, does not pay for the engines it
hands the event to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .core.lazy import lazy_exports

if TYPE_CHECKING:
    from ._intently import Intently
    from .access import Permission
    from .core.actors import Actor, ActorKind
    from .core.clock import Clock, ManualClock, SystemClock
    from .core.errors import (
        ConflictError,
        IntentlyError,
        InvalidInput,
        InvalidTransition,
        LogIntegrityError,
        NotFound,
        PermissionDenied,
        PolicyError,
        StoreError,
    )

__version__ = "0.1.0"

_ERRORS = (
    "ConflictError",
    "IntentlyError",
    "InvalidInput",
    "InvalidTransition",
    "LogIntegrityError",
    "NotFound",
    "PermissionDenied",
    "PolicyError",
    "StoreError",
)
_WHERE: dict[str, str] = {
    "Intently": "._intently",
    "Permission": ".access",
    "Actor": ".core.actors",
    "ActorKind": ".core.actors",
    "Clock": ".core.clock",
    "ManualClock": ".core.clock",
    "SystemClock": ".core.clock",
    **dict.fromkeys(_ERRORS, ".core.errors"),
}

__all__ = [
    "Actor",
    "ActorKind",
    "Clock",
    "ConflictError",
    "Intently",
    "IntentlyError",
    "InvalidInput",
    "InvalidTransition",
    "LogIntegrityError",
    "ManualClock",
    "NotFound",
    "Permission",
    "PermissionDenied",
    "PolicyError",
    "StoreError",
    "SystemClock",
    "__version__",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals(), __all__)
