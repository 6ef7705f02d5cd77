"""Deterministic intent resolution: a user's request becomes the set of authorised action kinds.

The resolver reads the request clause by clause, finds action phrases from the vocabulary
on word boundaries (after stemming), honours negation ("don't email the client", but not
"don't forget to invite Mark"), notices delegation ("do the actions in the email from X")
and records the clauses it could not place, so the vocabulary can grow as reviewed data.
A model may *propose* intents (see :class:`Proposer`); proposals are validated against the
vocabulary and never authorise anything on their own.
"""

from __future__ import annotations

import contextvars
import hashlib
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Protocol

from ._paths import CHANGE, READ, authorised_in_clause, excluded_in_clause, inside_folder, same_file
from ._values import EMAIL, IBAN, URL, atoms_of, words
from ._vocabulary import Vocabulary, stem_all

__all__ = [
    "Clause",
    "PromptReading",
    "Proposer",
    "ReadingAbandoned",
    "ResolvedRequest",
    "abandon_reading_when",
    "cut_prompt",
    "read_parts",
    "read_prompt",
    "reading_keys",
    "resolve",
    "resolve_parts",
]

# Asked once per clause while this context reads; see :func:`abandon_reading_when`.
_GIVE_UP: contextvars.ContextVar[Callable[[], bool] | None] = contextvars.ContextVar("intently_give_up", default=None)


class ReadingAbandoned(Exception):
    """A reading stopped because its caller no longer wants it (:func:`abandon_reading_when`)."""


@contextmanager
def abandon_reading_when(give_up: Callable[[], bool]) -> Iterator[None]:
    """Stop the readings made in this block (with :class:`ReadingAbandoned`) once ``give_up()``
    is true, checked at each clause: a hook server that answered a prompt of megabytes at its
    deadline must not keep a thread reading it, at full CPU, for minutes. A stopped reading is
    neither returned nor kept, so nothing half read is ever used; without this block (every
    decision) a reading always runs to its end."""
    token = _GIVE_UP.set(give_up)
    try:
        yield
    finally:
        _GIVE_UP.reset(token)


def _check_give_up() -> None:
    give_up = _GIVE_UP.get()
    if give_up is not None and give_up():
        raise ReadingAbandoned("the reading was given up by its caller")


# Where one clause ends and the next begins. This pattern is the definition; :func:`_separators`
# finds the same matches in one pass (see there for why the pattern itself is not run).
_CLAUSE_SPLIT = re.compile(
    r"(?<=[.!?;])\s+|\n+|,\s*(?:and|then|but)\s+|\s+(?:and then|then|but|and also)\s+|\s*\d+\.\s+"
)
# The pieces of :data:`_CLAUSE_SPLIT`, each tried where it can start. A match starts at a comma
# before a joint word, a newline, a digit, or a run of white space that follows a sentence mark
# or is followed by more white space, a digit or a joint word (with the white space after it, as
# :data:`_WORD_JOINT` needs); a lone space between two words, or a comma (most of a text), is
# skipped without a step of Python. (Every comma, and every space before a joint word's first
# letter, "the", "to", "a", was a step of Python before, for nothing. A digit stays one step per
# run of digits: looking ahead for "3. " from each digit would read a long run once per digit.)
_CANDIDATE = re.compile(
    r"[\n\d]|,(?=\s*(?:and|then|but)\s)|(?<=[.!?;])\s|\s(?=[\s\d]|(?:and then|then|but|and also)\s)"
)
_SPACE_RUN = re.compile(r"\s+")
_NEWLINE_RUN = re.compile(r"\n+")
_DIGIT_RUN = re.compile(r"\d+")
_COMMA_JOINT = re.compile(r",\s*(?:and|then|but)\s+")
_WORD_JOINT = re.compile(r"(?:and then|then|but|and also)\s+")  # after a run of white space
_NUMBERED = re.compile(r"\d+\.\s+")  # after white space, or none


def _separators(text: str, start: int = 0) -> list[tuple[int, int]]:
    """The (start, end) of every match of :data:`_CLAUSE_SPLIT` in ``text``, as ``finditer``
    finds them, in time linear in the text.

    The pattern itself backtracks: at each character of a run of white space, ``\\s+(?:then|...)``
    and ``\\s*\\d+\\.`` run to the end of the run before failing, and ``\\d+\\.`` does the same in
    a run of digits, so a pasted file with long blank stretches or digit strings took seconds
    per kilobyte (a 20 KB run of spaces, over a minute to read). What follows a run decides
    those alternatives for every position inside it, so each run is looked at once: inside a
    run only a newline group can split (``\\n+``, tried before them) until the alternatives that
    depend on the run's end match at the first position they are tried.
    """
    spans: list[tuple[int, int]] = []
    pos = start
    steps = 0
    while pos < len(text):
        steps += 1
        if not steps % 65536:
            _check_give_up()  # a pass over megabytes stops too once its reading is given up
        found = _CANDIDATE.search(text, pos)
        if found is None:
            break
        q = found.start()
        if text[q] == ",":
            m = _COMMA_JOINT.match(text, q)
            if m:
                spans.append(m.span())
                pos = m.end()
            else:
                pos = q + 1
            continue
        run = _SPACE_RUN.match(text, q)
        if run is None:
            # A digit, never inside a run of digits (a search never starts there): only a
            # numbered item can start here, and if it does not, it starts nowhere in the run.
            m = _NUMBERED.match(text, q)
            if m:
                spans.append(m.span())
                pos = m.end()
            else:
                digits = _DIGIT_RUN.match(text, q)
                pos = digits.end() if digits else q + 1
            continue
        end = run.end()
        if q > 0 and text[q - 1] in ".!?;":
            spans.append((q, end))
            pos = end
            continue
        joint = _WORD_JOINT.match(text, end) or _NUMBERED.match(text, end)
        t = q
        while t < end:
            if text[t] == "\n":
                group = _NEWLINE_RUN.match(text, t)
                assert group is not None
                spans.append(group.span())
                t = group.end()
            elif joint is not None:
                spans.append((t, joint.end()))
                t = joint.end()
                break
            else:
                nl = text.find("\n", t, end)
                t = end if nl < 0 else nl
        pos = t
    return spans


