"""The extraction facade: observe a turn, record it as evidence, hand candidates to goals.

``observe`` runs the configured extractor first (it may call a network endpoint, so it runs
outside any transaction), then records the turn as a ``TURN_OBSERVED`` operation carrying a
SHA-256 of the text (the text itself stays out of the log), and then proposes each candidate
through the goals engine's public review API: intents arrive INFERRED at 0.55 waiting for
review; decisions become decision records. A rejected extractor answer is logged as
``EXTRACTION_REJECTED`` and creates nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..access import Permission
from ..core.actors import Actor, ActorKind
from ..core.clock import format_time
from ..core.errors import InvalidInput, first_problem
from ..log import register_applier
from ._answers import Answered, answer_pending
from ._base import ExtractionRejected, Extractor
from ._lexicon import load_lexicon
from ._models import Candidate, CandidateType, Turn
from ._rules import _AGENT_SPEAKERS, AGENT_CHANNELS, DIALOGUE_CHANNELS, RuleExtractor

if TYPE_CHECKING:
    from .._runtime import Runtime
    from ..goals import Goals
    from ..store import Transaction

__all__ = ["Extraction", "ExtractionSettings", "ObserveResult", "Proposal"]

POLICY_VERSION = "intently.extract@1"

# Record-only operations: the turn and a rejected answer are evidence, not state to rebuild.
register_applier("TURN_OBSERVED", None)
register_applier("EXTRACTION_REJECTED", None)


class ExtractionSettings(BaseModel):
    """The ``[extract]`` table of ``intently.toml``: which extractor observe uses."""

    model_config = ConfigDict(extra="forbid")
    extractor: Literal["rules", "llm"] = "rules"
    # The rules' statistical recall layer (extract/model.json); false reads the rules alone.
    model: bool = True
    # Channels whose turns are prompts to a coding agent: read in that register (see RuleExtractor).
    agent_channels: list[str] = Field(default_factory=lambda: sorted(AGENT_CHANNELS))
    # Channels of one-to-one conversation: a question there is settled by the listener's reply.
    dialogue_channels: list[str] = Field(default_factory=lambda: sorted(DIALOGUE_CHANNELS))
    # Per-type bars for the recall layer, over the shipped ones: raise a type's bar to see fewer
    # of its candidates in review ({ COMMITMENT = 0.8 }); 1.0 turns the layer off for that type.
    model_thresholds: dict[str, Annotated[float, Field(gt=0.0, le=1.0)]] = Field(default_factory=dict)
    # Seconds for one call to the [llm] endpoint.
    timeout: float = Field(default=30.0, gt=0.0, le=3600.0)
    # How far back a turn looks for the open questions it answers ("Should we drop Node 18?" /
    # "Yes, let's drop it."): questions proposed from the channel's last N turns, said at most M
    # minutes before it. 0 turns turns the look-back off (docs/extraction.md).
    answer_window_turns: int = Field(default=3, ge=0, le=50, strict=True)
    answer_window_minutes: float = Field(default=60.0, gt=0.0, le=10080.0)


def _not_a_person(actor: Actor, speaker: str | None) -> str | None:
    """Who, of the actor feeding a turn and the speaker it names, is not a person, or ``None``.

    A recorded decision skips review and becomes a project rule proposed at the next scan (a
    person still accepts it before it is injected), so only a person's word makes one: an
    agent feeding its own turns (MCP ``review_observe``, an agent's API token) or a turn whose
    speaker is named as an agent, tool or system (``agent:claude``) could otherwise write the
    project's rules. A plain name ("bob") is a person, as in minutes and chats; the other
    candidate types wait in review whoever said them.
    """
    if actor.kind is not ActorKind.USER:
        return str(actor)
    if speaker is not None and ":" in speaker:
        kind = speaker.split(":", 1)[0].strip().lower()
        if kind in {k.value for k in ActorKind} and kind != ActorKind.USER.value:
            return speaker
    return None


@dataclass(frozen=True)
class Proposal:
    """What happened to one candidate: ``created`` / ``attached`` / ``suppressed`` intent, ``recorded``
    decision, ``held`` decision (from a turn no person fed or said: not recorded, ``error`` says
    why), or ``invalid`` (the goals engine refused it; ``error`` says why, the others still go)."""

    candidate: Candidate
    status: str
    object_id: str | None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"candidate": self.candidate.to_json(), "status": self.status, "id": self.object_id, "error": self.error}


@dataclass
class ObserveResult:
    """The evidence id the turn was recorded under, and what each candidate became."""

    evidence_id: str
    operation_id: str
    content_hash: str
    extractor: str
    proposals: list[Proposal] = field(default_factory=list)
    rejected: str | None = None
    unread: str | None = None  # why the extractor could not read the turn (its language), if so
    answered: list[Answered] = field(default_factory=list)  # earlier open questions this turn answers

    @property
    def candidates(self) -> list[Candidate]:
        return [p.candidate for p in self.proposals]

    def to_json(self) -> dict[str, Any]:
        return {
            "evidence_id": self.evidence_id,
            "operation_id": self.operation_id,
            "content_hash": self.content_hash,
            "extractor": self.extractor,
            "rejected": self.rejected,
            "unread": self.unread,
            "proposals": [p.to_json() for p in self.proposals],
            "answered": [a.to_json() for a in self.answered],
        }


class Extraction:
    """Engine facade bound to one home, actor and namespace (``Intently(...).extraction``)."""

    def __init__(self, runtime: Runtime, *, extractor: Extractor | None = None) -> None:
        self._rt = runtime
        self._extractor = extractor

    @property
    def settings(self) -> ExtractionSettings:
        raw = self._rt.config.extra.get("extract", {})
        try:
            return ExtractionSettings.model_validate(raw)
        except ValidationError as exc:
            field, message = first_problem(exc)
            raise InvalidInput(message, where=f"{self._rt.home.config_path}: extract.{field}") from exc

    @property
    def extractor(self) -> Extractor:
        """The extractor ``[extract] extractor`` names (rules unless configured otherwise)."""
        if self._extractor is None:
            self._extractor = self._configured()
        return self._extractor

    def _configured(self) -> Extractor:
        settings = self.settings
        if settings.extractor == "rules":
            try:
                return RuleExtractor(
                    model=settings.model,
                    agent_channels=settings.agent_channels,
                    dialogue_channels=settings.dialogue_channels,
                    model_thresholds=settings.model_thresholds,
                )
            except InvalidInput as exc:
                raise InvalidInput(str(exc), where=f"{self._rt.home.config_path}: extract") from exc
        from ._llm import LLMExtractor  # its reply models are built only where it is configured

        llm = self._rt.config.llm
        if not llm.base_url or not llm.model:
            raise InvalidInput(
                "[extract] extractor = 'llm' needs [llm] base_url and model",
                where=f"{self._rt.home.config_path}: llm.base_url",
            )
        return LLMExtractor(
            base_url=llm.base_url,
            model=llm.model,
            api_key=os.environ.get(llm.api_key_env) or None,
            timeout=settings.timeout,
        )

    def extract(self, turn: Turn | dict[str, Any]) -> list[Candidate]:
        """Candidates in ``turn`` without recording anything (a dry run of :meth:`observe`)."""
        return self.extractor.extract(_turn(turn))

    def observe(self, turn: Turn | dict[str, Any], *, trusted: bool = True) -> ObserveResult:
        """Record ``turn`` as evidence and propose what the extractor finds in it for review.
        A turn given as a mapping without ``time`` was said now, as on the CLI, HTTP and MCP.

        ``trusted=False`` says no person vouches that the turn was said as given (an agent
        relaying it over MCP, a tool's output): its decisions are ``held``, not recorded, since
        a recorded decision becomes a project rule with no review. Everything else it carries
        waits in review as usual."""
        if isinstance(turn, dict) and turn.get("time") is None:
            turn = {**turn, "time": self._rt.clock.now()}
        checked = _turn(turn)
        if not checked.text.strip():
            raise InvalidInput("the turn has no text: nothing was said to observe", where="turn.text")
        extractor = self.extractor
        settings = self.settings
        unread = extractor.unread(checked)
        rejected: ExtractionRejected | None = None
        try:
            candidates = extractor.extract(checked)
            for cand in candidates:
                cand.check_against(checked.text)
        except ExtractionRejected as exc:
            rejected, candidates = exc, []
        except ValueError as exc:  # a span that is not where it claims: reject the whole answer
            rejected = ExtractionRejected(str(exc), kind="malformed", extractor=extractor.name)
            candidates = []
        digest = hashlib.sha256(checked.text.encode("utf-8")).hexdigest()
        rt = self._rt
        from ..goals import Goals

        goals = Goals(rt)
        goals.catch_up()
        proposals: list[Proposal] = []
        # The turn and every candidate in it are one transaction: one commit (and one fsync)
        # per turn instead of one per candidate, and a failure part way (a full disk, a crash)
        # leaves neither the turn nor half its candidates.
        with rt.store.transaction() as tx:
            rt.access.require(rt.actor, rt.namespace, Permission.WRITE, tx)
            op = rt.log.append(
                tx,
                namespace=rt.namespace,
                actor=str(rt.actor),
                op="TURN_OBSERVED",
                target=checked.message_id or f"sha256:{digest}",
                payload={
                    "sha256": digest,
                    "chars": len(checked.text),
                    "speaker": checked.speaker,
                    "channel": checked.channel,
                    "time": format_time(checked.time),
                    "message_id": checked.message_id,
                    "extractor": extractor.name,
                    "candidates": len(candidates),
                    **({"unread": unread} if unread else {}),
                },
                policy_version=POLICY_VERSION,
            )
            evidence_id = checked.message_id or op.id
            if rejected is not None:
                rt.log.append(
                    tx,
                    namespace=rt.namespace,
                    actor=str(rt.actor),
                    op="EXTRACTION_REJECTED",
                    target=evidence_id,
                    payload={"extractor": extractor.name, "kind": rejected.kind, "reason": str(rejected)[:500]},
                    policy_version=POLICY_VERSION,
                )
            for cand in candidates:
                try:
                    proposals.append(
                        self._propose(goals, tx, cand, evidence_id, checked.time, checked.speaker, trusted)
                    )
                except InvalidInput as exc:  # raised before the candidate wrote: the rest of the turn goes on
                    proposals.append(Proposal(cand, "invalid", None, str(exc)))
            answered: list[Answered] = []
            if trusted and _not_a_person(rt.actor, checked.speaker) is None and not _agent_speaker(checked.speaker):
                # Only a person's word, said as given, settles a person's question (as for decisions).
                answered = answer_pending(
                    rt,
                    goals,
                    tx,
                    checked,
                    evidence_id=evidence_id,
                    op_id=op.id,
                    digest=digest,
                    decisions=[
                        (p.candidate, p.object_id)
                        for p in proposals
                        if p.status == "recorded" and p.object_id is not None
                    ],
                    lex=load_lexicon(),
                    turns=settings.answer_window_turns,
                    minutes=settings.answer_window_minutes,
                )
        return ObserveResult(
            evidence_id=evidence_id,
            operation_id=op.id,
            content_hash=digest,
            extractor=extractor.name,
            proposals=proposals,
            rejected=str(rejected) if rejected else None,
            unread=unread,
            answered=answered,
        )

    def _propose(
        self,
        goals: Goals,
        tx: Transaction,
        cand: Candidate,
        evidence_id: str,
        said: datetime,
        speaker: str | None,
        trusted: bool,
    ) -> Proposal:
        """Hand one candidate to the goals engine through its review API, in the turn's
        transaction. ``said`` is the turn's time: a due date that has passed now may still
        have been ahead when it was said (an older conversation observed late), and the note
        tells the reviewer which."""
        if cand.type is CandidateType.DECISION:
            not_a_person = _not_a_person(self._rt.actor, speaker) if trusted else "a source no person vouches for"
            if not_a_person is not None:
                return Proposal(
                    cand,
                    "held",
                    None,
                    f"not recorded: the turn came from {not_a_person}, and a decision is recorded (and mined "
                    "as a project rule by `req scan`) only from a person's turn",
                )
            decision = goals.record_decision_in(tx, cand.span, evidence_id=evidence_id, span=cand.span)
            return Proposal(cand, "recorded", decision.id)
        now = self._rt.clock.now()
        due = cand.due if cand.due is not None and cand.due > now else None
        note = None
        if cand.due_text and due is None:  # the words stay, for the reviewer to set a date
            if cand.due is None:
                why = "no calendar date"
            else:
                why = "already past when said" if cand.due <= said else "already past when observed"
            note = f"due stated as {cand.due_text!r} ({why})"
        status, intent_id = goals.propose_in(
            tx,
            cand.type.value,
            cand.span,
            evidence_id=evidence_id,
            span=cand.span,
            owner=owner_actor(cand.owner),
            due=due,
            source_type="conversation",
            context_note=note,
        )
        return Proposal(cand, status, intent_id)


def _agent_speaker(speaker: str | None) -> bool:
    """A speaker an agent channel names for the agent itself ("assistant"): not a person."""
    return speaker is not None and speaker.strip().lower() in _AGENT_SPEAKERS


def owner_actor(name: str | None) -> str | None:
    """A stated owner as an actor name: ``@Alice`` -> ``alice``; ``Mihir Faujdar`` -> ``mihir-faujdar``.
    A speaker given as an actor already (``agent:ci``, ``user:root``) stays that actor, so the
    intent is found under the owner that said it."""
    if not name:
        return None
    kind, sep, rest = name.strip().partition(":")
    if sep and kind.lower() in {k.value for k in ActorKind} and re.fullmatch(r"[A-Za-z0-9._@+-]{1,128}", rest):
        return str(Actor.parse(f"{kind.lower()}:{rest}"))
    first = re.split(r"\s*(?:/|,|&|\band\b)\s*", name.strip().lstrip("@"))[0]
    # "José Núñez" -> "jose-nunez": accents folded rather than dropped mid-name ("jos-n-ez")
    folded = unicodedata.normalize("NFKD", first).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^A-Za-z0-9._@+-]+", "-", folded).strip("-._@+").lower()[:128]
    if not slug:
        return None
    return str(Actor.parse(slug))


def _turn(turn: Turn | dict[str, Any]) -> Turn:
    if isinstance(turn, Turn):
        return turn
    try:
        return Turn.model_validate(turn)
    except ValidationError as exc:
        field, message = first_problem(exc)
        raise InvalidInput(message, where=f"turn.{field}") from exc
