"""Deciding, for the intents a turn matched, which may fire and which the block shows.

Pure: it sees stored rows and a turn context, never the store. The fire path calls it
inside its write transaction with the rows just read, so what it decides is what is
charged; previews call it with the live index's copy of the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.tokens import default_counter
from ._index import EntryHit
from ._model import IntentState, StandingIntent
from ._result import Hit, MatchResult, render_block, render_line

__all__ = ["TurnContext", "decide", "ineligible"]


@dataclass(frozen=True)
class TurnContext:
    """Where and when the turn happens, and how big the block may be."""

    now: str
    channel: str | None
    conversation: str | None
    sender: str | None
    max_shown: int
    max_chars: int
    budget: int | None
    problems: tuple[str, ...] = ()


def ineligible(intent: StandingIntent, ctx: TurnContext, *, preview: bool) -> str:
    """Why this stored intent may not fire now ('' if it may). Previews apply due re-arming."""
    state = intent.state
    now = ctx.now
    if preview and state is IntentState.FIRED and intent.rearm_at is not None and intent.rearm_at <= now:
        state = IntentState.ARMED
    if intent.expires_at <= now:
        return f"expired at {intent.expires_at}"
    if state is IntentState.FIRED:
        return f"cooling down until {intent.rearm_at}"
    if state is not IntentState.ARMED:
        return f"state is {state.value}"
    if intent.fire_count >= intent.max_fires:
        return "fire budget spent"
    if intent.snoozed_until and intent.snoozed_until > now:
        return f"snoozed until {intent.snoozed_until}"
    if not intent.scope.allows(ctx.channel, ctx.conversation, ctx.sender):
        return f"out of scope ({intent.scope.describe()})"
    return ""


def decide(
    hits: list[EntryHit], intents: dict[str, StandingIntent], ctx: TurnContext, *, fire: bool
) -> tuple[MatchResult, list[EntryHit]]:
    """Verdicts in rank order, and the entry hits the block shows (the ones to charge).

    Eligible intents fill the block in rank order until ``max_shown`` intents,
    ``max_chars`` characters or the token ``budget`` would be exceeded; the rest are
    reported with the reason and are not charged. The budget holds for the whole rendered
    block, its ``<standing_intents>`` wrapper included: a block that passed line by line but
    not as a whole would be left out by the caller after its fires were charged.
    """
    shown = chars = tokens = 0
    counter = default_counter()
    wrapper = counter.count(render_block([""])) if ctx.budget is not None else 0
    out: list[Hit] = []
    charged: list[EntryHit] = []
    for eh in hits:
        intent = intents.get(eh.intent.id)
        if intent is None:
            continue
        reason = ineligible(intent, ctx, preview=not fire)
        line = render_line(intent.created_at, intent.event, intent.reminder)
        show = False
        if not reason:
            cost = counter.count(line) if ctx.budget is not None else 0
            if shown >= ctx.max_shown:
                reason = f"block full: {ctx.max_shown} intents shown"
            elif chars + len(line) > ctx.max_chars:
                reason = f"block full: {ctx.max_chars} characters"
            elif ctx.budget is not None and wrapper + tokens + cost > ctx.budget:
                reason = f"token budget: {max(ctx.budget - wrapper - tokens, 0)} tokens left"
            else:
                show = True
                charged.append(eh)
                shown += 1
                chars += len(line)
                tokens += cost
        entry = intent.entries[eh.entry] if eh.entry < len(intent.entries) else ()
        out.append(
            Hit(
                id=intent.id,
                reminder=intent.reminder,
                event=intent.event,
                entry=eh.entry,
                entry_terms=tuple(entry),
                matched=eh.matched,
                words=eh.words,
                rarity=eh.rarity,
                created_at=intent.created_at,
                state=intent.state.value,
                text=line,
                eligible=not reason or reason.startswith(("block full", "token budget")),
                shown=show,
                fired=show and fire,
                reason=reason,
            )
        )
    return MatchResult(hits=tuple(out), fired=fire, problems=ctx.problems), charged