def _split(text: str) -> list[str]:
    """``_CLAUSE_SPLIT.split(text)``, from :func:`_separators`."""
    return _pieces(text, _separators(text))


def _pieces(text: str, spans: Sequence[tuple[int, int]]) -> list[str]:
    """``text`` cut at ``spans`` (its :func:`_separators`)."""
    pieces: list[str] = []
    last = 0
    for start, end in spans:
        pieces.append(text[last:start])
        last = end
    pieces.append(text[last:])
    return pieces


# A run of white space and the character that ends it: where every read of the scan stops.
_GAP = re.compile(r"\s+(?=\S)")
# How many of them must follow where a scan resumes (see :func:`_resume_at`), and how far from
# the end they are looked for (a text without them there is scanned whole).
_GAPS_AFTER = 3
_RESUME_WINDOW = 4096


def _resume_at(text: str, spans: Sequence[tuple[int, int]]) -> int:
    """Where a scan of ``text`` followed by more text can pick up from ``text``'s own scan
    (``spans``), to find only the separators near the joint (``clean_end``): before, the whole
    prompt was scanned a second time for it.

    The end of a separator followed by a character that is not white space is where
    :func:`_separators` goes on from, and every match it tries reads at most up to the
    character ending the second run of white space after its start (the joint words, "and
    then", hold one). So from the end of a separator with three such runs after it, nothing the
    scan decided up to there could change with text added after ``text``. 0 (scan it all) when
    there is no such separator near the end."""
    window = text[-_RESUME_WINDOW:]
    gaps = [m.start() for m in _GAP.finditer(window)]
    if len(gaps) <= _GAPS_AFTER:
        return 0  # the first gap may be cut by the window: one more than needed
    start = len(text) - len(window)
    limit = start + gaps[-_GAPS_AFTER]
    for _start, end in reversed(spans):
        if end <= limit and end < len(text) and not text[end].isspace():
            return end
        if end < start:
            # Only the window is searched. (The search stopped at the last separator before
            # ``limit`` before: in indented source every line break is followed by white
            # space, so a pasted file read whole again whenever its cut ended in code.)
            break
    return 0


@dataclass(frozen=True)
class Clause:
    text: str
    kinds: frozenset[str]
    negated: frozenset[str]
    objects: frozenset[str]
    placed: bool


@dataclass(frozen=True)
class ResolvedRequest:
    """What the user asked for, as data the policy can check calls against."""

    text: str
    intents: frozenset[str]
    negated: frozenset[str]
    delegated: bool
    objects: frozenset[str]
    clauses: tuple[Clause, ...]
    unplaced: tuple[str, ...]
    proposed: frozenset[str] = field(default_factory=frozenset)
    vocabulary_version: str = ""
    stems: frozenset[str] = field(default_factory=frozenset)
    plural: bool = False
    # Who the user said to leave out ("don't send anything to Bob", "everyone except eve@x.com"):
    # addresses as normalised atoms, people by their names in lower case.
    excluded_values: frozenset[str] = field(default_factory=frozenset)
    excluded_names: frozenset[str] = field(default_factory=frozenset)
    # Paths the user said not to change ("do not edit src/app/config.py", "don't touch src/lib/"),
    # and those not even to read ("don't open .env"), as written (see ``_paths``).
    excluded_paths: frozenset[str] = field(default_factory=frozenset)
    excluded_reads: frozenset[str] = field(default_factory=frozenset)
    # Which prompt of the conversation protects each of them (1 for a request of one prompt),
    # and the protections a later prompt lifted ("now you may edit config.py"): (path, the
    # prompt that protected it, the prompt that lifted it). What a decision and `gate explain`
    # name; not compared, since a request read whole knows no prompts.
    excluded_by: tuple[tuple[str, int], ...] = field(default=(), compare=False)
    lifted_paths: tuple[tuple[str, int, int], ...] = field(default=(), compare=False)
    prompts: int = field(default=1, compare=False)

    def to_json(self) -> dict[str, object]:
        return {
            "intents": sorted(self.intents),
            "negated": sorted(self.negated),
            "delegated": self.delegated,
            "objects": sorted(self.objects),
            "unplaced": list(self.unplaced),
            "proposed": sorted(self.proposed),
            "plural": self.plural,
            "excluded": sorted(self.excluded_values | self.excluded_names),
            "excluded_paths": sorted(self.excluded_paths | self.excluded_reads),
            "excluded_reads": sorted(self.excluded_reads),
            "excluded_path_prompts": {p: n for p, n in self.excluded_by},
            "lifted_paths": [{"path": p, "protected_by": a, "lifted_by": b} for p, a, b in self.lifted_paths],
            "vocabulary_version": self.vocabulary_version,
        }


