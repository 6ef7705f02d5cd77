"""The reviewed word lists of the rule extractor, loaded once from ``lexicon.toml``.

Lists are data so that a reviewer can read, diff and extend them without touching the rules.
Loading validates the file (unknown sections or keys are errors naming the key), and each
list compiles to one case-insensitive regular expression with word boundaries.
"""

from __future__ import annotations

import re
import tomllib
from functools import cache, cached_property, lru_cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from ..core.errors import InvalidInput, first_problem
from ._chat import ChatNoise

__all__ = ["Lexicon", "Phrases", "load_lexicon"]


_WORDS = re.compile(r"[a-z0-9]+")


@lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    return frozenset(_WORDS.findall(text.lower()))


class Phrases:
    """A list of phrases compiled to one regex; ``*`` ends a phrase with any word ending.

    Searching a large alternation at every offset is the extractor's main cost, so each list
    first checks whether any entry's first word occurs in the text at all (most sentences hold
    no cue of most lists) and only then runs the regex.

    The pattern is built and compiled on first use, not at load: a process that handles one
    prompt (a hook) touches only a few of the forty lists, and compiling them all cost most of
    the extractor's start-up.
    """

    def __init__(self, entries: list[str]) -> None:
        self.entries = tuple(entries)
        firsts: set[str] = set()
        prefixes: set[str] = set()
        self._always = False
        for entry in entries:
            text = entry.strip().lower()
            head = _WORDS.match(text)
            if head is None:
                self._always = True
            elif head.end() == len(text.rstrip("*")) and text.endswith("*"):
                prefixes.add(head.group(0))
            else:
                firsts.add(head.group(0))
        self._firsts = frozenset(firsts)
        self._prefixes = tuple(sorted(prefixes))

    @cached_property
    def pattern(self) -> str:
        """The trie-shaped alternation of every entry (see :func:`_trie_pattern`)."""
        return _trie_pattern(list(self.entries))

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """The compiled, case-insensitive :attr:`pattern`."""
        return re.compile(self.pattern, re.IGNORECASE)

    def _may_occur(self, text: str) -> bool:
        if self._always:
            return True
        words = _words(text)
        if not self._firsts.isdisjoint(words):
            return True
        return any(w.startswith(self._prefixes) for w in words) if self._prefixes else False

    def search(self, text: str, start: int = 0, end: int | None = None) -> re.Match[str] | None:
        if not self._may_occur(text):
            return None
        return self.regex.search(text, start, len(text) if end is None else end)

    def finditer(self, text: str, start: int = 0, end: int | None = None) -> list[re.Match[str]]:
        if not self._may_occur(text):
            return []
        return list(self.regex.finditer(text, start, len(text) if end is None else end))

    def match_at(self, text: str, pos: int) -> re.Match[str] | None:
        if not self._may_occur(text):
            return None
        return self.regex.match(text, pos)

    def alternation(self) -> str:
        """The pattern without anchors, for embedding in a larger regex."""
        return self.pattern


_END = ""  # trie key marking where an entry ends; its value is the entry's tail pattern


def _trie_pattern(entries: list[str]) -> str:
    """One regex for all entries, shaped as a prefix trie so matching does not retry each entry.

    Entries starting with a letter or digit must start a word, entries starting with an
    apostrophe ("'ll") must follow one; entries ending with a letter must end a word, ``*``
    allows any word ending; a space matches any run of whitespace.
    """
    groups: dict[str, dict[str, object]] = {r"(?<!\w)": {}, r"(?<=\w)": {}, "": {}}
    for entry in entries:
        text = " ".join(entry.strip().lower().split())
        if not text:
            continue
        wildcard = text.endswith("*")
        body = text.rstrip("*")
        lead = r"(?<!\w)" if body[:1].isalnum() else (r"(?<=\w)" if body[:1] == "'" else "")
        tail = r"\w*" if wildcard else (r"(?!\w)" if body[-1:].isalnum() else "")
        node = groups[lead]
        for char in body:
            node = node.setdefault(char, {})  # type: ignore[assignment]
        node[_END] = tail
    parts = [f"{lead}(?:{_trie_regex(trie)})" for lead, trie in groups.items() if trie]
    return "|".join(parts) if parts else r"(?!x)x"


def _trie_regex(node: dict[str, object]) -> str:
    alternatives = []
    for char in sorted(k for k in node if k != _END):
        piece = r"\s+" if char == " " else re.escape(char)
        alternatives.append(piece + _trie_regex(node[char]))  # type: ignore[arg-type]
    if _END in node:
        alternatives.append(str(node[_END]))  # shorter entry last: longer continuations win
    if len(alternatives) == 1:
        return alternatives[0]
    return "(?:" + "|".join(alternatives) + ")"


def _with_full_forms(entries: list[str]) -> list[str]:
    """Idioms are written contracted ("i'll bet"); also match the full form ("i will bet")."""
    out = list(entries)
    for entry in entries:
        for short, full in (("i'll", "i will"), ("we'll", "we will")):
            if short in entry:
                out.append(entry.replace(short, full))
    return out


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


class _Person(_Section):
    first_singular: list[str]
    first_plural: list[str]
    not_names: list[str]


class _Modality(_Section):
    future: list[str]
    obligation: list[str]
    hedges: list[str]
    conditionals: list[str]
    offer_conditions: list[str]
    negators: list[str]


class _Tense(_Section):
    past_markers: list[str]
    reporting: list[str]


