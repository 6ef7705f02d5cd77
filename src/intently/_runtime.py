"""What every engine is handed: the home, config, store, log, clock, acting actor and namespace."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .core.actors import Actor
from .core.clock import Clock
from .core.config import Config, Home
from .log import OperationLog
from .store import Store

if TYPE_CHECKING:
    from .access import Access

__all__ = ["Runtime"]


@dataclass(frozen=True)
class Runtime:
    """Shared, immutable wiring. ``with_actor`` / ``with_namespace`` derive a view for another caller."""

    home: Home
    config: Config
    store: Store
    log: OperationLog
    clock: Clock
    actor: Actor
    namespace: str

    @property
    def access(self) -> Access:
        from .access import Access

        return Access(self)

    def with_actor(self, actor: Actor) -> Runtime:
        return replace(self, actor=actor)

    def with_namespace(self, namespace: str) -> Runtime:
        return replace(self, namespace=namespace)
