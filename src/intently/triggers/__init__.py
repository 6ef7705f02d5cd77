"""Standing intents: "when X comes up, remind me to Y", matched deterministically.

Importing this package registers the ``triggers`` tables and the ``TRIGGER_*`` log
appliers, so ``intently log replay`` rebuilds every intent and its fire history.
"""

from __future__ import annotations

from ._engine import Triggers
from ._event import entries_from_event, with_event_entries
from ._index import CompiledIntent, EntryHit, MatchIndex
from ._matcher import Matcher
from ._model import (
    DEFAULT_COOLDOWN,
    DEFAULT_EXPIRY,
    DEFAULT_MAX_FIRES,
    MAX_ENTRIES,
    MAX_REMINDER_CHARS,
    Fire,
    IntentState,
    Scope,
    StandingIntent,
)
from ._result import Hit, MatchResult
from ._synonyms import SynonymTable, load_synonyms, shipped_synonyms_path
from ._timeonly import SCHEDULER_HINT

__all__ = [
    "DEFAULT_COOLDOWN",
    "DEFAULT_EXPIRY",
    "DEFAULT_MAX_FIRES",
    "MAX_ENTRIES",
    "MAX_REMINDER_CHARS",
    "SCHEDULER_HINT",
    "CompiledIntent",
    "EntryHit",
    "Fire",
    "Hit",
    "IntentState",
    "MatchIndex",
    "MatchResult",
    "Matcher",
    "Scope",
    "StandingIntent",
    "SynonymTable",
    "Triggers",
    "entries_from_event",
    "load_synonyms",
    "shipped_synonyms_path",
    "with_event_entries",
]
