"""The :class:`Triggers` facade: create, confirm, list, update, snooze, cancel, match, tick.

Who may do what (per namespace, from :mod:`intently.access`):

- ``manage-reminders`` creates armed intents, confirms proposals, updates, snoozes and
  cancels what it can see;
- ``write`` without it (and extraction, always) only *proposes*: the intent waits in
  ``pending`` until a manager confirms it; a proposer may withdraw its own proposal;
- ``read`` is enough to match turns (the agent's context hook) and to list what one sees;
  a turn reported as another sender's needs ``manage-reminders`` (:meth:`Triggers._check_sender`).

What a caller sees: intents it created or confirmed, intents scoped to it as sender, and,
for managers, pending proposals awaiting review; an admin (or the home's owner) sees everything. Anything
else is :class:`NotFound`, never a hint that it exists.
"""

from __future__ import annotations

import builtins
import hashlib
import math
from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..access import Permission
from ..core.actors import SYSTEM, principal_of
from ..core.clock import format_time, parse_duration, parse_time
from ..core.errors import InvalidInput, InvalidTransition, NotFound, PermissionDenied
from ..core.ids import new_id
from ..store import Transaction
from ._decide import TurnContext, decide
from ._event import with_event_entries
from ._index import EntryHit, turn_grams
from ._live import LiveIndex, live_index
from ._matcher import rank
from ._model import (
    DEFAULT_COOLDOWN,
    DEFAULT_EXPIRY,
    DEFAULT_MAX_FIRES,
    MAX_ENTRIES,
    MAX_EVENT_CHARS,
    MAX_REMINDER_CHARS,
    IntentState,
    Scope,
    StandingIntent,
    validate_entries,
    validate_text,
)
from ._result import MatchResult
from ._store import OPS, POLICY_VERSION, list_rows, load_fires, load_intent, load_intents
from ._terms import clauses
from ._timeonly import SCHEDULER_HINT, check_not_time_only, mentions_clock_time

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = ["Triggers"]

_TERMINAL = (IntentState.DONE, IntentState.CANCELLED, IntentState.EXPIRED)
_LIVE_VALUES = [IntentState.PENDING.value, IntentState.ARMED.value, IntentState.FIRED.value]

Duration = str | timedelta | int

#: The longest cooldown, expiry or snooze given as a duration. Far beyond any reminder's life,
#: and far enough from the year 9999 that ``now + duration`` always fits a datetime: a cooldown
#: of ``99999999d`` was accepted, then every fire of it raised OverflowError, which took the
#: whole standing_intents section out of every context block of the namespace.
MAX_DURATION = timedelta(days=36_500)
#: The largest fire budget: the column is a 4-byte INTEGER on PostgreSQL, where a larger one
#: failed as a StoreError after SQLite had accepted it.
MAX_FIRES = 1_000_000


def _bounded(delta: timedelta, where: str) -> timedelta:
    if delta > MAX_DURATION:
        raise InvalidInput(f"at most {MAX_DURATION.days} days (100 years)", where=where)
    return delta


def _parse_span(text: str, where: str) -> timedelta:
    """``parse_duration`` with its overflow (``1e30d``) reported as bad input, then bounded."""
    try:
        delta = parse_duration(text, where=where)
    except (OverflowError, ValueError) as exc:
        raise InvalidInput(f"duration {text!r} is out of range", where=where) from exc
    return _bounded(delta, where)


def _duration(value: Duration, where: str) -> timedelta:
    if isinstance(value, timedelta):
        delta = value
    elif isinstance(value, int) and not isinstance(value, bool):
        try:
            delta = timedelta(seconds=value)
        except OverflowError as exc:
            raise InvalidInput(f"{value} seconds is out of range", where=where) from exc
    elif isinstance(value, str):
        delta = _parse_span(value, where)
    else:
        raise InvalidInput(
            f"expected a duration ('24h'), a number of seconds or a timedelta, got {type(value).__name__}", where=where
        )
    if delta < timedelta(0):
        raise InvalidInput("must not be negative", where=where)
    return _bounded(delta, where)


