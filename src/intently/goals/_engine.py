"""The :class:`Goals` facade: every read checks read access, every write checks write access,
runs in one transaction and appends its operations to the log in that transaction."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from ..access import Permission
from ..core.clock import format_time, parse_time
from ..core.errors import InvalidInput, InvalidTransition, NotFound
from ..core.ids import new_id
from ..core.strings import str_list
from ..core.tokens import TokenCounting, default_counter
from ..store import Transaction
from . import _lifecycle as lifecycle
from ._bundle import Bundle, Mode, assemble
from ._claims import CompletionClaimed, record_claim, reject_claim
from ._custody import guard_owner_change, guard_persons_words
from ._model import (
    Decision,
    EpistemicType,
    Intent,
    IntentState,
    IntentType,
    Priority,
    SourceType,
    Summary,
    initial_confidence,
    intent_label,
    parse_enum,
)
from ._ops import emit, load_for_write
from ._organiser import PIGGYBACK_BATCH, PIGGYBACK_BUDGET_MS, OrganiseReport, due_exists, organise
from ._review import (
    INFERRED_CONFIDENCE,
    ProposeResult,
    dismiss,
    endorse,
    find_restatement,
    guard_candidate,
    is_suppressed,
    promote,
    proposed_before,
)
from ._semantic import SemanticMatcher
from ._store import load_intent, load_intents, row_to_decision, row_to_summary
from ._text import terms_of
from ._writes import actor_text, add_edge, clean_text, create_intent, people, remove_edge, stated_source, to_time

if TYPE_CHECKING:
    from .._runtime import Runtime
    from ..embed import Embedder

__all__ = ["CLEAR", "Goals"]


class _Clear:
    def __repr__(self) -> str:
        return "CLEAR"


CLEAR: Any = _Clear()
"""Pass to :meth:`Goals.edit` to empty an optional field (``None`` means "leave it")."""


def _is_risk_downgrade(intent: Intent, changes: dict[str, Any]) -> bool:
    """An EXPIRED risk's priority lowered, and nothing else changed.

    RFC-0013 section 8 keeps a CRITICAL risk in every bundle "until it is COMPLETED, CANCELLED,
    or explicitly downgraded by the user"; an expired risk is escalated by the organiser, so the
    user must be able to lower it again. Any other edit of an expired intent stays refused
    (reopen it first): the exception is the downgrade the RFC names, not general editing."""
    return (
        intent.is_risk
        and intent.state is IntentState.EXPIRED
        and set(changes) == {"priority"}
        and Priority(changes["priority"]).rank < intent.priority.rank
    )


class Goals:
    """Goals, commitments, open questions, decisions in progress, risks and follow-ups (RFC-0013).

    Bound to one actor and namespace (``Intently(...).goals``). Writes take an optional
    ``expected_version``: when another writer got there first, :class:`ConflictError` is
    raised instead of silently overwriting; without it, writes serialise on the store's write
    lock, so no update is ever lost either way.
    """

    def __init__(
        self,
        runtime: Runtime,
        *,
        counter: TokenCounting | None = None,
        embedder: Embedder | None = None,
        semantic_threshold: float = 0.65,
    ) -> None:
        """``embedder`` (optional) adds meaning-based relevance for MEDIUM intents at cosine >=
        ``semantic_threshold`` (RFC-0005's 0.65); without one, relevance is lexical only."""
        self._rt = runtime
        self._counter = counter
        self._semantic = SemanticMatcher(embedder, threshold=semantic_threshold) if embedder is not None else None
        self._last_organised: datetime | None = None

    # -- plumbing ---------------------------------------------------------------

    @property
    def counter(self) -> TokenCounting:
        return self._counter or default_counter()

    def _require(self, permission: Permission, tx: Transaction | None = None) -> None:
        self._rt.access.require(self._rt.actor, self._rt.namespace, permission, tx)

    def _piggyback(self) -> None:
        """Light organiser pass before a read or write: one indexed lookup when nothing is due,
        at most once per second of clock time (nothing can fall due while the clock stands still)."""
        now = self._now()
        if self._last_organised is not None and (now - self._last_organised).total_seconds() < 1.0:
            return
        self._last_organised = now
        if self._rt.access.can(self._rt.actor, self._rt.namespace, Permission.READ) and due_exists(self._rt):
            organise(self._rt, budget_ms=PIGGYBACK_BUDGET_MS, batch=PIGGYBACK_BATCH)

    @contextmanager
    def _write(self) -> Iterator[Transaction]:
        self._piggyback()
        with self._rt.store.transaction() as tx:
            self._require(Permission.WRITE, tx)
            yield tx

    @contextmanager
    def _read(self) -> Iterator[Transaction]:
        self._piggyback()
        with self._rt.store.transaction(write=False) as tx:
            self._require(Permission.READ, tx)
            yield tx

    def _now(self) -> datetime:
        return self._rt.clock.now()

    # -- creating -------------------------------------------------------------

    def add(
        self,
        text: str,
        *,
        type: IntentType | str | None = None,
        priority: Priority | str | None = None,
        owner: str | None = None,
        due: datetime | str | None = None,
        stakeholders: Sequence[str] | None = None,
        completion_criteria: str | None = None,
        context_note: str | None = None,
        evidence_ids: Sequence[str] | None = None,
        source_type: SourceType | str | None = None,
        salience: float | None = None,
        structured_value: dict[str, Any] | None = None,
        valid_to: datetime | str | None = None,
        depends_on: Sequence[str] | None = None,
    ) -> Intent:
        """Record an intent the caller states (ASSERTED); ``None`` means the default (GOAL, MEDIUM,
        salience 0.5, and the source of who states it: USER_STATED for a person, SYSTEM_INFERRED
        for an agent, also one acting for a person, see :func:`stated_source`). Without evidence
        ids the evidence is the statement itself, ``stated:<intent id>`` (the INTENT_CREATE operation)."""
        intent_id = new_id()
        source = stated_source(self._rt.actor, source_type)
        with self._write() as tx:
            create_intent(
                self._rt,
                tx,
                intent_id,
                text,
                intent_type=parse_enum(IntentType, type or IntentType.GOAL, "type"),
                priority=parse_enum(Priority, priority or Priority.MEDIUM, "priority"),
                owner=owner,
                due=due,
                stakeholders=stakeholders or (),
                completion_criteria=completion_criteria,
                context_note=context_note,
                evidence=[{"id": e, "span": None} for e in evidence_ids or ()] or [{"id": f"stated:{intent_id}"}],
                epistemic=EpistemicType.ASSERTED,
                source=source,
                confidence=initial_confidence(EpistemicType.ASSERTED, source),
                origin=None,
                salience=0.5 if salience is None else salience,
                structured_value=structured_value,
                valid_to=valid_to,
            )
            for prerequisite in depends_on or ():
                add_edge(self._rt, tx, intent_id, prerequisite, None)
            return self._as_written(tx, intent_id)

    def add_many(self, items: Sequence[dict[str, Any]]) -> list[str]:
        """Import many intents in one transaction (each still its own INTENT_CREATE); each item
        takes ``text`` plus the keyword arguments of :meth:`add` except ``depends_on``."""
        ids: list[str] = []
        with self._write() as tx:
            for n, item in enumerate(items):
                spec = dict(item)
                if "depends_on" in spec:
                    raise InvalidInput("add_many takes no depends_on; use depend_many", where=f"items[{n}]")
                intent_id = new_id()
                source = stated_source(self._rt.actor, spec.pop("source_type", None))
                evidence = [{"id": e, "span": None} for e in spec.pop("evidence_ids", ())]
                create_intent(
                    self._rt,
                    tx,
                    intent_id,
                    spec.pop("text"),
                    intent_type=parse_enum(IntentType, spec.pop("type", IntentType.GOAL), "type"),
                    priority=parse_enum(Priority, spec.pop("priority", Priority.MEDIUM), "priority"),
                    owner=spec.pop("owner", None),
                    due=spec.pop("due", None),
                    stakeholders=spec.pop("stakeholders", ()),
                    completion_criteria=spec.pop("completion_criteria", None),
                    context_note=spec.pop("context_note", None),
                    evidence=evidence or [{"id": f"stated:{intent_id}"}],
                    epistemic=EpistemicType.ASSERTED,
                    source=source,
                    confidence=initial_confidence(EpistemicType.ASSERTED, source),
                    origin=None,
                    salience=float(spec.pop("salience", 0.5)),
                    structured_value=spec.pop("structured_value", None),
                    valid_to=spec.pop("valid_to", None),
                )
                if spec:
                    raise InvalidInput(f"unknown fields {sorted(spec)}", where=f"items[{n}]")
                ids.append(intent_id)
        return ids

    # -- review queue -----------------------------------------------------------

    def propose(
        self,
        type: str,
        text: str,
        *,
        evidence_id: str,
        span: str | None = None,
        owner: str | None = None,
        due: datetime | None = None,
        source_type: str = "conversation",
        context_note: str | None = None,
    ) -> ProposeResult:
        """A candidate from extraction: INFERRED at 0.55, waiting for review (see ``_review``).
        ``context_note`` keeps what the reviewer needs that no field holds (a stated due date
        that had no calendar date or had already passed)."""
        with self._write() as tx:
            status, intent_id = self.propose_in(
                tx,
                type,
                text,
                evidence_id=evidence_id,
                span=span,
                owner=owner,
                due=due,
                source_type=source_type,
                context_note=context_note,
            )
            return ProposeResult(status, self._as_written(tx, intent_id) if intent_id is not None else None)

    def catch_up(self) -> None:
        """The light organiser pass every write of this engine makes first. An engine writing
        intents in a transaction of its own (:meth:`propose_in`) calls it before opening one:
        the pass writes in transactions of its own."""
        self._piggyback()

    def propose_in(
        self,
        tx: Transaction,
        type: str,
        text: str,
        *,
        evidence_id: str,
        span: str | None = None,
        owner: str | None = None,
        due: datetime | None = None,
        source_type: str = "conversation",
        context_note: str | None = None,
    ) -> tuple[Literal["created", "attached", "suppressed"], str | None]:
        """:meth:`propose` in the caller's write transaction (which checked write permission):
        (status, intent id). Extraction records a turn and all its candidates in one
        transaction, so a failure part way leaves none of them.

        Every :class:`InvalidInput` is raised before this candidate writes anything, so a
        caller may catch it and go on with the next candidate in the same transaction."""
        intent_type = parse_enum(IntentType, type, "type")
        clean = clean_text(text, "text")
        if not evidence_id or not evidence_id.strip():
            raise InvalidInput("an evidence id is required", where="evidence_id")
        terms = terms_of(clean)
        before = proposed_before(self._rt, tx, intent_type.value, terms, evidence_id, span or clean)
        if before is not None:  # this candidate from this evidence again: it is that intent
            intent_id, live = before
            return ("attached", intent_id) if live else ("suppressed", None)
        if is_suppressed(tx, self._rt.namespace, terms, evidence_id):
            return "suppressed", None
        existing = find_restatement(self._rt, tx, intent_type.value, terms, owner=actor_text(owner))
        if existing is not None:
            if evidence_id not in existing.evidence_ids:
                emit(
                    self._rt,
                    tx,
                    "EVIDENCE_ATTACHED",
                    existing.id,
                    {"evidence_id": evidence_id, "span": span, "version": existing.version + 1},
                )
            return "attached", existing.id
        intent_id = new_id()
        create_intent(
            self._rt,
            tx,
            intent_id,
            clean,
            intent_type=intent_type,
            priority=Priority.MEDIUM,
            owner=owner,
            due=due,
            stakeholders=(),
            completion_criteria=None,
            context_note=context_note,
            evidence=[{"id": evidence_id, "span": span}],
            epistemic=EpistemicType.INFERRED,
            source=SourceType.SYSTEM_INFERRED,
            confidence=INFERRED_CONFIDENCE,
            origin=source_type,
            salience=0.5,
            structured_value=None,
            valid_to=None,
        )
        return "created", intent_id

    def note_answer_in(
        self, tx: Transaction, intent_id: str, note: str, *, answered_by: dict[str, Any], expected_version: int
    ) -> None:
        """Set the context note of a candidate awaiting review to say a later turn answered it
        (extraction's look-back, ``extract/_answers.py``): one INTENT_UPDATE carrying
        ``answered_by`` (the answering evidence, span and signal), in the caller's transaction.

        Only the note changes and the candidate stays in the queue: a person still confirms or
        dismisses it. Refused (:class:`InvalidTransition`) unless the intent is still an
        INFERRED, ACTIVE candidate at ``expected_version``, so a reviewer's act is never overwritten."""
        intent = load_for_write(self._rt, tx, intent_id, expected_version)
        if intent.epistemic_type is not EpistemicType.INFERRED or intent.state is not IntentState.ACTIVE:
            raise InvalidTransition(
                f"review of {intent_label(intent.id)}",
                intent.epistemic_type.value,
                "noted as answered",
                detail="only a candidate awaiting review is noted as answered",
            )
        emit(
            self._rt,
            tx,
            "INTENT_UPDATE",
            intent_id,
            {"changes": {"context_note": note}, "version": intent.version + 1, "answered_by": answered_by},
        )

    def review_queue(self) -> list[Intent]:
        """Candidates awaiting review (INFERRED, not dismissed), oldest first."""
        with self._read() as tx:
            rows = tx.query(
                "SELECT * FROM goals_intents WHERE namespace = ? AND epistemic_type = 'INFERRED' "
                "AND state IN ('ACTIVE', 'ON_HOLD') ORDER BY created_at, id",
                (self._rt.namespace,),
            )
            return load_intents(tx, rows, self._now())

    def promote(self, intent_id: str, *, expected_version: int | None = None) -> Intent:
        """Confirm a candidate: INFERRED -> ASSERTED (an EPISTEMIC_TRANSITION)."""
        with self._write() as tx:
            promote(self._rt, tx, intent_id, expected_version)
            return self._as_written(tx, intent_id)

    def endorse(self, intent_id: str, *, expected_version: int | None = None) -> Intent:
        """A person makes an intent an agent (or a tool) asserted their own word: source
        USER_STATED, confidence 0.80, one EPISTEMIC_TRANSITION naming them. Refused to agents,
        including an agent acting for the person (``PermissionDenied``); a candidate awaiting
        review is confirmed (:meth:`promote`)."""
        with self._write() as tx:
            endorse(self._rt, tx, intent_id, expected_version)
            return self._as_written(tx, intent_id)

    def dismiss(self, intent_id: str, *, reason: str | None = None, expected_version: int | None = None) -> Intent:
        """Reject a candidate: INFERRED -> DEPRECATED; the same text from the same evidence stays suppressed."""
        with self._write() as tx:
            dismiss(self._rt, tx, intent_id, reason, expected_version)
            return self._as_written(tx, intent_id)

    # -- decisions ----------------------------------------------------------------

    def record_decision(self, text: str, *, evidence_id: str, span: str | None = None) -> Decision:
        """A decision that was made: a record (the requirements scan mines these), not an intent.

        The same decision stated again (a prompt sent twice, a choice repeated in a later session)
        returns the record already made: a second record would be mined as a second rule."""
        with self._write() as tx:
            return self.record_decision_in(tx, text, evidence_id=evidence_id, span=span)

    def record_decision_in(self, tx: Transaction, text: str, *, evidence_id: str, span: str | None = None) -> Decision:
        """:meth:`record_decision` in the caller's write transaction (see :meth:`propose_in`);
        an :class:`InvalidInput` is raised before anything is written."""
        clean = clean_text(text, "text")
        if not evidence_id or not evidence_id.strip():
            raise InvalidInput("an evidence id is required", where="evidence_id")
        known = tx.one(
            "SELECT * FROM goals_decisions WHERE namespace = ? AND text = ? ORDER BY created_at, id LIMIT 1",
            (self._rt.namespace, clean),
        )
        if known is not None:
            return row_to_decision(known)
        decision_id = new_id()
        emit(
            self._rt,
            tx,
            "DECISION_RECORDED",
            decision_id,
            {"decision_id": decision_id, "text": clean, "evidence_id": evidence_id, "span": span},
        )
        row = tx.one("SELECT * FROM goals_decisions WHERE id = ?", (decision_id,))
        assert row is not None
        return row_to_decision(row)

    def decisions(self, since: str | None = None) -> list[Decision]:
        """Recorded decisions, oldest first; ``since`` is an RFC 3339 time (inclusive)."""
        start = format_time(parse_time(since, where="since")) if since else ""
        with self._read() as tx:
            rows = tx.query(
                "SELECT * FROM goals_decisions WHERE namespace = ? AND created_at >= ? ORDER BY created_at, id",
                (self._rt.namespace, start),
            )
        return [row_to_decision(r) for r in rows]

    # -- reading ------------------------------------------------------------------

    def get(self, intent_id: str) -> Intent:
        with self._read() as tx:
            intent = load_intent(tx, self._rt.namespace, intent_id, self._now())
        if intent is None:
            raise NotFound(f"no intent {intent_id!r} in namespace {self._rt.namespace!r}")
        return intent

    def _as_written(self, tx: Transaction, intent_id: str) -> Intent:
        """The intent as this write left it, read in the writing transaction. Read after the
        commit instead, a concurrent writer's next change can land in between, and the caller
        would be handed that writer's version as if it were its own."""
        intent = load_intent(tx, self._rt.namespace, intent_id, self._now())
        if intent is None:
            raise NotFound(f"no intent {intent_id!r} in namespace {self._rt.namespace!r}")
        return intent

    def resolve(self, ref: str) -> str:
        """The full id for ``ref``: an id, or a unique prefix or suffix of at least 6 characters
        (people type the end of a UUIDv7; its start is a timestamp shared by neighbours)."""
        ref = ref.strip()
        with self._read() as tx:
            if tx.one("SELECT id FROM goals_intents WHERE id = ? AND namespace = ?", (ref, self._rt.namespace)):
                return ref
            if len(ref) < 6:
                raise NotFound(f"no intent {ref!r} (give the id, or at least 6 of its last characters)")
            # The reference is matched literally: ``_`` and ``%`` are LIKE wildcards, and a
            # reference of six underscores resolved to whichever intent was alone in the namespace.
            literal = ref.replace("!", "!!").replace("%", "!%").replace("_", "!_")
            rows = tx.query(
                "SELECT id FROM goals_intents WHERE namespace = ? "
                "AND (id LIKE ? ESCAPE '!' OR id LIKE ? ESCAPE '!') LIMIT 3",
                (self._rt.namespace, literal + "%", "%" + literal),
            )
        if len(rows) != 1:
            raise NotFound(
                f"no intent {ref!r}" if not rows else f"{ref!r} matches several intents; give more of the id"
            )
        return str(rows[0]["id"])

    def list_intents(
        self,
        *,
        state: str | Sequence[str] | None = None,
        type: str | Sequence[str] | None = None,
        owner: str | None = None,
        priority: str | Sequence[str] | None = None,
        include_dismissed: bool = False,
        include_archived: bool = True,
    ) -> list[Intent]:
        """Every intent matching the filters (all states), highest priority first, newest first.
        ``include_archived=False`` leaves out archived ones (completed, cancelled, and expired
        ones put away with :meth:`archive`): the open list."""
        where = ["namespace = ?"]
        params: list[Any] = [self._rt.namespace]
        for column, values in (
            ("state", [parse_enum(IntentState, v, "state").value for v in str_list(state)]),
            ("intent_type", [parse_enum(IntentType, v, "type").value for v in str_list(type)]),
            ("priority", [parse_enum(Priority, v, "priority").value for v in str_list(priority)]),
        ):
            if values:
                where.append(f"{column} IN ({', '.join('?' for _ in values)})")
                params.extend(values)
        if owner is not None:
            where.append("owner = ?")
            params.append(actor_text(owner))
        if not include_dismissed:
            where.append("epistemic_type <> 'DEPRECATED'")
        if not include_archived:
            where.append("lifecycle_state <> 'ARCHIVED'")
        with self._read() as tx:
            rows = tx.query(
                f"SELECT * FROM goals_intents WHERE {' AND '.join(where)} "
                "ORDER BY priority_rank DESC, created_at DESC, id",
                params,
            )
            return load_intents(tx, rows, self._now())

    def summaries(self, query: str | None = None) -> list[Summary]:
        """Completion summaries, newest first; with ``query``, only those touching its terms."""
        with self._read() as tx:
            rows = tx.query(
                "SELECT * FROM goals_summaries WHERE namespace = ? ORDER BY created_at DESC, id", (self._rt.namespace,)
            )
        found = [row_to_summary(r) for r in rows]
        if query:
            q = terms_of(query)
            found = [s for s in found if q.touches(terms_of(s.text)) or q.words & terms_of(s.text).entities]
        return found

    def bundle(
        self,
        query: str = "",
        *,
        session: str | None = None,
        budget: int = 800,
        mode: Mode = "DEFAULT",
        include_low: bool = False,
        include_inferred: bool = False,
        record: bool = True,
        **filters: Any,
    ) -> Bundle:
        """The intents for one request, packed into ``budget`` tokens (see ``_bundle``).

        With a ``session`` id and ``record`` (the default), the HIGH risks included are
        remembered (RISK_SURFACED), so each is surfaced at least once per session even when
        the budget is tight. ``record=False`` reads only: a caller that may still leave the
        bundle out (the context assembler sizing its block, a preview) records with
        :meth:`mark_surfaced` once the bundle is actually delivered; recording for a bundle
        nobody saw would mark its risks as seen and keep them out of the rest of the session.
        """
        with self._read() as tx:
            result = assemble(
                tx,
                namespace=self._rt.namespace,
                now=self._now(),
                counter=self.counter,
                query=query,
                session=session,
                budget=budget,
                mode=mode,
                include_low=include_low,
                include_inferred=include_inferred,
                filters={k: v for k, v in filters.items() if v is not None},
                semantic=self._semantic,
            )
        if session and record:
            self.mark_surfaced(result, session)
        return result

    def mark_surfaced(self, result: Bundle, session: str) -> list[str]:
        """Record (RISK_SURFACED) that the HIGH risks in ``result`` reached ``session``; call it
        only for a bundle that was delivered. Returns the ids newly recorded."""
        risks = [
            i.intent.id
            for i in result.items
            if i.intent.intent_type is IntentType.RISK and i.intent.priority is Priority.HIGH
        ]
        if not risks or not session:
            return []
        recorded: list[str] = []
        with self._rt.store.transaction() as tx:
            self._require(Permission.READ, tx)
            for intent_id in risks:
                seen = tx.one(
                    "SELECT 1 AS x FROM goals_risk_sessions WHERE namespace = ? AND session = ? AND intent_id = ?",
                    (self._rt.namespace, session, intent_id),
                )
                if seen is None:
                    emit(self._rt, tx, "RISK_SURFACED", intent_id, {"intent_id": intent_id, "session": session})
                    recorded.append(intent_id)
        return recorded

    # -- editing ------------------------------------------------------------------

    def edit(
        self,
        intent_id: str,
        *,
        text: str | None = None,
        type: IntentType | str | None = None,
        owner: Any = None,
        due: Any = None,
        priority: Priority | str | None = None,
        stakeholders: Any = None,
        completion_criteria: Any = None,
        context_note: Any = None,
        salience: float | None = None,
        structured_value: Any = None,
        expected_version: int | None = None,
        awaiting_review: bool = False,
    ) -> Intent:
        """Change fields of a live intent (one INTENT_UPDATE); of an EXPIRED risk, only lower its
        priority (the downgrade of RFC-0013 section 8). ``None`` leaves a field as it is;
        ``CLEAR`` empties an optional one (owner, due, stakeholders, criteria, note, structured value).
        ``awaiting_review`` is the review queue's edit: it refuses (409) an intent that was
        confirmed meanwhile, so correcting a candidate never rewrites what someone already decided."""
        changes: dict[str, Any] = {}
        if text is not None:
            changes["value"] = clean_text(text, "text")
        if type is not None:
            changes["intent_type"] = parse_enum(IntentType, type, "type").value
        if priority is not None:
            changes["priority"] = parse_enum(Priority, priority, "priority").value
        if salience is not None:
            if not 0.0 <= float(salience) <= 1.0:
                raise InvalidInput(f"salience {salience} is outside [0, 1]", where="salience")
            changes["salience"] = float(salience)
        if owner is not None:
            changes["owner"] = None if owner is CLEAR else actor_text(owner)
        if due is not None:
            target = None if due is CLEAR else to_time(due, "due")
            if target is not None and target <= format_time(self._now()):
                raise InvalidInput(f"the target date {target} has already passed", where="due")
            changes["target_completion"] = target
        if stakeholders is not None:
            changes["stakeholders"] = [] if stakeholders is CLEAR else people(stakeholders)
        for name, value in (
            ("completion_criteria", completion_criteria),
            ("context_note", context_note),
            ("structured_value", structured_value),
        ):
            if value is not None:
                changes[name] = None if value is CLEAR else value
        if not changes:
            raise InvalidInput("nothing to change", where=intent_id)
        with self._write() as tx:
            intent = load_for_write(self._rt, tx, intent_id, expected_version)
            guard_candidate(self._rt, intent, "edit")
            if "owner" in changes:
                guard_owner_change(self._rt, intent, changes["owner"])
            guard_persons_words(self._rt, intent, changes)
            if awaiting_review and intent.epistemic_type is not EpistemicType.INFERRED:
                raise InvalidTransition(
                    f"review of {intent_label(intent.id)}",
                    intent.epistemic_type.value,
                    "edited",
                    detail="it is no longer awaiting review; edit it as a goal (`intently goal edit`, PATCH /goals/ID)",
                )
            if intent.epistemic_type is EpistemicType.DEPRECATED:
                raise InvalidTransition(
                    intent_label(intent.id), "dismissed", "edited", detail="a closed or dismissed intent is not edited"
                )
            if intent.state.final and not _is_risk_downgrade(intent, changes):
                detail = "a closed or dismissed intent is not edited"
                if intent.is_risk and intent.state is IntentState.EXPIRED:
                    detail = "an expired risk can only be downgraded (a lower priority, nothing else)"
                elif intent.state is IntentState.EXPIRED:
                    detail = "reopen it with a new target date first (intently goal reopen ID --due DATE)"
                raise InvalidTransition(intent_label(intent.id), intent.state.value, "edited", detail=detail)
            emit(self._rt, tx, "INTENT_UPDATE", intent_id, {"changes": changes, "version": intent.version + 1})
            return self._as_written(tx, intent_id)

    # -- lifecycle ----------------------------------------------------------------

    def complete(
        self,
        intent_id: str,
        *,
        summary: bool = True,
        reason: str | None = None,
        expected_version: int | None = None,
        evidence_ids: Sequence[str] | None = None,
    ) -> Intent:
        """ACTIVE (or, for a risk, EXPIRED) -> COMPLETED (archived); by default also a SUMMARY at
        half the current salience. An expired risk is closed out this way (RFC-0013 section 8).

        An agent's (or a tool's) completion of a person's goal is kept as a completion claim
        (``reason`` its note, ``evidence_ids`` what shows the work is done) and the goal stays
        ACTIVE until the person confirms or rejects it; the call raises
        :class:`CompletionClaimed` (a ``PermissionDenied``: the goal did not complete) saying
        "claimed, awaits <person>", with the claim and the goal. A person's completion of a
        goal with an open claim confirms the claim (the transition credits it)."""
        with self._write() as tx:
            awaits = lifecycle.complete(
                self._rt, tx, intent_id, summary, reason, expected_version, evidence_ids=evidence_ids
            )
            intent = self._as_written(tx, intent_id)
        if awaits is not None:  # committed: the claim is kept, the goal is not completed
            raise self._claimed(intent, awaits)
        return intent

    def _claimed(self, intent: Intent, awaits: str) -> CompletionClaimed:
        claim = intent.completion_claim or {}
        return CompletionClaimed(
            f"claimed, awaits {awaits}: {self._rt.actor} cannot complete {intent_label(intent.id)} (owner: "
            f"{intent.owner or 'none'}): it is {awaits}'s goal, and ending a person's goal is their decision, not "
            f"an agent's (RFC-0013 section 6); the completion claim ({claim.get('id')}) is kept on the goal, which "
            f"stays {intent.state.value} until {awaits} decides: {awaits} runs `intently goal done {intent.id}` "
            f"(or Confirm in the web console) to confirm it, or `intently goal reject {intent.id}` to reject it",
            awaits=awaits,
            claim=claim,
            intent=intent,
        )

    def claim_completion(
        self,
        intent_id: str,
        *,
        note: str | None = None,
        evidence_ids: Sequence[str] | None = None,
        expected_version: int | None = None,
    ) -> Intent:
        """An agent says a person's goal is done: one COMPLETION_CLAIMED (``note`` and
        ``evidence_ids`` in it), the goal stays ACTIVE with its ``completion_claim`` until the
        person confirms or rejects it. Returns the goal. Refused (409) to anyone who may complete
        it themselves: a person, or the agent that owns it."""
        with self._write() as tx:
            intent = load_for_write(self._rt, tx, intent_id, expected_version)
            guard_candidate(self._rt, intent, "complete")
            record_claim(self._rt, tx, intent, note, evidence_ids)
            return self._as_written(tx, intent_id)

    def confirm_completion(
        self, intent_id: str, *, summary: bool = True, reason: str | None = None, expected_version: int | None = None
    ) -> Intent:
        """A person confirms the open completion claim on their goal: it completes (as
        :meth:`complete`), its transition crediting the claim. Refused to an agent or a tool
        (403), and when no claim is open (409)."""
        with self._write() as tx:
            lifecycle.complete(self._rt, tx, intent_id, summary, reason, expected_version, confirming=True)
            return self._as_written(tx, intent_id)

    def reject_completion(
        self, intent_id: str, *, reason: str | None = None, expected_version: int | None = None
    ) -> Intent:
        """A person rejects the open completion claim: the claim is closed (one
        COMPLETION_CLAIM_REJECTED, with ``reason``) and the goal stays as it was. A person only."""
        with self._write() as tx:
            intent = load_for_write(self._rt, tx, intent_id, expected_version)
            reject_claim(self._rt, tx, intent, reason)
            return self._as_written(tx, intent_id)

    def cancel(self, intent_id: str, *, reason: str | None = None, expected_version: int | None = None) -> Intent:
        """ACTIVE or ON_HOLD (or, for a risk, EXPIRED) -> CANCELLED (archived). Never cascades:
        each dependent not yet finished (EXPIRED ones too: they can be reopened) gets a
        DEPENDENCY_CANCELLED event and stays as it was until its owner decides."""
        with self._write() as tx:
            lifecycle.cancel(self._rt, tx, intent_id, reason, expected_version)
            return self._as_written(tx, intent_id)

    def hold(self, intent_id: str, *, reason: str | None = None, expected_version: int | None = None) -> Intent:
        """ACTIVE -> ON_HOLD."""
        with self._write() as tx:
            lifecycle.move(self._rt, tx, intent_id, IntentState.ON_HOLD, reason, expected_version)
            return self._as_written(tx, intent_id)

    def resume(
        self,
        intent_id: str,
        *,
        due: datetime | str | None = None,
        reason: str | None = None,
        expected_version: int | None = None,
    ) -> Intent:
        """ON_HOLD -> ACTIVE, optionally with a new target date (``due``, in the future).

        An intent whose target passed while it was on hold needs a new one: resumed as it was,
        it would be ACTIVE and overdue, and the organiser would expire it on the next read
        (after which only its owner can reopen it). That resume is refused, naming the date."""
        target = to_time(due, "due")
        if target is not None and target <= format_time(self._now()):
            raise InvalidInput(f"the target date {target} has already passed", where="due")
        with self._write() as tx:
            lifecycle.resume(self._rt, tx, intent_id, target, reason, expected_version)
            return self._as_written(tx, intent_id)

    def reopen(
        self, intent_id: str, *, due: datetime | str, reason: str | None = None, expected_version: int | None = None
    ) -> Intent:
        """EXPIRED -> ACTIVE with a new target date; only the intent's owner (or the home's owner)."""
        target = to_time(due, "due")
        if target is None:
            raise InvalidInput("reopening needs a new target date", where="due")
        with self._write() as tx:
            lifecycle.reopen(self._rt, tx, intent_id, target, reason, expected_version)
            return self._as_written(tx, intent_id)

    def archive(self, intent_id: str, *, reason: str | None = None, expected_version: int | None = None) -> Intent:
        """Put an EXPIRED intent out of view (lifecycle ARCHIVED, state still EXPIRED; one
        INTENT_ARCHIVED). RFC-0013 draws no cancel from EXPIRED; this is how an expired goal
        nobody will pursue leaves the open list. Not for risks (complete or cancel those); only
        the intent's owner or the home's owner; ``reopen`` still brings it back."""
        with self._write() as tx:
            lifecycle.archive(self._rt, tx, intent_id, reason, expected_version)
            return self._as_written(tx, intent_id)

    def supersede(
        self,
        intent_id: str,
        *,
        by: str | None = None,
        text: str | None = None,
        reason: str | None = None,
        expected_version: int | None = None,
    ) -> Intent:
        """-> SUPERSEDED, pointing at ``by`` (an existing intent) or at a new one made from ``text``
        (same type, priority, owner and target). The replacement takes its place in the dependency
        graph: live dependents now wait for it, and it for the live prerequisites. Returns it."""
        with self._write() as tx:
            replacement = lifecycle.supersede(self._rt, tx, intent_id, by, text, reason, expected_version)
            return self._as_written(tx, replacement)

    # -- dependencies -------------------------------------------------------------

    def depend(self, intent_id: str, on: str, *, expected_version: int | None = None) -> Intent:
        """``intent_id`` depends on ``on`` (so ``on`` blocks it); refused if it would close a cycle
        or break the depth (10) or fan-in (20) limit."""
        with self._write() as tx:
            add_edge(self._rt, tx, intent_id, on, expected_version)
            return self._as_written(tx, intent_id)

    def depend_many(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Add many ``(dependent, prerequisite)`` edges in one transaction, each checked as by
        :meth:`depend`; the first refused edge rolls the whole batch back."""
        with self._write() as tx:
            for dependent, prerequisite in pairs:
                add_edge(self._rt, tx, dependent, prerequisite, None)

    def block(self, intent_id: str, blocks: str, *, expected_version: int | None = None) -> Intent:
        """``intent_id`` blocks ``blocks``: the same edge as ``depend(blocks, intent_id)``."""
        with self._write() as tx:
            current = load_for_write(self._rt, tx, intent_id, expected_version)
            add_edge(self._rt, tx, blocks, current.id, None)
            return self._as_written(tx, intent_id)

    def undepend(self, intent_id: str, on: str, *, expected_version: int | None = None) -> Intent:
        with self._write() as tx:
            dependent = load_for_write(self._rt, tx, intent_id, expected_version)
            prerequisite = load_for_write(self._rt, tx, on, None)
            if prerequisite.id not in dependent.depends_on:
                raise NotFound(f"{dependent.id} does not depend on {prerequisite.id}")
            remove_edge(self._rt, tx, dependent.id, prerequisite.id)
            return self._as_written(tx, intent_id)

    # -- organiser ----------------------------------------------------------------

    def organise(self, *, budget_ms: float = 5000.0) -> OrganiseReport:
        """Expire overdue intents and escalate expired risks now (needs write access)."""
        started = time.perf_counter()
        with self._rt.store.transaction(write=False) as tx:
            self._require(Permission.WRITE, tx)
        report = organise(self._rt, budget_ms=budget_ms)
        report.elapsed_ms = (time.perf_counter() - started) * 1000
        return report

    organize = organise
