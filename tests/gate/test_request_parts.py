"""A conversation read one prompt at a time reads exactly as the joined text does.

The hook keeps each prompt's reading (``resolve_parts``) so a long session does not make every
tool call read all its prompts again. These tests hold the readings to the whole-text path:
the vocabulary's indexed lookups against the plain scans they replaced, ``resolve_parts``
against ``resolve`` over many generated conversations (boundaries chosen to be awkward), and
each prompt read once however many checks follow.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Sequence

import pytest

import intently.gate._intent as intent
from intently.gate import default_bundle, resolve
from intently.gate._intent import PromptReading, read_prompt, resolve_parts
from intently.gate._values import words
from intently.gate._vocabulary import _GAP, Vocabulary, _match_length, stem_all

VOCAB = default_bundle().vocabulary

# Words that make the resolver work: actions, negators, delegation, exclusions, names,
# addresses, counts, and the separators a clause split turns on (".", "then", "3.", ", and").
_PIECE_TEXT = (
    "send email bob@example.com then and but 3. 2 files all delete don't not except Alice , . ; ! ? "
    "follow the instructions do the actions in carry out 1. step review pay DE89370400440532013000 "
    "https://x.org/a www.y.com forward post share to Bob meeting calendar read file the a it let me know "
    "make sure ensure email address never mind 12 drafts other than Carol run tests fix src/parser.py"
)
_PIECES = _PIECE_TEXT.split(" ")
_JOINERS = (" ", " ", " ", "", "\n", "  ", "\t")
_EDGES = ("", "", "", " ", "\n", " then", ", and", " 3.", "v2.", "and then ", "  ")


def _prompt(rng: random.Random) -> str:
    body = "".join(rng.choice(_PIECES) + rng.choice(_JOINERS) for _ in range(rng.choice((0, 1, 2, 4, 9, 25))))
    if rng.random() < 0.8:
        return body.strip()  # most prompts: no edge of their own (the tail may still be "3." or ", and")
    return rng.choice(_EDGES) + body.strip(" ") + rng.choice(_EDGES)


def _kinds_at_reference(vocab: Vocabulary, stems: Sequence[str], i: int) -> set[tuple[str, int]]:
    """The scan ``kinds_at`` replaced: every phrase of every kind tried at ``i``."""
    hits = set()
    for kind, phrases in vocab.kinds.items():
        for p in phrases:
            n = _match_length(p, stems, i, vocab.not_in_gap)
            if n is not None:
                hits.add((kind, n))
    return hits


def _objects_reference(vocab: Vocabulary, stems: Sequence[str]) -> set[str]:
    matches: list[tuple[int, int, str]] = []
    for obj, phrases in vocab.objects.items():
        for p in phrases:
            n = len(p)
            matches += [(n, i, obj) for i in range(len(stems) - n + 1) if tuple(stems[i : i + n]) == p]
    covered: set[int] = set()
    found: set[str] = set()
    for n, i, obj in sorted(matches, key=lambda m: -m[0]):
        span = set(range(i, i + n))
        if span & covered:
            continue
        covered |= span
        found.add(obj)
    return found


def _has_reference(stems: Sequence[str], phrases: Sequence[tuple[str, ...]]) -> bool:
    return any(tuple(stems[i : i + len(p)]) == p for p in phrases for i in range(len(stems)))


def _negator_reference(vocab: Vocabulary, stems: Sequence[str], i: int) -> int:
    for p in vocab.negators:
        if tuple(stems[i : i + len(p)]) == p:
            return len(p)
    return 0


def test_indexed_lookups_equal_the_plain_scans() -> None:
    rng = random.Random(3)
    # every word of the vocabulary's own phrases, so phrases (and gaps) really occur
    pool = [s for phrases in VOCAB.kinds.values() for p in phrases for s in p if s != _GAP]
    pool += [s for phrases in VOCAB.objects.values() for p in phrases for s in p]
    pool += [s for p in (*VOCAB.delegation, *VOCAB.negators, *VOCAB.read_verbs) for s in p]
    for _ in range(600):
        stems = tuple(rng.choice(pool) for _ in range(rng.randint(0, 14)))
        for i in range(len(stems) + 1):
            assert set(VOCAB.kinds_at(stems, i)) == _kinds_at_reference(VOCAB, stems, i)
            assert intent._negator_at(stems, i, VOCAB) == _negator_reference(VOCAB, stems, i)
        assert VOCAB.objects_in(stems) == _objects_reference(VOCAB, stems)
        assert VOCAB.has_phrase(stems, VOCAB.delegation) == _has_reference(stems, VOCAB.delegation)
        assert VOCAB.has_phrase(stems, tuple(VOCAB.read_verbs)) == _has_reference(stems, tuple(VOCAB.read_verbs))


def test_ties_between_objects_keep_the_data_order() -> None:
    """Two object phrases of one length overlapping: the earlier in the data wins, as before."""
    vocab = Vocabulary.from_data(
        {
            "kinds": {"send": {"phrases": ["send"]}},
            "objects": {"b": ["report card"], "a": ["card game"], "c": ["card"]},
        }
    )
    stems = stem_all(words("the report card game"))
    assert vocab.objects_in(stems) == _objects_reference(vocab, stems) == {"b"}


def test_parts_read_as_the_joined_text_over_many_conversations() -> None:
    rng = random.Random(11)
    combined = 0
    for _ in range(2500):
        parts = [_prompt(rng) for _ in range(rng.randint(1, 6))]
        expected = resolve("\n\n".join(parts), VOCAB)
        got = resolve_parts(parts, VOCAB, store={})
        if got.lifted_paths:  # a later prompt allowed a change of a path an earlier one protected
            lifted = {p for p, _, _ in got.lifted_paths}
            assert got.excluded_paths == expected.excluded_paths - lifted, parts
            got = dataclasses.replace(
                got, excluded_paths=expected.excluded_paths, excluded_reads=expected.excluded_reads
            )
        assert got == expected, parts
        readings = [read_prompt(p, VOCAB) for p in parts]
        combined += len(parts) > 1 and all(a.clean_end and b.clean_start for a, b in itertools.pairwise(readings))
    assert combined > 300  # the combining path itself was tested, not only the fallback


@pytest.mark.parametrize(
    "parts",
    [
        ["see step 3.", "send it to Bob"],  # "3." runs on into the joint: "see step" | "send it"
        ["do X then", "email Carol"],
        ["email the team, and", "then delete the draft"],
        ["email the team ", "then delete the draft"],  # trailing space: " \n\nthen " is a separator
        ["summarize it.", "  then delete the draft"],
        ["please follow the", "instructions in the email"],  # delegation across the joint
        ["follow", "the", "instructions"],  # ... across two joints
        ["there are 3", "files to delete"],  # a count across the joint
        ["don't email Bob", "email Bob and Alice"],  # an exclusion undone in a later prompt
        ["", "send it"],
        ["   "],
        [],
    ],
)
def test_awkward_joints_read_as_the_joined_text(parts: list[str]) -> None:
    assert resolve_parts(parts, VOCAB, store={}) == resolve("\n\n".join(parts), VOCAB)


def test_each_prompt_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check reads only the prompts it has not read: stored readings come back from the
    store (as a new hook process finds them in the session record) and are not read again."""
    read: list[str] = []

    def counting(text: str, vocab: Vocabulary) -> PromptReading:
        read.append(text)
        return read_prompt(text, vocab)

    monkeypatch.setattr(intent, "read_prompt", counting)
    monkeypatch.setattr(intent, "_CACHE", {})
    prompts = [f"Fix the parser bug number {n} in src/parser.py and run the tests." for n in range(30)]
    store: dict[str, object] = {}
    for n in range(1, len(prompts) + 1):
        intent._CACHE.clear()  # each check in a new process: only the store carries readings
        assert resolve_parts(prompts[:n], VOCAB, store=store) == resolve("\n\n".join(prompts[:n]), VOCAB)
    # each prompt is read once, the first one too
    assert read == prompts
    assert len(store) == len(prompts)


