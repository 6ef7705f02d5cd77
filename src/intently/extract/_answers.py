"""A question proposed from one turn and answered by a later turn of the same channel.

The extractor reads one turn at a time, so "Should we drop Node 18?" waits in review as an open
question even after the next turn said "Yes, let's drop it." ``observe`` looks back: when a
person's turn on a channel answers an open-question candidate still awaiting review that was
proposed from one of the channel's last few turns, the candidate gets a context note naming the
answering message and its span (and the decision the turn recorded, when it recorded one), so
the reviewer sees it was answered and can dismiss it in one key.

The candidate is annotated, never withdrawn: a dismissal is final (nothing leaves DEPRECATED, and
the same candidate from the same evidence stays suppressed), while the signals read here are
lexical ("Yes" may answer a question other than the one the rules proposed). Language proposes;
a person still decides (docs/extraction.md, "Questions answered in a later turn").

Three signals, each the same-turn rules' own: an answer opener ("yes", "no", "sure") to a yes/no
question; an agreement opener ("agreed", "let's", "sounds good") that names the question's verb or
one of its alternatives ("Agreed, dropping it in 3.0"); a decision the turn recorded that names
them ("Let's go with Postgres" after "Postgres or SQLite?"). A bare "Yes" answers only when the
channel's previous turn holds one pending yes/no question and nothing else to answer. "Names" is
more than one shared word: a loose overlap ("meeting", "question") was most of the wrong notes.

A chat client's reply form (``Replying to "Should we drop Node 18?"``) is read from where the quote
ends, and the quote says which question it answers: a fourth signal, ``quoted``, with any words. A
``Name:`` label opening the reply (minutes) sets who answered.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..goals._text import terms_of
from ..log import canonical_json
from ._lexicon import Lexicon
from ._models import Candidate, Turn
from ._patterns import SPEAKER_LABEL, label_name
from ._rules import _AGENT_SPEAKERS

if TYPE_CHECKING:
    from .._runtime import Runtime
    from ..goals import Goals
    from ..store import Transaction

__all__ = ["Answered", "Reply", "answer_pending", "reply_to"]

#: How many of a channel's latest observed turns are read back to find its last distinct ones
#: (a conversation observed again repeats them).
SCAN_TURNS = 500
#: How many of the namespace's latest log operations the look-back reads at most, whatever the
#: channel: it costs the same however long the log grows (a turn with a few candidates writes a
#: handful of operations, so this is thousands of turns, far more than a window of minutes holds).
SCAN_OPS = 20_000
#: The question types a reply can settle (DECISION_IN_PROGRESS is the LLM's finer open question).
QUESTION_TYPES = ("OPEN_QUESTION", "DECISION_IN_PROGRESS")
# A yes/no question opens with an auxiliary (after a lead-in such as "so" or a vocative "Bob,"),
# or puts a proposal ("what about X?", "how about X?").
_POLAR = re.compile(
    r"^(?:(?:so|and|but|also|ok|okay|then|now|well|hmm)\b[\s,.]*)*(?:@?[\w.-]+,\s+)?"
    r"(?:should|shall|do|does|is|are|can|could|would|will|must|may|might|am|have|has|what about|how about)\b",
    re.IGNORECASE,
)
# Openers that do not say yes or no: "No idea", "not sure", "we don't know" (the matter stays
# open), "because ..." (an explanation).
_NOT_AN_ANSWER = re.compile(
    r"^(?:no\s+(?:idea|clue)\b|not\s+sure\b|because\b|(?:we|i)\s+(?:do\s+not|don't|don’t|dont)\s+know\b|dunno\b)",
    re.IGNORECASE,
)
# Alternatives put as a question ("Postgres or SQLite?"): a yes or no picks neither ("or not" does).
_ALTERNATIVES = re.compile(r"\bor\b(?!\s+not\b)", re.IGNORECASE)
# The first sentence of a reply: up to a full stop, "!" or "?" before a space, or a line end.
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")
_ADDRESS = re.compile(r"@[\w.-]+[,:]?\s+")
# "No" is the one answer opener that is also a determiner: "No probation is involved.", "No one
# knows", "No tests cover it" open a statement, not an answer. It answers when it stands alone:
# at the end of the sentence, before punctuation ("No, keep it", "No.", "No - keep it"), or before
# a subject or "let's"/"not" ("No we keep it", "No, not yet", "No let's wait"), which no noun
# phrase starts with. "Yes", "yeah", "nope" and the rest are never determiners.
_DETERMINER_OPENERS = frozenset({"no"})
_STANDS_ALONE = re.compile(
    r"\s*(?:$|[,.;:!?…)]|\s[-–—]|[–—]|(?:i|we|you|they|he|she|it|let's|lets|let\s+us|not)\b)", re.IGNORECASE
)


@dataclass(frozen=True)
class Reply:
    """What in a turn answers a question: ``signal`` (``answer``, ``agreement`` or ``decision``),
    the span of the turn's text saying it, and the decision recorded from that span, if any."""

    signal: str
    span: str
    start: int
    end: int
    decision_id: str | None = None
    #: Who said it: the ``Name:`` label opening the reply (minutes); ``observe`` fills in the turn's
    #: speaker when there is none.
    speaker: str | None = None


