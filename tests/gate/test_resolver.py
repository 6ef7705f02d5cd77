"""Intent resolution: word boundaries, negation, several clauses, delegation, unplaced phrases."""

from __future__ import annotations

from intently.gate import default_bundle, resolve


def _r(text: str):  # type: ignore[no-untyped-def]
    return resolve(text, default_bundle().vocabulary)


def test_word_boundaries_not_substrings() -> None:
    assert "create" not in _r("Open my notebook and read the first page").intents  # "book" inside "notebook"
    assert "create" in _r("Book an hour for the gym on Friday").intents
    assert _r("Check my account balance").intents == frozenset()  # "count" inside "account"


def test_negation_and_its_cancellers() -> None:
    r = _r("Summarize the thread but don't email the client")
    assert "communicate" in r.negated and "communicate" not in r.intents
    r2 = _r("Create the event and do not forget to invite Mark")
    assert "communicate" in r2.intents and not r2.negated


def test_several_clauses_each_count() -> None:
    r = _r("Fix the failing test in the parser, run the tests, and open a pull request. Then delete the old branch.")
    assert {"update", "run", "delete"} <= r.intents


def test_nouns_are_not_verbs() -> None:
    assert "communicate" not in _r("When is the reunion, based on the emails?").intents
    assert "communicate" in _r("Email Bob the agenda").intents


def test_delegation_is_noticed() -> None:
    assert _r("Please do the actions specified in the email from Dana").delegated
    assert not _r("Please summarize the email from Dana").delegated


def test_unplaced_clauses_are_recorded() -> None:
    r = _r("Frobulate the quarterly widgets")
    assert r.unplaced == ("Frobulate the quarterly widgets",)


def test_longest_object_phrase_wins() -> None:
    assert _r("Her email address is sara@example.com").objects == frozenset({"contact"})
    assert "email" in _r("Show me my unread emails").objects


def test_quantities_make_a_request_plural() -> None:
    assert _r("Delete all the old drafts").plural
    assert _r("Delete the 3 largest files").plural
    assert not _r("1. Show the files. 2. Delete the largest file on 2024-05-15").plural
