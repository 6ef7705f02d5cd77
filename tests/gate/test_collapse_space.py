"""White space is collapsed by splitting, and exactly as the regex did it.

Every check normalises the user's whole request (``Ledger.add_declared``: its value and its
one segment), and after a pasted log of megabytes the ``\\s+`` substitution took about a fifth
of a second of each tool call's process, twice. ``collapse_space`` splits and joins instead;
these tests hold it, and what provenance keeps of a request, to the regex's answer for every
white-space character there is.
"""

from __future__ import annotations

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from intently.gate._provenance import Ledger, Origin
from intently.gate._values import collapse_space, normalise

_REGEX = re.compile(r"\s+")


def _by_regex(text: str) -> str:
    return _REGEX.sub(" ", text).strip()


#: Every character the regex's ``\s`` matches, and every one ``str.isspace`` accepts.
_WHITE = sorted({c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace() or _REGEX.fullmatch(c)})


def test_the_regex_and_str_split_know_the_same_white_space() -> None:
    assert all(c.isspace() and _REGEX.fullmatch(c) for c in _WHITE)
    assert "\u00a0" in _WHITE and "\x1c" in _WHITE and "\u3000" in _WHITE  # not only ASCII
    for c in _WHITE:
        assert collapse_space(f"{c}a{c}{c}b{c}") == _by_regex(f"{c}a{c}{c}b{c}") == "a b"


_TEXT = st.text(alphabet=st.sampled_from([*_WHITE, "a", "B", "1", ".", "@", "é", "\u200b", "-"]), max_size=60)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_collapse_space_is_the_regex_substitution(text: str) -> None:
    assert collapse_space(text) == _by_regex(text)


@settings(max_examples=200, deadline=None)
@given(_TEXT)
def test_a_declared_request_is_kept_as_before(text: str) -> None:
    """The request's segment and normal form, what argument values are compared with, are
    those of its regex-collapsed text, as before."""
    ledger = Ledger(lambda _: False, lambda _: False)
    ledger.add_declared(Origin.USER, "request", text)
    record = ledger.records[-1]
    assert [s.text for s in record.segments] == [_by_regex(text).lower()]
    assert record.leaves == {normalise(_by_regex(text))}
