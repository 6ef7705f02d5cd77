"""The context block handed to Claude Code stays under its 10,000-character cap."""

from __future__ import annotations

from typing import Any

import pytest

from intently import Intently
from intently.context import assemble
from intently.hooks import MAX_CONTEXT_CHARS, context_within_cap


def test_a_large_budget_is_shrunk_until_the_block_fits(ix: Intently) -> None:
    config = ix.home.config_path
    config.write_text(config.read_text().replace("budget = 4000", "budget = 60000", 1))
    with Intently.open(ix.home.path, actor="user:alice") as big:
        for n in range(120):
            big.goals.add(f"Migrate billing export job {n} to the new invoice schema before the audit", priority="HIGH")
        result = context_within_cap(big, "billing export invoice schema migration", session=None)
    assert result.budget < 60000
    assert len(result.text) <= MAX_CONTEXT_CHARS
    goals = result.section("active_goals")
    assert goals.body and goals.engine_omitted + len(goals.omitted) > 0


def test_a_standing_intent_is_charged_once_per_prompt(ix: Intently) -> None:
    intent = ix.triggers.add("Check the rollback plan with Dana", when=["launch"])
    result = context_within_cap(ix, "plan the launch", session="s1")
    assert "rollback plan with Dana" in result.section("standing_intents").body
    assert ix.triggers.show(intent.id).fire_count == 1


def test_a_high_risk_on_hold_reaches_claude_code_once_per_session(ix: Intently) -> None:
    """RFC-0013 §8. The hook sizes the block with previews; a preview used to mark the risk
    as surfaced, so the block actually delivered never held it."""
    risk = ix.goals.add("The vendor may rate-limit the nightly export", type="RISK", priority="HIGH")
    ix.goals.hold(risk.id)
    first = context_within_cap(ix, "tidy the docs", session="s1")
    assert "rate-limit the nightly export" in first.section("active_goals").body
    again = context_within_cap(ix, "tidy the docs", session="s1")
    assert "rate-limit the nightly export" not in again.text
    other = context_within_cap(ix, "tidy the docs", session="s2")
    assert "rate-limit the nightly export" in other.section("active_goals").body
    assert sorted(o.payload["session"] for o in ix.log.read("proj", op="RISK_SURFACED")) == ["s1", "s2"]


def test_a_block_that_fits_asks_each_engine_once(ix: Intently, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook used to size the block with a preview and then assemble it for real, which
    previewed every engine again: each prompt asked the goals engine twice. The sizing now
    runs on the previews the block is decided from."""
    ix.goals.add("Ship the billing export before the audit", priority="HIGH")
    engine = type(ix.goals)
    real = engine.bundle
    asked: list[bool] = []

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(bool(kwargs.get("record", True)))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(engine, "bundle", counted)
    result = context_within_cap(ix, "billing export", session="s1")
    assert "billing export" in result.section("active_goals").body
    assert asked == [False]  # one preview; what it showed is then recorded, not previewed again


def test_a_block_that_cannot_fit_records_nothing(ix: Intently) -> None:
    """A block still over the cap after shrinking is refused before anything it shows is
    recorded (its reminder would be charged for a block Claude Code never got)."""
    intent = ix.triggers.add("Check the rollback plan with Dana", when=["launch"])
    with pytest.raises(RuntimeError, match="characters at budget"):
        assemble(ix, "plan the launch", session="s1", max_chars=50)
    assert ix.triggers.show(intent.id).fire_count == 0