@dataclass(frozen=True)
class Answered:
    """A pending question a turn answered, and how: what ``observe`` reports and notes."""

    intent_id: str
    question_evidence_id: str
    reply: Reply

    def to_json(self) -> dict[str, Any]:
        r = self.reply
        return {
            "intent_id": self.intent_id,
            "question_evidence_id": self.question_evidence_id,
            "signal": r.signal,
            "span": r.span,
            "start": r.start,
            "end": r.end,
            "decision_id": r.decision_id,
            "speaker": r.speaker,
        }


def _content(text: str) -> set[str]:
    """The stemmed content words of ``text`` (stop-words dropped: what "names" compares)."""
    return set(terms_of(text).key.split())


# Words about the conversation rather than its matter ("the question", "next meeting", "I think",
# "a good idea"): a decision sharing one of them with a question says nothing of which question it
# settles (fed every labelled file as live channels, most wrong notes shared one such word).
_VAGUE = frozenset(
    _content(
        "question questions decision decide decided agree agreement discuss discussion meeting meet "
        "think thought good idea next time today week point thing things issue issues talk call "
        "propose proposal conclusion say said want need have get make go going like try"
    )
)
# The verb of a yes/no question: the word after its auxiliary and subject ("Should we *drop* Node
# 18?", "Can Bob *review* it?").
_VERB = re.compile(
    r"\s*(?:@?[\w.-]+\s+)(?:(?:also|just|still|really|not|then|all|ever)\s+)*(?P<verb>[a-z][\w-]*)", re.I
)


def _question_verb(question: str) -> str | None:
    """The stemmed main verb of a yes/no question, or ``None`` (not a yes/no question, or a light verb)."""
    polar = _POLAR.match(question.strip())
    if polar is None:
        return None
    found = _VERB.match(question.strip(), polar.end())
    stems = _content(found.group("verb")) - _VAGUE if found is not None else set()
    return next(iter(stems), None)


def _options(question: str) -> list[set[str]]:
    """The words only one alternative of ``question`` has ("Postgres or SQLite?": ``{postgr}``,
    ``{sqlite}``), its verb left out; empty when it puts no two alternatives."""
    parts = [_content(part) for part in _ALTERNATIVES.split(question)]
    parts = [words for words in parts if words]
    if len(parts) < 2:
        return []
    verb = _question_verb(question)
    return [words - set().union(*(o for o in parts if o is not words)) - _VAGUE - {verb} for words in parts]


def _names(question: str, text: str) -> bool:
    """Whether ``text`` names the matter of ``question``: for a question of alternatives, a word
    only one of them has (it picks that one); else the question's verb, or two of its content words,
    or half of them (a question of one or two). One shared word that the conversation itself uses
    ("meeting", "question") or one word of a long question is not enough: language proposes, and a
    loose overlap proposed a third of the wrong notes."""
    said = _content(text) - _VAGUE
    options = _options(question)
    if options:
        return any(words & said for words in options)
    asked = _content(question) - _VAGUE
    shared = asked & said
    if not shared:
        return False
    return len(shared) >= 2 or 2 * len(shared) >= len(asked) or _question_verb(question) in shared


