"""The default extractor: deterministic rules over clause structure, with lexicons as data.

Each turn is normalised (markdown emphasis dropped, list markers stepped over), split into
sentences and clauses, and each sentence is read for the structures that carry an intent, not
for keywords alone. A chat client's quoted reply prefix and reaction lines are someone else's
words and are skipped (``_chat.py``).

- COMMITMENT: a first-person subject with a future or volitional modal and an action verb
  ("I'll send it"), a named person with ``will`` / ``to`` / a commissive verb in minutes
  ("Michael to close the issue", "pnkfelix to review", "Rich volunteered to draft it"), or an
  action-item line ("ACTION: ...", "- [ ] @bob ...", "... (action item)"). Blocked by negation in the
  clause, hedges before the verb, a preposed condition or a postposed offer condition, idioms,
  reported speech, past markers, and immediate in-conversation acts ("let me check", "I'll be
  right back") unless a due date puts the act in the future.
- GOAL: a first-person desire or plan predicate ("I would like to", "we're planning to"),
  impersonal desirability ("it would be nice for X to"), collective wants ("people want").
  Discourse uses ("I want to mention") are speech acts, not goals.
- OPEN_QUESTION: a deliberative question (a choice the group must make: "should we", "what
  about") that is not answered by the next sentence of the same turn, not addressed to the
  listener as small talk ("what do you think"), not a clarification ("what is X?"); or a
  declarative pending-decision marker ("we need to decide", "TBD").
- RISK: a potential failure: a bad outcome under a possibility modal ("could break the web"),
  risk nouns, worry and doubt predicates, doubt about feasibility; not when negated in the
  clause ("I'm not concerned about X", "not a blocker") and not the politeness "I'm afraid".
- DECISION: a decision made or agreed ("we agreed", "has consensus", "is approved"), unless
  undone in the clause ("no consensus", "ask for consensus").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta

from ..core.errors import InvalidInput
from ._base import Extractor
from ._dates import DueDate, find_due
from ._language import looks_english
from ._lexicon import Lexicon, load_lexicon
from ._model import SentenceModel, load_model, sentence_features
from ._models import Candidate, CandidateType, Turn
from ._patterns import (
    ADVERB,
    AGENDA_REMOVAL,
    AGENT_CHOICE,
    AND_WILL,
    BARE_OUTCOME,
    BARE_QUESTION,
    CHOICE_IMPERATIVE,
    CLEFT_DESIRE,
    CONFIRMATION_TAG,
    DECISION_WAITS,
    DELIBERATION,
    EMBEDDED,
    FIRST_SINGULAR_QUESTION,
    GOAL_STATEMENT,
    GROUP_ACTION,
    HANDLE_ACTION,
    KNOWLEDGE_GAP,
    NAME,
    NAMED_DESIRE,
    NAMED_PROGRESSIVE,
    NEEDS_DISCUSSION,
    NOBODY,
    OWNER_LIST,
    POSTPOSED_CONDITION,
    POSTPOSED_DESIRABLE,
    PROGRESSIVE_NOT_PLANS,
    PROGRESSIVE_PLAN,
    PRONOUN_ACTION,
    READY_OFFER,
    RELATIVE_CLAUSE,
    REMIND_ME,
    RISK_OPENER,
    SPEAKER_LABEL,
    SUBJECTLESS_DESIRABLE,
    SUBJECTLESS_PROGRESSIVE,
    TROUBLE_AHEAD,
    VOCATIVE,
    VOLUNTEERS,
    WHETHER_IF,
    WHETHER_SHOULD,
    WORD,
    label_name,
)
from ._text import Normalized, Sentence, normalize, sentences

__all__ = ["RuleExtractor"]


@dataclass(frozen=True)
class _Ctx:
    turn: Turn
    norm: Normalized
    sents: list[Sentence]
    index: int
    lex: Lexicon

    @property
    def sent(self) -> Sentence:
        return self.sents[self.index]

    @property
    def low(self) -> str:
        return self.sent.text.lower()

    @property
    def speaker(self) -> str | None:
        """The turn's speaker, or the ``Name:`` that opens this line or the turn (minutes, notes)."""
        label = SPEAKER_LABEL.match(self.sent.text) or SPEAKER_LABEL.match(self.sents[0].text)
        if label and label_name(label).split()[0].lower() not in self.lex.not_names:
            return label_name(label)
        who = (self.turn.speaker or "").strip()
        return None if who.lower() in NOBODY else who


_FIRST_PERSON = re.compile(r"(?<!\w)(?:i|we)(?:'[a-z]+)?\b", re.IGNORECASE)
# A cheap test before the desire-for-another pattern, which is costly to run on every sentence.
_WANTS_FOR = re.compile(r"\bwant|\b(?:like|love|prefer)\s+for\b")
# "be" as a state ("be late", "be fine"), not an activity or a role ("be sending", "be there").
_STATE = re.compile(r"be\b(?!\s+(?:able|responsible|there|here|\w+ing\b))")
# ... but a passive or "out" is something someone will do ("will be started", "10.7 will be out").
_PLANNED_BE = re.compile(r"be\s+(?:\w+ed|done|made|sent|held|out|set up|given|taken|shown|written)\b")
# A future and the verb it governs, on lower-cased text ("will be late", "'ll probably send").
_FUTURE_VERB = re.compile(rf"(?:\bwill|'ll|\bshall|\bgoing to|\bgonna)(?:\s+{ADVERB}){{0,2}}\s+(?P<verb>{WORD})")


_QUOTED_LINE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)
_CODE_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)


def _not_own_words(text: str) -> list[tuple[int, int]]:
    """Spans that are not the speaker's words: markdown quote lines ("> I'll draft it", someone
    else's, quoted) and fenced code (a "# I'll refactor this" comment is code, not a promise)."""
    if ">" not in text and "```" not in text and "~~~" not in text:
        return []
    return [m.span() for m in _QUOTED_LINE.finditer(text)] + [m.span() for m in _CODE_FENCE.finditer(text)]


_IMPERSONAL = re.compile(r"\b(?:it|this|that)\s*$")


def _only_impersonal_futures(low: str) -> bool:
    """Every future in the sentence has "it", "this" or "that" for subject ("it will rain
    tomorrow"): a prediction about a thing, with nobody to undertake it; a plan in the passive
    ("it will be merged tomorrow") still counts."""
    futures = list(_FUTURE_VERB.finditer(low))
    return bool(futures) and all(
        _IMPERSONAL.search(low, 0, m.start()) is not None and _PLANNED_BE.match(low, m.start("verb")) is None
        for m in futures
    )


