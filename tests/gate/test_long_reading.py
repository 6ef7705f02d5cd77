"""A prompt of pasted log, code and prose is read whole, with work that grows with what can
matter in it, not with every word of it.

A 1.8 MB prompt took several seconds of CPU to read (and, on a loaded machine, more than the
Claude Code hook's 20 s deadline, so every tool call after it was blocked until ``/clear``):
at every word the resolver tried the negators and the action phrases, the exclusion scope
tried the exclusion phrases and the negators, each clause rebuilt the index of the reading
verbs, and the clause split ran a second time over the whole text only to see how its end
joins the next prompt. None of that read less: these tests hold the readings to what the
slow paths give, and count the work, not the time.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from intently.gate import _intent as intent
from intently.gate import default_bundle
from intently.gate._intent import _separators, read_prompt, resolve, resolve_parts

from .test_clause_split import _ATOMS

SRC = Path(intent.__file__).resolve().parents[1]
DOCS = Path(intent.__file__).resolve().parents[3] / "docs"


def _mixed_text(chars: int) -> str:
    """Real text as users paste it: the package's own source, then its documentation."""
    parts = [p.read_text(encoding="utf-8") for p in sorted(SRC.rglob("*.py"))]
    parts += [p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md"))]
    return "\n\n".join(parts)[:chars]


def test_the_end_of_a_prompt_is_scanned_from_where_its_own_scan_can_resume() -> None:
    """``clean_end`` needs the separators of the prompt with the next one's joint after it: the
    scan resumes near the end instead of running over the whole prompt again, and finds what
    the whole scan finds there."""
    rng = random.Random(20261201)
    resumed = 0
    for n in range(20_000):
        text = "".join(rng.choice(_ATOMS) for _ in range(rng.randint(0, 30 if n % 2 else 120)))
        joined = text + "\n\n"
        at = intent._resume_at(text, _separators(text))
        whole = _separators(joined)
        assert _separators(joined, at) == [s for s in whole if s[0] >= at], repr(text)
        assert all(end <= at or start >= at for start, end in whole), repr(text)
        resumed += at > 0
    assert resumed > 5_000  # most texts long enough resume past their start


def test_a_long_text_resumes_near_its_end() -> None:
    """Almost any cut of real pasted text resumes within its last 2,000 characters (which cut
    a prompt ends at is up to the user, and the package's own source, which this text is, moves
    with every change, so one fixed cut would test whatever line it happens to land in)."""
    full = _mixed_text(300_000)
    cuts = range(100_000, 300_000, 997)
    near = sum(intent._resume_at(t, _separators(t)) > len(t) - 2_000 for t in (full[:c] for c in cuts))
    assert near >= 0.95 * len(cuts)


@pytest.mark.parametrize("chars", [3_000, 60_000])
def test_the_fast_paths_read_as_the_slow_ones(chars: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Passing over the words at which nothing can start gives the same reading as trying
    every word (the vocabulary's heads switched off), on real text with orders, negations and
    exclusions spliced in."""
    vocab = default_bundle().vocabulary
    orders = (
        "Don't send anything to Bob.",
        "email the report to carol@example.com, but not to eve@example.com",
        "Do not touch src/intently/core/files.py and then run pytest",
        "Pay Alice 100 euros except Bob",
        "never mind, delete the draft",
        "Please forward the notes to Dave, not Frank.",
    )
    base = _mixed_text(chars)
    rng = random.Random(chars)
    cuts = sorted(rng.sample(range(len(base)), len(orders)))
    bounds = [0, *cuts]
    text = "".join(base[bounds[i] : bounds[i + 1]] + "\n" + order + "\n" for i, order in enumerate(orders[:-1]))
    text += base[bounds[-2] :] + "\n" + orders[-1]
    fast = read_prompt(text, vocab)
    monkeypatch.setitem(intent._HEADS, ("clause", vocab.fingerprint), None)
    monkeypatch.setitem(intent._HEADS, ("opener", vocab.fingerprint), None)
    intent._mention.cache_clear()
    slow = read_prompt(text, vocab)
    assert fast == slow
    request = resolve_parts([text], vocab)
    assert "eve@example.com" in request.excluded_values  # (Bob is named elsewhere in the source, outside a scope)
    assert request == resolve(text, vocab)


def test_a_long_log_is_tried_only_at_the_words_that_can_start_something(monkeypatch: pytest.MonkeyPatch) -> None:
    """The negators and the exclusion scope are tried at the words that open one, not at
    every word of a pasted file; and an instruction deep inside is still read."""
    vocab = default_bundle().vocabulary
    text = (
        _mixed_text(150_000)
        + "\nDo not touch the config and don't email zed.owner@unique-test.example.\n"
        + _mixed_text(50_000)
    )
    tried = {"negator": 0, "opener": 0}
    negator_at, scope_opener = intent._negator_at, intent._scope_opener

    def counted_negator(*args: object) -> int:
        tried["negator"] += 1
        return negator_at(*args)  # type: ignore[arg-type]

    def counted_opener(*args: object) -> int:
        tried["opener"] += 1
        return scope_opener(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(intent, "_negator_at", counted_negator)
    monkeypatch.setattr(intent, "_scope_opener", counted_opener)
    reading = read_prompt(text, vocab)
    words = reading.count
    assert tried["negator"] < words // 5 and tried["opener"] < words // 5, (tried, words)
    request = resolve_parts([text], vocab)
    assert "zed.owner@unique-test.example" in request.excluded_values
    assert request.negated or request.excluded_values
