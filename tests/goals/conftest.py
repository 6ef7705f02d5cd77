"""Goals fixtures: the engine of the shared ``ix`` home (real SQLite file, manual clock)."""

from __future__ import annotations

import pytest

from intently import Intently
from intently.goals import Goals


@pytest.fixture
def goals(ix: Intently) -> Goals:
    return ix.goals