def _decided_after_asking(
    found: Mapping[tuple[CandidateType, int], Candidate], sents: list[Sentence], norm: Normalized
) -> set[tuple[CandidateType, int]]:
    """Open questions asked and decided in the same turn ("Should we use Postgres? Let's go with
    Postgres."): a question sentence followed by a decision made is answered, not open.
    Candidates hold offsets into the original text, sentences into the normalised one."""
    decided = [c.start for c in found.values() if c.type is CandidateType.DECISION]
    if not decided:
        return set()
    last = max(decided)
    asked = [norm.original_span(s.start, s.end) for s in sents if s.is_question and s.end > s.start]
    return {
        key
        for key, cand in found.items()
        if cand.type is CandidateType.OPEN_QUESTION
        and cand.start < last
        and any(start <= cand.start < end for start, end in asked)
    }


def _with_thresholds(model: SentenceModel, bars: Mapping[str, float]) -> SentenceModel:
    """``model`` with some types' bars replaced: a reviewer who finds a type's candidates too
    noisy raises its bar (1.0 turns the layer off for it). Only types the model knows."""
    known = {kind.value: kind for kind in model.types}
    thresholds = dict(model.thresholds)
    for name, bar in bars.items():
        if name not in known:
            raise InvalidInput(
                f"the recall layer proposes only {', '.join(known)}; no bar for {name!r}",
                where=f"model_thresholds.{name}",
            )
        if not 0.0 < bar <= 1.0:
            raise InvalidInput(f"a bar is a probability in (0, 1], got {bar}", where=f"model_thresholds.{name}")
        thresholds[known[name]] = bar
    return replace(model, thresholds=thresholds)


#: Channels whose turns are prompts to a coding agent (or its replies), not people talking to
#: people: ``intently hook claude`` observes prompts as ``claude-code``.
AGENT_CHANNELS: frozenset[str] = frozenset({"claude-code", "agent", "agent_session"})
#: Channels of one-to-one conversation between people: the listener answers a question in the next turn.
DIALOGUE_CHANNELS: frozenset[str] = frozenset({"casual_dialogue", "dialogue", "dm", "direct_message"})
# The agent's own speaker names on those channels: what it says it will do is the work under way.
_AGENT_SPEAKERS = frozenset({"assistant", "agent"})


