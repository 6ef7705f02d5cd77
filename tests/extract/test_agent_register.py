"""Registers where a question is answered in the next turn: prompts to a coding agent
(``RuleExtractor.agent_channels``) and one-to-one dialogue (``dialogue_channels``).

What ``intently hook claude`` observes is what a developer types to an agent: mostly requests
and questions the agent answers in its next reply. Read as people talking to people, those
filled the review queue with "open questions" and "undertakings" nobody made. The labelled
sessions in ``data/agent-session-*.jsonl`` are real public coding-agent transcripts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from intently import Intently
from intently.extract import AGENT_CHANNELS, DIALOGUE_CHANNELS, RuleExtractor, Turn
from intently.extract._models import CandidateType
from intently.extract._scoring import load_labelled

from .conftest import WEDNESDAY, model_rating_all

DATA = Path(__file__).parent / "data"


def _types(extractor: RuleExtractor, text: str, channel: str) -> set[str]:
    turn = Turn(speaker="user", text=text, time=WEDNESDAY, channel=channel)
    return {c.type.value for c in extractor.extract(turn)}


@pytest.mark.parametrize(
    "text",
    [
        "Should we split the monolith or keep it?",
        "What should the surrounding structure at the top level be?",
        "Can we figure out why all the dates say Just Now?",
    ],
)
def test_a_question_put_to_the_agent_is_not_left_open(rules: RuleExtractor, text: str) -> None:
    assert "OPEN_QUESTION" not in _types(rules, text, "claude-code")


def test_the_same_question_between_people_stays_open(rules: RuleExtractor) -> None:
    assert "OPEN_QUESTION" in _types(rules, "Should we split the monolith or keep it?", "meeting_minutes")


def test_a_stated_pending_decision_is_open_on_every_channel(rules: RuleExtractor) -> None:
    text = "We still haven't decided whether to support Python 3.9."
    assert "OPEN_QUESTION" in _types(rules, text, "claude-code")


def test_undertakings_goals_and_risks_are_still_read_in_prompts(rules: RuleExtractor) -> None:
    assert _types(rules, "Next week I'll write the docs for the new API.", "claude-code") == {"COMMITMENT"}
    assert _types(rules, "Our goal this sprint is to cut p99 latency below 200ms.", "claude-code") == {"GOAL"}
    assert _types(rules, "This might break the mobile app.", "claude-code") == {"RISK"}


@pytest.mark.parametrize(
    "text",
    [
        "I want the start of a TOC block to be determined by the heading.",
        "Use context7 to find out how to add layouts in Nuxt.",
        "Check whether we should cache the results.",
    ],
)
def test_a_description_of_the_work_asked_for_is_no_goal_or_open_question(rules: RuleExtractor, text: str) -> None:
    assert not _types(rules, text, "claude-code") & {"GOAL", "OPEN_QUESTION"}


def test_the_agents_own_next_step_is_its_work_not_an_undertaking(rules: RuleExtractor) -> None:
    said = "I'll create a planning document for the git pull feature."
    for speaker, expected in (("assistant", set()), ("user", {"COMMITMENT"})):
        turn = Turn(speaker=speaker, text=said, time=WEDNESDAY, channel="agent_session")
        assert {c.type.value for c in rules.extract(turn)} == expected
    later = Turn(
        speaker="assistant", text="I'll follow up on the flaky test tomorrow.", time=WEDNESDAY, channel="agent"
    )
    assert {c.type.value for c in rules.extract(later)} == {"COMMITMENT"}


def test_the_recall_layer_is_not_asked_about_prompts() -> None:
    eager = RuleExtractor(model=model_rating_all(10.0))
    text = "Update the session start command to take a task id."
    assert _types(eager, text, "claude-code") == set()
    assert "COMMITMENT" in _types(eager, text, "chat")


def test_agent_channels_are_configurable(ix: Intently) -> None:
    extractor = ix.extraction.extractor
    assert isinstance(extractor, RuleExtractor) and extractor.agent_channels == AGENT_CHANNELS
    path = ix.home.config_path
    text = path.read_text(encoding="utf-8")
    assert 'agent_channels = ["agent", "agent_session", "claude-code"]' in text
    path.write_text(text.replace('"agent", "agent_session", "claude-code"', '"my-agent"'), encoding="utf-8")
    with Intently.open(ix.home.path, actor="user:alice") as again:
        extractor = again.extraction.extractor
        assert isinstance(extractor, RuleExtractor) and extractor.agent_channels == frozenset({"my-agent"})
        turn = Turn(speaker="user", text="Should we split the monolith or keep it?", time=WEDNESDAY, channel="my-agent")
        assert CandidateType.OPEN_QUESTION not in {c.type for c in extractor.extract(turn)}


@pytest.mark.parametrize("path", sorted(DATA.glob("agent-session-*.jsonl")), ids=lambda p: p.stem)
def test_prompts_rarely_propose_what_the_labeller_did_not_find(rules: RuleExtractor, path: Path) -> None:
    """The review queue is what a user of the hook sees: on real sessions, at most one turn in
    ten proposes a type its labeller did not find (measured in docs/extraction.md)."""
    rows = load_labelled(path)
    wrong = 0
    for row in rows:
        gold = {CandidateType(label.type).coarse for label in row.labels}
        found = {c.type.coarse for c in rules.extract(row.turn())}
        wrong += bool(found - gold)
    assert wrong <= len(rows) / 10, (wrong, len(rows))


@pytest.mark.parametrize(
    "text",
    [
        "Let's use python instead of bash",
        "Actually, never mind. Let's continue using bash.",
        "use `@clack/prompts` instead of bun-promptx",
        "I want to use langgraph for the planner",
        "for the normalized name, lets use org/project",  # a later clause
        "Don't use redux, use context instead of it",
    ],
)
def test_the_user_choosing_the_means_is_a_decision(rules: RuleExtractor, text: str) -> None:
    """In a prompt to an agent the user directs the work: choosing a tool or an approach is a
    decision, recorded for review like any other."""
    assert "DECISION" in _types(rules, text, "claude-code")


@pytest.mark.parametrize(
    "text",
    [
        "make sampleMd and expectedToc multiline instead of one long line",  # how a change behaves
        "we could use redis instead of memcached",  # a possibility, not a choice
        "If we use redis instead of memcached, does latency drop?",
        "I don't want to use docker for this",
        "If it fails, let's use the old parser",  # a fallback
        "Should we use sqlite instead of postgres?",  # put to the agent
    ],
)
def test_a_described_change_or_a_possibility_is_not_a_decision(rules: RuleExtractor, text: str) -> None:
    assert "DECISION" not in _types(rules, text, "claude-code")


def test_choices_in_conversation_between_people_keep_the_usual_reading(rules: RuleExtractor) -> None:
    """ "Let's use the remaining time for questions" in a meeting is not a decision of means."""
    assert "DECISION" not in _types(rules, "Let's use the remaining ten minutes for questions.", "meeting")


# -- one-to-one dialogue ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Steven, shall we go shopping tomorrow?",
        "Take a seat, please. How about a cup of tea?",
        "By the way, what kind of stores do we need to go to?",
    ],
)
def test_a_question_to_the_listener_is_settled_in_the_next_turn(rules: RuleExtractor, text: str) -> None:
    """In a conversation between two people the listener answers in the next turn: a question
    there is no open question, whatever its form (the dev and blind DailyDialog sets label 4 of
    their 740 turns as open questions)."""
    assert "OPEN_QUESTION" not in _types(rules, text, "casual_dialogue")
    assert "OPEN_QUESTION" not in _types(RuleExtractor(model=model_rating_all(10.0)), text, "dm")


def test_in_dialogue_a_stated_pending_decision_stays_open_and_the_rest_is_read(rules: RuleExtractor) -> None:
    assert "OPEN_QUESTION" in _types(rules, "We still haven't decided whether to sell the house.", "dialogue")
    assert _types(rules, "Next week I'll book the tickets for our trip.", "dialogue") == {"COMMITMENT"}
    assert "OPEN_QUESTION" in _types(rules, "Should we split the monolith or keep it?", "chat")


def test_dialogue_channels_are_configurable(ix: Intently) -> None:
    extractor = ix.extraction.extractor
    assert isinstance(extractor, RuleExtractor) and extractor.dialogue_channels == DIALOGUE_CHANNELS
    path = ix.home.config_path
    text = path.read_text(encoding="utf-8")
    assert 'dialogue_channels = ["casual_dialogue", "dialogue", "dm", "direct_message"]' in text
    path.write_text(text.replace('"casual_dialogue", "dialogue", "dm", "direct_message"', '"sms"'), encoding="utf-8")
    question = "Should we split the monolith or keep it?"
    with Intently.open(ix.home.path, actor="user:alice") as again:
        extractor = again.extraction.extractor
        assert isinstance(extractor, RuleExtractor) and extractor.dialogue_channels == frozenset({"sms"})
        for channel, stays_open in (("sms", False), ("dm", True)):
            turn = Turn(speaker="user", text=question, time=WEDNESDAY, channel=channel)
            assert (CandidateType.OPEN_QUESTION in {c.type for c in extractor.extract(turn)}) is stays_open
