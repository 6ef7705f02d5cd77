"""Who acts. Every operation in the log names an :class:`Actor`."""

from __future__ import annotations

import getpass
import os
import re
from dataclasses import dataclass
from enum import StrEnum

from .errors import InvalidInput

__all__ = ["Actor", "ActorKind", "default_actor"]


class ActorKind(StrEnum):
    USER = "user"
    AGENT = "agent"
    SYSTEM = "system"
    TOOL = "tool"


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$")


@dataclass(frozen=True, slots=True)
class Actor:
    """An actor is a kind plus a name; its string form is ``kind:name`` (``user:alice``)."""

    kind: ActorKind
    name: str

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise InvalidInput(
                f"actor name {self.name!r} must be 1-128 letters, digits or ._@+- and start alphanumeric",
                where="actor",
            )

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.name}"

    @classmethod
    def parse(cls, text: str) -> Actor:
        """``alice`` is a user; ``agent:claude``, ``tool:mcp-fs``, ``system:organiser`` name the kind."""
        raw = text.strip()
        if ":" in raw:
            kind_text, name = raw.split(":", 1)
            try:
                kind = ActorKind(kind_text.lower())
            except ValueError as exc:
                kinds = ", ".join(k.value for k in ActorKind)
                raise InvalidInput(f"unknown actor kind {kind_text!r} (one of {kinds})", where="actor") from exc
            return cls(kind, name)
        return cls(ActorKind.USER, raw)


SYSTEM = Actor(ActorKind.SYSTEM, "intently")


def default_actor() -> Actor:
    """``INTENTLY_ACTOR`` if set, else the OS user as a user actor."""
    env = os.environ.get("INTENTLY_ACTOR")
    if env:
        return Actor.parse(env)
    try:
        user = getpass.getuser()
    except Exception:
        user = "unknown"
    cleaned = re.sub(r"[^A-Za-z0-9._@+-]", "-", user) or "unknown"
    return Actor(ActorKind.USER, cleaned)