class RuleExtractor(Extractor):
    """Deterministic, offline, English-first extractor (the default).

    ``model`` is the statistical recall layer (``_model.py``): ``True`` uses the model shipped
    with the package, ``False`` reads the rules alone, or pass a :class:`SentenceModel`.
    ``model_thresholds`` (``{"COMMITMENT": 0.8}``) raises a type's bar over the model's own, for
    a reviewer who finds that type's candidates too many; 1.0 turns the layer off for the type.

    A turn on one of ``agent_channels`` is read in the register of a prompt to a coding agent.
    A question there is put to the agent, which answers it in its next reply, and "find out how
    to ..." or "I want the header to be ..." describe the work asked for now: only a stated
    pending decision ("we still need to decide ...") makes an open question, and a stated desire
    is no goal unless it names one ("our goal is ..."). The recall layer, trained on people
    talking to people, is not asked (on prompts it reads requests to the agent as undertakings).

    A turn on one of ``dialogue_channels`` is one side of a conversation between two people.
    A question there is put to the listener, who settles it in the next turn ("shall we go
    shopping tomorrow?", "how about a cup of tea?"), so, as for an agent, only a stated pending
    decision makes an open question; everything else is read as anywhere else.
    """

    name = "rules"

    def __init__(
        self,
        lexicon: Lexicon | None = None,
        *,
        model: SentenceModel | bool = True,
        agent_channels: Iterable[str] = AGENT_CHANNELS,
        dialogue_channels: Iterable[str] = DIALOGUE_CHANNELS,
        model_thresholds: Mapping[str, float] | None = None,
    ) -> None:
        self.lex = lexicon or load_lexicon()
        self.model: SentenceModel | None = load_model() if model is True else (model or None)
        if model_thresholds and self.model is not None:
            self.model = _with_thresholds(self.model, model_thresholds)
        self.agent_channels = frozenset(agent_channels)
        self.dialogue_channels = frozenset(dialogue_channels)
        future = self.lex.future.alternation()
        self._first_person = re.compile(
            rf"(?<!\w)(?P<subj>i|we)(?:\s+\([^()]{{1,30}}\))?(?:\s+{ADVERB}){{0,2}}\s*(?P<mod>{future})(?:\s+{ADVERB}){{0,2}}\s+(?P<verb>{WORD})",
            re.IGNORECASE,
        )
        self._subjectless = re.compile(
            rf"(?:^|(?<=[,;:]\s))(?:and\s+|ok\s+|okay\s+)?(?P<mod>will|'ll|gonna|going to)\s+(?P<verb>{WORD})", re.I
        )
        self._obligation = re.compile(
            rf"(?<!\w)(?P<subj>i)(?:\s+{ADVERB}){{0,2}}\s+(?P<mod>{self.lex.obligation.alternation()})\s+(?P<verb>{WORD})",
            re.IGNORECASE,
        )
        self._third_person = re.compile(
            rf"(?:^|(?<=[,;:]\s)|(?<=\band\s)){OWNER_LIST}\s+(?P<mod>will|shall|to|is going to|are going to|'ll"
            rf"|needs to|has to"
            rf"|{self.lex.commissives.alternation()})"
            rf"\s+(?:(?:also|then|please)\s+)?(?P<verb>[a-z][\w-]*)"
        )
        self._mention_imperative = re.compile(r"^(?P<owner>@[\w.-]+)\s+(?P<verb>[a-z][\w-]*)")
        self._desire = re.compile(
            rf"(?<!\w)(?P<subj>i|we)(?:\s+{ADVERB}){{0,2}}(?:\s*(?:am|'m|are|'re|do))?(?:\s+{ADVERB}){{0,2}}\s*"
            rf"(?P<mod>{self.lex.desire.alternation()})\s+(?P<verb>{WORD})",
            re.IGNORECASE,
        )
        # A desire for someone or something else to act: "we want aggregation to work", "I'd love
        # for this to become the default". Not "I want you to ...": that asks the listener.
        self._desire_for = re.compile(
            rf"(?<!\w)(?P<subj>i|we)(?:\s+{ADVERB}){{0,2}}(?:\s+do)?(?:\s+{ADVERB}){{0,2}}\s*"
            rf"(?P<mod>(?:would|'d)\s+(?:like|love|prefer)\s+for|want)\s+(?!to\b|you\b|u\b|y'all\b)"
            rf"(?:[\w`'-]+\s+){{0,5}}?[\w`'-]+\s+to\s+(?P<verb>{WORD})",
            re.IGNORECASE,
        )
        # Chat drops the subject: "Want to see Glamsterdam shipped as fast as possible!"
        self._subjectless_desire = re.compile(
            rf"(?:really\s+|still\s+)?(?P<mod>want to|would like to|'d like to|would love to|wanna)\s+(?P<verb>{WORD})",
            re.IGNORECASE,
        )
        self._waiting = re.compile(
            rf"\b(?:waiting|wait)\s+(?:on|for)\s+(?:\S+\s+){{0,3}}?(?:{self.lex.pending_nouns.alternation()})",
            re.IGNORECASE,
        )

    # -- driver -----------------------------------------------------------------

    def _to_agent(self, turn: Turn) -> bool:
        """Whether the turn is a prompt to a coding agent (or its reply): see ``agent_channels``."""
        return turn.channel in self.agent_channels

    def _answered_next(self, turn: Turn) -> bool:
        """Whether a question in the turn is put to someone who answers it in the next turn:
        the agent on an agent channel, the listener in a one-to-one dialogue."""
        return turn.channel in self.agent_channels or turn.channel in self.dialogue_channels

    def warm(self) -> None:
        """Compile every word list (each compiles at its first use otherwise)."""
        self.lex.compile_all()

    def unread(self, turn: Turn) -> str | None:
        if looks_english(turn.text):
            return None
        return "not read: the turn does not look like English, the only language the rules extractor reads"

    def extract(self, turn: Turn) -> list[Candidate]:
        norm = normalize(turn.text, self.lex.action_verbs)
        if self.lex.chat.is_reaction(norm.text):
            return []
        own = self.lex.chat.own_words_start(norm.text)  # after a quoted reply prefix, if any
        others = _not_own_words(norm.text)
        sents = [s for s in sentences(norm, own) if not any(a <= s.start < b for a, b in others)]
        found: dict[tuple[CandidateType, int], Candidate] = {}
        to_agent = self._to_agent(turn)
        answered_next = self._answered_next(turn)
        for index in range(len(sents)):
            ctx = _Ctx(turn, norm, sents, index, self.lex)
            risks = self._risks(ctx)
            commitments = self._commitments(ctx)
            # A question whose content is a possible failure is read as the risk it raises;
            # a pending-decision word inside an undertaking is the object of the task.
            asked = ctx.sent.is_question and (bool(risks) or answered_next)  # the agent or listener answers next
            questions = [] if asked else self._questions(ctx, bool(commitments))
            for cand in (*commitments, *self._goals(ctx), *risks, *questions, *self._decisions(ctx)):
                found.setdefault((cand.type, cand.start), cand)
        settled = _decided_after_asking(found, sents, norm)
        if self.model is not None and not to_agent:
            have = {c.type.coarse for c in found.values()} | ({CandidateType.OPEN_QUESTION} if settled else set())
            for cand in self._recalled(self.model, turn, norm, sents, have):
                found.setdefault((cand.type, cand.start), cand)
        return sorted((c for k, c in found.items() if k not in settled), key=lambda c: (c.start, c.type.value))

    def _recalled(
        self,
        model: SentenceModel,
        turn: Turn,
        norm: Normalized,
        sents: list[Sentence],
        found: set[CandidateType],
    ) -> list[Candidate]:
        """The recall layer: for each type the rules did not find in the turn, the sentence the
        model rates most likely among those that reach its threshold and that no hard case vetoes.
        It adds; it never removes."""
        missing = [kind for kind in model.types if kind not in found]
        if not missing:
            return []  # the rules found every type the model knows: no features to compute
        scored = [(index, sentence_features(sent.text, sent.is_question)) for index, sent in enumerate(sents)]
        out: list[Candidate] = []
        for kind in missing:
            rated = sorted(((model.probability(kind, features), -index) for index, features in scored), reverse=True)
            bar = model.threshold_for(kind)
            if bar >= 1.0:
                continue  # the layer is off for this type
            for probability, earliest in rated:  # likeliest first; on a tie, the earliest
                if probability < bar:
                    break
                ctx = _Ctx(turn, norm, sents, -earliest, self.lex)
                if self._vetoed(ctx, kind):
                    continue
                first_person = _FIRST_PERSON.search(ctx.sent.text)
                owner = ctx.speaker if kind is CandidateType.COMMITMENT and first_person else None
                cand = self._candidate(
                    ctx, kind, 0, len(ctx.sent.text), confidence=0.5, rule="model", owner=owner, with_due=True
                )
                if cand:
                    out.append(cand)
                    break
        return out

    # -- building candidates ----------------------------------------------------

    def _candidate(
        self,
        ctx: _Ctx,
        kind: CandidateType,
        start: int,
        end: int,
        *,
        confidence: float,
        rule: str,
        owner: str | None = None,
        with_due: bool = False,
    ) -> Candidate | None:
        """Build a candidate over sentence-relative ``[start, end)``, trimmed and mapped back."""
        text = ctx.sent.text
        while end > start and text[end - 1] in " \t.,;:!-":
            end -= 1
        while start < end and text[start] in " \t-*,;:":
            start += 1
        if end <= start:
            return None
        base = ctx.sent.start
        o_start, o_end = ctx.norm.original_span(base + start, base + end)
        due: DueDate | None = None
        if with_due:  # after the start first ("I'll send it Friday"), then before it ("Next week I'll send it")
            due = find_due(text, start, len(text), ctx.turn.time) or find_due(text, 0, start, ctx.turn.time)
        return Candidate(
            type=kind,
            span=ctx.turn.text[o_start:o_end],
            start=o_start,
            end=o_end,
            owner=owner,
            due=due.when if due else None,
            due_text=due.text if due else None,
            confidence=confidence,
            rule=rule,
        )

    def _through_clause(
        self, ctx: _Ctx, kind: CandidateType, match: re.Match[str], *, confidence: float, rule: str, owner: str | None
    ) -> list[Candidate]:
        """One candidate from the match's start to the end of the clause holding its ``verb``."""
        cand = self._candidate(
            ctx,
            kind,
            match.start(),
            self._clause_end(ctx, match.start("verb")),
            confidence=confidence,
            rule=rule,
            owner=owner,
            with_due=True,
        )
        return [cand] if cand else []

    def _clause_end(self, ctx: _Ctx, rel: int) -> int:
        """Sentence-relative end of the clause holding sentence-relative offset ``rel``."""
        clause = ctx.sent.clause_at(ctx.sent.start + rel)
        return clause.end - ctx.sent.start

    def _clause_start(self, ctx: _Ctx, rel: int) -> int:
        clause = ctx.sent.clause_at(ctx.sent.start + rel)
        return clause.start - ctx.sent.start

    def _vetoed(self, ctx: _Ctx, kind: CandidateType) -> bool:
        """The hard cases hold for what the model proposes too: a hedged, conditional, negated,
        past, reported or idiomatic undertaking is no commitment, nor a sentence whose only future
        is a state ("he will be late"); a question answered on the spot,
        a clarification or a request is not pending; a negated worry is no risk; a decision asked
        about or negated was not made."""
        lex = ctx.lex
        low = ctx.low
        negated = re.search(r"n't\b|\bnot\b|\bnever\b|\bno\b", low) is not None
        if kind is CandidateType.COMMITMENT:
            immediate = any(
                self._immediate(ctx, m.start(), m.start("verb"), self._clause_end(ctx, m.start("verb")))
                for m in self._first_person.finditer(ctx.sent.text)
            )
            return (
                ctx.sent.is_question
                or negated
                or immediate
                or self._only_states_ahead(ctx)
                or _only_impersonal_futures(ctx.low)
                or lex.immediate_adverbs.search(low) is not None
                or any(
                    words.search(low) is not None
                    for words in (
                        lex.hedges, lex.conditionals, lex.idioms, lex.past_markers, lex.reporting,
                        lex.immediate_openers, lex.offer_conditions, lex.doubt,
                    )
                )
            )  # fmt: skip
        if kind is CandidateType.OPEN_QUESTION:  # an answer ("Yes, the team agreed") settles, it does not ask
            return (
                self._not_pending(ctx)
                or lex.answer_openers.match_at(low, 0) is not None
                or self._answered_next(ctx.turn)  # the rules read the stated pending decisions there
            )
        if kind is CandidateType.RISK:
            polite = lex.politeness.match_at(low, 0)
            return ctx.sent.is_question or lex.risk_negated.search(low) is not None or polite is not None
        if kind is CandidateType.DECISION:
            return ctx.sent.is_question or negated or lex.decision_negated.search(low) is not None
        return ctx.sent.is_question or negated

    # -- COMMITMENT -------------------------------------------------------------

    def _commitments(self, ctx: _Ctx) -> list[Candidate]:
        if ctx.sent.is_question:
            return []
        out: list[Candidate] = []
        text = ctx.sent.text
        opener = self.lex.action_openers.match_at(text.lower(), 0)
        if opener is not None:
            out.extend(self._action_item(ctx, opener.end()))
            return out
        for match in self._first_person.finditer(text):
            if self._not_an_action(ctx, match.start("verb")):
                continue
            out.extend(self._speaker_commitment(ctx, match, confidence=0.75, rule="first-person-future"))
        for match in self._obligation.finditer(text):
            verb = match.group("verb").lower()
            if self.lex.discourse_verbs.match_at(verb, 0) or verb in ("go", "be", "leave", "admit", "confess"):
                continue
            # "I need to cancel that", "I have to exchange some money": a need stated on its own
            # is what the speaker asks for or must do, not an undertaking (1 of the 6 the rule read
            # on blind sets was labelled one); "I need to send the report by Friday" schedules one.
            found = self._speaker_commitment(ctx, match, confidence=0.55, rule="first-person-obligation")
            out.extend(cand for cand in found if cand.due_text is not None)
        for match in self._subjectless.finditer(text):
            if match.group("verb").lower() in ("you", "we", "it", "this", "that", "they", "there", "he", "she"):
                continue
            if self._not_an_action(ctx, match.start("verb")):
                continue
            out.extend(self._speaker_commitment(ctx, match, confidence=0.6, rule="subjectless-future"))
        for match in [*READY_OFFER.finditer(text), *AND_WILL.finditer(text)]:
            if match.group("verb").lower().split("-")[0] not in ctx.lex.action_verbs:
                continue  # "I'm glad to hear that" is a reaction; an offer names a task
            out.extend(self._speaker_commitment(ctx, match, confidence=0.6, rule="offer"))
        opening = SUBJECTLESS_PROGRESSIVE.match(text, self._question_start(ctx))
        for match in [*PROGRESSIVE_PLAN.finditer(text), *([opening] if opening else [])]:
            verb = match.group("verb").lower()
            if verb in PROGRESSIVE_NOT_PLANS or not find_due(text, match.end("verb"), len(text), ctx.turn.time):
                continue  # without a time ahead, "we're shipping it" reports what is going on now
            out.extend(self._speaker_commitment(ctx, match, confidence=0.6, rule="progressive-plan"))
        reminder = REMIND_ME.match(text, self._question_start(ctx))
        if reminder is not None and not self.lex.conditionals.search(ctx.low, 0, reminder.start()):
            out.extend(
                self._through_clause(
                    ctx, CandidateType.COMMITMENT, reminder, confidence=0.7, rule="reminder-request", owner=ctx.speaker
                )
            )
        out.extend(self._volunteers(ctx))
        out.extend(self._third_person_items(ctx, 0))
        return out

    def _volunteers(self, ctx: _Ctx) -> list[Candidate]:
        """ "I volunteer", "KG has volunteered": taking on the task being asked for in the meeting."""
        out: list[Candidate] = []
        if "volunteer" not in ctx.low:
            return out
        for match in VOLUNTEERS.finditer(ctx.sent.text):
            who = match.group("owner")
            first_person = who == "I"
            if not first_person and who.lstrip("@").lower() in ctx.lex.not_names:
                continue
            if ctx.lex.conditionals.search(ctx.low) or ctx.lex.negators.search(ctx.low, 0, match.end()):
                continue  # "I volunteer if somebody tells me where it is"
            cand = self._candidate(
                ctx,
                CandidateType.COMMITMENT,
                match.start(),
                self._clause_end(ctx, match.end() - 1),
                confidence=0.6,
                rule="volunteer",
                owner=ctx.speaker if first_person else who,
            )
            if cand:
                out.append(cand)
        return out

    def _speaker_commitment(self, ctx: _Ctx, match: re.Match[str], *, confidence: float, rule: str) -> list[Candidate]:
        """The speaker's own undertaking at ``match`` (groups ``verb``), if it is firm: one
        COMMITMENT owned by the speaker from the subject to the end of the verb's clause."""
        if not self._firm(ctx, match.start(), match.start("verb"), match.end("verb"), first_person=True):
            return []
        return self._through_clause(
            ctx, CandidateType.COMMITMENT, match, confidence=confidence, rule=rule, owner=ctx.speaker
        )

    def _only_states_ahead(self, ctx: _Ctx) -> bool:
        """Every future in the sentence is a state or a bad outcome ("he will be late", "we'll run
        out of time"): a prediction, with no act for anyone to undertake."""
        low = ctx.low
        futures = list(_FUTURE_VERB.finditer(low))
        return bool(futures) and all(
            (
                _STATE.match(low, m.start("verb")) is not None
                and _PLANNED_BE.match(low, m.start("verb")) is None
                and not low[: m.start()].endswith("there ")  # "there will be a presentation": an event ahead
            )
            or ctx.lex.bad_outcomes.match_at(low, m.start("verb")) is not None
            for m in futures
        )

    @staticmethod
    def _not_an_action(ctx: _Ctx, verb_start: int) -> bool:
        """ "we'll need to", "we will choose": a necessity or a pending choice, not an undertaking;
        "I'll be late", "I won't be in": a state, unless it is an activity ("be sending", "be able to")."""
        low = ctx.low
        if re.match(r"(?:need|have to|want|be able to decide|consider|reconsider|think|end up)\b", low[verb_start:]):
            return True  # a necessity, a thought or an outcome ("we'll end up with"), not an act
        if ctx.lex.bad_outcomes.match_at(low, verb_start):
            return True  # "we'll run out of time": a prediction, not an undertaking
        if _STATE.match(low, verb_start):
            return True
        return ctx.lex.decide_verbs.match_at(low, verb_start) is not None

    def _action_item(self, ctx: _Ctx, after: int) -> list[Candidate]:
        """An explicit action-item line: a commitment whoever is named (or nobody)."""
        text = ctx.sent.text
        rest = text[after:].lstrip()
        pos = len(text) - len(rest)
        named = self._third_person_items(ctx, pos)
        if named:
            return named
        owner = None
        mention = self._mention_imperative.match(rest) or re.match(rf"^(?P<owner>{NAME})\s*[:-]\s*", rest)
        if mention is not None:
            raw = mention.group("owner")
            if raw.startswith("@") or raw.split()[0].lower() not in ctx.lex.not_names:
                owner = raw.lstrip("@")
        if owner is None and _FIRST_PERSON.match(rest):
            owner = ctx.speaker  # "TODO: I'll clean up the tests": the speaker's own item
        cand = self._candidate(
            ctx,
            CandidateType.COMMITMENT,
            pos,
            len(text),
            confidence=0.9,
            rule="action-item",
            owner=owner,
            with_due=True,
        )
        return [cand] if cand else []

    def _third_person_items(self, ctx: _Ctx, pos: int) -> list[Candidate]:
        """ "Michael to rename X", "Rich will add a comment", "@bob to follow up" (minutes style)."""
        out: list[Candidate] = []
        text = ctx.sent.text
        handle = HANDLE_ACTION.match(text, pos)
        pronouns = list(PRONOUN_ACTION.finditer(text, pos))
        groups = list(GROUP_ACTION.finditer(text, pos))
        progressive = [m for m in NAMED_PROGRESSIVE.finditer(text, pos) if self._task_stem(ctx, m.group("verb"))]
        matches = [*self._third_person.finditer(text, pos), *([handle] if handle else []), *pronouns, *groups]
        for match in [*matches, *progressive]:
            pronoun = match in pronouns
            group = match in groups
            owners = [o.strip().lstrip("@") for o in re.split(r"\s*(?:/|,|\band\b|&)\s*", match.group("owner"))]
            if not (pronoun or group) and (
                not owners or any(w.lower() in ctx.lex.not_names for o in owners for w in o.split())
            ):
                continue  # "Claudio Wanted to give an overview": a verb capitalised is no part of a name
            mod = match.group("mod").lower()
            verb = match.group("verb").lower()
            head = verb.split("-")[0]  # "write-up", "follow-up": the verb with its particle hyphenated
            needs_task = match is handle or pronoun or group or mod in ("needs to", "has to")
            if needs_task and head not in ctx.lex.action_verbs:
                continue  # a handle or a pronoun opening a line, or a named need, is a task only before a task verb
            if mod == "to" and head not in ctx.lex.action_verbs and not ctx.lex.action_tags.search(ctx.low):
                continue  # "Thanks to Anna", "similar to X"; a tagged line ("(action item)") vouches for any verb
            if self._not_an_action(ctx, match.start("verb")):
                continue
            if verb in ("be", "have", "probably", "likely", "not", "never", "need", "want"):
                continue
            if not self._firm(ctx, match.start(), match.start("verb"), match.end("verb"), first_person=False):
                continue
            owner = None if pronoun else (" / ".join(o for o in owners if o) or None)
            out.extend(
                self._through_clause(
                    ctx, CandidateType.COMMITMENT, match, confidence=0.85, rule="named-action", owner=owner
                )
            )
        return out

    @staticmethod
    def _task_stem(ctx: _Ctx, verb: str) -> bool:
        """Is ``verb`` (an -ing form: "scheduling", "setting", "writing") a task verb?"""
        stem = verb.lower()[:-3]
        candidates = (stem, stem + "e", stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem)
        return any(c in ctx.lex.action_verbs for c in candidates)

    def _firm(self, ctx: _Ctx, subj: int, verb_start: int, verb_end: int, *, first_person: bool) -> bool:
        """Is the undertaking between ``subj`` and the verb firm, future and about later?"""
        lex = ctx.lex
        low = ctx.low
        clause_start = self._clause_start(ctx, subj)
        clause_end = self._clause_end(ctx, verb_start)
        window = low[clause_start:verb_end]
        if lex.negators.search(low, subj, verb_end) or re.search(r"n't|\bnot\b|\bnever\b", low[subj:verb_end]):
            return False
        if lex.hedges.search(window) or lex.hedges.match_at(low, verb_start):
            return False
        if re.search(r"\b(?:hopefully|probably|maybe|perhaps|possibly)\b", low[verb_end:clause_end]):
            return False  # "we will finalize the date hopefully on ACDT": hedged after the verb
        if lex.conditionals.search(low, 0, subj):
            return False
        offer = lex.offer_conditions.search(low, verb_end)
        if offer is not None and not WHETHER_IF.search(low[: offer.start() + 3]):
            return False  # "I'll do it if you want" (but "volunteered to see if there is interest" asks whether)
        if re.search(
            r"\b(?:don't|do not|doesn't|does not|didn't)\s+(?:think|believe|expect|suppose)\s+(?:that\s+)?$",
            low[clause_start:subj],
        ):
            return False  # "I don't think we'll be able to": doubt, not an undertaking
        if re.search(r"\b(?:how|what|whether|which|why|when|where)\s+$", low[clause_start:subj]):
            return False  # "thinking about how we'll handle pulls": the undertaking is asked about, not made
        condition = POSTPOSED_CONDITION.search(low, verb_end) if first_person else None
        if condition is not None and not RELATIVE_CLAUSE.search(low, verb_end, condition.start()):
            return False  # "I'll call them if you don't": a conditional offer or threat, not a promise
        idiom = lex.idioms.search(low)
        if idiom is not None and not re.match(r"\s+(?:over|on|up|forward|along)\b", low[idiom.end() :]):
            # "I'll take it" (I'll buy it) is an idiom; "I'll take it over from there" is a phrasal verb
            return False
        if lex.reporting.search(low, 0, subj) or lex.past_markers.search(low, clause_start, clause_end):
            return False
        return not (first_person and self._immediate(ctx, subj, verb_start, clause_end))

    def _immediate(self, ctx: _Ctx, subj: int, verb_start: int, clause_end: int) -> bool:
        """An act performed inside the conversation ("I'll check for you", "let me see")."""
        lex = ctx.lex
        low = ctx.low
        due = find_due(ctx.sent.text, verb_start, len(low), ctx.turn.time)
        if due is not None:
            return False
        if self._to_agent(ctx.turn) and (ctx.turn.speaker or "").strip().lower() in _AGENT_SPEAKERS:
            return True  # the agent's "I'll create the plan document": its work in this session
        if lex.immediate_verbs.match_at(low, verb_start) and not (
            re.match(r"we\b", low[subj:]) and re.match(r"have\b", low[verb_start:])
        ):
            return True  # but "we'll have another release" is no order placed at a counter
        if lex.immediate_adverbs.search(low, verb_start, clause_end):
            return True
        return bool(lex.immediate_openers.search(low, 0, subj))

    # -- GOAL -------------------------------------------------------------------

    def _goals(self, ctx: _Ctx) -> list[Candidate]:
        if ctx.sent.is_question:
            return []
        lex = ctx.lex
        low = ctx.low
        out: list[Candidate] = []
        opening = self._subjectless_desire.match(ctx.sent.text, self._question_start(ctx))
        # In a prompt to an agent, "I want the start of a block to be ..." specifies the work asked for now.
        wanted = (
            []
            if self._to_agent(ctx.turn)
            else [
                *self._desire.finditer(ctx.sent.text),
                *(self._desire_for.finditer(ctx.sent.text) if _WANTS_FOR.search(low) else ()),
                *([opening] if opening else []),
            ]
        )
        for match in wanted:
            # "I'd like to at least hear where the opposition is": a discourse verb after adverbs
            said = re.match(rf"(?:(?:at least|{ADVERB}|briefly|quickly|first)\s+)*", low[match.start("verb") :])
            verb_at = match.start("verb") + (said.end() if said else 0)
            if match.group("verb").lower() == "volunteer":
                continue  # "I want to volunteer as a reviewer": an offer, read as an undertaking
            if match.group("mod").lower().endswith("interested in") and not match.group("verb").endswith("ing"):
                continue  # "interested in a document": interest in a thing, not an aim
            own_act = match.re is not self._desire_for  # "I want us to be clear" wants a state, says nothing
            if (
                own_act
                and lex.discourse_verbs.match_at(low, verb_at)
                and not find_due(ctx.sent.text, match.start("verb"), len(low), ctx.turn.time)
            ):
                continue  # "I want to mention": a speech act now, unless placed later ("present next meeting")
            if re.search(
                r"n't|\bnot\b|\bnever\b|\bwas\b|\bwere\b|\bused to\b", low[match.start() : match.start("verb")]
            ):
                continue
            if re.search(r"(?:would|'d)\s+like\s+to\s*$", low[match.start() : match.start("verb")]) and (
                lex.service_requests.match_at(low, match.start("verb"))
            ):
                continue  # "I'd like to open a current account": a request served in the conversation
            if lex.conditionals.search(low, 0, match.start()) or lex.reporting.search(low, 0, match.start()):
                continue
            if re.search(r"\b(?:because|since|as|so that)\s+$", low[: match.start()]):
                continue  # a desire given as the reason for something else
            if re.search(
                r"\b(?:thing|things|something|anything|everything|else|stuff|what|whatever|how|whether|which|why)[\s*_')]+$",
                low[: match.start()],
            ):
                continue  # "the kind of thing I'd love to see": a relative clause describing, not wanting
            out.extend(
                self._through_clause(
                    ctx, CandidateType.GOAL, match, confidence=0.65, rule="first-person-desire", owner=ctx.speaker
                )
            )
        named = NAMED_DESIRE.search(ctx.sent.text)
        if named and named.group("owner").lower() not in lex.not_names and not lex.negators.search(low, 0, named.end()):
            out.extend(
                self._through_clause(
                    ctx, CandidateType.GOAL, named, confidence=0.6, rule="named-desire", owner=named.group("owner")
                )
            )
        for phrases, rule in ((lex.desirable, "desirable"), (lex.collective_desire, "collective-desire")):
            hit = phrases.search(low)
            if hit is None and rule == "desirable":
                hit = (
                    SUBJECTLESS_DESIRABLE.match(low, self._question_start(ctx))
                    or CLEFT_DESIRE.search(low)
                    or GOAL_STATEMENT.search(low)
                    or POSTPOSED_DESIRABLE.search(low)
                )
            if hit is None or lex.negators.search(low, hit.start(), hit.end() + 12):
                continue
            then = re.match(r"\s*(?:[a-z]+\s+)?to\s+", low[hit.end() :])
            if then and lex.discourse_verbs.match_at(low, hit.end() + then.end()):
                continue  # "it'd be great to hear support from someone else": asked for in the meeting
            if re.match(r"\s*(?:if|for)\s+you\b", low[hit.end() :]):
                continue  # "it would be great if you could join us": a request or invitation to the listener
            if lex.conditionals.search(low, 0, hit.start()):
                continue
            cand = self._candidate(
                ctx,
                CandidateType.GOAL,
                hit.start(),
                self._clause_end(ctx, hit.end()),
                confidence=0.6,
                rule=rule,
                with_due=True,
            )
            if cand:
                out.append(cand)
        return out

    # -- OPEN_QUESTION ----------------------------------------------------------

    def _questions(self, ctx: _Ctx, has_commitment: bool) -> list[Candidate]:
        lex = ctx.lex
        low = ctx.low
        out: list[Candidate] = []
        # "find out how to add layouts", "check whether we should cache": in a prompt to an agent,
        # the agent's task now; "let's decide which suit looks best" in a dialogue is settled
        # together now. Only a stated pending decision stays open there.
        deliberating = not self._answered_next(ctx.turn)
        marker = (
            lex.open_markers.search(low)
            or self._waiting.search(low)
            or (deliberating and DELIBERATION.search(low))
            or NEEDS_DISCUSSION.search(low)
            or (deliberating and WHETHER_SHOULD.search(low))
            or DECISION_WAITS.search(low)
            or (deliberating and KNOWLEDGE_GAP.search(low))
            or None
        )
        if marker is not None and re.match(r"to be determined\s+(?:by|from|using|based on)\b", low[marker.start() :]):
            marker = None  # "the start of a block is to be determined by the heading": computed, not pending
        if marker is not None:
            c_start = self._clause_start(ctx, marker.start())
            before = low[c_start : marker.start()]
            near = " ".join(before.split()[-4:])  # negation scopes over the words just before
            # "there's no question to be resolved", "if you have to determine how much": negated
            # or hypothetical, nothing is pending.
            if re.search(r"\b(?:no|not|nothing|never|none)\b|n't\b", near) or lex.conditionals.search(before):
                marker = None
            elif lex.reporting.search(low, 0, marker.start()) or re.search(r"\b(?:might|may|could)\s+$", before):
                marker = None  # "he asked whether we should consider", "we might need to consider": reported or hedged
            elif lex.immediate_openers.search(low, 0, marker.start()):
                marker = None  # "let me figure out what the problem is": done now, in the conversation
            elif ctx.sent.is_question and self._answered(ctx):
                marker = None  # "Discussion needed? No, ...": answered on the spot
        if marker is not None and not has_commitment and not ctx.lex.decision_made.search(low):
            cand = self._candidate(
                ctx,
                CandidateType.OPEN_QUESTION,
                self._clause_start(ctx, marker.start()),
                self._clause_end(ctx, marker.end() - 1),
                confidence=0.7,
                rule="pending-marker",
                with_due=True,
            )
            if cand:
                out.append(cand)
        later = lex.later_discussion.search(low)
        if later is not None and not out and not has_commitment and self._parked(ctx, later.start()):
            cand = self._candidate(
                ctx, CandidateType.OPEN_QUESTION, self._clause_start(ctx, later.start()), len(low),
                confidence=0.6, rule="parked-topic", with_due=True,
            )  # fmt: skip
            if cand:
                out.append(cand)
        asked = ctx.sent.is_question or BARE_QUESTION.match(ctx.sent.text[self._question_start(ctx) :]) is not None
        if asked and not out and self._open_question(ctx):
            start = self._question_start(ctx)
            cand = self._candidate(
                ctx,
                CandidateType.OPEN_QUESTION,
                start,
                len(ctx.sent.text),
                confidence=0.65,
                rule="deliberative-question",
            )
            if cand:
                out.append(cand)
        return out

    @staticmethod
    def _parked(ctx: _Ctx, at: int) -> bool:
        """A discussion put off to a later meeting ("defer until next week to discuss"), not an
        option ("we can discuss it in the future") or a negation ("nothing to discuss this week")."""
        low = ctx.low
        if re.search(r"\b(?:can|could|might|may|would|nothing|no|not|n't)\b|n't\b", low[:at]):
            return False
        due = find_due(ctx.sent.text, at, len(low), ctx.turn.time)
        if due is None:
            return False
        now = ctx.turn.time
        end_of_week = now + timedelta(days=6 - now.weekday())
        return due.when is None or due.when.date() > end_of_week.date()

    def _question_start(self, ctx: _Ctx) -> int:
        """Where the question proper begins: after a lead-in like "So..." or "And yeah,"."""
        text = ctx.sent.text
        label = SPEAKER_LABEL.match(text)
        pos = label.end() if label else 0
        vocative = VOCATIVE.match(text, pos)
        if vocative and vocative.group("who").split()[0].lower() not in ctx.lex.not_names:
            pos = vocative.end()  # "Michael, would it make sense to ...": the question follows the name
        lead = re.compile(r"(?:(?:so|and|but|also|ok|okay|yeah|well|then|now|hmm|um|uh)\b[\s.,]*)+", re.I).match(
            text, pos
        )
        return lead.end() if lead else pos

    def _open_question(self, ctx: _Ctx) -> bool:
        if self._not_pending(ctx):
            return False
        q = ctx.low[self._question_start(ctx) :]
        if ctx.lex.deliberative.search(q) is not None:
            return True
        # "Add all new modules under a scope?", "maybe just merge them with a link?": a proposal put to the group
        first = re.match(r"(?:(?:maybe|perhaps|possibly|just)\s+)*([a-z]+)", q)
        return first is not None and first.group(1) in ctx.lex.action_verbs

    def _not_pending(self, ctx: _Ctx) -> bool:
        """Questions that leave nothing pending: too short, answered by the next sentence, a
        clarification, a confirmation, a past yes/no question, a request or a question to the
        listener."""
        lex = ctx.lex
        q = ctx.low[self._question_start(ctx) :]
        words = re.findall(r"[\w'`-]+", q)
        if len(words) < 4:
            return True
        if self._answered(ctx):
            return True
        if lex.clarifying.match_at(q, 0) or CONFIRMATION_TAG.search(q):
            return True  # "what is X?", "... is without a type assertion, is that right?"
        if re.search(r"\bwhat\s+(?:does|do|did)\s+(?:[\w'-]+\s+){1,4}?mean\b", q):
            return True  # "I'm not a node expert, what does it mean to be ...?": asks what something means
        if re.match(r"(?:is it|is that|is this|does it|does that|do you mean|or)\b", q) and self._follows_clarification(
            ctx
        ):
            return True
        if re.match(r"^(?:did|was|were|had|has|have)\b", q):
            return True
        if FIRST_SINGULAR_QUESTION.search(q):
            return True
        addressed = re.search(
            r"\b(?:do|did|does|are|were|have|has|can|could|would|will|should|may)\s+you\b|^you\b"
            r"|\b(?:alright|all right|ok|okay|possible|fine)\s+(?:if|for)\s+you\b",
            q,
        )
        return addressed is not None and not re.search(r"\bwe\s+(?:should|need|want|must|could|can)\b", q)

    def _follows_clarification(self, ctx: _Ctx) -> bool:
        """ "What precisely is the FCP deciding here? Is it asking if ...?": a question right after a
        clarifying question of the same speaker offers readings of it, it raises nothing new."""
        if ctx.index == 0 or not ctx.sents[ctx.index - 1].is_question:
            return False
        prev = _Ctx(ctx.turn, ctx.norm, ctx.sents, ctx.index - 1, ctx.lex)
        return ctx.lex.clarifying.match_at(prev.low, self._question_start(prev)) is not None

    def _answered(self, ctx: _Ctx) -> bool:
        """The same speaker answers right away: the next sentence opens like an answer."""
        if ctx.index + 1 >= len(ctx.sents):
            return False
        following = ctx.sents[ctx.index + 1].text.lower()
        return ctx.lex.answer_openers.match_at(following, 0) is not None

    # -- RISK -------------------------------------------------------------------

    def _risks(self, ctx: _Ctx) -> list[Candidate]:
        lex = ctx.lex
        low = ctx.low
        polite = lex.politeness.match_at(low, 0)
        floor = polite.end() if polite else 0
        hits: list[tuple[int, int, str, float]] = []
        if polite and re.match(
            r"\s*(?:that\s+)?(?:[a-z]+\s+){1,2}?(?:will|would|won't|wouldn't|would't|'ll|might|may)\b(?!\s+you\b)",
            low[polite.end() :],
        ):
            hits.append((0, polite.end(), "fear", 0.55))  # "I'm afraid she will say no again": a fear, not politeness
        for match in TROUBLE_AHEAD.finditer(low, floor):
            hits.append((match.start(), match.end(), "trouble-ahead", 0.55))
        if not ctx.sent.is_question:  # "is there a risk that ...?" asks; it is an open question
            for match in lex.risk_nouns.finditer(low, floor):
                clause = ctx.sent.clause_at(ctx.sent.start + match.start())
                if lex.risk_existing.search(low, clause.start - ctx.sent.start, match.start()):
                    continue  # "identified a number of bottlenecks": a problem found, not a threat
                if not re.search(
                    r"\b(?:no|not|without|zero|little)\s+(?:\w+\s+)?$", low[max(0, match.start() - 24) : match.start()]
                ):
                    hits.append((match.start(), match.end(), "risk-noun", 0.6))
        opener = RISK_OPENER.search(low, floor)
        if opener is not None and not ctx.sent.is_question:
            hits.append((opener.start(), opener.end(), "risk-opener", 0.6))
        for match in lex.doubt.finditer(low, floor):
            if re.search(r"\byou\s+$", low[: match.start()]):
                continue  # "you won't be able to use the ATM until ...": a rule explained to the listener
            hits.append((match.start(), match.end(), "doubt", 0.6))
        for match in lex.possibility.finditer(low, floor):
            limit = min(self._clause_end(ctx, match.end() - 1), match.end() + 80)
            outcome = lex.bad_outcomes.search(low, match.end(), limit)
            if outcome is None or low[outcome.start() - 1 : outcome.start()] == "-":
                continue  # "a non-breaking change" names the opposite of the outcome
            if re.search(r"\bwithout\s+(?:\w+\s+)?$", low[match.end() : outcome.start()]):
                continue  # "a PR would merge without conflicts": the outcome is ruled out, not feared
            if re.search(r"\b(?:the|a|an|our|my|their|your)\s+$", low[match.end() : outcome.start()]):
                continue  # "I'll call the lost and found office": the word names a thing, nothing is at stake
            if EMBEDDED.search(low, match.end(), outcome.start()):
                continue  # "would be nice to see what tooling breaks": the outcome is asked about, not feared
            hits.append((match.start(), outcome.end(), "possible-failure", 0.6))
        pending = lex.open_markers.search(low) is not None  # "not sure if it will be decided": a pending decision
        for match in lex.uncertainty.finditer(low, floor):
            if not pending and lex.capability.search(low, match.end(), self._clause_end(ctx, match.end())):
                hits.append((match.start(), match.end(), "feasibility-doubt", 0.55))
        out: list[Candidate] = []
        for start, end, rule, conf in sorted(hits):
            c_start = self._clause_start(ctx, start)
            if lex.risk_negated.search(low, c_start, self._clause_end(ctx, start)):
                continue
            if lex.concessive.search(low, c_start, end):
                continue
            cand = self._candidate(
                ctx,
                CandidateType.RISK,
                min(c_start, start),
                max(self._clause_end(ctx, max(end - 1, start)), end),
                confidence=conf,
                rule=rule,
                with_due=True,
            )
            if cand:
                out.append(cand)
                break
        return out

    # -- DECISION ---------------------------------------------------------------

    def _decisions(self, ctx: _Ctx) -> list[Candidate]:
        if ctx.sent.is_question:
            return []
        lex = ctx.lex
        low = ctx.low
        hit = (
            lex.decision_made.search(low)
            or AGENDA_REMOVAL.search(low)
            or BARE_OUTCOME.match(low)
            or CHOICE_IMPERATIVE.match(low, self._question_start(ctx))
        )
        if hit is None and self._to_agent(ctx.turn):
            hit = AGENT_CHOICE.search(low, self._question_start(ctx))
            if hit is not None and lex.conditionals.search(low, 0, hit.start()):
                return []  # "if it fails, let's use the old parser": a fallback, not the choice made
        if hit is None:
            return []
        c_start = self._clause_start(ctx, hit.start())
        if lex.decision_negated.search(low) or re.search(r"n't|\bnot\b|\bno\b", low[c_start : hit.start()]):
            return []
        if lex.reporting.search(low, 0, hit.start()) or re.search(r"\bhad\s+$", low[: hit.start()]):
            return []  # "he wondered why I had decided": a report about someone's past choice
        if re.search(r"\b(?:because|since|what|as|than)\s+(?:\w+\s+){0,2}$", low[c_start : hit.start()]):
            return []  # "because we've decided not to", "compared to what was agreed in 2020": an earlier decision cited
        if lex.conditionals.search(low, c_start, hit.start()):
            return []
        # "Resolution: ship it in v24": a label decides what follows it on the line.
        end = len(ctx.sent.text) if hit.group(0).endswith(":") else self._clause_end(ctx, hit.end() - 1)
        cand = self._candidate(
            ctx,
            CandidateType.DECISION,
            min(c_start, hit.start()),
            end,
            confidence=0.75,
            rule="decision-made",
        )
        return [cand] if cand else []
