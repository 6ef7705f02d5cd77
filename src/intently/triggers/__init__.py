"""Standing intents: deterministic event-triggered reminders. (Being built.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = ["Triggers"]


class Triggers:
    """Engine facade bound to one home, actor and namespace (placeholder until built)."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
