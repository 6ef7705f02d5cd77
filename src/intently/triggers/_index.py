"""The in-memory matching index: exact over every live intent, cost set by the turn.

A turn becomes the set of normalised n-grams it contains (only for the n-gram lengths some
indexed form has). An entry of one term is posted under that term's forms; an entry of
several terms under a *pair* of forms, its rarest term then its second rarest, so a turn
reaches it only when both come up (one C-level set intersection per turn n-gram). Each
entry reached is verified with one subset test. So the work grows with the turn's length
and the number of entries it nearly or fully matches, never with the number of armed
intents, and nothing is capped: every matching entry is found.

The index holds what the store holds at some change sequence; :meth:`MatchIndex.upsert`
and :meth:`MatchIndex.remove` apply a delta without rebuilding anything else.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from ._normalise import Term, TurnText

__all__ = ["CompiledIntent", "EntryHit", "MatchIndex", "RawTerm", "TurnGrams", "turn_grams"]

# A term as a snapshot stores it: (text, alternatives, phrase).
RawTerm = tuple[str, tuple[tuple[str, ...], ...], bool]
# An intent as a snapshot stores it (see :meth:`MatchIndex.raw_slot`), terms by number.
RawIntent = tuple[Any, ...]

_ENTRY_BITS = 6  # up to 64 compiled entries per intent (24 user entries, synonym variants)
_MAX_ENTRIES = 1 << _ENTRY_BITS


@dataclass(frozen=True, slots=True)
class CompiledIntent:
    """What matching needs of one intent (the store keeps the rest)."""

    id: str
    entries: tuple[tuple[Term, ...], ...]
    exclusions: tuple[Term, ...]
    negation_guard: bool
    created_at: str
    channel: str | None = None
    conversation: str | None = None
    sender: str | None = None
    fast: tuple[tuple[str, ...] | None, ...] = ()
    source: tuple[int, ...] = ()  # the user's entry each compiled entry comes from
    words: tuple[int, ...] = ()  # words per compiled entry (phrases count each word)

    def user_entry(self, number: int) -> int:
        return self.source[number] if self.source else number

    @staticmethod
    def fast_keys(entries: tuple[tuple[Term, ...], ...]) -> tuple[tuple[str, ...] | None, ...]:
        """Per entry, the keys it needs when each term has one form: a set test verifies it."""
        return tuple(
            tuple(t.key for t in entry) if all(len(t.alternatives) == 1 for t in entry) else None for entry in entries
        )


class EntryHit(NamedTuple):
    """One entry of one intent that the turn satisfies, with the forms that matched."""

    intent: CompiledIntent
    entry: int
    matched: tuple[str, ...]
    words: int
    rarity: float


class TurnGrams:
    """The n-grams of a turn: all of them, and those with an occurrence that is not negated."""

    __slots__ = ("keys", "positive")

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.positive: set[str] = set()

    def add(self, key: str, negated: bool) -> None:
        self.keys.add(key)
        if not negated:
            self.positive.add(key)

    def present(self, term: Term, guard: bool) -> str | None:
        """The first form of ``term`` that occurs (not negated, when ``guard``), else None."""
        pool = self.positive if guard else self.keys
        for alt in term.alternatives:
            key = " ".join(alt)
            if key in pool:
                return key
        return None

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys)


def turn_grams(turn: TurnText, lengths: Iterable[int]) -> TurnGrams:
    """All n-grams of ``turn`` for the given lengths, in segments and extra forms."""
    sizes = sorted({n for n in lengths if n > 0}) or [1]
    out = TurnGrams()
    for tokens, flags in zip(turn.segments, turn.negated, strict=True):
        count = len(tokens)
        for n in sizes:
            if n > count:
                break
            if n == 1:
                for tok, neg in zip(tokens, flags, strict=True):
                    out.add(tok, neg)
            else:
                for i in range(count - n + 1):
                    out.add(" ".join(tokens[i : i + n]), flags[i])
    # An extra form counts only whole: "TLS" is "transport layer security", but the turn
    # did not say "security" or "layer" on their own.
    for seq, neg in turn.extras:
        out.add(" ".join(seq), neg)
    return out


class MatchIndex:
    """Anchor postings over the live intents of one namespace.

    An entry of one term is posted under that term's forms. An entry of several terms is
    posted under a *pair*: its rarest term, then its second rarest, so a turn reaches it
    only when both come up; the other terms are verified with one set test.
    """

    def __init__(self) -> None:
        # A slot holds an intent, None (free), or, after a snapshot load, the intent's raw
        # row, turned into a CompiledIntent the first time a turn reaches it.
        self._slots: list[CompiledIntent | RawIntent | None] = []
        self._raw_terms: list[RawTerm] = []  # the snapshot's term table (raw rows refer to it)
        self._terms: list[Term | None] = []
        self._free: list[int] = []
        self._slot_of: dict[str, int] = {}
        self._anchors: dict[int, tuple[tuple[tuple[str, str | None], ...], ...]] = {}
        self._single: dict[str, set[int]] = {}
        self._pairs: dict[str, dict[str, set[int]]] = {}
        self._lengths: dict[int, int] = {}
        self._df: dict[str, int] = {}
        self._log_df: dict[str, float] = {}  # log(df + 1), kept with df, for rarity without logs per hit
        self.seq = 0

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, intent_id: str) -> bool:
        return intent_id in self._slot_of

    @property
    def lengths(self) -> list[int]:
        return [n for n, c in self._lengths.items() if c > 0]

    def rarity(self, term: Term) -> float:
        """Inverse document frequency of a term among indexed entries (rarer = higher)."""
        return math.log(len(self._slot_of) + 1) + 1.0 - self._log_df.get(term.key, 0.0)

    def upsert(self, intent: CompiledIntent) -> None:
        if intent.id in self._slot_of:
            self.remove(intent.id)
        if len(intent.entries) > _MAX_ENTRIES:
            raise ValueError(f"intent {intent.id} has more than {_MAX_ENTRIES} entries")
        slot = self._free.pop() if self._free else len(self._slots)
        if slot == len(self._slots):
            self._slots.append(intent)
        else:
            self._slots[slot] = intent
        self._slot_of[intent.id] = slot
        for entry in intent.entries:
            for term in entry:
                count = self._df[term.key] = self._df.get(term.key, 0) + 1
                self._log_df[term.key] = math.log(count + 1)
        anchors: list[tuple[tuple[str, str | None], ...]] = []
        for number, entry in enumerate(intent.entries):
            ordered = sorted(entry, key=lambda t: (self._df.get(t.key, 0), -len(t.alternatives[0]), t.key))
            first = [" ".join(a) for a in ordered[0].alternatives]
            second: list[str | None] = [" ".join(a) for a in ordered[1].alternatives] if len(ordered) > 1 else [None]
            keys = tuple((k1, k2) for k1 in first for k2 in second)
            self._attach((slot << _ENTRY_BITS) | number, keys)
            anchors.append(keys)
        self._anchors[slot] = tuple(anchors)

    def _count_length(self, key: str, delta: int) -> None:
        n = key.count(" ") + 1
        self._lengths[n] = self._lengths.get(n, 0) + delta

    def _attach(self, ref: int, keys: tuple[tuple[str, str | None], ...]) -> None:
        for k1, k2 in keys:
            if k2 is None:
                self._single.setdefault(k1, set()).add(ref)
            else:
                self._pairs.setdefault(k1, {}).setdefault(k2, set()).add(ref)
                self._count_length(k2, 1)
            self._count_length(k1, 1)

    def _detach(self, ref: int, keys: tuple[tuple[str, str | None], ...]) -> None:
        for k1, k2 in keys:
            if k2 is None:
                bucket = self._single.get(k1)
                if bucket is not None:
                    bucket.discard(ref)
                    if not bucket:
                        del self._single[k1]
            else:
                sub = self._pairs.get(k1)
                refs = sub.get(k2) if sub is not None else None
                if sub is not None and refs is not None:
                    refs.discard(ref)
                    if not refs:
                        del sub[k2]
                        if not sub:
                            del self._pairs[k1]
                self._count_length(k2, -1)
            self._count_length(k1, -1)

    def remove(self, intent_id: str) -> bool:
        slot = self._slot_of.pop(intent_id, None)
        if slot is None:
            return False
        intent = self._intent(slot)
        assert intent is not None
        for number, keys in enumerate(self._anchors.pop(slot)):
            self._detach((slot << _ENTRY_BITS) | number, keys)
        for entry in intent.entries:
            for term in entry:
                left = self._df.get(term.key, 0) - 1
                if left > 0:
                    self._df[term.key] = left
                    self._log_df[term.key] = math.log(left + 1)
                else:
                    self._df.pop(term.key, None)
                    self._log_df.pop(term.key, None)
        self._slots[slot] = None
        self._free.append(slot)
        return True

    def get(self, intent_id: str) -> CompiledIntent | None:
        slot = self._slot_of.get(intent_id)
        return None if slot is None else self._intent(slot)

    def _intent(self, slot: int) -> CompiledIntent | None:
        found = self._slots[slot]
        if isinstance(found, tuple):
            return self._materialise(slot, found)
        return found

    def _term(self, number: int) -> Term:
        term = self._terms[number]
        if term is None:
            text, alternatives, phrase = self._raw_terms[number]
            term = self._terms[number] = Term(text=text, alternatives=alternatives, phrase=phrase)
        return term

    def _materialise(self, slot: int, raw: RawIntent) -> CompiledIntent:
        iid, entries, exclusions, guard, created, channel, conversation, sender, source, words, fast = raw
        term = self._term
        intent = CompiledIntent(
            id=iid,
            entries=tuple(tuple(term(i) for i in entry) for entry in entries),
            exclusions=tuple(term(i) for i in exclusions),
            negation_guard=guard,
            created_at=created,
            channel=channel,
            conversation=conversation,
            sender=sender,
            fast=fast,
            source=source,
            words=words,
        )
        self._slots[slot] = intent
        return intent

    def raw_slots(self) -> tuple[list[RawTerm], list[RawIntent | None]]:
        """The term table and every slot as plain values (for a snapshot); raw rows loaded
        from a snapshot are reused as they are, so writing does not build every intent."""
        table = list(self._raw_terms)
        numbers: dict[RawTerm, int] = {row: i for i, row in enumerate(table)}

        def ref(term: Term) -> int:
            row = (term.text, term.alternatives, term.phrase)
            found = numbers.get(row)
            if found is None:
                found = numbers[row] = len(table)
                table.append(row)
            return found

        out: list[RawIntent | None] = []
        for item in self._slots:
            if item is None or isinstance(item, tuple):
                out.append(item)
                continue
            out.append(
                (
                    item.id,
                    tuple(tuple(ref(t) for t in entry) for entry in item.entries),
                    tuple(ref(t) for t in item.exclusions),
                    item.negation_guard,
                    item.created_at,
                    item.channel,
                    item.conversation,
                    item.sender,
                    item.source,
                    item.words,
                    item.fast,
                )
            )
        return table, out

    def match(self, grams: TurnGrams) -> list[EntryHit]:
        """Every entry the turn satisfies (exclusions applied), best entry per intent."""
        candidates: set[int] = set()
        single, pairs = self._single, self._pairs
        keys = grams.keys
        for key in keys:
            refs = single.get(key)
            if refs:
                candidates |= refs
            sub = pairs.get(key)
            if sub:
                for k2 in sub.keys() & keys:  # the intersection runs in C
                    candidates |= sub[k2]
        best: dict[str, EntryHit] = {}
        slots = self._slots
        positive = grams.positive
        lidf = self._log_df
        per_term = math.log(len(self._slot_of) + 1) + 1.0
        for ref in candidates:
            found = slots[ref >> _ENTRY_BITS]
            if found is None:
                continue
            intent = self._materialise(ref >> _ENTRY_BITS, found) if isinstance(found, tuple) else found
            number = ref & (_MAX_ENTRIES - 1)
            need = intent.fast[number] if intent.fast else None
            if need is not None:
                if not (positive if intent.negation_guard else keys).issuperset(need):
                    continue
                # rarity = sum over terms of log((N + 1) / (df + 1)) + 1, from cached logs
                rarity = per_term * len(need) - sum([lidf[k] for k in need])
                user = intent.source[number] if intent.source else number
                hit: EntryHit | None = EntryHit(intent, user, need, intent.words[number], rarity)
            else:
                hit = self.check_entry(intent, number, grams)
            if hit is None:
                continue
            prev = best.get(intent.id)
            if prev is None or (hit.words, hit.rarity) > (prev.words, prev.rarity):
                best[intent.id] = hit
        return [h for h in best.values() if not (h.intent.exclusions and self.excluded(h.intent, grams))]

    def check_entry(self, intent: CompiledIntent, number: int, grams: TurnGrams) -> EntryHit | None:
        matched: list[str] = []
        words = 0
        rarity = 0.0
        for term in intent.entries[number]:
            key = grams.present(term, intent.negation_guard)
            if key is None:
                return None
            matched.append(key)
            words += len(term.alternatives[0])
            rarity += self.rarity(term)
        return EntryHit(intent, intent.user_entry(number), tuple(matched), words, rarity)

    @staticmethod
    def excluded(intent: CompiledIntent, grams: TurnGrams) -> str | None:
        for term in intent.exclusions:
            key = grams.present(term, False)
            if key is not None:
                return key
        return None
