"""Requirements engine: durable project rules as reviewable Markdown files. (Being built.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = ["Requirements"]


class Requirements:
    """Engine facade bound to one home, actor and namespace (placeholder until built)."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime
