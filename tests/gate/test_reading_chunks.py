"""A prompt of megabytes is read chunk by chunk, each chunk's reading kept on its own, and the
chunks are combined into exactly the reading of the whole prompt, once all of them are read.

A Claude Code hook process that gets about 3 s of CPU in its 20 s could not read a 1.8 MB
pasted prompt whole, and kept nothing of a reading it did not finish: every tool call started
over and was blocked at its deadline. These tests hold the combined reading to the whole
text's (clause for clause, on real pasted text and on generated texts cut at every kind of
line break) and count the readings a resumed process makes, not the time it takes.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from intently.gate import _intent as intent
from intently.gate import default_bundle
from intently.gate._intent import (
    ReadingAbandoned,
    abandon_reading_when,
    cut_prompt,
    read_parts,
    reading_key,
    reading_keys,
    resolve,
    resolve_parts,
)

from .test_clause_split import _ATOMS
from .test_long_reading import _mixed_text

_ORDERS = (
    "Don't send anything to Bob.",
    "email the report to carol@example.com, but not to eve@example.com",
    "Do not edit src/intently/core/files.py and then run pytest",
    "Pay Alice 100 euros except Bob",
    "never mind, delete the draft",
    "Please forward the notes to Dave, not Frank.",
    "Look at step 3.",
    "then",
)


def _log(chars: int, seed: int) -> str:
    """Log lines, one newline apart (no blank line to cut at), some ending in "3." or "and then"."""
    rng = random.Random(seed)
    lines, size = [], 0
    ends = ("went on.", "wrote 3.", "and then", "step 12.", "ok", "failed, and")
    while size < chars:
        line = f"{rng.randint(0, 99999)} worker {rng.randint(1, 9)}: cache {rng.choice(ends)}"
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def _pasted(chars: int, seed: int) -> str:
    """Source, docs and logs as users paste them, with orders, negations and exclusions spliced in."""
    rng = random.Random(seed)
    base = _mixed_text(chars // 2) + "\n" + _log(chars // 2, seed)
    cuts = sorted(rng.sample(range(len(base)), len(_ORDERS)))
    bounds = [0, *cuts, len(base)]
    return (
        "".join(base[bounds[i] : bounds[i + 1]] + "\n" + order + "\n" for i, order in enumerate(_ORDERS))
        + base[bounds[-1] :]
    )


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    intent._CACHE.clear()  # each test counts its own readings


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    real = intent.read_prompt

    def counted(text: str, vocab: Any) -> Any:
        read.append(text)
        return real(text, vocab)

    monkeypatch.setattr(intent, "read_prompt", counted)
    return read


def test_a_huge_prompt_is_cut_into_chunks_that_join_back_to_it() -> None:
    text = _pasted(600_000, 1)
    chunks, joints = cut_prompt(text)
    assert "".join(c + j for c, j in zip(chunks, [*joints, ""], strict=True)) == text
    assert len(chunks) >= 8 and all(len(c) < 3 * intent.CHUNK_CHARS for c in chunks)
    assert set(joints) <= {"\n" * n for n in range(1, 10)} and "\n" in joints  # cut inside the log too
    assert all(not a[-1].isspace() and not b[0].isspace() for a, b in itertools.pairwise(chunks))
    # A prompt of normal length is one chunk, kept under the prompt's own key as before.
    assert cut_prompt("Fix the test.\n\nDo not edit the config.") == (["Fix the test.\n\nDo not edit the config."], [])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_chunks_combined_read_as_the_whole_prompt(seed: int) -> None:
    """On 600 KB of real source, docs and log with orders spliced in, the reading combined from
    the chunks is the whole text's, clause for clause, and each chunk's reading is kept."""
    vocab = default_bundle().vocabulary
    text = _pasted(600_000, seed)
    store: dict[str, Any] = {}
    combined = resolve_parts([text], vocab, None, store)
    whole = resolve(text, vocab)
    assert combined.clauses == whole.clauses  # match for match
    assert combined == whole
    assert "eve@example.com" in combined.excluded_values and "src/intently/core/files.py" in combined.excluded_paths
    assert set(store) == reading_keys([text], vocab) and len(store) == len(cut_prompt(text)[0])
    # In a conversation, after a short prompt and before another, it reads as the joined text.
    parts = ["Fix the failing test.", text, "and then stop"]
    assert resolve_parts(parts, vocab, None, store) == resolve("\n\n".join(parts), vocab)


def test_any_cut_of_generated_texts_reads_as_the_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of a few characters, on texts of the clause split's hard cases (numbered items,
    joint words, sentence marks, every kind of white space): where a cut would not read as the
    whole does, the two chunks are read together, so the result is always the whole text's."""
    vocab = default_bundle().vocabulary
    monkeypatch.setattr(intent, "CHUNK_CHARS", 12)
    rng = random.Random(20261202)
    atoms = (*_ATOMS, "\n", "\n", "\n\n", "send the file", "don't", "Bob", "except Bob")
    cut = 0
    for _ in range(3_000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 60)))
        cut += len(cut_prompt(text)[0]) > 1
        assert resolve_parts([text], vocab) == resolve(text, vocab), repr(text)
        assert resolve_parts(["Send it.", text], vocab) == resolve("Send it.\n\n" + text, vocab), repr(text)
    assert cut > 1_000