# Words as a chat client quotes them, and the mark of a quote it cut short ("Replying to "Maybe
# price change b..."").
_WORD = re.compile(r"[^\W_]+")
_CUT = re.compile(r"(?:\.\.\.|…)\s*$")


def _quotes(question: str, quote: str) -> bool:
    """Whether a reply form's quote is ``question``: the question's words in order within the quote
    (the quoted message may say more), or, when the client cut the quote short, the quote's words
    (at least three, the cut last one dropped) in order within the question. Words in order, not a
    bag of shared words: "Maybe price change b..." quotes "Maybe price change but don't update
    metadata?", not the "Would reading price change?" asked after it."""
    asked = _WORD.findall(question.lower())
    quoted = _WORD.findall(quote.lower())
    if _CUT.search(quote):
        quoted = quoted[:-1]  # the client may have cut it mid-word
    if not asked or len(quoted) < min(3, len(asked)):
        return False
    short, long = (asked, quoted) if len(asked) <= len(quoted) else (quoted, asked)
    return any(long[i : i + len(short)] == short for i in range(len(long) - len(short) + 1))


def _first_sentence(text: str, start: int = 0) -> tuple[int, int]:
    """Offsets of the reply's first sentence from ``start``, after leading space and an ``@handle``
    it is addressed to."""
    start += len(text[start:]) - len(text[start:].lstrip())
    address = _ADDRESS.match(text, start)
    if address is not None:
        start = address.end()
    found = _SENTENCE_END.search(text, start)
    end = len(text) if found is None else (found.start() if found.group() == "\n" else found.end())
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _stands_alone(low: str, opener: re.Match[str]) -> bool:
    """Whether the answer opener matched at the start of ``low`` (a lowercased sentence) is an
    answer on its own rather than the first word of a statement (see ``_DETERMINER_OPENERS``)."""
    if opener.group().strip() not in _DETERMINER_OPENERS:
        return True
    return _STANDS_ALONE.match(low, opener.end()) is not None


def _own_words(turn_text: str, lex: Lexicon) -> tuple[int, str | None, str | None]:
    """Where the speaker's own words begin, the message a chat client's reply form quotes
    (``Replying to "..."``, ``[chat]`` in lexicon.toml) and the name a ``Name:`` label sets (minutes:
    ``carol: Yes, let's drop it.``; a label the lexicon says is no name, ``Decision:``, sets none)."""
    start, quote = 0, None
    quoted = lex.chat.quoted(turn_text)
    if quoted is not None:
        quote, start = quoted
    start += len(turn_text[start:]) - len(turn_text[start:].lstrip())
    label = SPEAKER_LABEL.match(turn_text[start:])
    if label is None or label_name(label).split()[0].lower() in lex.not_names:
        return start, quote, None
    return start + label.end(), quote, label_name(label)


def reply_to(
    question: str,
    turn_text: str,
    decisions: Sequence[tuple[Candidate, str]],
    lex: Lexicon,
    *,
    bare_yes_allowed: bool,
) -> Reply | None:
    """How ``turn_text`` answers ``question``, or ``None``.

    ``decisions`` are the turn's recorded decisions (candidate, decision id). ``bare_yes_allowed``
    says a yes/no answer that names nothing of the question may be taken as answering it: the
    caller allows it only for the one pending yes/no question of the channel's previous turn.
    A reply form quoting the question answers it with whatever the reply says after the quote
    (a reply quoting another message answers no question by a bare yes); a ``Name:`` label sets
    who answered."""
    own, quote, speaker = _own_words(turn_text, lex)
    if speaker is not None and speaker.lower() in _AGENT_SPEAKERS:
        return None  # the agent's own line in a transcript: only a person's word answers
    quoting_it = quote is not None and _quotes(question, quote)
    if quote is not None and not quoting_it:
        bare_yes_allowed = False
    start, end = _first_sentence(turn_text, own)
    sentence = turn_text[start:end]
    low = sentence.lower()
    closed = bool(sentence) and not sentence.endswith("?") and _NOT_AN_ANSWER.match(low) is None
    for cand, decision_id in decisions:
        if (quoting_it and closed) or _names(question, cand.span):
            return Reply("decision", cand.span, cand.start, cand.end, decision_id, speaker)
    if not sentence or sentence.endswith("?"):
        return None  # a reply that asks back answers nothing yet
    answer = lex.answer_openers.match_at(low, 0)
    if answer is not None and not _stands_alone(low, answer):
        answer = None  # "No probation is involved." says nothing about the question
    agreement = lex.agreement_openers.match_at(low, 0)
    opener = max((m.end() for m in (answer, agreement) if m is not None), default=0)
    names_it = _names(question, sentence[opener:])  # the opener's own words ("okay") name nothing
    yes_no = _POLAR.match(question.strip()) is not None and _ALTERNATIVES.search(question) is None
    if (
        answer is not None
        and _NOT_AN_ANSWER.match(low) is None
        and yes_no
        and (names_it or bare_yes_allowed or quoting_it)
    ):
        return Reply("answer", sentence, start, end, speaker=speaker)
    if agreement is not None and names_it:
        return Reply("agreement", sentence, start, end, speaker=speaker)
    if quoting_it and closed and (answer is None or names_it):
        # "Replying to "Postgres or SQLite?" Postgres." says which question it answers; a yes or no
        # still picks neither of two alternatives.
        return Reply("quoted", sentence, start, end, speaker=speaker)
    return None