def _seconds(delta: timedelta) -> int:
    """A cooldown in whole seconds, rounded up: ``0.5s`` used to be stored as 0, no cooldown at
    all, so the intent fired on every turn until its budget was spent."""
    return math.ceil(delta.total_seconds())


#: ``when``: one entry, or a list of entries (each a string of words or a list of terms).
When = str | Sequence[str | Sequence[str]]


def _strings(value: str | Sequence[str], where: str) -> list[str]:
    """A list of strings, where one bare string is one item, never its letters.

    ``str`` is itself a ``Sequence[str]``, so ``when="deploy"`` used to be stored as the six
    entries d, e, p, l, o, y (firing on "d e p l o y", never on "deploy") and type checkers
    could not see it. One string therefore means one item, the type hints say so, and anything
    that is not a string or a list of strings is :class:`InvalidInput` naming the place."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, Sequence):
        raise InvalidInput(f"expected a string or a list of strings, got {type(value).__name__}", where=where)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise InvalidInput(f"expected a string, got {type(item).__name__}", where=f"{where}[{i}]")
    return list(items)


def _entries(when: When) -> tuple[tuple[str, ...], ...]:
    """``when`` as validated entries: one string is one entry; a list holds entries, each a
    string of words or a list of terms."""
    items = [when] if isinstance(when, str) else when
    if not isinstance(items, Sequence):
        raise InvalidInput(f"expected an entry or a list of entries, got {type(when).__name__}", where="when")
    return validate_entries([_strings(item, f"when[{i}]") for i, item in enumerate(items)])


def _exclusions(exclude: str | Sequence[str]) -> list[str]:
    """Exclusion terms, each one word or phrase a turn can hold: one with no word in it
    ("🚀", "-") or with a clause break inside ("foo::bar", "deploy, then": a turn never has
    those words adjacent) was stored and could never veto a fire, silently."""
    out: list[str] = []
    for i, item in enumerate(_strings(exclude, "exclude")):
        text = validate_text(item, f"exclude[{i}]", 120, required=True)
        parts = clauses(text.strip('"“”'))
        if not parts:
            raise InvalidInput(f"{text!r} has no words to match", where=f"exclude[{i}]")
        if len(parts) > 1:
            raise InvalidInput(
                f"{text!r} is cut by punctuation into {' / '.join(parts)}: a turn never holds those words "
                "adjacent, so it could never veto a fire; give one word or phrase without it",
                where=f"exclude[{i}]",
            )
        out.append(text)
    return out


def _scope(scope: Scope | str | Sequence[str]) -> Scope:
    """A :class:`Scope` from ``channel:X`` / ``conversation:Y`` / ``sender:Z`` items; one string is one item."""
    return scope if isinstance(scope, Scope) else Scope.parse(_strings(scope, "scope"))


def _state(value: str | IntentState) -> IntentState:
    """A state filter as typed (``armed``, ``ARMED``, ``IntentState.ARMED``); anything else is
    :class:`InvalidInput` naming ``state`` and the choices, not a ``ValueError`` that the CLI
    can only report as an internal error."""
    if isinstance(value, IntentState):
        return value
    try:
        return IntentState(str(value).strip().lower())
    except ValueError:
        choices = ", ".join(s.value for s in IntentState)
        raise InvalidInput(f"unknown state {value!r} (one of {choices})", where="state") from None


def _max_fires(value: int) -> int:
    """A fire budget: a whole number of at least 1 (``"3"`` or ``True`` is refused, not compared)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidInput(f"max fires must be a whole number, got {type(value).__name__}", where="max_fires")
    if value < 1:
        raise InvalidInput("max fires must be at least 1", where="max_fires")
    if value > MAX_FIRES:
        raise InvalidInput(f"max fires must be at most {MAX_FIRES:,}", where="max_fires")
    return value


