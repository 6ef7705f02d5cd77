"""The ``active_goals`` block (RFC-0013 section 7): one tagged line per intent.

Each item is an element named after its type, tagged with priority, state and creation
date (plus the target date and ``epistemic="INFERRED"`` when they apply). All text is
escaped (:func:`escape_text`), so an intent that says ``</active_goals>`` renders as
``&lt;/active_goals&gt;`` and can neither close the block nor forge another item.
Completion summaries, when a query touches them, follow in a ``completed_goals`` block.
"""

from __future__ import annotations

from ._model import EpistemicType, Intent, Summary
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
    return f"  <{tag} {' '.join(attrs)}>{escape_text(intent.value)}</{tag}>"


def summary_line(summary: Summary) -> str:
    return f'  <summary created="{summary.created_at[:10]}">{escape_text(summary.text)}</summary>'
