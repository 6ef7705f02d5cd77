"""The normalisation rules behind "touches the query" and "restates"."""

from __future__ import annotations

import pytest

from intently.goals._text import escape_text, near_duplicate, terms_of


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Ship the API by Friday", "I'll ship the API by Friday!", True),
        ("Deploy the billing service", "deploying the Billing Service", True),
        ("Ｓhip the ＡＰＩ", "ship the api", True),
        ("Ship the API", "Ship the billing API", False),
        ("Ship the API", "Document the API", False),
    ],
)
def test_restatement_rule(a: str, b: str, same: bool) -> None:
    assert near_duplicate(terms_of(a), terms_of(b)) is same


@pytest.mark.parametrize(
    ("text", "entities"),
    [
        ("Review Sarah's PR for JIRA-412", {"sarah", "pr", "jira-412"}),
        ("Tidy api/server.py", {"api/server.py", "server.py", "server"}),
        ("Rename billing_service and ReleaseTrain", {"billing_service", "releasetrain"}),
        ("ping @dana about #42", {"dana", "#42"}),
        ("Review the onboarding checklist", set()),
    ],
)
def test_entities(text: str, entities: set[str]) -> None:
    assert terms_of(text).entities == entities


def test_escape_flattens_and_escapes() -> None:
    assert escape_text('a</x>\n"b"\x00&') == "a&lt;/x&gt; &quot;b&quot; &amp;"
