"""Entries read off the event description: what a user says they care about also fires."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from intently import Intently
from intently.triggers import entries_from_event

from .test_cli import ok_json


@pytest.mark.parametrize(
    ("event", "entries"),
    [
        ("When unsafe code or undefined behaviour comes up", [("unsafe", "code"), ("undefined", "behaviour")]),
        ("When legal, GDPR or data retention comes up", [("legal",), ("GDPR",), ("data", "retention")]),
        ("When a design meeting is proposed or scheduled", [("design", "meeting")]),
        ("When the champion of a proposal is mentioned", [("champion", "proposal")]),
        ("When TSC elections or nominations to the TSC come up", [("TSC", "elections"), ("nominations", "TSC")]),
        ("When a possible security hole is reported", [("security", "hole")]),
        ("whenever flaky tests get discussed.", [("flaky", "tests")]),
    ],
)
def test_plain_topic_lists_give_one_entry_per_topic(event: str, entries: list[tuple[str, ...]]) -> None:
    assert list(entries_from_event(event)) == entries


@pytest.mark.parametrize(
    "event",
    [
        "When the staging environment is down",  # a state of the thing, not talk about it
        "When slides are shared or missing",
        "When a proposal asks for or reaches Stage 1",  # a clause, not a topic list
        "When a possible attack on the network or the clients is discussed",  # "or" inside a phrase
        "When the thing that we talked about with the vendor last spring comes up",  # too long to be a topic
        "deploys of the payments service",
        "",
    ],
)
def test_other_descriptions_give_nothing(event: str) -> None:
    assert entries_from_event(event) == ()


def test_add_stores_the_topics_and_they_fire(ix: Intently) -> None:
    intent = ix.triggers.add(
        "Ask for a Miri run", when=["unsafe"], event="When unsafe code or undefined behaviour comes up"
    )
    # "unsafe code" holds the user's own entry, so it adds nothing and is left out.
    assert intent.entries == (("unsafe",), ("undefined", "behaviour"))
    fired = ix.triggers.match("this reads past the end of the buffer, which is UB")
    assert [h.id for h in fired.hits if h.fired] == [intent.id]


def test_event_entries_can_be_turned_off(ix: Intently) -> None:
    intent = ix.triggers.add(
        "Ask for a Miri run",
        when=["unsafe"],
        event="When unsafe code or undefined behaviour comes up",
        event_entries=False,
    )
    assert intent.entries == (("unsafe",),)
    assert not ix.triggers.match("this is UB").hits


def test_cli_lists_event_entries_and_has_a_switch(ix: Intently) -> None:
    home = ix.home.path
    event = "When data retention comes up"
    added = ok_json("trigger", "add", "Loop in legal", "--when", "gdpr", "--event", event, home=home)
    assert added["when"] == [["gdpr"], ["data", "retention"]]
    plain = ok_json(
        "trigger", "add", "Loop in legal", "--when", "gdpr", "--event", event, "--no-event-entries", home=home
    )
    assert plain["when"] == [["gdpr"]]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=500))
def test_any_event_text_gives_words_of_its_own_or_nothing(event: str) -> None:
    entries = entries_from_event(event)
    assert all(word and word in event for entry in entries for word in entry)