@dataclass(frozen=True)
class _Earlier:
    """One earlier turn of the channel: its evidence id and the hash of its text."""

    evidence_id: str
    sha256: str


def _earlier_turns(
    tx: Transaction, namespace: str, turn: Turn, evidence_id: str, op_id: str, turns: int, minutes: float
) -> list[list[_Earlier]]:
    """The channel's last ``turns`` distinct turns before this one, said within ``minutes`` of it,
    newest first; each is every observation of that text (a conversation observed again records
    its turns again, under the same message id or, without one, a new operation id)."""
    # The payload is canonical JSON (RFC 8785), so the channel's key and value appear in it as
    # written here; LIKE narrows the scan to the channel in SQL and the payload is checked below.
    channel = canonical_json({"channel": turn.channel}).decode("utf-8")[1:-1]
    pattern = "%" + channel.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    size = tx.one("SELECT size FROM log_streams WHERE stream = ?", (namespace,))
    floor = int(size["size"]) - SCAN_OPS if size is not None else 0
    rows = tx.query(
        "SELECT id, payload FROM log_ops WHERE stream = ? AND seq > ? AND op = 'TURN_OBSERVED' "
        "AND payload LIKE ? ESCAPE '\\' ORDER BY seq DESC LIMIT ?",
        (namespace, floor, pattern, SCAN_TURNS),
    )
    said = turn.time
    oldest = said - timedelta(minutes=minutes)
    order: list[str] = []
    seen: dict[str, list[_Earlier]] = {}
    for row in rows:
        if str(row["id"]) == op_id:
            continue
        payload = json.loads(str(row["payload"]))
        if payload.get("channel") != turn.channel:
            continue
        own = payload.get("message_id") or str(row["id"])
        if own == evidence_id:
            continue  # this very message, observed before: it does not answer itself
        when = datetime.fromisoformat(str(payload.get("time")).replace("Z", "+00:00"))
        if when > said or when < oldest:
            continue  # said after this turn, or too long before it
        digest = str(payload.get("sha256"))
        if digest not in seen:
            if len(order) == turns:
                continue
            order.append(digest)
            seen[digest] = []
        seen[digest].append(_Earlier(own, digest))
    return [seen[d] for d in order]


def _untouched(tx: Transaction, namespace: str, intent_id: str) -> tuple[bool, set[str]]:
    """Whether no one acted on the candidate since it was proposed (only more evidence and this
    module's notes), and the hashes of the replies already noted on it."""
    noted: set[str] = set()
    for row in tx.query("SELECT op, payload FROM log_ops WHERE stream = ? AND target = ?", (namespace, intent_id)):
        op = str(row["op"])
        if op in ("INTENT_CREATE", "EVIDENCE_ATTACHED"):
            continue
        payload = json.loads(str(row["payload"]))
        answered_by = payload.get("answered_by") if op == "INTENT_UPDATE" else None
        if not isinstance(answered_by, dict):
            return False, noted  # confirmed, edited, dismissed, held...: a person's (or policy's) act
        noted.add(str(answered_by.get("sha256")))
    return True, noted


