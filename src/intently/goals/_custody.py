"""Whose goal it is, and the one rule that follows: only a person ends a person's goal.

RFC-0013 section 6 leaves the fate of an intent to "the user or owning agent". An agent (one
acting for a person through the MCP server, ``agent:mcp for user:alice``, or one acting as
itself, ``agent:ci``) or a tool that could cancel, complete or supersede a person's goal could
drop the person's word because a page it read told it to, and the goal would leave every
context block as if the person had decided. So ending a person's goal is the person's act: an
agent's ``cancel``, ``complete`` or ``supersede`` of one is refused (``PermissionDenied``,
HTTP 403, an MCP tool error) naming the goal, whose it is and the command the person runs.
Holding it (reversible) and everything a person does are unchanged, and an agent's own goals
(what it stated and no person made theirs) stay fully under its control. So does a goal a
person gave an agent: its owner acting as itself (``agent:ci`` for a goal owned by
``agent:ci``) is the "owning agent" the RFC names, as for ``archive``.

Whose goal it is must not be changed by the agent it binds: an agent that set the owner of the
person's goal to itself could then end it. So changing the owner of a person's goal is the
person's act too (:func:`guard_owner_change`, for ``edit``). So is changing the person's words:
its text, type, completion criteria and structured value (:func:`guard_persons_words`); an agent
that could lower the criteria could then claim the goal done against a bar it wrote.

A goal is a person's when any of these says so, because each can be changed apart from the
others and the rule must not be undone by rewriting one of them (an agent clearing the owner
of a goal it stated for a person, then cancelling it):

- its ``owner`` is a person (``user:bob``): who is responsible for it (RFC-0013 section 2);
- a person stated it (``asserted_by`` is a ``user:`` actor acting for itself);
- it is a person's word (source ``USER_STATED`` or ``USER_DEMONSTRATED``): a person added,
  confirmed or endorsed it.

A candidate awaiting review is not covered here: :func:`._review.guard_candidate` decides who
acts on those (a person, or agents where the home opts in with ``agents_may_review``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.actors import Actor, ActorKind
from ..core.errors import InvalidInput, PermissionDenied
from ._model import EpistemicType, Intent, SourceType, intent_label

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = [
    "PERSONS_WORDS",
    "guard_owner_change",
    "guard_persons_goal",
    "guard_persons_words",
    "person_of",
    "refused_person",
]

_PERSON_WORD = frozenset({SourceType.USER_STATED, SourceType.USER_DEMONSTRATED})


def _person(text: str | None) -> str | None:
    """``text`` if it names a person acting for themself (``user:bob``), else None."""
    if not text:
        return None
    try:
        actor = Actor.parse(text)
    except InvalidInput:  # ``agent:mcp for user:alice`` (a delegation) is no person
        return None
    return str(actor) if actor.kind is ActorKind.USER else None


def _endorser(intent: Intent) -> str | None:
    for event in reversed(intent.events):
        who = event.get("payload", {}).get("endorsed_by") if isinstance(event.get("payload"), dict) else None
        if who:
            return str(who)
    return None


def person_of(intent: Intent) -> str | None:
    """The person whose goal ``intent`` is (module docstring), or None for an agent's own.

    The owner comes first (the person responsible), then who stated it, then who endorsed it;
    ``"a person"`` when its source is a person's word and the log names no one in particular."""
    if intent.epistemic_type is EpistemicType.INFERRED:
        return None
    owner = _person(intent.owner)
    if owner is not None:
        return owner
    stated = _person(intent.asserted_by)
    if stated is not None:
        return stated
    if intent.source_type in _PERSON_WORD:
        return _endorser(intent) or "a person"
    return None


def refused_person(rt: Runtime, intent: Intent) -> str | None:
    """The person whose decision ending ``intent`` is, when ``rt.actor`` may not take it for
    them; None when the actor is a person, the owning agent, or the goal is an agent's own."""
    if rt.actor.is_person or intent.owner == str(rt.actor):  # a person, or the owning agent
        return None
    return person_of(intent)