def test_a_reading_stopped_midway_keeps_its_chunks_and_the_next_goes_on_from_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reading ended in the middle (a hook process at its deadline) has saved each chunk it
    finished; the next reads only the others, and the decision then reads none."""
    vocab = default_bundle().vocabulary
    text = _pasted(600_000, 4)
    chunks = cut_prompt(text)[0]
    monkeypatch.setattr(intent, "SAVE_EVERY_S", 0.0)  # save after every chunk (the hook: every 2 s)
    store: dict[str, Any] = {}
    saved: list[dict[str, Any]] = []
    with pytest.raises(ReadingAbandoned), abandon_reading_when(lambda: len(saved) >= 3):
        read_parts([text], vocab, store, lambda: saved.append(dict(store)))
    kept = saved[-1]
    assert len(kept) == 3 and set(kept) == {reading_key(c, vocab) for c in chunks[:3]}

    intent._CACHE.clear()  # a new process
    read = _counting(monkeypatch)
    resumed = dict(kept)
    read_parts([text], vocab, resumed, lambda: None)
    assert read == chunks[3:]  # each of the others once, none of the three again
    assert set(resumed) == reading_keys([text], vocab)

    intent._CACHE.clear()  # the process of a later tool call
    read.clear()
    assert resolve_parts([text], vocab, None, resumed) == resolve(text, vocab)
    assert read == []


def test_a_decision_waits_for_every_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Combining needs every chunk: a check that finds some unread reads them first (it never
    combines a part of the prompt), so an order in the last chunk still counts."""
    vocab = default_bundle().vocabulary
    text = _pasted(600_000, 5) + "\nDo not email zed.owner@unique-test.example."
    chunks = cut_prompt(text)[0]
    store = {reading_key(c, vocab): intent.read_prompt(c, vocab).to_json() for c in chunks[:-1]}
    intent._CACHE.clear()
    read = _counting(monkeypatch)
    request = resolve_parts([text], vocab, None, store)
    assert read == [chunks[-1]]
    assert "zed.owner@unique-test.example" in request.excluded_values


def test_a_prompt_ending_in_a_comma_before_one_starting_with_and_reads_as_the_joined_text() -> None:
    """ ", and" across the blank line between two prompts is one separator in the joined text;
    neither prompt's own reading sees it, so the combination split it elsewhere ("and" became
    a clause of its own). The two prompts are now read together there."""
    vocab = default_bundle().vocabulary
    parts = ["Email the summary to Bob, do not send it to anyone else,", "and then delete the draft"]
    combined = resolve_parts(parts, vocab)
    assert combined == resolve("\n\n".join(parts), vocab)
    assert [c.text for c in combined.clauses][-1] == "then delete the draft"


