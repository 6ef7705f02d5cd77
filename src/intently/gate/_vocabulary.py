"""The intent vocabulary: words to action kinds, loaded from data and matched by stem."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
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


@lru_cache(maxsize=256)
def _by_first(
    phrases: frozenset[tuple[str, ...]] | tuple[tuple[str, ...], ...],
) -> tuple[bool, dict[str, list[tuple[str, ...]]]]:
    """Whether ``phrases`` holds the empty phrase, and the others by their first stem: what
    :meth:`Vocabulary.has_phrase` tries, built once per set of phrases instead of at each call
    (once per clause, so tens of thousands of times for a pasted log)."""
    firsts: dict[str, list[tuple[str, ...]]] = {}
    empty = False
    for p in phrases:
        if not p:
            empty = True
            continue
        firsts.setdefault(p[0], []).append(p)
    return empty, firsts


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
        """(kind, phrase length) for every action phrase starting at token ``i``.

        Only the phrases whose first stem is ``stems[i]`` can start there (plus any that open
        with a gap), so those are the only ones tried: the resolver calls this at every word of
        a request, and trying all of the vocabulary's phrases there made a long prompt cost
        tens of microseconds per word. Callers use the hits as a set (their order is not part
        of the answer)."""
        hits: list[tuple[str, int]] = []
        by_head, anywhere = self._phrases_by_head
        starting = by_head.get(stems[i], ()) if 0 <= i < len(stems) else ()
        for kind, p in (*anywhere, *starting):
            length = _match_length(p, stems, i, self.not_in_gap)
            if length is not None:
                hits.append((kind, length))
        return hits

    @cached_property
    def _phrases_by_head(
        self,
    ) -> tuple[dict[str, tuple[tuple[str, tuple[str, ...]], ...]], tuple[tuple[str, tuple[str, ...]], ...]]:
        """(kind, phrase) by the phrase's first stem, and the phrases that may start anywhere
        (empty, or opening with a gap): what :meth:`kinds_at` tries at a word."""
        by_head: dict[str, list[tuple[str, tuple[str, ...]]]] = {}
        anywhere: list[tuple[str, tuple[str, ...]]] = []
        for kind, phrases in self.kinds.items():
            for p in phrases:
                if p and p[0] != _GAP:
                    by_head.setdefault(p[0], []).append((kind, p))
                else:
                    anywhere.append((kind, p))
        return {k: tuple(v) for k, v in by_head.items()}, tuple(anywhere)

    def negators_from(self, stem: str) -> tuple[tuple[str, ...], ...]:
        """The negators that can start at a word ``stem``, in the data's order (the first that
        matches wins): those opening with it, and any empty one."""
        by_head, empty = self._negators_by_head
        return by_head.get(stem, empty)

    @cached_property
    def _negators_by_head(self) -> tuple[dict[str, tuple[tuple[str, ...], ...]], tuple[tuple[str, ...], ...]]:
        heads = {p[0] for p in self.negators if p}
        by_head = {h: tuple(p for p in self.negators if not p or p[0] == h) for h in heads}
        return by_head, tuple(p for p in self.negators if not p)

    def has_phrase(self, stems: Sequence[str], phrases: Iterable[tuple[str, ...]]) -> bool:
        """Whether one of ``phrases`` (stems, no gaps) occurs anywhere in ``stems``: tried only
        where a phrase's first stem is, so a long request is one pass over its words."""
        if isinstance(phrases, frozenset | tuple):
            empty, firsts = _by_first(phrases)  # the vocabulary's own sets: indexed once
        else:
            empty, firsts = _by_first(tuple(phrases))
        if empty and stems:
            return True  # the empty phrase occurs at every word (as the slice test said)
        if firsts.keys().isdisjoint(stems):
            return False
        for i, stem in enumerate(stems):
            for p in firsts.get(stem, ()):
                if tuple(stems[i : i + len(p)]) == p:
                    return True
        return False

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
        return self._opens_with_order(tokens, citing=True)

    def orders_in_aside(self, tokens: Sequence[str]) -> bool:
        """Whether the words inside brackets or quotes open with an order that acts ("[send the
        file to …]", "\"please transfer 500 to …\""): the test of :meth:`opens_with_action`
        without the verbs that only send the reader to an address ("visit", "click", "open
        https://…"). An aside that points at a link is how a writer cites a source ("(visit
        website for details www.…)"), so it stays a description; one that sends, pays, forwards
        or deletes is an order whatever punctuation hides it."""
        return self._opens_with_order(tokens, citing=False)

    def _opens_with_order(self, tokens: Sequence[str], *, citing: bool) -> bool:
        i = 0
        while i < len(tokens) and tokens[i] in self.raw_fillers:
            i += 1
        if i >= len(tokens):
            return False
        if _starts(tokens, i, self.raw_other_orders):
            return True
        if citing and _starts(tokens, i, self.raw_address_verbs):
            return True
        if (
            citing
            and _LINK_WORDS & set(tokens[i:6])
            and any(_starts(tokens, j, self.raw_link_verbs) for j in range(i + 1))
        ):
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
    def fingerprint(self) -> str:
        """A hash of everything this vocabulary holds: readings of a request kept under it
        (``_intent.resolve_parts``) are reused only by the same vocabulary."""

        def plain(value: Any) -> Any:
            if isinstance(value, Mapping):
                return {str(k): plain(v) for k, v in value.items()}
            if isinstance(value, frozenset | set):
                return sorted((plain(v) for v in value), key=repr)
            if isinstance(value, tuple | list):
                return [plain(v) for v in value]
            return value

        body = json.dumps({f.name: plain(getattr(self, f.name)) for f in fields(self)}, sort_keys=True)
        return hashlib.sha256(body.encode("utf-8")).hexdigest()[:16]

    @cached_property
    def _kind_heads(self) -> frozenset[str]:
        """The first stem of every action phrase: a cheap test before ``kinds_at``."""
        return frozenset(p[0] for phrases in self.kinds.values() for p in phrases if p)

    def _noun_start(self, stems: Sequence[str], i: int) -> bool:
        # "Email from Bob" or "Payment received" read as nouns, not commands.
        nxt = stems[i + 1] if i + 1 < len(stems) else ""
        return (stems[i],) in self.noun_like and nxt in {"from", "receiv", "sent", "is", "was", "of", "for", "date", ""}

    @cached_property
    def _objects_by_head(
        self,
    ) -> tuple[dict[str, tuple[tuple[int, str, tuple[str, ...]], ...]], tuple[tuple[int, str], ...]]:
        """(order, object, phrase) by the phrase's first stem, ``order`` being the phrase's place
        in the data; and the empty phrases (which match everywhere)."""
        by_head: dict[str, list[tuple[int, str, tuple[str, ...]]]] = {}
        empty: list[tuple[int, str]] = []
        order = 0
        for obj, phrases in self.objects.items():
            for p in phrases:
                if p:
                    by_head.setdefault(p[0], []).append((order, obj, p))
                else:
                    empty.append((order, obj))
                order += 1
        return {k: tuple(v) for k, v in by_head.items()}, tuple(empty)

    def objects_in(self, stems: Sequence[str]) -> set[str]:
        """Objects named in ``stems``; the longest phrase wins ("email address" is a contact,
        not an email message)."""
        # Every occurrence of every phrase, ordered as a scan of each phrase in turn would find
        # them (object, phrase, position), longest first: ties between overlapping phrases of
        # one length go to the earlier one. Phrases are looked up by their first stem, so a
        # long request is one pass over its words rather than one per phrase.
        matches: list[tuple[int, int, int, int, str]] = []
        by_head, empty = self._objects_by_head
        if not empty and by_head.keys().isdisjoint(stems):
            return set()  # no phrase starts anywhere here (most clauses of a pasted log)
        for i, stem in enumerate(stems):
            for order, obj, p in by_head.get(stem, ()):
                n = len(p)
                if tuple(stems[i : i + n]) == p:
                    matches.append((-n, order, i, n, obj))
        for order, obj in empty:
            matches += [(0, order, i, 0, obj) for i in range(len(stems) + 1)]
        matches.sort(key=lambda m: m[:3])
        covered: set[int] = set()
        found: set[str] = set()
        for _, _, i, n, obj in matches:
            span = set(range(i, i + n))
            if span & covered:
                continue
            covered |= span
            found.add(obj)
        return found