class Triggers:
    """Standing intents of one namespace, seen by one actor."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime

    # -- helpers -------------------------------------------------------------------------

    @property
    def _ns(self) -> str:
        return self._rt.namespace

    def _now(self) -> datetime:
        return self._rt.clock.now()

    def _live(self) -> LiveIndex:
        return live_index(self._rt.store, self._ns, self._rt.home.path)

    def _perms(self, tx: Transaction) -> set[Permission]:
        held = self._rt.access.permissions(self._rt.actor, self._ns, tx)
        if Permission.READ not in held:
            raise NotFound(f"namespace {self._ns!r} not found")
        return held

    def _visible(self, intent: StandingIntent, held: set[Permission]) -> bool:
        # An agent acting for a person (the MCP server) sees what that person made or is reminded
        # of, and the person sees what their agent made for them.
        me = str(self._rt.actor)
        theirs = {intent.creator, intent.confirmed_by, intent.scope.sender}
        theirs |= {principal_of(who) for who in theirs if who}
        if Permission.ADMIN in held or {me, principal_of(me)} & theirs:
            return True
        return Permission.MANAGE_REMINDERS in held and intent.state is IntentState.PENDING

    def _get(self, tx: Transaction, intent_id: str, held: set[Permission]) -> StandingIntent:
        """The intent ``intent_id`` names: its id, or a unique prefix or suffix of at least 6
        characters among those this actor may see (lists show the last 8, as for goals)."""
        ref = intent_id.strip()
        intent = load_intent(tx, self._ns, ref)
        if intent is None and len(ref) >= 6:
            bare = ref.replace("%", "").replace("_", "")
            rows = tx.query(
                "SELECT id FROM triggers_intents WHERE namespace = ? AND (id LIKE ? OR id LIKE ?) ORDER BY id",
                (self._ns, bare + "%", "%" + bare),
            )
            found = [i for i in (load_intent(tx, self._ns, str(r["id"])) for r in rows) if i and self._visible(i, held)]
            if len(found) > 1:
                raise NotFound(f"{intent_id!r} matches several standing intents; give more of the id")
            intent = found[0] if found else None
        if intent is None or not self._visible(intent, held):
            raise NotFound(f"no standing intent {intent_id!r} (give the id, or at least 6 of its last characters)")
        return intent

    def _append(self, tx: Transaction, op: str, target: str, payload: dict[str, Any], actor: str | None = None) -> None:
        operation = self._rt.log.append(
            tx,
            namespace=self._ns,
            actor=actor or str(self._rt.actor),
            op=op,
            target=target,
            payload=payload,
            policy_version=POLICY_VERSION,
        )
        OPS[op](tx, operation)
        tx.on_commit(self._live().invalidate)

    def _expiry(self, expires: str | datetime | timedelta | None, now: datetime) -> str:
        if expires is None:
            when = now + DEFAULT_EXPIRY
        elif isinstance(expires, datetime):
            # Naive means UTC, as for a time given as text (:func:`parse_time`); compared as
            # given, it raised TypeError out of ``add`` and ``snooze`` instead of being read.
            when = expires.replace(tzinfo=UTC) if expires.tzinfo is None else expires
        elif isinstance(expires, timedelta):
            when = now + _bounded(expires, "expires")
        elif not isinstance(expires, str):
            raise InvalidInput(
                f"expected a duration ('90d'), a date or time, or a timedelta, got {type(expires).__name__}",
                where="expires",
            )
        else:
            text = expires.strip()
            try:
                span = parse_duration(text, where="expires")
            except InvalidInput:
                when = parse_time(text, where="expires")
            except (OverflowError, ValueError) as exc:
                raise InvalidInput(f"duration {text!r} is out of range", where="expires") from exc
            else:
                when = now + _bounded(span, "expires")
        if when <= now:
            raise InvalidInput(f"expiry {format_time(when)} is not in the future", where="expires")
        return format_time(when)

    # -- creating ------------------------------------------------------------------------

    def add(
        self,
        reminder: str,
        *,
        when: When,
        event: str = "",
        scope: Scope | str | Sequence[str] | None = None,
        expires: str | datetime | timedelta | None = None,
        max_fires: int = DEFAULT_MAX_FIRES,
        cooldown: Duration = DEFAULT_COOLDOWN,
        negation_guard: bool = True,
        exclude: str | Sequence[str] = (),
        propose: bool = False,
        source: str = "user",
        event_entries: bool = True,
    ) -> StandingIntent:
        """Create a standing intent: armed for a reminder manager, else a pending proposal.

        ``when`` lists entries, alternatives of each other; an entry is a string of words
        that must all come up ("launch checklist"; quote a phrase to need it verbatim) or a
        list of such terms. One string is one entry (``when="deploy"`` is ``["deploy"]``),
        as one string is one item of ``scope`` and ``exclude``. A clock time ("Friday at 9")
        is refused: use a scheduler.
        With ``event_entries`` (the default), an event of the shape "When X or Y comes up"
        adds X and Y as entries too; they are stored and listed like the others.
        """
        text = validate_text(reminder, "reminder", MAX_REMINDER_CHARS, required=True)
        if not when:
            if mentions_clock_time(text):
                raise InvalidInput(f"{text!r} names a clock time: {SCHEDULER_HINT}", where="reminder")
            raise InvalidInput("at least one trigger entry (--when) is required", where="when")
        entries = _entries(when)
        check_not_time_only(entries)
        about = validate_text(event, "event", MAX_EVENT_CHARS, required=False)
        if event_entries:
            entries = with_event_entries(entries, about, limit=MAX_ENTRIES, usable=self._live().matcher.matchable)
        where = _scope(scope or ())
        fires = _max_fires(max_fires)
        cool = _duration(cooldown, "cooldown")
        excluded = _exclusions(exclude)
        self._check_compiles(entries)
        now = self._now()
        with self._rt.store.transaction() as tx:
            held = self._perms(tx)
            manager = Permission.MANAGE_REMINDERS in held
            if not manager and Permission.WRITE not in held:
                raise PermissionDenied(
                    f"{self._rt.actor} may not propose standing intents in namespace {self._ns!r} "
                    "(needs write or manage-reminders)"
                )
            pending = propose or not manager or source == "extraction"
            intent_id = new_id(now=now)
            payload = {
                "reminder": text,
                "event": about,
                "entries": [list(e) for e in entries],
                "exclusions": excluded,
                "negation_guard": negation_guard,
                "channel": where.channel,
                "conversation": where.conversation,
                "sender": where.sender,
                "state": (IntentState.PENDING if pending else IntentState.ARMED).value,
                "expires_at": self._expiry(expires, now),
                "max_fires": fires,
                "cooldown_seconds": _seconds(cool),
                "source": source,
            }
            self._append(tx, "TRIGGER_CREATE", intent_id, payload)
            created = load_intent(tx, self._ns, intent_id)
        assert created is not None
        return created

    def propose(self, reminder: str, *, when: When, source: str = "extraction", **kw: Any) -> StandingIntent:
        """A pending intent that a reminder manager must confirm (extraction uses this)."""
        return self.add(reminder, when=when, propose=True, source=source, **kw)

    def _check_compiles(self, entries: tuple[tuple[str, ...], ...]) -> None:
        matcher = self._live().matcher
        for i, entry in enumerate(entries):
            if not matcher.matchable(entry):
                raise InvalidInput(f"entry {' '.join(entry)!r} has no words to match", where=f"when[{i}]")

    # -- reading -------------------------------------------------------------------------

    def show(self, intent_id: str) -> StandingIntent:
        with self._rt.store.transaction(write=False) as tx:
            held = self._perms(tx)
            intent = self._get(tx, intent_id, held)
            fires = load_fires(tx, intent.id)
        return replace(intent, fires=fires)

    def list(
        self,
        *,
        state: str | IntentState | None = None,
        include_closed: bool = False,
        channel: str | None = None,
        conversation: str | None = None,
        sender: str | None = None,
    ) -> builtins.list[StandingIntent]:
        """What the caller may see, oldest first; runs maintenance first (expiry, re-arming)."""
        states = [_state(state).value] if state else (None if include_closed else _LIVE_VALUES)
        with self._rt.store.transaction() as tx:
            held = self._perms(tx)
            self._maintain(tx, self._now())
            rows = list_rows(tx, self._ns, states)
        return [
            r
            for r in rows
            if self._visible(r, held)
            and (channel is None or r.scope.channel == channel)
            and (conversation is None or r.scope.conversation == conversation)
            and (sender is None or r.scope.sender == sender)
        ]

    # -- changing ------------------------------------------------------------------------

    def _managed(self, tx: Transaction, intent_id: str) -> StandingIntent:
        held = self._perms(tx)
        intent = self._get(tx, intent_id, held)
        if Permission.MANAGE_REMINDERS not in held:
            raise PermissionDenied(f"{self._rt.actor} lacks manage-reminders in namespace {self._ns!r}")
        return intent

    def confirm(self, intent_id: str) -> StandingIntent:
        """Arm a pending proposal (needs manage-reminders)."""
        with self._rt.store.transaction() as tx:
            intent = self._managed(tx, intent_id)
            self._maintain(tx, self._now())
            intent = self._reload(tx, intent.id)
            if intent.state is not IntentState.PENDING:
                raise InvalidTransition(f"standing intent {intent.id}", intent.state.value, IntentState.ARMED.value)
            self._append(tx, "TRIGGER_CONFIRM", intent.id, {"from": intent.state.value})
            return self._reload(tx, intent.id)

    def cancel(self, intent_id: str) -> StandingIntent:
        """Cancel explicitly; the only way an intent is cancelled. A proposer may withdraw its own."""
        with self._rt.store.transaction() as tx:
            held = self._perms(tx)
            intent = self._get(tx, intent_id, held)
            own_proposal = intent.state is IntentState.PENDING and intent.creator == str(self._rt.actor)
            if Permission.MANAGE_REMINDERS not in held and not own_proposal:
                raise PermissionDenied(f"{self._rt.actor} lacks manage-reminders in namespace {self._ns!r}")
            if intent.state in _TERMINAL:
                raise InvalidTransition(f"standing intent {intent.id}", intent.state.value, IntentState.CANCELLED.value)
            self._append(tx, "TRIGGER_CANCEL", intent.id, {"from": intent.state.value, "to": "cancelled"})
            return self._reload(tx, intent.id)

    def snooze(self, intent_id: str, until: str | datetime | timedelta | None) -> StandingIntent:
        """Silence an intent until a time (or for a duration, ``"2d"``) without spending its
        budget or moving its state; ``None`` lifts the snooze."""
        now = self._now()
        stamp = None if until is None else self._expiry(until, now)
        with self._rt.store.transaction() as tx:
            intent = self._managed(tx, intent_id)
            self._maintain(tx, now)  # an intent past its expiry is expired first, not edited
            intent = self._reload(tx, intent.id)
            if intent.state in _TERMINAL:
                raise InvalidTransition(f"standing intent {intent.id}", intent.state.value, "snoozed")
            self._append(tx, "TRIGGER_SNOOZE", intent.id, {"until": stamp})
            return self._reload(tx, intent.id)

    def update(
        self,
        intent_id: str,
        *,
        reminder: str | None = None,
        event: str | None = None,
        when: When | None = None,
        exclude: str | Sequence[str] | None = None,
        scope: Scope | str | Sequence[str] | None = None,
        expires: str | datetime | timedelta | None = None,
        max_fires: int | None = None,
        cooldown: Duration | None = None,
        negation_guard: bool | None = None,
    ) -> StandingIntent:
        """Change fields of a live intent; the change is one ``TRIGGER_UPDATE`` operation."""
        now = self._now()
        fields: dict[str, Any] = {}
        if reminder is not None:
            fields["reminder"] = validate_text(reminder, "reminder", MAX_REMINDER_CHARS, required=True)
        if event is not None:
            fields["event"] = validate_text(event, "event", MAX_EVENT_CHARS, required=False)
        if when is not None:
            entries = _entries(when)
            check_not_time_only(entries)
            self._check_compiles(entries)
            fields["entries"] = [list(e) for e in entries]
        if exclude is not None:
            fields["exclusions"] = _exclusions(exclude)
        if scope is not None:
            where = _scope(scope)
            fields.update(channel=where.channel, conversation=where.conversation, sender=where.sender)
        if expires is not None:
            fields["expires_at"] = self._expiry(expires, now)
        if cooldown is not None:
            fields["cooldown_seconds"] = _seconds(_duration(cooldown, "cooldown"))
        if negation_guard is not None:
            fields["negation_guard"] = negation_guard
        if max_fires is not None:
            _max_fires(max_fires)
        with self._rt.store.transaction() as tx:
            intent = self._managed(tx, intent_id)
            self._maintain(tx, now)  # an intent past its expiry is expired first, not edited
            intent = self._reload(tx, intent.id)
            if intent.state in _TERMINAL:
                raise InvalidTransition(f"standing intent {intent.id}", intent.state.value, "updated")
            if max_fires is not None:
                if max_fires <= intent.fire_count:
                    raise InvalidInput(
                        f"max fires {max_fires} must exceed the {intent.fire_count} fires already spent",
                        where="max_fires",
                    )
                fields["max_fires"] = int(max_fires)
            if "cooldown_seconds" in fields and intent.state is IntentState.FIRED and intent.last_fired_at:
                last = parse_time(intent.last_fired_at)
                fields["rearm_at"] = format_time(last + timedelta(seconds=fields["cooldown_seconds"]))
            if not fields:
                return intent
            self._append(tx, "TRIGGER_UPDATE", intent.id, {"fields": fields})
            return self._reload(tx, intent.id)

    def _reload(self, tx: Transaction, intent_id: str) -> StandingIntent:
        intent = load_intent(tx, self._ns, intent_id)
        assert intent is not None
        return intent

    # -- maintenance ---------------------------------------------------------------------

    def tick(self) -> dict[str, int]:
        """Expire what is past its expiry and re-arm what has cooled down; counts per kind."""
        with self._rt.store.transaction() as tx:
            self._perms(tx)
            return self._maintain(tx, self._now())

    def _maintain(self, tx: Transaction, now: datetime) -> dict[str, int]:
        stamp = format_time(now)
        system = str(SYSTEM)
        expired = tx.query(
            "SELECT id, state FROM triggers_intents WHERE namespace = ? AND state IN (?, ?, ?) AND expires_at <= ? "
            "ORDER BY expires_at, id",
            (self._ns, *_LIVE_VALUES, stamp),
        )
        for row in expired:
            payload = {"from": str(row["state"]), "to": IntentState.EXPIRED.value}
            self._append(tx, "TRIGGER_EXPIRE", str(row["id"]), payload, actor=system)
        due = tx.query(
            "SELECT id FROM triggers_intents WHERE namespace = ? AND state = ? AND rearm_at <= ? ORDER BY rearm_at, id",
            (self._ns, IntentState.FIRED.value, stamp),
        )
        for row in due:
            self._append(tx, "TRIGGER_REARM", str(row["id"]), {"from": "fired", "to": "armed"}, actor=system)
        return {"expired": len(expired), "rearmed": len(due)}

    # -- matching ------------------------------------------------------------------------

    def match(
        self,
        text: str,
        *,
        channel: str | None = None,
        conversation: str | None = None,
        sender: str | None = None,
        fire: bool = True,
        budget: int | None = None,
        only: str | Collection[str] | None = None,
    ) -> MatchResult:
        """The standing intents this turn fires, most specific first, within the block limits.

        With ``fire=True`` the check and the fire happen in one write transaction against the
        stored rows (scope, expiry, cooldown and budget rechecked), so two processes that
        match the same turn fire an intent once; only the intents the block shows are
        charged. ``budget`` (tokens) further limits the block, its wrapper included.
        ``fire=False`` previews and changes nothing.

        ``only`` limits the turn to these intent ids: a caller that previewed first (the
        context assembler, which must know what fits before anything is charged) fires
        exactly what its preview showed, and nothing it then left out. An intent among them
        that another process fired in between is rechecked here and is neither shown nor
        charged twice.
        """
        if not isinstance(text, str):
            raise InvalidInput(f"the turn must be a string, got {type(text).__name__}", where="text")
        if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool) or budget < 0):
            raise InvalidInput(f"the token budget must be a whole number of at least 0, got {budget!r}", where="budget")
        keep = None if only is None else frozenset([only] if isinstance(only, str) else only)
        live = self._live()
        now = self._now()
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
        if not fire:
            with self._rt.store.transaction(write=False) as tx:
                held = self._perms(tx)
            self._check_sender(sender, held)
            live.maybe_sync(self._rt.store)
            turn = live.matcher.normalise(text)
            with live.lock:
                hits = self._raw_hits(live, turn, keep)
            with self._rt.store.transaction(write=False) as tx:  # the rows, not a cached copy
                intents = load_intents(tx, self._ns, [h.intent.id for h in hits])
            where = self._turn(now, channel, conversation, sender, budget, live)
            return self._disclosed(decide(hits, intents, where, fire=False)[0], intents, held)
        live.maybe_sync(self._rt.store)  # a first full load happens outside the write lock
        matcher = live.matcher
        turn = matcher.normalise(text)
        with self._rt.store.transaction() as tx:
            held = self._perms(tx)
            self._check_sender(sender, held)
            self._maintain(tx, now)
            live.sync(tx)
            if live.matcher is not matcher:  # rebuilt (synonyms changed): normalise again
                turn = live.matcher.normalise(text)
            with live.lock:
                hits = self._raw_hits(live, turn, keep)
            intents = load_intents(tx, self._ns, [h.intent.id for h in hits])
            where = self._turn(now, channel, conversation, sender, budget, live)
            result, charged = decide(hits, intents, where, fire=True)
            for entry_hit in charged:
                self._fire(tx, intents[entry_hit.intent.id], entry_hit, now, digest, channel, conversation, sender)
            live.sync(tx)
        return self._disclosed(result, intents, held)

    def _check_sender(self, sender: str | None, held: set[Permission]) -> None:
        """Refuse a turn reported as someone else's, unless the caller relays turns for others.

        ``sender`` decides which sender-scoped reminders fire, so a reader who could name any
        sender could spend (and read) another person's reminder: ``match(..., sender="user:bob")``
        fired Bob's ``sender:user:bob`` intent for anyone. A caller reports turns as itself, or
        as the person its agent acts for (the MCP server, ``agent:mcp for user:alice``). Naming
        another sender is what a harness does when it relays a group chat, where it knows who
        spoke: that is reminder management, so it needs ``manage-reminders`` (the owner and an
        admin hold it), the permission that may already see, change and cancel reminders."""
        if sender is None or Permission.MANAGE_REMINDERS in held:
            return
        me = str(self._rt.actor)
        if sender in (me, principal_of(me)):
            return
        raise PermissionDenied(
            f"sender {sender!r}: {me} may report a turn only as its own (sender {principal_of(me)!r} or none); "
            f"reporting another sender's turn needs manage-reminders in namespace {self._ns!r}"
        )

    def _disclosed(self, result: MatchResult, intents: dict[str, StandingIntent], held: set[Permission]) -> MatchResult:
        """``result`` without the hits this caller may neither see nor fire.

        Firing is not seeing: an intent that may fire on this turn is reported (it is what
        the turn's block shows, or would show with more room). One that may not fire here
        (scoped to another sender or channel, snoozed, cooling down) is reported only to
        those who may see it (:meth:`_visible`): a reader's ``trigger test`` used to list
        another person's sender-scoped reminder, its text, id and scope, as "out of scope",
        although ``show`` and ``list`` answer that it does not exist.
        """
        kept = tuple(h for h in result.hits if h.eligible or (h.id in intents and self._visible(intents[h.id], held)))
        return result if len(kept) == len(result.hits) else replace(result, hits=kept)

    def test(
        self,
        text: str,
        *,
        channel: str | None = None,
        conversation: str | None = None,
        sender: str | None = None,
    ) -> MatchResult:
        """Which entry would fire on ``text`` and why, without firing or changing anything."""
        return self.match(text, channel=channel, conversation=conversation, sender=sender, fire=False)

    def index_status(self) -> dict[str, Any]:
        """The matching index of this process: how many intents, at which change sequence,
        built how (``snapshot``: loaded from the home's ``index/`` folder plus the changes
        since; ``store``: rebuilt from the rows), and where its snapshot lives."""
        with self._rt.store.transaction(write=False) as tx:
            self._perms(tx)
        live = self._live()
        live.maybe_sync(self._rt.store)
        with live.lock:
            return {
                "intents": len(live.matcher.index),
                "seq": live.seq,
                "origin": live.origin,
                "snapshot": str(live.snapshot_file),
            }

    def _turn(
        self,
        now: datetime,
        channel: str | None,
        conversation: str | None,
        sender: str | None,
        budget: int | None,
        live: LiveIndex,
    ) -> TurnContext:
        cfg = self._rt.config.triggers
        return TurnContext(
            now=format_time(now),
            channel=channel,
            conversation=conversation,
            sender=sender,
            max_shown=cfg.max_shown,
            max_chars=cfg.max_chars,
            budget=budget,
            problems=tuple(live.matcher.synonyms.problems),
        )

    @staticmethod
    def _raw_hits(live: LiveIndex, turn: Any, keep: frozenset[str] | None = None) -> builtins.list[EntryHit]:
        index = live.matcher.index
        hits = rank(index.match(turn_grams(turn, index.lengths)))
        return hits if keep is None else [h for h in hits if h.intent.id in keep]

    def _fire(
        self,
        tx: Transaction,
        intent: StandingIntent,
        hit: EntryHit,
        now: datetime,
        digest: str,
        channel: str | None,
        conversation: str | None,
        sender: str | None,
    ) -> None:
        count = intent.fire_count + 1
        if count >= intent.max_fires:
            to, rearm = IntentState.DONE.value, None
        elif intent.cooldown_seconds == 0:
            to, rearm = IntentState.ARMED.value, None
        else:
            # Capped as new input is: a row stored before the cap must not fail every fire of the turn.
            cooldown = min(timedelta(seconds=intent.cooldown_seconds), MAX_DURATION)
            to, rearm = IntentState.FIRED.value, format_time(now + cooldown)
        payload = {
            "entry": hit.entry,
            "terms": list(hit.matched),
            "turn_digest": digest,
            "channel": channel,
            "conversation": conversation,
            "sender": sender,
            "fire_count": count,
            "from": intent.state.value,
            "to": to,
            "rearm_at": rearm,
        }
        self._append(tx, "TRIGGER_FIRE", intent.id, payload)
