"""Goals engine (RFC-0013): typed intents with a lifecycle, dependencies and retrieval.

Reach it as ``Intently(...).goals``. Importing this package registers the ``goals`` tables
and the appliers for its operations (documented in ``docs/goals.md``).
"""

from __future__ import annotations

from ._bundle import Bundle, BundleItem, Omitted
from ._claims import CompletionClaimed
from ._custody import person_of, refused_person
from ._decay import DecayProfile
from ._engine import CLEAR, Goals
from ._graph import MAX_DEPTH, MAX_FAN_IN, DependencyCycle, DependencyLimit, check_new_edge
from ._model import (
    CONFIDENCE_TABLE,
    Decision,
    EpistemicType,
    Intent,
    IntentState,
    IntentType,
    LifecycleState,
    Priority,
    SourceType,
    Summary,
)
from ._organiser import OrganiseReport
from ._review import ProposeResult
from ._store import TABLES

__all__ = [
    "CLEAR",
    "CONFIDENCE_TABLE",
    "MAX_DEPTH",
    "MAX_FAN_IN",
    "TABLES",
    "Bundle",
    "BundleItem",
    "CompletionClaimed",
    "DecayProfile",
    "Decision",
    "DependencyCycle",
    "DependencyLimit",
    "EpistemicType",
    "Goals",
    "Intent",
    "IntentState",
    "IntentType",
    "LifecycleState",
    "Omitted",
    "OrganiseReport",
    "Priority",
    "ProposeResult",
    "SourceType",
    "Summary",
    "check_new_edge",
    "person_of",
    "refused_person",
]