def guard_persons_goal(rt: Runtime, intent: Intent, act: str, command: str) -> None:
    """Refuse a non-person's ``act`` (``cancel``, ``complete``, ``supersede``) on a person's goal.

    ``command`` is what the person runs instead (``intently goal cancel ID``). The refusal names
    the goal, its owner and whose goal it is, so the agent can tell the person what to do."""
    person = refused_person(rt, intent)
    if person is None:
        return
    owner = intent.owner or "none"
    # the console offers Complete (not cancel or supersede): say so where it helps the person
    also = " (or Complete in the web console); tell them the work is done" if act == "complete" else ""
    raise PermissionDenied(
        f"{rt.actor} cannot {act} {intent_label(intent.id)} (owner: {owner}): it is {person}'s goal, and ending "
        f"a person's goal is their decision, not an agent's (RFC-0013 section 6); {person} runs `{command}`{also}"
    )


def guard_owner_change(rt: Runtime, intent: Intent, new_owner: str | None) -> None:
    """Refuse a non-person's change of the owner of a person's goal (module docstring)."""
    if rt.actor.is_person or new_owner == intent.owner:
        return
    person = person_of(intent)
    if person is None:
        return
    raise PermissionDenied(
        f"{rt.actor} cannot change the owner of {intent_label(intent.id)} (owner: {intent.owner or 'none'}) "
        f"to {new_owner or 'none'}: it is {person}'s goal, and who answers for a person's goal is their "
        f"decision, not an agent's; {person} runs `intently goal edit {intent.id} --owner NAME`"
    )


#: The fields of a goal that are the person's words, as the ``changes`` of an INTENT_UPDATE
#: name them, with what the refusal calls them and how the person changes them.
PERSONS_WORDS: dict[str, tuple[str, str]] = {
    "value": ("text", "--text TEXT"),
    "intent_type": ("type", "--type TYPE"),
    "completion_criteria": ("completion criteria", "--criteria TEXT"),
    "structured_value": ("structured value", ""),
}


def guard_persons_words(rt: Runtime, intent: Intent, changes: dict[str, Any]) -> None:
    """Refuse a non-person's change of the words of a person's goal (:data:`PERSONS_WORDS`).

    The words are the person's: an agent that rewrote "Ship the API by Friday" as "Draft an API
    plan" would change what every context block tells every agent to pursue, with nothing on the
    card to say the words are no longer theirs. The completion criteria are their words too, and
    the sharper case: an agent that did the work could lower the bar ("tests pass" to "a draft
    exists") and then claim the goal done against criteria it wrote. The type says what kind of
    word it is (a goal, a commitment, a risk, a question; a risk expires and alerts where a goal
    is overdue), and the structured value is the same statement in structured form. Priority, due
    date, stakeholders, note and hold/resume stay open to an agent with write access (they are
    reversible and the log names who did them); the words, like the goal's end and its owner,
    are the person's to change. A field set to what it already is changes nothing and passes."""
    changed = [f for f in PERSONS_WORDS if f in changes and changes[f] != _current(intent, f)]
    if not changed:
        return
    person = refused_person(rt, intent)
    if person is None:
        return
    fields = " and ".join(PERSONS_WORDS[f][0] for f in changed)
    flags = " ".join(PERSONS_WORDS[f][1] for f in changed if PERSONS_WORDS[f][1])
    how = f"`intently goal edit {intent.id} {flags}`" if flags else f"`goals.edit({intent.id!r}, structured_value=...)`"
    raise PermissionDenied(
        f"{rt.actor} cannot change the {fields} of {intent_label(intent.id)} (owner: {intent.owner or 'none'}): "
        f"it is {person}'s goal, and its words are theirs, not an agent's; propose the change to {person}, "
        f"who runs {how} (or supersedes it)"
    )


def _current(intent: Intent, field: str) -> Any:
    """The stored value of INTENT_UPDATE's ``field`` on ``intent``, as ``changes`` spells it."""
    if field == "intent_type":
        return intent.intent_type.value
    return getattr(intent, field)
