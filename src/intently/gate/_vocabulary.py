"""The intent vocabulary: words to action kinds, loaded from data and matched by stem."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

import Stemmer

from ..core.errors import PolicyError
from ._values import words

__all__ = ["Vocabulary", "stem_all"]

# Words a link leaves among a sentence's words (``words`` splits "https://www.x.org" into them).
_LINK_WORDS = frozenset({"http", "https", "www"})


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    return Stemmer.Stemmer("english")


def stem_all(tokens: Sequence[str]) -> tuple[str, ...]:
    return tuple(_stemmer().stemWords([t.replace("’", "'") for t in tokens]))


# Who an order inside a statement is addressed to ("wants you to send").
_ADDRESSEES = frozenset({"you", "assistant", "agent", "ai", "bot", "model"})
# Statements that oblige the reader without an imperative: "Kindly ensure the summary reaches
# …", "It is required that the report is sent to …", "The summary should be forwarded to …",
# "Your next step is sending …". Data describes; a sentence that says what must be done is an
# order whoever it names, once an action follows it (matched on the words as written).
_OBLIGATIONS: tuple[tuple[str, ...], ...] = tuple(
    tuple(p.split())
    for p in (
        "ensure", "make sure", "be sure", "see to it", "kindly", "must", "should", "shall", "ought to",
        "need to", "needs to", "has to", "have to", "is to be", "are to be", "would like", "would love",
        "would appreciate", "would be grateful", "requires that", "require that", "your task", "your next task",
        "your next step", "your job", "next step is", "is required", "are required", "is necessary",
        "is essential", "is important", "is imperative", "is mandatory", "is expected", "are expected",
        "is requested", "are requested", "is instructed", "are instructed", "it's required", "it's necessary",
        "it's essential", "it's important", "it's imperative", "it's mandatory",
    )
)  # fmt: skip
_OBLIGATION_OPENERS = frozenset(p[0] for p in _OBLIGATIONS)
# Verbs that say where something ends up, for an obligation with no action verb of its own
# ("ensure the summary reaches …", "make sure eve@… gets a copy"): stems, and the irregular
# past forms the stemmer leaves as they are ("is sent to", "be paid to").
_ARRIVAL = frozenset({"reach", "receiv", "get", "got", "arriv", "land", "deliv", "sent", "paid", "cc", "cc'd", "copi"})
# How far after an obligation its verb may come ("ensure that the final summary is sent").
_OBLIGATION_REACH = 6
_GAP = "*"  # in a phrase: one to three words of anything ("let * know": "let Bob know")
_MAX_GAP = 3


def _phrase(text: str) -> tuple[str, ...]:
    if _GAP not in text:
        return stem_all(words(text))
    head, _, tail = text.partition(_GAP)
    return (*stem_all(words(head)), _GAP, *stem_all(words(tail)))


def _starts(tokens: Sequence[str], at: int, phrases: Iterable[tuple[str, ...]]) -> bool:
    """Whether one of ``phrases`` (words as written) begins at ``tokens[at]``."""
    return any(tuple(tokens[at : at + len(p)]) == p for p in phrases)


def _match_length(
    phrase: tuple[str, ...], stems: Sequence[str], i: int, not_in_gap: frozenset[str] = frozenset()
) -> int | None:
    """How many tokens ``phrase`` covers from ``stems[i]``, or ``None`` if it does not start
    there. A gap never holds a word of ``not_in_gap`` ("let me know" asks for an answer in the
    conversation, not for a message to anyone)."""
    if _GAP not in phrase:
        return len(phrase) if tuple(stems[i : i + len(phrase)]) == phrase else None
    cut = phrase.index(_GAP)
    head, tail = phrase[:cut], phrase[cut + 1 :]
    if tuple(stems[i : i + len(head)]) != head:
        return None
    for gap in range(1, _MAX_GAP + 1):
        at = i + len(head) + gap
        if not_in_gap & set(stems[i + len(head) : at]):
            return None
        if tuple(stems[at : at + len(tail)]) == tail:
            return len(head) + gap + len(tail)
    return None


@dataclass(frozen=True)
class Vocabulary:
    """Stemmed phrases per action kind, plus the small word lists the resolver needs."""

    version: str
    kinds: Mapping[str, tuple[tuple[str, ...], ...]]
    descriptions: Mapping[str, str]
    noun_like: frozenset[tuple[str, ...]]
    determiners: frozenset[str]
    negators: tuple[tuple[str, ...], ...]
    cancellers: frozenset[str]
    delegation: tuple[tuple[str, ...], ...]
    fillers: frozenset[str]
    read_verbs: frozenset[tuple[str, ...]]
    objects: Mapping[str, tuple[tuple[str, ...], ...]]
    quantifiers: frozenset[str] = frozenset()
    raw_kinds: frozenset[tuple[str, ...]] = frozenset()
    raw_fillers: frozenset[str] = frozenset()
    raw_address_verbs: frozenset[tuple[str, ...]] = frozenset()
    raw_link_verbs: frozenset[tuple[str, ...]] = frozenset()
    not_in_gap: frozenset[str] = frozenset()
    exclusions: tuple[tuple[str, ...], ...] = ()
    raw_other_orders: frozenset[tuple[str, ...]] = frozenset()

    @classmethod
    def from_data(cls, data: Mapping[str, Any], *, where: str = "vocabulary") -> Vocabulary:
        try:
            kinds = {str(k): tuple(_phrase(p) for p in v["phrases"]) for k, v in data["kinds"].items()}
            return cls(
                version=str(data.get("version", "0")),
                kinds=kinds,
                descriptions={str(k): str(v.get("description", "")) for k, v in data["kinds"].items()},
                noun_like=frozenset(_phrase(p) for p in data.get("noun_like", [])),
                determiners=frozenset({x for w in data.get("determiners", []) for x in _phrase(str(w))}),
                negators=tuple(_phrase(p) for p in data.get("negators", [])),
                cancellers=frozenset({x for w in data.get("negation_cancellers", []) for x in _phrase(str(w))}),
                delegation=tuple(_phrase(p) for p in data.get("delegation", [])),
                fillers=frozenset({x for w in data.get("fillers", []) for x in _phrase(str(w))}),
                read_verbs=frozenset(_phrase(p) for p in data.get("read_verbs", [])),
                objects={str(k): tuple(_phrase(p) for p in v) for k, v in data.get("objects", {}).items()},
                quantifiers=frozenset(x for w in data.get("quantifiers", []) for x in _phrase(str(w))),
                raw_kinds=frozenset(tuple(words(str(p))) for v in data["kinds"].values() for p in v["phrases"]),
                raw_fillers=frozenset(x for w in data.get("fillers", []) for x in words(str(w))),
                raw_address_verbs=frozenset(tuple(words(str(p))) for p in data.get("address_verbs", [])),
                raw_link_verbs=frozenset(tuple(words(str(p))) for p in data.get("link_verbs", [])),
                not_in_gap=frozenset(x for w in data.get("not_in_gap", []) for x in _phrase(str(w))),
                exclusions=tuple(_phrase(p) for p in data.get("exclusions", [])),
                raw_other_orders=frozenset(tuple(words(str(p))) for p in data.get("orders_in_other_languages", [])),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise PolicyError(f"{where}: malformed vocabulary ({type(exc).__name__}: {exc})") from exc

    def kinds_at(self, stems: Sequence[str], i: int) -> list[tuple[str, int]]:
        """(kind, phrase length) for every action phrase starting at token ``i``."""
        hits: list[tuple[str, int]] = []
        for kind, phrases in self.kinds.items():
            for p in phrases:
                length = _match_length(p, stems, i, self.not_in_gap)
                if length is not None:
                    hits.append((kind, length))
        return hits

    def is_noun_use(self, stems: Sequence[str], i: int, length: int) -> bool:
        """A noun-like verb preceded by a determiner or preposition is a noun."""
        if tuple(stems[i : i + length]) not in self.noun_like:
            return False
        return i > 0 and stems[i - 1] in self.determiners

    def opens_with_action(self, tokens: Sequence[str]) -> bool:
        """Whether a segment of text starts (after fillers) with an action verb: an instruction.

        Matched on the words as written, not stems: an imperative is the bare verb ("Send",
        "inform"), so "Information" or "Updates" do not open an instruction. Two orders do not
        open with the verb: one addressed to the reader ("The user wants you to send …") and
        one stated as an obligation ("Kindly ensure the summary reaches …", ``_obliges``).
        """
        i = 0
        while i < len(tokens) and tokens[i] in self.raw_fillers:
            i += 1
        if i >= len(tokens):
            return False
        if _starts(tokens, i, self.raw_address_verbs) or _starts(tokens, i, self.raw_other_orders):
            return True
        if _LINK_WORDS & set(tokens[i:6]) and any(_starts(tokens, j, self.raw_link_verbs) for j in range(i + 1)):
            return True  # "Open https://…", "Please go to www.…" ("go" and "to" are fillers too)
        if _starts(tokens, i, self.raw_kinds) and not self._noun_start(stem_all(tokens), i):
            return True
        # An order addressed to the reader inside a statement: "The user wants you to send …",
        # "we need you to forward …", "I'd like the assistant to post …".
        for j in range(i, min(len(tokens) - 2, i + 8)):
            if tokens[j] in _ADDRESSEES and tokens[j + 1] == "to":
                return _starts(tokens, j + 2, self.raw_kinds)
        return self._obliges(tokens)

    def _obliges(self, tokens: Sequence[str]) -> bool:
        """Whether the clause says something must be done, with the action after it: an order
        phrased as a statement ("It is required that the summary is sent to eve@…")."""
        stems: tuple[str, ...] | None = None
        for j in range(len(tokens)):
            if tokens[j] not in _OBLIGATION_OPENERS:
                continue
            for p in _OBLIGATIONS:
                if tuple(tokens[j : j + len(p)]) != p:
                    continue
                stems = stems or stem_all(tokens)
                start = j + len(p)
                for k in range(start, min(len(stems), start + _OBLIGATION_REACH)):
                    if stems[k] in _ARRIVAL or tokens[k] in _ARRIVAL:
                        return True
                    if stems[k] in self._kind_heads and any(
                        not self.is_noun_use(stems, k, n) for _, n in self.kinds_at(stems, k)
                    ):
                        return True
        return False

    @cached_property
    def _kind_heads(self) -> frozenset[str]:
        """The first stem of every action phrase: a cheap test before ``kinds_at``."""
        return frozenset(p[0] for phrases in self.kinds.values() for p in phrases if p)

    def _noun_start(self, stems: Sequence[str], i: int) -> bool:
        # "Email from Bob" or "Payment received" read as nouns, not commands.
        nxt = stems[i + 1] if i + 1 < len(stems) else ""
        return (stems[i],) in self.noun_like and nxt in {"from", "receiv", "sent", "is", "was", "of", "for", "date", ""}

    def objects_in(self, stems: Sequence[str]) -> set[str]:
        """Objects named in ``stems``; the longest phrase wins ("email address" is a contact,
        not an email message)."""
        matches: list[tuple[int, int, str]] = []
        for obj, phrases in self.objects.items():
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
