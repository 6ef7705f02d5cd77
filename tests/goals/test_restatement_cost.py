"""A turn with many candidates: each stored intent's text is read once, and the answers stay.

``find_restatement`` compares each candidate with up to 500 live intents sharing a word. It
used to read every one of their texts again for every candidate (quadratic in a busy turn);
now each text's terms are kept, and only the matching intent is loaded whole.
"""

from __future__ import annotations

import pytest

import intently.goals._review as review
from intently.goals import Goals
from intently.goals._text import Terms, terms_of


def test_many_candidates_read_each_stored_text_once(goals: Goals, monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []

    def counting(*texts: str | None) -> Terms:
        read.extend(t for t in texts if t)
        return terms_of(*texts)

    monkeypatch.setattr(review, "terms_of", counting)
    review._value_terms.cache_clear()
    things = ["parser", "config loader", "release notes", "retry loop", "cache"]
    statuses = []
    for n in range(60):  # every candidate shares "fix" and "issue" with all before it
        text = f"Fix the {things[n % 5]} issue in module{n}"
        statuses.append(goals.propose("COMMITMENT", text, evidence_id=f"turn-{n}").status)
    assert statuses == ["created"] * 60
    assert len(read) == len(set(read))  # no stored text was read twice
    # the kept terms still find a restatement, and load the intent it restates whole
    again = goals.propose("COMMITMENT", "I'll fix the cache issue in module4!", evidence_id="turn-x")
    assert again.status == "attached" and again.intent is not None
    assert again.intent.value == "Fix the cache issue in module4"
    assert again.intent.evidence_ids == ("turn-4", "turn-x")
