"""intently: the intent layer for AI agents.

One store and one tamper-evident log under four engines: goals, requirements, standing
intents and the tool-call gate. Start with :class:`Intently`.
"""

from __future__ import annotations

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