class _SpeechActs(_Section):
    immediate_verbs: list[str]
    immediate_adverbs: list[str]
    immediate_openers: list[str]
    idioms: list[str]
    discourse_verbs: list[str]


class _Minutes(_Section):
    action_openers: list[str]
    action_verbs: list[str]
    action_tags: list[str] = []
    commissives: list[str] = []


class _Goal(_Section):
    desire: list[str]
    service_requests: list[str] = []
    desirable: list[str]
    collective_desire: list[str]


class _Question(_Section):
    open_markers: list[str]
    pending_nouns: list[str]
    deliberative: list[str]
    clarifying: list[str]
    answer_openers: list[str]
    agreement_openers: list[str]
    decide_verbs: list[str]
    later_discussion: list[str]


class _Risk(_Section):
    nouns: list[str]
    bad_outcomes: list[str]
    possibility: list[str]
    doubt: list[str]
    negated: list[str]
    politeness: list[str]
    uncertainty: list[str]
    capability: list[str]
    concessive: list[str]
    existing: list[str]


class _Decision(_Section):
    made: list[str]
    negated: list[str]


class _Chat(_Section):
    reply_openers: list[str] = []
    reaction_openers: list[str] = []


class _File(_Section):
    person: _Person
    modality: _Modality
    tense: _Tense
    speech_acts: _SpeechActs
    minutes: _Minutes
    goal: _Goal
    question: _Question
    risk: _Risk
    decision: _Decision
    chat: _Chat = _Chat()


class Lexicon:
    """Every list as compiled :class:`Phrases`, plus plain sets where membership is all we need."""

    def __init__(self, data: _File) -> None:
        self.data = data
        self.not_names = frozenset(data.person.not_names)
        self.action_verbs = frozenset(data.minutes.action_verbs)
        m, s, g, q, r, d = data.modality, data.speech_acts, data.goal, data.question, data.risk, data.decision
        self.future = Phrases(m.future)
        self.obligation = Phrases(m.obligation)
        self.hedges = Phrases(m.hedges)
        self.conditionals = Phrases(m.conditionals)
        self.offer_conditions = Phrases(m.offer_conditions)
        self.negators = Phrases(m.negators)
        self.past_markers = Phrases(data.tense.past_markers)
        self.reporting = Phrases(data.tense.reporting)
        self.immediate_verbs = Phrases(s.immediate_verbs)
        self.immediate_adverbs = Phrases(s.immediate_adverbs)
        self.immediate_openers = Phrases(s.immediate_openers)
        self.idioms = Phrases(_with_full_forms(s.idioms))
        self.discourse_verbs = Phrases(s.discourse_verbs)
        self.action_openers = Phrases(data.minutes.action_openers)
        self.action_tags = Phrases(data.minutes.action_tags)
        self.commissives = Phrases(data.minutes.commissives)
        self.desire = Phrases(g.desire)
        self.service_requests = Phrases(g.service_requests)
        self.desirable = Phrases(g.desirable)
        self.collective_desire = Phrases(g.collective_desire)
        self.open_markers = Phrases(q.open_markers)
        self.pending_nouns = Phrases(q.pending_nouns)
        self.deliberative = Phrases(q.deliberative)
        self.clarifying = Phrases(q.clarifying)
        self.answer_openers = Phrases(q.answer_openers)
        self.agreement_openers = Phrases(q.agreement_openers)
        self.decide_verbs = Phrases(q.decide_verbs)
        self.later_discussion = Phrases(q.later_discussion)
        self.risk_nouns = Phrases(r.nouns)
        self.bad_outcomes = Phrases(r.bad_outcomes)
        self.possibility = Phrases(r.possibility)
        self.doubt = Phrases(r.doubt)
        self.risk_negated = Phrases(r.negated)
        self.politeness = Phrases(r.politeness)
        self.uncertainty = Phrases(r.uncertainty)
        self.capability = Phrases(r.capability)
        self.concessive = Phrases(r.concessive)
        self.risk_existing = Phrases(r.existing)
        self.decision_made = Phrases(d.made)
        self.decision_negated = Phrases(d.negated)
        self.chat = ChatNoise(data.chat.reply_openers, data.chat.reaction_openers)

    def compile_all(self) -> None:
        """Compile every list now rather than at its first use: what a timed run (the eval's
        turns per second) does before its clock starts, so the figure is the extractor's steady
        reading speed, not that plus a one-off start-up a long-lived process pays once."""
        for value in vars(self).values():
            if isinstance(value, Phrases):
                value.regex  # noqa: B018 - the cached property compiles and keeps it

    @classmethod
    def from_path(cls, path: Path) -> Lexicon:
        """Load a lexicon file (the packaged one, or a reviewer's copy under test)."""
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise InvalidInput(str(exc), where=str(path)) from exc
        return cls.from_dict(raw, where=str(path))

    @classmethod
    def from_dict(cls, raw: dict[str, object], *, where: str = "lexicon") -> Lexicon:
        try:
            return cls(_File.model_validate(raw))
        except ValidationError as exc:
            field, message = first_problem(exc)
            raise InvalidInput(message, where=f"{where}: {field}") from exc


@cache
def load_lexicon() -> Lexicon:
    """The lexicon shipped in the package (parsed and compiled once per process)."""
    text = resources.files("intently.extract").joinpath("lexicon.toml").read_text(encoding="utf-8")
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(str(exc), where="intently/extract/lexicon.toml") from exc
    return Lexicon.from_dict(raw, where="intently/extract/lexicon.toml")