class Proposer(Protocol):
    """An optional model that proposes action kinds for a request (never authoritative)."""

    def propose(self, request: str, kinds: dict[str, str]) -> list[str]:
        """Return kind names from ``kinds``; anything else is dropped by the resolver."""
        ...


def _proposed(proposer: Proposer | None, request: str, vocabulary: Vocabulary) -> frozenset[str]:
    """The kinds an optional model proposes for ``request`` that the vocabulary knows: a hint
    for the resolver, never a decision, so a failing model proposes nothing."""
    if proposer is None:
        return frozenset()
    try:
        raw_kinds = proposer.propose(request, dict(vocabulary.descriptions))
    except Exception:
        return frozenset()
    return frozenset(k for k in raw_kinds if isinstance(k, str) and k in vocabulary.kinds)


def resolve(request: str, vocabulary: Vocabulary, proposer: Proposer | None = None) -> ResolvedRequest:
    clauses: list[Clause] = []
    for raw in _split(request):
        if raw and raw.strip():
            clauses.append(_clause(raw.strip(), vocabulary))
    all_stems = stem_all(words(request))
    delegated = vocabulary.has_phrase(all_stems, vocabulary.delegation)
    positive = frozenset(k for c in clauses for k in c.kinds)
    negated = frozenset(k for c in clauses for k in c.negated) - positive
    proposed = _proposed(proposer, request, vocabulary) - positive - negated
    excluded_values, excluded_names = _excluded(request, vocabulary)
    raws = _split(request)
    paths = fold_paths([(_paths_in(raws, vocabulary, excluded_in_clause), set())])
    return ResolvedRequest(
        text=request,
        intents=positive,
        negated=negated,
        delegated=delegated,
        objects=frozenset(o for c in clauses for o in c.objects),
        clauses=tuple(clauses),
        unplaced=tuple(c.text for c in clauses if not c.placed),
        proposed=proposed,
        vocabulary_version=vocabulary.version,
        stems=frozenset(all_stems),
        plural=bool(set(all_stems) & vocabulary.quantifiers) or _counted_plural(request),
        excluded_values=excluded_values,
        excluded_names=excluded_names,
        **paths.fields(1),
    )


def _clause(text: str, vocab: Vocabulary) -> Clause:
    _check_give_up()
    tokens = words(text)
    stems = stem_all(tokens)
    kinds: set[str] = set()
    negated: set[str] = set()
    neg_until = -1
    heads = _clause_heads(vocab)
    i = 0
    while i < len(stems):
        if heads is not None and stems[i] not in heads:
            i += 1  # no negator and no action phrase starts at this word (most words of a pasted log)
            continue
        neg = _negator_at(stems, i, vocab)
        if neg:
            after = i + neg
            if after < len(stems) and stems[after] in vocab.cancellers:
                i = after + 1
                continue
            neg_until = after + 3
            i = after
            continue
        hits = [(k, n) for k, n in vocab.kinds_at(stems, i) if not vocab.is_noun_use(stems, i, n)]
        if hits:
            target = negated if i <= neg_until else kinds
            for k, _ in hits:
                target.add(k)
            i += max(n for _, n in hits)
            continue
        i += 1
    placed = bool(kinds or negated) or vocab.has_phrase(stems, vocab.read_verbs)
    return Clause(text, frozenset(kinds), frozenset(negated - kinds), frozenset(vocab.objects_in(stems)), placed)


# The stems at which something can start, per vocabulary (by its fingerprint): a word that is
# none of them is passed over at once. Most words of a pasted log or source file are such
# words, and trying the negators and phrases at each of them was most of a long prompt's reading.
_HEADS: dict[tuple[str, str], frozenset[str] | None] = {}


def _clause_heads(vocab: Vocabulary) -> frozenset[str] | None:
    """The first stems of the negators and action phrases: at any other word :func:`_clause`
    finds nothing (an empty negator reads as none). ``None`` when a phrase may start anywhere
    (empty, or opening with a gap): then every word is tried."""
    key = ("clause", vocab.fingerprint)
    if key not in _HEADS:
        kinds, anywhere = vocab._phrases_by_head
        negators, _ = vocab._negators_by_head
        _HEADS[key] = None if anywhere else frozenset(kinds) | frozenset(negators)
    return _HEADS[key]


def _opener_heads(vocab: Vocabulary) -> frozenset[str] | None:
    """The first stems of the exclusion phrases and the negators: at any other word no scope
    opens (:func:`_scope_opener` is 0). ``None`` when an exclusion phrase is empty (it decides
    at every word)."""
    key = ("opener", vocab.fingerprint)
    if key not in _HEADS:
        negators, _ = vocab._negators_by_head
        empty = any(not p for p in vocab.exclusions)
        _HEADS[key] = None if empty else frozenset(p[0] for p in vocab.exclusions) | frozenset(negators)
    return _HEADS[key]


_COUNTED = re.compile(r"(?<![\w.:/-])(\d{1,3})\s+(?:[A-Za-z]+\s+)?[A-Za-z]+s\b")