def answer_pending(
    rt: Runtime,
    goals: Goals,
    tx: Transaction,
    turn: Turn,
    *,
    evidence_id: str,
    op_id: str,
    digest: str,
    decisions: Sequence[tuple[Candidate, str]],
    lex: Lexicon,
    turns: int,
    minutes: float,
) -> list[Answered]:
    """Note, on each open question awaiting review that one of the channel's last ``turns`` turns
    (said within ``minutes``) proposed and that ``turn`` answers, the answering message and span.

    The caller has decided the turn is a person's, said as given. A turn with no channel is not
    placed in any conversation, so nothing is looked up for it."""
    if turns == 0 or not turn.channel:
        return []
    types = ", ".join("?" for _ in QUESTION_TYPES)
    waiting = tx.one(
        f"SELECT 1 AS one FROM goals_intents WHERE namespace = ? AND intent_type IN ({types}) "
        "AND epistemic_type = 'INFERRED' AND state = 'ACTIVE' LIMIT 1",
        (rt.namespace, *QUESTION_TYPES),
    )
    if waiting is None:
        return []  # no open question awaits review: nothing to look back for
    earlier = _earlier_turns(tx, rt.namespace, turn, evidence_id, op_id, turns, minutes)
    if not earlier:
        return []
    by_evidence: dict[str, int] = {}
    for rank, observations in enumerate(earlier):
        for seen in observations:
            by_evidence.setdefault(seen.evidence_id, rank)
    marks = ", ".join("?" for _ in by_evidence)
    rows = tx.query(
        "SELECT i.id, i.value, i.context_note, i.version, e.evidence_id FROM goals_evidence e "
        "JOIN goals_intents i ON i.id = e.intent_id WHERE i.namespace = ? "
        f"AND e.evidence_id IN ({marks}) AND i.intent_type IN ({types}) AND i.epistemic_type = 'INFERRED' "
        "AND i.state = 'ACTIVE' AND e.added_at = i.created_at ORDER BY i.created_at, i.id",
        (rt.namespace, *by_evidence, *QUESTION_TYPES),
    )  # e.added_at = i.created_at: the evidence it was proposed from, not a restatement attached later
    once: dict[str, Any] = {}
    for row in rows:  # each candidate once, oldest first
        once.setdefault(str(row["id"]), row)
    rows = list(once.values())
    pending = [row for row in rows if _POLAR.match(str(row["value"]).strip()) is not None]
    previous = [row for row in pending if by_evidence[str(row["evidence_id"])] == 0]
    all_previous = [row for row in rows if by_evidence[str(row["evidence_id"])] == 0]
    sole = str(previous[0]["id"]) if len(previous) == 1 and len(all_previous) == 1 else None
    answered: list[Answered] = []
    for row in rows:
        intent_id = str(row["id"])
        reply = reply_to(str(row["value"]), turn.text, decisions, lex, bare_yes_allowed=intent_id == sole)
        if reply is None:
            continue
        who = reply.speaker or turn.speaker
        untouched, noted = _untouched(tx, rt.namespace, intent_id)
        if not untouched or digest in noted:
            continue  # a reviewed candidate is the reviewer's; this reply is already noted
        line = (
            f"answered by {who or 'an unnamed speaker'} in message {evidence_id} on {turn.channel} "
            f"({reply.signal}, chars {reply.start}..{reply.end}): {reply.span[:200]!r}"
        )
        if reply.decision_id is not None:
            line += f"; decision {reply.decision_id} recorded"
        old = row["context_note"]
        note = f"{old}\n{line}" if old else line
        goals.note_answer_in(
            tx,
            intent_id,
            note,
            answered_by={
                "evidence_id": evidence_id,
                "sha256": digest,
                "channel": turn.channel,
                "speaker": who,
                "signal": reply.signal,
                "span": reply.span,
                "start": reply.start,
                "end": reply.end,
                "decision_id": reply.decision_id,
            },
            expected_version=int(row["version"]),
        )
        answered.append(Answered(intent_id, str(row["evidence_id"]), replace(reply, speaker=who)))
    return answered
