"""The ``active_goals`` block (RFC-0013 section 7): one tagged line per intent.

Each item is an element named after its type, tagged with priority, state and creation
date (plus, when they apply: the target date; ``epistemic="INFERRED"`` for a candidate;
``source="SYSTEM_INFERRED"`` (or another source) for an intent that is not the user's own word,
such as one an agent added; ``blocked_by="cancelled: <prerequisite>"`` for one waiting on a
prerequisite that was cancelled, expired or dismissed; ``completion_claimed="by agent:claude,
awaits user:alice"`` for one an agent claims is done, which its person has not decided). All text is
escaped (:func:`escape_text`), so an intent that says ``</active_goals>`` renders as
``&lt;/active_goals&gt;`` and can neither close the block nor forge another item.
Completion summaries, when a query touches them, follow in a ``completed_goals`` block.
"""

from __future__ import annotations

from ._model import EpistemicType, Intent, SourceType, Summary
from ._text import escape_text

__all__ = ["BLOCK_CLOSE", "BLOCK_OPEN", "SUMMARY_CLOSE", "SUMMARY_OPEN", "intent_line", "summary_line"]

BLOCK_OPEN = "<active_goals>"
BLOCK_CLOSE = "</active_goals>"
SUMMARY_OPEN = "<completed_goals>"
SUMMARY_CLOSE = "</completed_goals>"


def intent_line(intent: Intent) -> str:
    tag = intent.intent_type.value.lower()
    attrs = [
        f'priority="{intent.priority.value}"',
        f'state="{intent.state.value}"',
        f'created="{intent.created_at[:10]}"',
    ]
    if intent.target_completion:
        attrs.append(f'due="{intent.target_completion[:10]}"')
    if intent.epistemic_type is EpistemicType.INFERRED:
        attrs.append('epistemic="INFERRED"')
    elif intent.source_type is not SourceType.USER_STATED:
        # An agent's goal (SYSTEM_INFERRED), a tool's, an import: not the user's own word, and
        # the block says so rather than presenting it like one the user stated.
        attrs.append(f'source="{intent.source_type.value}"')
    if intent.blocked_by:
        # RFC-0013 section 6: a cancelled prerequisite does not cancel this intent; its owner
        # must decide (cancel, restructure, replace the dependency). Shown so they can.
        why = "; ".join(f"{b['state'].lower()}: {_short(b['text'])}" for b in intent.blocked_by)
        attrs.append(f'blocked_by="{escape_text(why)}"')
    claim = intent.completion_claim
    if claim:
        # An agent said it is done; the person has not decided. Shown so no agent redoes the
        # work or claims it again, and none takes it as completed either.
        who = f"by {claim['claimed_by']}, awaits {claim['awaits']}"
        attrs.append(f'completion_claimed="{escape_text(who)}"')
    return f"  <{tag} {' '.join(attrs)}>{escape_text(intent.value)}</{tag}>"


def _short(text: str, limit: int = 60) -> str:
    """A prerequisite named in a line: its first words, enough to recognise it."""
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def summary_line(summary: Summary) -> str:
    return f'  <summary created="{summary.created_at[:10]}">{escape_text(summary.text)}</summary>'