def _counted_plural(text: str) -> bool:
    """ "3 files", "12 emails": a count above one before a plural noun (not dates or list numbers)."""
    return any(int(m.group(1)) > 1 for m in _COUNTED.finditer(text))


def _negator_at(stems: tuple[str, ...], i: int, vocab: Vocabulary) -> int:
    for p in vocab.negators_from(stems[i] if i < len(stems) else ""):
        if tuple(stems[i : i + len(p)]) == p:
            return len(p)
    return 0


# A token of the request: an address or link whole, else a word (its case kept, for names).
_TOKEN = re.compile(rf"{EMAIL.pattern}|{URL.pattern}|[A-Za-z0-9]+(?:['’][a-z]+)?")
# Where an exclusion's reach ends: a sentence or clause mark, or a comma before a lower-case
# word ("don't email Bob, email Alice"), but not a comma in a list of names ("except Bob, Carol").
_SCOPE_END = re.compile(r"[.;:!?()]|,\s*[a-z]")
# "anyone outside Acme": what follows says who may be involved, not who is left out.
_SCOPE_CLOSERS = frozenset({"outside", "beyond"})
# Words that open a sentence in capitals without naming anyone (a scope never opens a clause, so
# a capitalised first word counts only as a mention outside one).
_NOT_NAMES = frozenset({"i", "please", "also", "the", "a", "an", "my", "our", "your", "this", "that"})


def _excluded(request: str, vocab: Vocabulary) -> tuple[frozenset[str], frozenset[str]]:
    """The addresses and names the request rules out, minus any it also names outside such a scope.

    A scope opens after a negated action ("don't send ... to Bob", "no need to cc Bob"), after
    an exclusion word ("except", "other than"), or at a negator right before a name or address
    ("to Alice, not Bob"); it runs to the end of the clause. "I don't know Bob's address" rules
    nobody out: "know" is no action.
    """
    in_scope, outside = _scopes(_split(request), vocab)
    ruled_out = in_scope - outside
    return (
        frozenset(v for kind, v in ruled_out if kind == "value"),
        frozenset(v for kind, v in ruled_out if kind == "name"),
    )