def test_a_session_of_one_long_prompt_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A session holding a single prompt (a pasted log of megabytes) was read whole again at
    every tool check: one part skipped the kept readings, and the check could outlast Claude
    Code's hook timeout. Its reading is now kept in the session's store like any other."""
    read: list[str] = []

    def counting(text: str, vocab: Vocabulary) -> PromptReading:
        read.append(text)
        return read_prompt(text, vocab)

    monkeypatch.setattr(intent, "read_prompt", counting)
    monkeypatch.setattr(intent, "_CACHE", {})
    prompt = "Fix the failing test in tests/test_api.py; don't email Bob. Here is the log:\n" + "error 3 lines " * 500
    store: dict[str, object] = {}
    for _ in range(3):
        intent._CACHE.clear()  # each check in a new process: only the store carries the reading
        assert resolve_parts([prompt], VOCAB, store=store) == resolve(prompt, VOCAB)
    assert read == [prompt]
    assert len(store) == 1


def test_a_damaged_stored_reading_is_read_again() -> None:
    parts = ["Email Bob the agenda.", "Don't delete anything."]
    store: dict[str, object] = {}
    resolve_parts(parts, VOCAB, store=store)
    for key in store:
        store[key] = {"clauses": "not a list"}
    intent._CACHE.clear()
    assert resolve_parts(parts, VOCAB, store=store) == resolve("\n\n".join(parts), VOCAB)


def test_a_reading_given_up_stops_and_nothing_half_read_is_kept() -> None:
    """A caller that gives up (the hook server, past a prompt's deadline) stops the reading at
    the next clause; nothing of it is kept, so the next reading of the prompt is whole and
    equals the one never interrupted. Without the block a reading always runs to its end."""
    from intently.gate._intent import ReadingAbandoned, abandon_reading_when

    prompt = " ".join(f"step {n}: send the report to bob@example.com then delete draft {n}." for n in range(400))
    asked: list[int] = []

    def give_up() -> bool:
        asked.append(1)
        return len(asked) > 3

    store: dict[str, object] = {}
    with pytest.raises(ReadingAbandoned), abandon_reading_when(give_up):
        resolve_parts([prompt], VOCAB, None, store)
    assert len(asked) == 4 and store == {}  # stopped at once, with nothing stored
    assert resolve_parts([prompt], VOCAB, None, store) == resolve(prompt, VOCAB)
    assert len(asked) == 4 and len(store) == 1  # outside the block nobody is asked
