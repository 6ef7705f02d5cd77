"""The request's atoms, amounts and payees are scanned once per request and kept.

A hook runs each check in a new process, and each check used to scan the whole conversation
again for them (seconds of CPU per check after a pasted log of megabytes). They are now kept in
the readings mapping the caller stores; these tests hold kept facts to a fresh scan and the
decisions made from them to the decisions made without them.
"""

from __future__ import annotations

from typing import Any

import pytest

from intently.gate import Gate, Level
from intently.gate._request_facts import RequestFacts, facts_key, request_facts

from .test_known_gaps import DE, GB, PAY, TWO_PAYEES

REQUESTS = [
    TWO_PAYEES,
    f"Alice's IBAN is {DE}; pay her 100. Bob's IBAN is {GB}; pay him 50.",
    "Pay Alice €1 200, one hundred euros and 5% of 3.000,50 to alice@example.com by 2026-03-01",
    "Summarise https://example.com/a and nothing else",
    "",
]


@pytest.mark.parametrize("text", REQUESTS)
def test_kept_facts_read_back_as_the_scan_gives_them(text: str) -> None:
    store: dict[str, Any] = {}
    scanned = request_facts(text, store)
    assert scanned == RequestFacts.scan(text)
    assert list(store) == [facts_key(text)]
    assert RequestFacts.from_json(store[facts_key(text)]) == scanned


@pytest.mark.parametrize("damage", [None, [], {"atoms": "x"}, {"atoms": [], "amounts": [], "payees": [{"iban": 3}]}])
def test_a_damaged_kept_entry_is_scanned_again_and_replaced(damage: Any) -> None:
    store: dict[str, Any] = {facts_key(TWO_PAYEES): damage}
    assert request_facts(TWO_PAYEES, store) == RequestFacts.scan(TWO_PAYEES)
    assert store[facts_key(TWO_PAYEES)] == RequestFacts.scan(TWO_PAYEES).to_json()


def test_facts_are_bound_to_the_request_text() -> None:
    """Another request has another key: what was kept for one never answers for the other."""
    store: dict[str, Any] = {}
    request_facts(TWO_PAYEES, store)
    other = TWO_PAYEES.replace("100", "900")
    assert facts_key(other) not in store
    assert request_facts(other, store).amounts != request_facts(TWO_PAYEES, store).amounts


@pytest.mark.parametrize(
    ("iban", "amount", "subject", "level"),
    [
        (GB, 100, "Dinner - Alice", Level.BLOCK),  # Alice's payment to Bob's account
        (GB, 50, "Taxi - Bob", Level.ALLOW),
        (DE, 100, "Dinner - Alice", Level.ALLOW),
    ],
)
def test_a_check_from_kept_facts_decides_as_one_that_scanned(
    iban: str, amount: int, subject: str, level: Level
) -> None:
    """The second session reads the payees and amounts the first kept, and decides the same."""
    readings: dict[str, Any] = {}
    call = {"recipient": iban, "amount": amount, "subject": subject, "date": "2026-03-01"}
    first = Gate.from_tools([PAY]).session(user_request=TWO_PAYEES, readings=readings).check("send_money", call)
    assert facts_key(TWO_PAYEES) in readings
    second = Gate.from_tools([PAY]).session(user_request=TWO_PAYEES, readings=readings).check("send_money", call)
    assert first.level is second.level is level, (first.reason, second.reason)
    assert first.rule_ids == second.rule_ids