def _scopes(raws: Sequence[str], vocab: Vocabulary) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The mentions inside an exclusion scope and those outside one, clause by clause (``raws``:
    the request's :func:`_split`, made once by the caller)."""
    in_scope: set[tuple[str, str]] = set()
    outside: set[tuple[str, str]] = set()
    heads = _opener_heads(vocab)
    for raw in raws:
        _check_give_up()
        if not raw or not raw.strip():
            continue
        tokens = list(_TOKEN.finditer(raw))
        stems = stem_all([t.group(0).lower() for t in tokens])
        open_at: int | None = None
        i = 0
        while i < len(tokens):
            if open_at is not None and (
                (i > open_at and _ends_scope(raw, tokens, i)) or tokens[i].group(0).lower() in _SCOPE_CLOSERS
            ):
                open_at = None
            opener = _scope_opener(raw, tokens, stems, i, vocab) if heads is None or stems[i] in heads else 0
            if opener:
                open_at = i + opener
                i += opener
                continue
            mention = _mention(tokens[i].group(0))
            if mention is not None:
                (in_scope if open_at is not None else outside).add(mention)
            i += 1
    return in_scope, outside


def _ends_scope(raw: str, tokens: list[re.Match[str]], i: int) -> bool:
    """Whether the text between token ``i - 1`` and token ``i`` closes a scope."""
    return _SCOPE_END.search(raw, tokens[i - 1].end(), tokens[i].start() + 1) is not None


def _scope_opener(raw: str, tokens: list[re.Match[str]], stems: tuple[str, ...], i: int, vocab: Vocabulary) -> int:
    """How many tokens at ``i`` open an exclusion scope (0: none)."""
    for phrase in vocab.exclusions:
        if tuple(stems[i : i + len(phrase)]) == phrase:
            return len(phrase)
    neg = _negator_at(stems, i, vocab)
    if not neg or (i + neg < len(stems) and stems[i + neg] in vocab.cancellers):
        return 0
    after = i + neg
    nxt = after + 1 if after < len(stems) and stems[after] in ("to", "for", "cc", "bcc") else after
    if nxt < len(tokens) and _mention(tokens[nxt].group(0)) is not None:
        return neg  # "not Bob", "not to eve@x.com"
    for j in range(after, min(after + 4, len(stems))):  # a negated action, as the kinds read it
        if j > after and _ends_scope(raw, tokens, j):  # "never mind, send it to Bob"
            break
        hits = [n for _, n in vocab.kinds_at(stems, j) if not vocab.is_noun_use(stems, j, n)]
        if hits:
            return j + max(hits) - i
    return 0


@dataclass(frozen=True)
class PathWords:
    """The paths a conversation protects after its prompts were read in order (``fold_paths``)."""

    active: dict[tuple[str, str], int]  # (mode, path): the prompt that protects it
    lifted: dict[str, tuple[int, int]]  # path: (the prompt that protected it, the one that lifted it)

    def fields(self, prompts: int) -> dict[str, Any]:
        """The :class:`ResolvedRequest` fields they make."""
        by: dict[str, int] = {}
        for (_, p), n in self.active.items():
            by[p] = max(by.get(p, 0), n)
        return {
            "excluded_paths": frozenset(p for _, p in self.active),
            "excluded_reads": frozenset(p for mode, p in self.active if mode == READ),
            "excluded_by": tuple(sorted(by.items())),
            "lifted_paths": tuple(sorted((p, a, b) for p, (a, b) in self.lifted.items())),
            "prompts": prompts,
        }


def fold_paths(prompts: Sequence[tuple[Iterable[tuple[str, str]], Iterable[tuple[str, str]]]]) -> PathWords:
    """The paths protected after the user's prompts, in order, each (what it rules out, what it
    allows): the latest word of the user on a path wins. A prompt that allows a change of a
    path an earlier prompt protected ("OK, now you may edit src/app/config.py too", or its bare
    name) lifts that protection from then on; a later "do not edit" imposes it again. Allowing a
    read lifts only a protection from reading (the path stays protected from change). Within
    one prompt the negation wins ("Update config.py. No, don't touch config.py."): a single
    request is one word of the user, and what it rules out holds throughout (fail closed).
    Allowing a change of a path inside a folder protected from change ("Don't touch src/lib/",
    then "now you may edit src/lib/a.py") lifts the protection of that path only: it is listed
    as lifted, the folder stays protected for everything else in it (the gate frees a call's
    path only when every protection it falls under holds the lifted path). A later negation of
    the folder imposes it again on the path.
    Only the user's prompts are read here: a tool output or the agent's own message lifts nothing."""
    active: dict[tuple[str, str], int] = {}
    lifted: dict[str, tuple[int, int]] = {}
    for n, (ruled_out, allowed) in enumerate(prompts, 1):
        for mode, a in allowed:
            for (was, e), by in list(active.items()):
                if mode == CHANGE and was == CHANGE and inside_folder(a, e):
                    lifted[a] = (by, n)  # that path only: the folder stays protected
                    continue
                if not same_file(a, e):
                    continue
                if mode == CHANGE:
                    del active[(was, e)]
                    lifted[e] = (by, n)
                elif was == READ:
                    del active[(was, e)]
                    active.setdefault((CHANGE, e), by)
        for mode, p in ruled_out:
            active[(mode, p)] = n
            for e in [e for e in lifted if same_file(p, e) or same_file(e, p) or inside_folder(e, p)]:
                del lifted[e]  # imposed again: no longer lifted
    return PathWords(active, lifted)


def _paths_in(
    raws: Sequence[str], vocab: Vocabulary, in_clause: Callable[[str, Vocabulary], set[tuple[str, str]]]
) -> set[tuple[str, str]]:
    """(mode, path) for every path ``in_clause`` finds in a clause of a prompt: what the clause
    rules out (``_paths.excluded_in_clause``: ``change``, not to be changed, or ``read``, not
    even read) or what it allows (``_paths.authorised_in_clause``). Unlike a recipient, a path
    named elsewhere in the request stays ruled out: "look at config.py but do not edit
    config.py" names it twice."""
    found: set[tuple[str, str]] = set()
    for raw in raws:
        _check_give_up()
        if raw and raw.strip():
            found |= in_clause(raw.strip(), vocab)
    return found


@lru_cache(maxsize=65536)  # a pasted log says the same words again and again
def _mention(token: str) -> tuple[str, str] | None:
    """("value", atom) for an address, link or IBAN; ("name", lower case) for a capitalised word."""
    if EMAIL.fullmatch(token) or URL.fullmatch(token) or IBAN.fullmatch(token.upper()):
        found = atoms_of(token)
        return ("value", next(iter(sorted(found)))) if found else None
    name = re.sub(r"['’]s$", "", token).lower()  # "Bob's manager": Bob
    if token[:1].isupper() and token[1:2].islower() and name not in _NOT_NAMES:
        return ("name", name)
    return None


# -- a conversation read one prompt at a time -----------------------------------------------
#
# A coding agent's session grows prompt by prompt, and every tool call is checked against all
# of them joined ("\n\n"). Reading that whole text again at each check made a long session
# slow every call. What the resolver reads is per clause, and the prompts' boundary is always
# a clause boundary, so each prompt can be read once and the readings combined: the result is
# the same :class:`ResolvedRequest` as :func:`resolve` of the joined text. Where a boundary is
# not clean (a prompt ending in whitespace or in a separator that would run on into the next,
# "... step 3." or "... and then"), the two sides are read together, as one text.
#
# A prompt of megabytes (a pasted log) is itself cut into chunks the same way (:func:`cut_prompt`),
# at line breaks between two characters that are not white space: such a break is a clause
# boundary too, whether it is one newline or a blank line, since the split takes a run of
# newlines whole and nothing it tries tells one newline from two. Each chunk's reading is kept
# under its own content hash, so a hook process that reaches its deadline in the middle of the
# prompt leaves what it read for the next one (:func:`read_parts`' ``save``), instead of every
# process starting over and every tool call being blocked (fail closed) until ``/clear``.

#: Bump when what a reading holds, or how it is computed, changes: stored readings of another
#: format are read again rather than trusted.
READING_FORMAT = 3  # 2: readings hold the paths a prompt rules out; 3: and those it allows
_JOIN = "\n\n"
#: A prompt longer than twice this is read in chunks of about this many characters.
CHUNK_CHARS = 65_536
#: How often, in seconds of reading, :func:`read_parts` hands what it read so far to ``save``.
SAVE_EVERY_S = 2.0
# Where a prompt may be cut: a run of newlines between two characters that are not white space
# (a blank line preferred), and the line before it must not end in what a separator could run
# on from ("step 3." + newline is one numbered-item separator; so is " and then" + newline, and
# a comma before a line that starts with "and"). A line break is "\n" or Windows' "\r\n": a
# prompt pasted with CRLF line endings had no "\n" right after a character that is not white
# space, so it was never cut and a huge one was read whole, in one step of megabytes.
_CUT = re.compile(r"(?<=\S)(?:\r?\n)+(?=\S)")
_BLANK_CUT = re.compile(r"(?<=\S)(?:\r?\n){2,}(?=\S)")
_RUNS_ON = re.compile(r"(?:\d\.|[\s,](?:and|then|but|also)|,)$")
_MAX_CACHED = 512
_CACHE: dict[str, PromptReading] = {}
_CACHE_LOCK = threading.Lock()  # the hook server answers events on several threads


@dataclass(frozen=True)
class PromptReading:
    """What the resolver reads in one prompt, kept so later checks need not read it again."""

    clauses: tuple[Clause, ...]
    stems: frozenset[str]
    head: tuple[str, ...]  # the first stems (all of them when there are few), for phrases across prompts
    tail: tuple[str, ...]  # the last stems
    count: int
    delegated: bool
    plural: bool
    excluded_in: frozenset[tuple[str, str]]
    excluded_out: frozenset[tuple[str, str]]
    clean_start: bool  # joined after another prompt, it splits as it does alone
    clean_end: bool  # joined before another prompt, it splits as it does alone
    excluded_paths: frozenset[tuple[str, str]] = frozenset()  # (mode, path), see ``_paths_in``
    allowed_paths: frozenset[tuple[str, str]] = frozenset()  # (mode, path), see ``_paths_in``

    def to_json(self) -> dict[str, object]:
        return {
            "clauses": [
                [c.text, sorted(c.kinds), sorted(c.negated), sorted(c.objects), c.placed] for c in self.clauses
            ],
            "stems": sorted(self.stems),
            "head": list(self.head),
            "tail": list(self.tail),
            "count": self.count,
            "delegated": self.delegated,
            "plural": self.plural,
            "excluded_in": sorted(map(list, self.excluded_in)),
            "excluded_out": sorted(map(list, self.excluded_out)),
            "clean": [self.clean_start, self.clean_end],
            "excluded_paths": sorted(map(list, self.excluded_paths)),
            "allowed_paths": sorted(map(list, self.allowed_paths)),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PromptReading:
        start, end = data["clean"]
        return cls(
            clauses=tuple(
                Clause(str(t), _set_of(k), _set_of(n), _set_of(o), bool(p)) for t, k, n, o, p in data["clauses"]
            ),
            stems=frozenset(str(s) for s in data["stems"]),
            head=tuple(str(s) for s in data["head"]),
            tail=tuple(str(s) for s in data["tail"]),
            count=int(data["count"]),
            delegated=bool(data["delegated"]),
            plural=bool(data["plural"]),
            excluded_in=frozenset((str(a), str(b)) for a, b in data["excluded_in"]),
            excluded_out=frozenset((str(a), str(b)) for a, b in data["excluded_out"]),
            clean_start=bool(start),
            clean_end=bool(end),
            excluded_paths=frozenset((str(a), str(b)) for a, b in data["excluded_paths"]),
            allowed_paths=frozenset((str(a), str(b)) for a, b in data["allowed_paths"]),
        )


_NONE: frozenset[str] = frozenset()


def _set_of(items: list[str]) -> frozenset[str]:
    """A kept clause's kinds, negations or objects: most clauses of a pasted log have none, and
    sharing one empty set halves the time a long prompt's kept reading takes to load."""
    return frozenset(items) if items else _NONE


def _edge(vocab: Vocabulary) -> int:
    """How many stems of a prompt's ends a delegation phrase across two prompts can use."""
    return max((len(p) for p in vocab.delegation), default=1) - 1


def reading_key(text: str, vocab: Vocabulary) -> str:
    """The key of a prompt's reading: its content hash, under this vocabulary and format."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{READING_FORMAT}:{vocab.fingerprint}:{digest}"


def read_prompt(text: str, vocab: Vocabulary) -> PromptReading:
    """Read one prompt as :func:`resolve` would read it inside a conversation."""
    spans = _separators(text)
    _check_give_up()  # between the passes over the whole text too, not only at each clause
    raws = _pieces(text, spans)
    pieces = [raw.strip() for raw in raws if raw and raw.strip()]
    stems = stem_all(words(text))
    _check_give_up()
    edge = _edge(vocab)
    excluded_in, excluded_out = _scopes(raws, vocab)
    joined = _separators(text + _JOIN, _resume_at(text, spans))
    return PromptReading(
        clauses=tuple(_clause(p, vocab) for p in pieces),
        stems=frozenset(stems),
        head=stems[:edge] if edge > 0 else (),
        tail=stems[-edge:] if edge > 0 else (),
        count=len(stems),
        delegated=vocab.has_phrase(stems, vocab.delegation),
        plural=bool(set(stems) & vocab.quantifiers) or _counted_plural(text),
        excluded_in=frozenset(excluded_in),
        excluded_out=frozenset(excluded_out),
        # Every separator ends in whitespace, so one that would run on into the next prompt
        # starts in this one and shows up as the last match of the text with the joint added.
        clean_start=bool(text) and not text[0].isspace(),
        clean_end=bool(text) and not text[-1].isspace() and bool(joined) and joined[-1][0] == len(text),
        excluded_paths=frozenset(_paths_in(raws, vocab, excluded_in_clause)),
        allowed_paths=frozenset(_paths_in(raws, vocab, authorised_in_clause)),
    )


def _reading(text: str, vocab: Vocabulary, store: MutableMapping[str, Any] | None) -> PromptReading:
    key = reading_key(text, vocab)
    with _CACHE_LOCK:
        found = _CACHE.get(key)
    if found is None and store is not None and key in store:
        try:
            found = PromptReading.from_json(store[key])
        except (KeyError, TypeError, ValueError, AttributeError):
            found = None  # a damaged entry is read again, never trusted
    if found is None:
        found = read_prompt(text, vocab)
    if store is not None and key not in store:
        store[key] = found.to_json()
    with _CACHE_LOCK:
        if key not in _CACHE and len(_CACHE) >= _MAX_CACHED:
            _CACHE.pop(next(iter(_CACHE)))  # the oldest
        _CACHE[key] = found
    return found


def cut_prompt(text: str, size: int | None = None) -> tuple[list[str], list[str]]:
    """``text`` cut into chunks of about ``size`` characters (:data:`CHUNK_CHARS`), and the line breaks between them:
    ``chunks[0] + joints[0] + chunks[1] + ...`` is ``text``. A text of up to twice ``size``, or
    one without a line break to cut at, is one chunk (its reading key is then the prompt's own,
    as before chunks). Each cut is at a line break between two characters that are not white
    space, a blank line when there is one within a quarter chunk, and never after a line that a
    separator could run on from; so each chunk reads as it does inside the whole text, which
    :func:`resolve_parts` checks all the same (``clean_end``) and, where not, reads the two
    chunks together."""
    size = size or CHUNK_CHARS
    chunks: list[str] = []
    joints: list[str] = []
    start = 0
    while len(text) - start > 2 * size:
        target = start + size
        cut = _BLANK_CUT.search(text, target, target + size // 4) or _CUT.search(text, target)
        while cut is not None and (
            _RUNS_ON.search(text, max(start, cut.start() - 8), cut.start()) or _crlf_joint(cut.group(), text, cut.end())
        ):
            cut = _CUT.search(text, cut.end())
        if cut is None or len(text) - cut.end() < size // 2:
            break  # nowhere left to cut, or only a sliver after the cut: the rest is one chunk
        chunks.append(text[start : cut.start()])
        joints.append(cut.group())
        start = cut.end()
    chunks.append(text[start:])
    return chunks, joints


def _pieces_of(parts: Sequence[str]) -> tuple[list[str], list[str], list[int]]:
    """The chunks of every part, in order, the text between each two (a part's own line
    break, or the blank line joining two parts): joined, they give ``"\\n\\n".join(parts)``;
    and the part each chunk comes from."""
    pieces: list[str] = []
    joints: list[str] = []
    owners: list[int] = []
    for i, part in enumerate(parts):
        chunks, inner = cut_prompt(part)
        if i:
            joints.append(_JOIN)
        pieces += chunks
        joints += inner
        owners += [i] * len(chunks)
    return pieces, joints, owners


def reading_keys(parts: Sequence[str], vocab: Vocabulary) -> set[str]:
    """The keys under which the readings of ``parts`` (of each of their chunks) are kept."""
    return {reading_key(piece, vocab) for piece in _pieces_of(parts)[0]}


def read_parts(
    parts: Sequence[str],
    vocabulary: Vocabulary,
    store: MutableMapping[str, Any] | None = None,
    save: Callable[[], None] | None = None,
) -> None:
    """Read each chunk of ``parts`` not read yet into the process cache and ``store``, as
    :func:`resolve_parts` would, without combining them: what a hook does ahead of a decision,
    so that the slow step for a very long prompt is done, and kept, before anything is logged.

    ``save`` (when given) is called after a chunk once :data:`SAVE_EVERY_S` seconds of reading
    have passed since the last call, and at the end if anything was read since: a hook process
    ended at its deadline in the middle of a prompt of megabytes has kept what it read, and the
    next process goes on from there."""
    last = time.monotonic()
    unsaved = False
    for piece in _pieces_of(parts)[0]:
        known = store is not None and reading_key(piece, vocabulary) in store
        _reading(piece, vocabulary, store)
        unsaved = unsaved or not known
        if save is not None and unsaved and time.monotonic() - last >= SAVE_EVERY_S:
            save()
            last, unsaved = time.monotonic(), False
    if save is not None and unsaved:
        save()


def resolve_parts(
    parts: Sequence[str],
    vocabulary: Vocabulary,
    proposer: Proposer | None = None,
    store: MutableMapping[str, Any] | None = None,
) -> ResolvedRequest:
    """:func:`resolve` of ``"\\n\\n".join(parts)``, reading each part once.

    Each part's reading is kept in a process cache and, when ``store`` is given (a mapping the
    caller persists, such as a hook's session record), there too, keyed by the part's content
    hash; a later call reads only the parts it has not seen. The result equals the whole
    text's: where two parts would not split apart as they do alone, they are read together.
    A part of megabytes is read in chunks (:func:`cut_prompt`), each kept on its own, and
    combined only once every chunk is read: nothing is decided on part of a prompt.
    One thing differs, on purpose: the paths protected, which follow the parts in order
    (:func:`fold_paths`): a later prompt that allows a change of a path an earlier one
    protected lifts that protection, while the whole text read as one request keeps it.
    """
    request = _JOIN.join(parts)
    if not parts:
        return resolve(request, vocabulary, proposer)
    # One part is read through its kept reading too: a session of one very long prompt (a
    # pasted log of megabytes) was read in full again at every tool check, which alone could
    # take longer than Claude Code waits for a hook.
    pieces, joints, owners = _pieces_of(parts)
    chunk_readings = [_reading(p, vocabulary, store) for p in pieces]
    readings = list(chunk_readings)
    held = [[c] for c in range(len(pieces))]  # the chunks each piece is made of
    i = 0
    while i < len(joints):
        if (
            readings[i].clean_end
            and readings[i + 1].clean_start
            and not _comma_joint(pieces[i], joints[i], pieces[i + 1])
            and not _crlf_joint(joints[i], pieces[i + 1])
        ):
            i += 1
            continue
        # Not a clean boundary: the two sides are one text (a merged piece starts as its first
        # half does, so the boundary before it stays clean; the one after is checked next).
        merged = pieces[i] + joints[i] + pieces[i + 1]
        pieces[i : i + 2] = [merged]
        del joints[i]
        readings[i : i + 2] = [_reading(merged, vocabulary, None)]
        held[i : i + 2] = [held[i] + held[i + 1]]
    # What each prompt protects or allows is read per prompt, in order, however they join: a
    # piece within one prompt speaks for that prompt, one read across prompts by its chunks.
    said: list[tuple[set[tuple[str, str]], set[tuple[str, str]]]] = [(set(), set()) for _ in parts]
    for reading, chunks in zip(readings, held, strict=True):
        prompts = {owners[c] for c in chunks}
        by_prompt = (
            [(owners[chunks[0]], reading)] if len(prompts) == 1 else [(owners[c], chunk_readings[c]) for c in chunks]
        )
        for n, r in by_prompt:
            said[n][0].update(r.excluded_paths)
            said[n][1].update(r.allowed_paths)
    paths = fold_paths(said).fields(len(parts))
    clauses = tuple(c for r in readings for c in r.clauses)
    positive = frozenset(k for c in clauses for k in c.kinds)
    negated = frozenset(k for c in clauses for k in c.negated) - positive
    proposed = _proposed(proposer, request, vocabulary) - positive - negated
    ruled_out = frozenset().union(*(r.excluded_in for r in readings)) - frozenset().union(
        *(r.excluded_out for r in readings)
    )
    return ResolvedRequest(
        text=request,
        intents=positive,
        negated=negated,
        delegated=any(r.delegated for r in readings) or _delegated_across(readings, vocabulary),
        objects=frozenset(o for c in clauses for o in c.objects),
        clauses=clauses,
        unplaced=tuple(c.text for c in clauses if not c.placed),
        proposed=proposed,
        vocabulary_version=vocabulary.version,
        stems=frozenset().union(*(r.stems for r in readings)),
        # A count and its noun may sit on either side of a joint ("3" / "files"): the whole
        # text decides, but only when no part is plural on its own (then the whole is too).
        # One part's own reading already counted it.
        plural=any(r.plural for r in readings) or (len(pieces) > 1 and _counted_plural(request)),
        excluded_values=frozenset(v for kind, v in ruled_out if kind == "value"),
        excluded_names=frozenset(v for kind, v in ruled_out if kind == "name"),
        **paths,
    )


def _comma_joint(before: str, joint: str, after: str) -> bool:
    """Whether a comma ending ``before`` and a joint word starting ``after`` make one separator
    (``,\\s*and\\s+``) across the line break: neither side's own reading can see it, and the
    split of the whole text takes it there, so the two sides are read together."""
    return before.endswith(",") and _COMMA_JOINT.match("," + joint + after[:8]) is not None


def _crlf_joint(joint: str, after: str, at: int = 0) -> bool:
    """Whether a line break with a carriage return and a joint word starting the next line
    ("\r\nand then ...") make one separator: a run of white space that starts with "\r" takes
    the joint word after it along (one that starts with "\n" stops at the newline), so the
    two sides do not read as each does alone; they are read together there."""
    return "\r" in joint and _WORD_JOINT.match(after, at) is not None


def _delegated_across(readings: Sequence[PromptReading], vocab: Vocabulary) -> bool:
    """Whether a delegation phrase runs across a joint between prompts (a short prompt may
    sit inside one): the last stems so far, then the next prompt's first."""
    edge = _edge(vocab)
    if edge <= 0:
        return False
    carry: tuple[str, ...] = ()
    for r in readings:
        seq = carry + r.head
        for p in vocab.delegation:
            for i in range(max(0, len(carry) - len(p) + 1), len(carry)):
                if i + len(p) > len(carry) and tuple(seq[i : i + len(p)]) == p:
                    return True
        carry = r.tail if r.count >= edge else (carry + r.head)[-edge:]
    return False
