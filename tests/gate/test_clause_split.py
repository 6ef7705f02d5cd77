"""The clause split reads a long prompt in time linear in its length, with the same clauses.

The split was one regular expression whose white-space and digit alternatives backtracked over
a whole run at each of its characters: a prompt holding a long blank stretch or digit string
(a pasted table, a dump) took minutes to read, and the Claude Code hook, which reads the
session's prompts at every tool call, blocked every call at its deadline. ``_separators`` finds
the same matches in one pass; these tests hold it to the pattern it replaces, match for match,
and hold a long prompt's reading to a time a hook can afford.
"""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap

from intently.gate._intent import _CLAUSE_SPLIT, _separators, _split

# What the pattern turns on: every kind of white space (a newline and others, Unicode too),
# punctuation before a run, the joint words and their look-alikes, digits (Unicode too) and "N.".
_ATOMS = (
    " ", "  ", "\n", "\n\n", "\t", "\r", "\xa0", "\u2003", "\x1c", "\x85", ",", ".", "!", "?", ";", ":",
    "1", "23", "\u0663", "and", "then", "but", "and then", "and also", "andy", "butt", "x", "Bob", "1.",
    " 2. ", ", and ", ", then", "send",
)  # fmt: skip


def test_separators_are_the_patterns_matches() -> None:
    rng = random.Random(20261201)
    for _ in range(30_000):
        text = "".join(rng.choice(_ATOMS) for _ in range(rng.randint(0, 24)))
        assert _separators(text) == [m.span() for m in _CLAUSE_SPLIT.finditer(text)], repr(text)
        assert _split(text) == _CLAUSE_SPLIT.split(text), repr(text)


def test_long_runs_split_as_the_pattern_does() -> None:
    for text in (
        "send it" + " " * 3000 + "then email Bob",
        "send it" + " \n" * 1500 + "x",
        "1" * 3000 + ". send it",
        "do not email Bob" + "\t" * 3000 + "2. email Carol",
        "Stop." + " " * 3000 + "then go",
    ):
        assert _separators(text) == [m.span() for m in _CLAUSE_SPLIT.finditer(text)]


def test_a_prompt_with_long_blank_and_digit_runs_is_read_in_time() -> None:
    # In a fresh interpreter with a deadline, as the hook runs it: before, this took minutes.
    script = textwrap.dedent(
        """
        import time
        from intently.gate import default_bundle
        from intently.gate._intent import read_prompt, resolve_parts
        vocab = default_bundle().vocabulary
        text = (
            "Don't send anything to Bob." + " " * 200_000 + "\\n" + "7" * 200_000
            + "\\n" + "| cell" + " " * 100_000 + "|\\nEmail Carol the report."
        )
        started = time.monotonic()
        read_prompt(text, vocab)
        took = time.monotonic() - started
        request = resolve_parts([text], vocab)
        print(took, sorted(request.excluded_names), sorted(request.intents))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    took, *reading = done.stdout.split(" ", 1)
    assert float(took) < 10, done.stdout
    assert "'bob'" in reading[0]  # the exclusion before the long runs is still read
    assert "'carol'" not in reading[0]
