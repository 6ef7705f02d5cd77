"""Salience decay (RFC-0007), computed at read time so nothing is rewritten as time passes.

Salience decays exponentially, ``s * exp(-lambda * days)``, counted from the intent's last
modification, at the rate of its profile. RISK intents never decay (RFC-0013 section 8): a
risk ignored for a month is still a risk. Pinned intents (salience 1.0) never decay either.
"""

from __future__ import annotations

import math
from datetime import datetime
from enum import StrEnum

from ..core.clock import parse_time
from ._model import EpistemicType, IntentType

__all__ = ["DecayProfile", "current_salience", "profile_for"]


class DecayProfile(StrEnum):
    PERMANENT = "PERMANENT"
    SLOW = "SLOW"
    MEDIUM = "MEDIUM"
    FAST = "FAST"
    RAPID = "RAPID"

    @property
    def rate(self) -> float:
        """lambda per day."""
        return _RATES[self]


_RATES = {
    DecayProfile.PERMANENT: 0.0,
    DecayProfile.SLOW: 0.005,
    DecayProfile.MEDIUM: 0.02,
    DecayProfile.FAST: 0.07,
    DecayProfile.RAPID: 0.2,
}

# RFC-0007 default profile per epistemic type.
_BY_EPISTEMIC = {
    EpistemicType.OBSERVED: DecayProfile.SLOW,
    EpistemicType.ASSERTED: DecayProfile.MEDIUM,
    EpistemicType.CONDITIONAL: DecayProfile.MEDIUM,
    EpistemicType.INFERRED: DecayProfile.FAST,
    EpistemicType.HYPOTHETICAL: DecayProfile.RAPID,
    EpistemicType.UNVERIFIED: DecayProfile.RAPID,
    EpistemicType.DEPRECATED: DecayProfile.RAPID,
}


def profile_for(intent_type: IntentType, epistemic: EpistemicType, salience: float) -> DecayProfile:
    if intent_type is IntentType.RISK or salience >= 1.0:
        return DecayProfile.PERMANENT
    return _BY_EPISTEMIC[epistemic]


def current_salience(
    salience: float, intent_type: IntentType, epistemic: EpistemicType, since: str, now: datetime
) -> float:
    """Salience decayed from ``since`` (RFC 3339) to ``now``."""
    rate = profile_for(intent_type, epistemic, salience).rate
    if rate == 0.0:
        return salience
    days = max(0.0, (now - parse_time(since)).total_seconds() / 86400.0)
    return salience * math.exp(-rate * days)