def test_a_check_on_a_long_request_scans_it_for_values_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check reads the request's numbers and addresses (provenance) and, for payments, which
    IBAN each name and amount goes with. On a pasted log it scanned the request twice for the
    same values, and looked for names in each of its tens of thousands of clauses though it
    holds no IBAN to bind them to."""
    from intently.gate import _payees, _values
    from intently.gate._gate import Gate

    text = _pasted(300_000, 6)
    named = {"calls": 0}
    real_names = _payees._names

    def counted(part: str, first: bool) -> set[str]:
        named["calls"] += 1
        return real_names(part, first)

    scanned: list[int] = []
    real_ibans = _values.ibans_in

    def counted_ibans(value: str) -> set[str]:
        scanned.append(len(value))
        return real_ibans(value)

    monkeypatch.setattr(_payees, "_names", counted)
    monkeypatch.setattr(_values, "ibans_in", counted_ibans)  # one of the value scans, of the whole text
    Gate([]).session(user_request=text)
    assert named["calls"] == 0
    assert scanned.count(len(text)) == 1
    two = "Alice's IBAN is DE89370400440532013000, pay her 100. Bob's is GB29NWBK60161331926819; pay him 250."
    assert {c.iban: sorted(c.amounts) for c in _payees.payee_clauses(two)} == {
        "DE89370400440532013000": ["100"],
        "GB29NWBK60161331926819": ["250"],
    }


def test_what_each_prompt_protects_is_read_from_its_own_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A prompt read in chunks protects the paths a middle chunk names, as the whole text does,
    and a later prompt still lifts them; a clause read across two prompts (a comma before "and
    then") still protects for the prompt that said it."""
    vocab = default_bundle().vocabulary
    monkeypatch.setattr(intent, "CHUNK_CHARS", 12)
    first = "Fix tests/test_api.py.\nDo not edit src/app/config.py.\nThanks"
    assert len(cut_prompt(first)[0]) == 3
    alone = resolve_parts([first], vocab)
    assert alone.excluded_paths == resolve(first, vocab).excluded_paths == {"src/app/config.py"}
    lifted = resolve_parts([first, "OK, now you may edit src/app/config.py too."], vocab)
    assert not lifted.excluded_paths and [p for p, *_ in lifted.lifted_paths] == ["src/app/config.py"]
    across = resolve_parts(["Do not edit src/app/config.py,", "and then run the tests"], vocab)
    assert across.excluded_paths == {"src/app/config.py"}


@pytest.mark.parametrize("seed", [1, 2])
def test_a_prompt_with_windows_line_endings_is_cut_and_reads_as_the_whole(seed: int) -> None:
    """A prompt pasted with CRLF line endings had no "\\n" right after a character that is not
    white space, so it was never cut: a huge one was read whole, however long. It is cut at its
    line breaks now, and the chunks combined read exactly as the whole text does."""
    vocab = default_bundle().vocabulary
    text = _pasted(600_000, seed).replace("\n", "\r\n")
    chunks, joints = cut_prompt(text)
    assert "".join(c + j for c, j in zip(chunks, [*joints, ""], strict=True)) == text
    assert len(chunks) >= 5 and all(len(c) < 3 * intent.CHUNK_CHARS for c in chunks)  # was 1 chunk
    assert set(joints) <= {"\r\n" * n for n in range(1, 10)}  # at CRLF line breaks, blank or not
    store: dict[str, Any] = {}
    combined = resolve_parts([text], vocab, None, store)
    whole = resolve(text, vocab)
    assert combined.clauses == whole.clauses
    assert combined == whole
    assert "eve@example.com" in combined.excluded_values and "src/intently/core/files.py" in combined.excluded_paths
    assert len(store) == len(chunks)
    parts = ["Fix the failing test.", text, "and then stop"]
    assert resolve_parts(parts, vocab, None, store) == resolve("\n\n".join(parts), vocab)


def test_any_cut_of_generated_crlf_texts_reads_as_the_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """The generated hard cases of the clause split, with Windows line breaks (and a mix of
    both): every cut, at "\\r\\n" as at "\\n", combines to the whole text's reading."""
    vocab = default_bundle().vocabulary
    monkeypatch.setattr(intent, "CHUNK_CHARS", 12)
    rng = random.Random(20261203)
    atoms = (*(a.replace("\n", "\r\n") for a in _ATOMS), "\r\n", "\r\n", "\r\n\r\n", "\n", "send the file", "Bob")
    cut = 0
    for _ in range(2_000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randint(0, 60)))
        cut += len(cut_prompt(text)[0]) > 1
        assert resolve_parts([text], vocab) == resolve(text, vocab), repr(text)
        assert resolve_parts(["Send it.", text], vocab) == resolve("Send it.\n\n" + text, vocab), repr(text)
    assert cut > 500
