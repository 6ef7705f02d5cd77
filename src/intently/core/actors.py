"""Who acts. Every operation in the log names an :class:`Actor`.

An agent may act *on behalf of* a person (the MCP server does, for the person who started
it): it holds that person's permissions except administering, it is not that person (the
log names both, ``agent:mcp for user:alice``), and it never does a person's acts, such as
confirming what extraction proposed (see :func:`intently.access.require_person`).
"""

from __future__ import annotations

import getpass
import os
import re
from dataclasses import dataclass
from enum import StrEnum

from .errors import InvalidInput

__all__ = ["Actor", "ActorKind", "default_actor", "principal_of"]

#: Between an agent and the person it acts for in the string form (``agent:mcp for user:alice``).
#: A space never occurs in an actor name, so the form cannot be mistaken for a plain actor.
ON_BEHALF = " for "


class ActorKind(StrEnum):
    USER = "user"
    AGENT = "agent"
    SYSTEM = "system"
    TOOL = "tool"


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$")


@dataclass(frozen=True, slots=True)
class Actor:
    """An actor is a kind plus a name; its string form is ``kind:name`` (``user:alice``).

    ``on_behalf_of`` names the person an agent acts for (:meth:`delegate`); the string form
    is then ``agent:mcp for user:alice``, which is what the log records as the actor.
    """

    kind: ActorKind
    name: str
    on_behalf_of: Actor | None = None

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise InvalidInput(
                f"actor name {self.name!r} must be 1-128 letters, digits or ._@+- and start alphanumeric",
                where="actor",
            )
        principal = self.on_behalf_of
        if principal is not None and (
            self.kind is not ActorKind.AGENT or principal.kind is not ActorKind.USER or principal.on_behalf_of
        ):
            raise InvalidInput(
                f"only an agent acts on behalf of a person, not {self.kind.value}:{self.name} for {principal}",
                where="actor",
            )

    def __str__(self) -> str:
        own = f"{self.kind.value}:{self.name}"
        return own if self.on_behalf_of is None else f"{own}{ON_BEHALF}{self.on_behalf_of}"

    @property
    def is_person(self) -> bool:
        """A ``user:`` actor acting for itself: the only kind whose word decides."""
        return self.kind is ActorKind.USER and self.on_behalf_of is None

    @classmethod
    def delegate(cls, agent: str, principal: Actor) -> Actor:
        """``agent:<agent>`` acting on behalf of the person ``principal``."""
        return cls(ActorKind.AGENT, agent, on_behalf_of=principal)

    @classmethod
    def parse(cls, text: str) -> Actor:
        """``alice`` is a user; ``agent:claude``, ``tool:mcp-fs``, ``system:organiser`` name the kind."""
        raw = text.strip()
        if ON_BEHALF in raw:  # a delegation is made by the code that delegates, never typed
            raise InvalidInput(f"{raw!r} names an agent acting for a person; give one actor (kind:name)", where="actor")
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


def principal_of(recorded: str) -> str:
    """The person a recorded actor string acts for (``user:alice`` for ``agent:mcp for
    user:alice``), or the string itself: what a person made through their agent is theirs to see."""
    return recorded.rpartition(ON_BEHALF)[2]


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
