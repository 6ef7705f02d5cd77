"""The gate bound to a home: every session, observation, decision and approval is a log operation.

``Intently(...).gate`` hands out gates whose journal writes to the home's operation log (in
the same transaction as the table change), so ``intently gate explain RUN`` can answer "why
was this blocked?" from the log alone, approvals survive restarts and are single-use across
processes, and a run exports as a signed trace bundle anyone can verify with the public key.
"""

from __future__ import annotations

import base64
import json
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidSignature

from ..access import Permission
from ..core.actors import ActorKind
from ..core.clock import format_time
from ..core.errors import (
    BadSignature,
    IntentlyError,
    InvalidInput,
    InvalidTransition,
    LogIntegrityError,
    NotFound,
    PermissionDenied,
    TableMismatch,
    UnknownKey,
)
from ..log import KeyRing, Operation, canonical_json, register_applier, verify_included
from ..store import Transaction, register_migration
from ._contracts import ToolDefinition
from ._decision import Decision, Level
from ._gate import Gate, Session
from ._journal import DENIED, postcondition_record
from ._prompts import (
    JOIN,
    OPENED_OP,
    PROMPT_OP,
    OpeningAt,
    continued,
    places_after,
    prompt_hash,
    prompts_of,
    read_opening,
    request_of,
    resolved_of,
    unplaced_places,
)

if TYPE_CHECKING:
    from .._runtime import Runtime

__all__ = ["GateEngine", "IncompleteTraceWarning", "UnboundTraceWarning", "verify_trace"]

POLICY_VERSION = "gate@1"
TRACE_FORMAT = "intently-gate-trace/2"  # /2 signs the time of signing (see verify_trace)
_LEGACY_TRACE_FORMAT = "intently-gate-trace/1"

register_migration(
    "gate",
    1,
    "CREATE TABLE gate_sessions (id TEXT PRIMARY KEY, namespace TEXT NOT NULL, actor TEXT NOT NULL, "
    "request TEXT NOT NULL, resolved TEXT NOT NULL, bundle TEXT NOT NULL, started TEXT NOT NULL)",
    "CREATE TABLE gate_observations (session_id TEXT NOT NULL, label TEXT NOT NULL, tool TEXT NOT NULL, "
    "sha256 TEXT NOT NULL, observed_at TEXT NOT NULL, PRIMARY KEY (session_id, label))",
    "CREATE TABLE gate_decisions (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, namespace TEXT NOT NULL, "
    "tool TEXT NOT NULL, level TEXT NOT NULL, action_hash TEXT NOT NULL, rule_ids TEXT NOT NULL, "
    "reason TEXT NOT NULL, payload TEXT NOT NULL, decided_at TEXT NOT NULL, approval_used TEXT)",
    "CREATE INDEX gate_decisions_session ON gate_decisions (session_id, decided_at)",
    "CREATE TABLE gate_approvals (decision_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, "
    "action_hash TEXT NOT NULL, approved_by TEXT NOT NULL, approved_at TEXT NOT NULL, "
    "used_by TEXT, used_at TEXT)",
    description="gate sessions, decisions and single-use approvals",
)

register_migration(
    "gate",
    2,
    "CREATE TABLE gate_postconditions (session_id TEXT NOT NULL, n INTEGER NOT NULL, check_id TEXT NOT NULL, "
    "decision_id TEXT NOT NULL, tool TEXT NOT NULL, passed INTEGER NOT NULL, detail TEXT NOT NULL, "
    "checked_at TEXT NOT NULL, PRIMARY KEY (session_id, n))",
    description="postcondition results of gate runs",
)

register_migration(
    "gate",
    3,
    "CREATE TABLE gate_prompts (namespace TEXT NOT NULL, sha256 TEXT NOT NULL, text TEXT NOT NULL, "
    "PRIMARY KEY (namespace, sha256))",
    description="each prompt a gate run was opened on, once per namespace (runs name them by hash)",
)

register_migration(
    "gate",
    4,
    "ALTER TABLE gate_prompts ADD COLUMN n INTEGER",
    # Each prompt's number in its namespace: its place among the namespace's logged prompts,
    # in log order (what the applier gives a new one, so a replay numbers them alike).
    "UPDATE gate_prompts SET n = (SELECT COUNT(*) FROM gate_prompts q WHERE q.namespace = gate_prompts.namespace "
    "AND (SELECT MIN(seq) FROM log_ops WHERE stream = q.namespace AND op = 'GATE_PROMPT_LOGGED' AND target = q.sha256)"
    " <= (SELECT MIN(seq) FROM log_ops WHERE stream = gate_prompts.namespace AND op = 'GATE_PROMPT_LOGGED' "
    "AND target = gate_prompts.sha256))",
    "ALTER TABLE gate_sessions ADD COLUMN prompts TEXT",
    "ALTER TABLE gate_sessions ADD COLUMN unplaced_at TEXT",
    description="a run opened on prompts keeps their numbers (ranges), not their joined text: linear in the prompts",
)

register_migration(
    "gate",
    5,
    # Each run's place in its chain of operations (see _place): how many it has logged, the
    # seq of the last one, and when it was closed. NULL for a run logged before: its
    # operations carry no place, so a trace of it cannot prove it holds them all.
    "ALTER TABLE gate_sessions ADD COLUMN chain_n INTEGER",
    "ALTER TABLE gate_sessions ADD COLUMN chain_last INTEGER",
    "ALTER TABLE gate_sessions ADD COLUMN closed_at TEXT",
    description="each run's operations chained (count, last seq) and its closing: a trace proves it is complete",
)

#: The operation that closes a run: nothing of the run is logged after it, so a trace holding
#: the run's chain up to it holds all of the run (verify_trace).
CLOSED_OP = "GATE_RUN_CLOSED"

#: How many of a namespace's newest runs a new opening looks through for the one it continues
#: (the previous run of the same conversation; others interleave when several sessions share a
#: namespace). Finding none costs bytes, not correctness: the opening then lists every prompt.
_CONTINUE_WINDOW = 32

TABLES = (
    "gate_prompts",
    "gate_sessions",
    "gate_observations",
    "gate_decisions",
    "gate_approvals",
    "gate_postconditions",
)


def _prompt_text(tx: Transaction, namespace: str) -> Callable[[str], str | None]:
    """The text of a prompt logged in ``namespace``, by hash (``None`` if it was not)."""

    def text_of(digest: str) -> str | None:
        value = tx.scalar("SELECT text FROM gate_prompts WHERE namespace = ? AND sha256 = ?", (namespace, digest))
        return None if value is None else str(value)

    return text_of


def _apply_prompt(tx: Transaction, op: Operation) -> None:
    """One prompt's text, kept once per namespace (two processes logging the same prompt at
    once both log it; the text is the same, so the second row is not needed), numbered after
    the namespace's earlier prompts (runs name their prompts by these numbers, see
    :func:`_ranges`)."""
    p = op.payload
    if prompt_hash(str(p["text"])) != p["sha256"] or op.target != p["sha256"]:
        raise LogIntegrityError(f"prompt {op.target} does not hash to its name", stream=op.stream, seq=op.seq or None)
    if _prompt_text(tx, op.stream)(str(p["sha256"])) is None:
        n = int(tx.scalar("SELECT COUNT(*) FROM gate_prompts WHERE namespace = ?", (op.stream,)) or 0) + 1
        tx.execute(
            "INSERT INTO gate_prompts (namespace, sha256, text, n) VALUES (?, ?, ?, ?)",
            (op.stream, p["sha256"], p["text"], n),
        )


def _ranges(numbers: Sequence[int]) -> list[list[int]]:
    """Prompt numbers as ``[first, last]`` runs of consecutive numbers: a conversation's
    prompts are numbered in the order they were said, so run k of a session is ``[[1, k]]``
    (or a few ranges when a prompt was said twice), whatever k is. Listing every prompt in
    every run's row kept the table quadratic in the session's length."""
    out: list[list[int]] = []
    for n in numbers:
        if out and out[-1][1] + 1 == n:
            out[-1][1] = n
        else:
            out.append([n, n])
    return out


def _numbers(ranges: str) -> list[int]:
    """The prompt numbers a run's row names (its ``prompts`` column, see :func:`_ranges`)."""
    return [n for first, last in json.loads(ranges) for n in range(int(first), int(last) + 1)]


def _in_log(tx: Transaction, stream: str) -> OpeningAt:
    """:data:`~intently.gate._prompts.OpeningAt` over the log as this transaction sees it (an
    applier's: the operations before the one it applies are there, in a replay as when written)."""

    def opening_at(seq: int) -> tuple[str, str, Mapping[str, Any]] | None:
        row = tx.one("SELECT * FROM log_ops WHERE stream = ? AND seq = ?", (stream, seq))
        if row is None:
            return None
        op = Operation.from_row(row)
        return op.op, op.target, op.payload

    return opening_at


def _prompt_number(tx: Transaction, op: Operation, digest: str) -> int:
    """The number of a prompt the run names in its namespace; one never logged there is a log
    that cannot say what the run was decided on."""
    n = tx.scalar("SELECT n FROM gate_prompts WHERE namespace = ? AND sha256 = ?", (op.stream, digest))
    if n is None:
        raise LogIntegrityError(
            f"the run's opening names prompt {digest}, which the log does not hold",
            stream=op.stream,
            seq=op.seq or None,
        )
    return int(n)


def _continued(tx: Transaction, op: Operation) -> tuple[list[int], list[Any] | None]:
    """The prompt numbers of a chained opening and the places of its unplaced phrases: those
    of the run it continues (its row, written when that opening was applied, before this one)
    and then of the prompts it adds (and the places it adds, :func:`places_after`). The
    opening it continues is checked in the log, as a reader of the log alone checks it
    (:func:`~intently.gate._prompts.continued`); no prompt before the new ones is read again,
    so applying run k of a session costs its new prompts, not k."""
    p = op.payload
    continued(p, _in_log(tx, op.stream), stream=op.stream, seq=op.seq or None)
    run = str(p["after"]["run"])
    base = tx.one("SELECT prompts, unplaced_at FROM gate_sessions WHERE id = ? AND namespace = ?", (run, op.stream))
    if base is None or base["prompts"] is None:
        raise TableMismatch(
            f"run {op.target} continues run {run}, whose prompts the gate's table does not hold; "
            "`intently log replay` rebuilds it from the log"
        )
    numbers = _numbers(str(base["prompts"])) + [_prompt_number(tx, op, str(d)) for d in p["added"]]
    if p.get("count", len(numbers)) != len(numbers):
        raise LogIntegrityError(
            f"the run's opening says it read {p['count']} prompts; the runs it continues name {len(numbers)}",
            stream=op.stream,
            seq=op.seq or None,
        )
    kept = None if base["unplaced_at"] is None else json.loads(str(base["unplaced_at"]))
    return numbers, places_after(kept, p, stream=op.stream, seq=op.seq or None)


def _apply_session(tx: Transaction, op: Operation) -> None:
    """The run's row. A run opened on prompts keeps their numbers in ``gate_prompts`` (as
    ranges) and the places of its unplaced phrases, not the joined text and the phrases again
    (:func:`_session_row` puts them back on read): a session of N prompts used to store the
    N joins of 1, 2, ..., N prompts twice over, O(N^2) bytes for O(N) of text. A chained
    opening (``after``) is read from the row of the run it continues."""
    p = op.payload
    stored, prompts, places = "", None, None
    if "request" in p:
        stored = str(p["request"])
        resolved = resolved_of(p, stored)
    else:
        if "prompts" in p:
            request_of(p, _prompt_text(tx, op.stream), stream=op.stream, seq=op.seq or None)  # every prompt is here
            numbers, at = [_prompt_number(tx, op, str(d)) for d in p["prompts"]], p.get("unplaced_at")
        else:
            numbers, at = _continued(tx, op)
        prompts = json.dumps(_ranges(numbers))
        resolved = dict(p["resolved"])
        if at is not None:
            places = json.dumps(at)
            resolved.pop("unplaced", None)
    chained = isinstance(p.get("chain"), dict)
    tx.execute(
        "INSERT INTO gate_sessions (id, namespace, actor, request, resolved, bundle, started, prompts, unplaced_at, "
        "chain_n, chain_last) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            op.target,
            op.stream,
            op.actor,
            stored,
            json.dumps(resolved, sort_keys=True),
            p["bundle"],
            op.time,
            prompts,
            places,
            1 if chained else None,
            op.seq if chained else None,
        ),
    )


def _advance(tx: Transaction, op: Operation, run_id: str) -> None:
    """Move run ``run_id``'s chain to ``op`` (one of its operations), as its payload places it:
    the row is the log's projection, so a replay chains the runs alike."""
    place = op.payload.get("chain")
    if isinstance(place, dict):
        tx.execute(
            "UPDATE gate_sessions SET chain_n = ?, chain_last = ? WHERE id = ?", (int(place["n"]), op.seq, run_id)
        )


def _session_row(tx: Transaction, row: Mapping[str, Any]) -> dict[str, Any]:
    """A ``gate_sessions`` row as readers see it: its request (the prompts it names, joined)
    and its reading (``resolved``, decoded, unplaced phrases put back), whichever shape it was
    stored in (a literal request, or prompt numbers); the storage columns are not shown."""
    session = dict(row)
    prompts, places = session.pop("prompts", None), session.pop("unplaced_at", None)
    for column in ("chain_n", "chain_last", "closed_at"):  # the chain is the log's, read from a trace's operations
        session.pop(column, None)
    resolved = json.loads(str(session["resolved"]))
    if prompts is not None:
        texts: list[str] = []
        for first, last in json.loads(str(prompts)):
            got = tx.query(
                "SELECT n, text FROM gate_prompts WHERE namespace = ? AND n >= ? AND n <= ? ORDER BY n",
                (str(session["namespace"]), int(first), int(last)),
            )
            if len(got) != int(last) - int(first) + 1:
                raise TableMismatch(
                    f"run {session['id']} names prompts {first}..{last}, which the gate's table does not hold; "
                    "`intently log replay` rebuilds it from the log"
                )
            texts.extend(str(r["text"]) for r in got)
        session["request"] = JOIN.join(texts)
        if places is not None:
            resolved = resolved_of({"resolved": resolved, "unplaced_at": json.loads(str(places))}, session["request"])
    session["resolved"] = resolved
    return session


def _apply_observed(tx: Transaction, op: Operation) -> None:
    p = op.payload
    tx.execute(
        "INSERT INTO gate_observations (session_id, label, tool, sha256, observed_at) VALUES (?, ?, ?, ?, ?)",
        (op.target, p["label"], p["tool"], p["sha256"], op.time),
    )
    _advance(tx, op, op.target)


def _apply_decided(tx: Transaction, op: Operation) -> None:
    d = Decision.from_json(op.payload["decision"])
    if d.approval_used is not None:
        changed = tx.execute(
            "UPDATE gate_approvals SET used_by = ?, used_at = ? WHERE decision_id = ? AND used_by IS NULL",
            (d.id, op.time, d.approval_used),
        )
        if changed != 1:
            raise InvalidTransition("approval", "used", "used")
    tx.execute(
        "INSERT INTO gate_decisions (id, session_id, namespace, tool, level, action_hash, rule_ids, reason, payload, "
        "decided_at, approval_used) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            d.id,
            d.session_id,
            op.stream,
            d.tool,
            str(d.level),
            d.action_hash,
            json.dumps(list(d.rule_ids)),
            d.reason,
            json.dumps(d.to_json(), sort_keys=True),
            op.time,
            d.approval_used,
        ),
    )
    _advance(tx, op, d.session_id)


def _apply_approved(tx: Transaction, op: Operation) -> None:
    p = op.payload
    tx.execute(
        "INSERT INTO gate_approvals (decision_id, session_id, action_hash, approved_by, approved_at) VALUES (?, ?, ?, ?, ?)",
        (op.target, p["session_id"], p["action_hash"], op.actor, op.time),
    )
    _advance(tx, op, str(p["session_id"]))


register_applier(PROMPT_OP, _apply_prompt)
register_applier(OPENED_OP, _apply_session)
register_applier("GATE_OUTPUT_OBSERVED", _apply_observed)
register_applier("GATE_DECIDED", _apply_decided)
register_applier("GATE_APPROVED", _apply_approved)


def _apply_denied(tx: Transaction, op: Operation) -> None:
    p = op.payload
    tx.execute(
        "INSERT INTO gate_approvals (decision_id, session_id, action_hash, approved_by, approved_at, used_by, used_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (op.target, p["session_id"], p["action_hash"], op.actor, op.time, DENIED, op.time),
    )
    _advance(tx, op, str(p["session_id"]))


register_applier("GATE_DENIED", _apply_denied)


def _apply_postconditions(tx: Transaction, op: Operation) -> None:
    """One row per result, numbered after the run's earlier results (a run may check twice)."""
    start = int(tx.scalar("SELECT COUNT(*) FROM gate_postconditions WHERE session_id = ?", (op.target,)) or 0)
    for i, r in enumerate(op.payload["results"]):
        tx.execute(
            "INSERT INTO gate_postconditions (session_id, n, check_id, decision_id, tool, passed, detail, checked_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                op.target,
                start + i,
                r["check_id"],
                r["decision_id"],
                r["tool"],
                int(bool(r["passed"])),
                r["detail"],
                op.time,
            ),
        )
    _advance(tx, op, op.target)


register_applier("GATE_POSTCONDITIONS_CHECKED", _apply_postconditions)


def _apply_closed(tx: Transaction, op: Operation) -> None:
    """The run is closed: its chain ends here (HomeJournal refuses anything of it after)."""
    tx.execute("UPDATE gate_sessions SET closed_at = ? WHERE id = ?", (op.time, op.target))
    _advance(tx, op, op.target)


register_applier(CLOSED_OP, _apply_closed)

#: The operations that say how a run's decisions were made and settled (``GateEngine.run``).
_SETTLING_OPS = ("GATE_DECIDED", "GATE_APPROVED", "GATE_DENIED")


def _require_unsettled(tx: Transaction, decision_id: str, to: str) -> None:
    """A decision is settled once, by an approval or a denial; anything after is refused."""
    used = tx.one("SELECT used_by FROM gate_approvals WHERE decision_id = ?", (decision_id,))
    if used is not None:
        raise InvalidTransition("decision", DENIED if used["used_by"] == DENIED else "approved", to)


class HomeJournal:
    """A :class:`~intently.gate.Journal` that writes every step to the home's log."""

    def __init__(self, runtime: Runtime, namespace: str, policy_version: str) -> None:
        self._rt = runtime
        self._ns = namespace
        self._pv = policy_version

    def _append(
        self, tx: Transaction, op: str, target: str, payload: dict[str, Any], *, run: str | None = None
    ) -> Operation:
        """Append ``op``; one of run ``run``'s operations also records its place in the run (:meth:`_place`)."""
        self._rt.access.require(self._rt.actor, self._ns, Permission.WRITE, tx)
        if run is not None:
            payload = {**payload, **self._place(tx, op, run)}
        return self._rt.log.append(
            tx,
            namespace=self._ns,
            actor=str(self._rt.actor),
            op=op,
            target=target,
            payload=payload,
            policy_version=self._pv,
        )

    @staticmethod
    def _place(tx: Transaction, op: str, run: str) -> dict[str, Any]:
        """``{"chain": {"run", "n", "prev"}}``: the operation is the run's ``n``-th, after the one
        at seq ``prev`` (none for the opening, ``n`` 1). The payload is in the operation's leaf,
        so a signed tree commits to each operation's place: a trace that leaves one of the run's
        operations out shows a gap (the next one's ``prev`` is not in it), whoever re-signs it,
        and a closed run's last operation is its closing (see :func:`verify_trace`). One row
        read by primary key, in the write transaction that holds the store's write lock (so
        two processes adding to one run cannot both take the same place). A run logged before
        the chain (its row's ``chain_n`` NULL) stays unchained; a closed run takes nothing more."""
        if op == OPENED_OP:
            return {"chain": {"run": run, "n": 1, "prev": None}}
        row = tx.one("SELECT chain_n, chain_last, closed_at FROM gate_sessions WHERE id = ?", (run,))
        if row is None:
            return {}
        if row["closed_at"] is not None:
            raise InvalidTransition(
                "gate run", "closed", op, detail=f"run {run} was closed at {row['closed_at']}; open a new run"
            )
        if row["chain_n"] is None:
            return {}
        return {"chain": {"run": run, "n": int(row["chain_n"]) + 1, "prev": int(row["chain_last"])}}

    def open_session(self, session_id: str, info: dict[str, Any]) -> None:
        """Log the run's opening; a request that came as prompts (``request_parts``) is logged
        as their hashes, each prompt's text logged once in this namespace, here if not yet
        (:mod:`intently.gate._prompts`): a conversation of N prompts is N texts in the log,
        not the N joins of 1, 2, ..., N of them."""
        with self._rt.store.transaction() as tx:
            payload = self._opening(tx, info)
            _apply_session(tx, self._append(tx, "GATE_SESSION_OPENED", session_id, payload, run=session_id))

    def _opening(self, tx: Transaction, info: dict[str, Any]) -> dict[str, Any]:
        request, resolved, parts = str(info["request"]), dict(info["resolved"]), info.get("request_parts")
        places = unplaced_places(request, [str(u) for u in resolved.get("unplaced", [])])
        if not parts or JOIN.join(parts) != request or places is None:
            return {"request": request, "resolved": resolved, "bundle": info["bundle"]}
        digests = []
        known = _prompt_text(tx, self._ns)
        for text in parts:
            digest = prompt_hash(text)
            if digest not in digests and known(digest) is None:
                _apply_prompt(tx, self._append(tx, PROMPT_OP, digest, {"sha256": digest, "text": text}))
            digests.append(digest)
        resolved.pop("unplaced", None)
        base = self._continues(tx, digests)
        if base is None:
            return {"prompts": digests, "resolved": resolved, "unplaced_at": places, "bundle": info["bundle"]}
        seq, run, m, before = base
        kept = 0  # the unplaced phrases of the run continued that this one has too, at the same places
        while kept < min(len(before), len(places)) and list(before[kept]) == list(places[kept]):
            kept += 1
        return {
            "after": {"seq": seq, "run": run},
            "added": digests[m:],
            "count": len(digests),
            "resolved": resolved,
            "unplaced_kept": kept,
            "unplaced_at": places[kept:],
            "bundle": info["bundle"],
        }

    def _continues(self, tx: Transaction, digests: Sequence[str]) -> tuple[int, str, int, list[Any]] | None:
        """The run this opening continues (its opening's seq, its id, how many prompts it read,
        the places of its unplaced phrases):
        the newest of the namespace's recent runs whose prompts begin this one's, most prompts
        first. Run k of a conversation then logs its new prompts' hashes, not all k of them
        again (which made the log grow with the square of the session's length)."""
        numbers: list[int] = []
        for digest in digests:
            n = tx.scalar("SELECT n FROM gate_prompts WHERE namespace = ? AND sha256 = ?", (self._ns, digest))
            if n is None:  # a table older than gate migration 4: list them all
                return None
            numbers.append(int(n))
        best: tuple[int, str, int, list[Any]] | None = None
        # The newest openings of the stream, by its primary key read backwards: no scan of the
        # namespace's runs, however many it holds.
        for opened in tx.query(
            "SELECT seq, target FROM log_ops WHERE stream = ? AND op = ? ORDER BY seq DESC LIMIT ?",
            (self._ns, OPENED_OP, _CONTINUE_WINDOW),
        ):
            row = tx.one(
                "SELECT prompts, unplaced_at FROM gate_sessions WHERE id = ? AND namespace = ?",
                (str(opened["target"]), self._ns),
            )
            earlier = [] if row is None or row["prompts"] is None else _numbers(str(row["prompts"]))
            if earlier and numbers[: len(earlier)] == earlier and (best is None or len(earlier) > best[2]):
                places = json.loads(str(row["unplaced_at"] or "[]")) if row is not None else []
                best = (int(opened["seq"]), str(opened["target"]), len(earlier), places)
        return best

    def _own_session(self, tx: Transaction, session_id: str) -> None:
        """A session belongs to the actor who opened it: another actor may not add its calls or
        outputs to it, nor use an approval given for its calls (an approval is for one actor's
        exact action)."""
        opener = tx.scalar("SELECT actor FROM gate_sessions WHERE id = ?", (session_id,))
        if opener is not None and str(opener) != str(self._rt.actor):
            raise PermissionDenied(
                f"gate session {session_id} was opened by {opener}; {self._rt.actor} opens its own (no session id)"
            )

    def observed(self, session_id: str, tool: str, label: str, sha256: str) -> None:
        with self._rt.store.transaction() as tx:
            self._own_session(tx, session_id)
            payload = {"tool": tool, "label": label, "sha256": sha256}
            _apply_observed(tx, self._append(tx, "GATE_OUTPUT_OBSERVED", session_id, payload, run=session_id))

    def decided(self, decision: Decision) -> None:
        with self._rt.store.transaction() as tx:
            self._own_session(tx, decision.session_id)
            if decision.approval_used is not None:
                used = tx.scalar("SELECT used_by FROM gate_approvals WHERE decision_id = ?", (decision.approval_used,))
                if used is not None:
                    raise InvalidTransition("approval", "used", "used")
            payload = {"decision": decision.to_json()}
            _apply_decided(tx, self._append(tx, "GATE_DECIDED", decision.id, payload, run=decision.session_id))

    def decision(self, decision_id: str) -> Decision:
        with self._rt.store.transaction(write=False) as tx:
            row = tx.one("SELECT payload, namespace FROM gate_decisions WHERE id = ?", (decision_id,))
            # One answer for a decision that does not exist and one in a namespace the caller
            # may not read: access.require's "namespace 'x' not found" told both apart, and
            # named the hidden namespace.
            if row is None or not self._rt.access.can(self._rt.actor, str(row["namespace"]), Permission.READ, tx):
                raise NotFound(f"no gate decision {decision_id}")
        return Decision.from_json(json.loads(str(row["payload"])))

    def approve(self, decision: Decision, approver: str) -> None:
        """Only a person approves: a confirm or review decision waits for one, and an agent that
        could approve its own waiting call would make every such decision an allow. The acting
        actor of the runtime is the approver the log records (``approver`` names the channel)."""
        del approver
        actor = self._rt.actor
        if actor.kind is not ActorKind.USER:
            raise PermissionDenied(
                f"{actor} cannot approve decision {decision.id}: a waiting decision is approved by a person "
                f"(a user: actor), not by an {actor.kind.value}"
            )
        with self._rt.store.transaction() as tx:
            _require_unsettled(tx, decision.id, "approved")
            payload = {"session_id": decision.session_id, "action_hash": decision.action_hash}
            _apply_approved(tx, self._append(tx, "GATE_APPROVED", decision.id, payload, run=decision.session_id))

    def deny(self, decision: Decision, reason: str) -> None:
        with self._rt.store.transaction() as tx:
            _require_unsettled(tx, decision.id, "denied")
            payload = {"session_id": decision.session_id, "action_hash": decision.action_hash, "reason": reason}
            _apply_denied(tx, self._append(tx, "GATE_DENIED", decision.id, payload, run=decision.session_id))

    def postconditions(self, session_id: str, results: list[dict[str, Any]]) -> None:
        with self._rt.store.transaction() as tx:
            payload = {"results": [postcondition_record(r) for r in results]}
            _apply_postconditions(
                tx, self._append(tx, "GATE_POSTCONDITIONS_CHECKED", session_id, payload, run=session_id)
            )

    def close(self, session_id: str) -> None:
        """Log that run ``session_id`` is over (``GATE_RUN_CLOSED``): the last operation of its
        chain, so a trace of it proves it holds every operation of the run. Only the actor who
        opened the run or a person closes it (closing refuses the run's later calls)."""
        with self._rt.store.transaction() as tx:
            if self._rt.actor.kind is not ActorKind.USER:
                self._own_session(tx, session_id)
            _apply_closed(tx, self._append(tx, CLOSED_OP, session_id, {}, run=session_id))

    def open_approval(self, session_id: str, action_hash: str) -> str | None:
        with self._rt.store.transaction(write=False) as tx:
            value = tx.scalar(
                "SELECT a.decision_id FROM gate_approvals a JOIN gate_sessions s ON s.id = a.session_id "
                "WHERE a.session_id = ? AND a.action_hash = ? AND a.used_by IS NULL AND s.actor = ? "
                "ORDER BY a.approved_at LIMIT 1",
                (session_id, action_hash, str(self._rt.actor)),
            )
        return None if value is None else str(value)


class GateEngine:
    """Gates bound to one home: each session's decisions are operations in its log."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime

    def gate(
        self, tools: Iterable[Mapping[str, Any] | ToolDefinition], *, namespace: str | None = None, **options: Any
    ) -> Gate:
        """A :class:`Gate` for ``tools`` whose sessions are logged in ``namespace``."""
        ns = namespace or self._rt.namespace
        gate = Gate.from_tools(tools, clock=self._rt.clock, actor=str(self._rt.actor), **options)
        gate.journal = HomeJournal(self._rt, ns, f"{POLICY_VERSION};{gate.bundle.version}")
        return gate

    def session(
        self,
        tools: Iterable[Mapping[str, Any] | ToolDefinition],
        *,
        user_request: str,
        namespace: str | None = None,
        request_parts: Sequence[str] | None = None,
        **options: Any,
    ) -> Session:
        """A logged session on one request. ``request_parts``: the prompts of a conversation so
        far, which ``user_request`` joins with blank lines (see :meth:`Gate.session`); read in
        order, so a later prompt may lift a path an earlier one protected. A session holds one
        request: a new prompt is declared by opening a new session on all the prompts so far."""
        gate = self.gate(tools, namespace=namespace, **options)
        return gate.session(
            user_request=user_request, namespace=namespace or self._rt.namespace, request_parts=request_parts
        )

    def approve(self, decision_id: str) -> Decision:
        """Approve a waiting decision from anywhere (another process, the CLI): single-use, exact action."""
        journal = HomeJournal(self._rt, self._rt.namespace, POLICY_VERSION)
        decision = journal.decision(decision_id)
        if not decision.level.needs_approval:
            raise InvalidTransition("decision", str(decision.level), "approved")
        self._journal_of(decision).approve(decision, str(self._rt.actor))
        return decision

    def deny(self, decision_id: str, reason: str = "") -> Decision:
        """Refuse a waiting decision for good: logged as ``GATE_DENIED``; it can never be approved after."""
        decision = HomeJournal(self._rt, self._rt.namespace, POLICY_VERSION).decision(decision_id)
        if not decision.level.needs_approval:
            raise InvalidTransition("decision", str(decision.level), "denied")
        self._journal_of(decision).deny(decision, reason.strip()[:2000])
        return decision

    def close_run(self, run_id: str) -> dict[str, Any]:
        """Close run ``run_id`` (or the run of decision ``run_id``): nothing more is logged for it,
        and a trace exported from now on proves it holds the whole run (see :func:`verify_trace`).
        Closing twice is refused (:class:`InvalidTransition`)."""
        with self._rt.store.transaction(write=False) as tx:
            row = tx.one("SELECT id, namespace FROM gate_sessions WHERE id = ?", (run_id,))
            if row is None:
                row = tx.one("SELECT session_id AS id, namespace FROM gate_decisions WHERE id = ?", (run_id,))
            if row is None or not self._rt.access.can(self._rt.actor, str(row["namespace"]), Permission.READ, tx):
                raise NotFound(f"no gate run or decision {run_id}")
        run, namespace = str(row["id"]), str(row["namespace"])
        HomeJournal(self._rt, namespace, POLICY_VERSION).close(run)
        with self._rt.store.transaction(write=False) as tx:
            closed = tx.one("SELECT chain_n, closed_at FROM gate_sessions WHERE id = ?", (run,))
        if closed is None:  # the row closed just now is gone: the table was changed outside the log
            raise NotFound(f"no gate run {run}")
        return {"run": run, "closed_at": closed["closed_at"], "operations": closed["chain_n"]}

    def close_runs(self, run_ids: Sequence[str]) -> dict[str, Any]:
        """Close each open run of ``run_ids`` (a harness ending its session closes the runs it
        opened, see the Claude Code hook's SessionEnd): ``{"closed": [...], "skipped": [...],
        "failed": {run: reason}}``. A run never opened, not readable by this actor or already
        closed is skipped, not an error: the caller names the runs it may have opened. A run
        that cannot be closed is reported by name and does not stop the others."""
        closed: list[str] = []
        skipped: list[str] = []
        failed: dict[str, str] = {}
        for run in dict.fromkeys(run_ids):
            with self._rt.store.transaction(write=False) as tx:
                row = tx.one("SELECT namespace, closed_at FROM gate_sessions WHERE id = ?", (run,))
                readable = row is not None and self._rt.access.can(
                    self._rt.actor, str(row["namespace"]), Permission.READ, tx
                )
            if row is None or not readable or row["closed_at"] is not None:
                skipped.append(run)
                continue
            try:
                HomeJournal(self._rt, str(row["namespace"]), POLICY_VERSION).close(run)
            except IntentlyError as exc:
                failed[run] = str(exc)
            else:
                closed.append(run)
        return {"closed": closed, "skipped": skipped, "failed": failed}

    def _journal_of(self, decision: Decision) -> HomeJournal:
        """The journal of the namespace the decision's run was logged in (write is checked there)."""
        with self._rt.store.transaction(write=False) as tx:
            ns = tx.scalar("SELECT namespace FROM gate_sessions WHERE id = ?", (decision.session_id,))
        return HomeJournal(self._rt, str(ns or self._rt.namespace), POLICY_VERSION)

    # -- reading --------------------------------------------------------------

    def _read(self, sql: str, *params: Any) -> list[Any]:
        """Rows of one query over this namespace (``?`` namespace, then ``params``), for a reader."""
        with self._rt.store.transaction(write=False) as tx:
            self._rt.access.require(self._rt.actor, self._rt.namespace, Permission.READ, tx)
            return list(tx.query(sql, (self._rt.namespace, *params)))

    def runs(self, limit: int = 20, offset: int = 0) -> list[dict[str, Any]]:
        """The newest runs, ``limit`` of them after skipping ``offset``: a page of an old list
        reads that page, not every newer run before it."""
        rows = self._read(
            "SELECT s.id, s.namespace, s.request, s.prompts, s.resolved, s.started, "
            "(SELECT COUNT(*) FROM gate_decisions d WHERE d.session_id = s.id) AS decisions, "
            "(SELECT COUNT(*) FROM gate_decisions d WHERE d.session_id = s.id AND d.level = 'block') AS blocked "
            "FROM gate_sessions s WHERE s.namespace = ? ORDER BY s.started DESC, s.id DESC LIMIT ? OFFSET ?",
            _count(limit, "limit"),
            _count(offset, "offset"),
        )
        return [{k: v for k, v in s.items() if k not in ("namespace", "resolved")} for s in self._sessions(rows)]

    def _sessions(self, rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Rows of ``gate_sessions`` with their requests rebuilt (:func:`_session_row`)."""
        with self._rt.store.transaction(write=False) as tx:
            return [_session_row(tx, r) for r in rows]

    _WAITING_WHERE = (
        "FROM gate_decisions d JOIN gate_sessions s ON s.id = d.session_id "
        "LEFT JOIN gate_approvals a ON a.decision_id = d.id "
        "WHERE d.namespace = ? AND d.level IN ('confirm', 'review') AND a.decision_id IS NULL"
    )

    def waiting(self, limit: int = 500, offset: int = 0) -> list[dict[str, Any]]:
        """Decisions that wait for a person (confirm or review, neither approved nor denied),
        newest first, each with its run's request: every one, however many runs came after,
        ``limit`` at a time after skipping ``offset`` (:meth:`waiting_count` says how many)."""
        rows = self._read(
            f"SELECT d.payload, s.id, s.namespace, s.request, s.prompts, s.resolved {self._WAITING_WHERE} "
            "ORDER BY d.decided_at DESC, d.id DESC LIMIT ? OFFSET ?",
            _count(limit, "limit"),
            _count(offset, "offset"),
        )
        sessions = self._sessions(rows)
        return [
            {**json.loads(str(r["payload"])), "request": str(s["request"])} for r, s in zip(rows, sessions, strict=True)
        ]

    def waiting_count(self) -> int:
        """How many decisions wait for a person (what :meth:`waiting` pages through)."""
        return int(self._read(f"SELECT COUNT(*) AS n {self._WAITING_WHERE}")[0]["n"])

    def run(self, run_id: str) -> dict[str, Any]:
        """The session, its observations and decisions, as stored. ``run_id`` may also be the id
        of one of its decisions: a denial quotes the decision, and that is what people paste."""
        return self._run(run_id, _SETTLING_OPS)[0]

    def _run(self, run_id: str, kinds: tuple[str, ...]) -> tuple[dict[str, Any], list[Operation]]:
        """:meth:`run`, and the operations of ``kinds`` in its namespace: the log is read once,
        here, for both the check against the log and whatever the caller does with them (an
        export's operations). Reading it once per kind made ``gate explain`` and ``gate
        export`` read a long log three and four times, and the console's approval, which
        reads thirty runs, ninety."""
        with self._rt.store.transaction(write=False) as tx:
            row = tx.one("SELECT * FROM gate_sessions WHERE id = ?", (run_id,))
            if row is None:
                owner = tx.one("SELECT session_id FROM gate_decisions WHERE id = ?", (run_id,))
                if owner is not None:
                    run_id = str(owner["session_id"])
                    row = tx.one("SELECT * FROM gate_sessions WHERE id = ?", (run_id,))
            if row is None:
                raise NotFound(f"no gate run or decision {run_id}")
            self._rt.access.require(self._rt.actor, str(row["namespace"]), Permission.READ, tx)
            obs = tx.query(
                "SELECT label, tool, sha256, observed_at FROM gate_observations WHERE session_id = ? ORDER BY observed_at, label",
                (run_id,),
            )
            decs = tx.query(
                "SELECT payload FROM gate_decisions WHERE session_id = ? ORDER BY decided_at, id", (run_id,)
            )
            approvals = tx.query("SELECT * FROM gate_approvals WHERE session_id = ? ORDER BY approved_at", (run_id,))
            checked = tx.query(
                "SELECT check_id, decision_id, tool, passed, detail, checked_at FROM gate_postconditions "
                "WHERE session_id = ? ORDER BY n",
                (run_id,),
            )
            # Every operation of the run (its opening, its decisions, their approvals and
            # denials) comes after its opening in its stream: the read starts there, and the
            # runs logged before it are not read at all (reading the whole stream decoded
            # every decision the namespace ever logged, to show one run). A run whose opening
            # is not in the log (a row written behind its back) is read against the whole
            # stream, as before. One indexed row (log_ops_target), in this transaction.
            opened = tx.scalar(
                "SELECT MIN(seq) FROM log_ops WHERE stream = ? AND target = ? AND op = 'GATE_SESSION_OPENED'",
                (str(row["namespace"]), run_id),
            )
            session = _session_row(tx, row)
        decisions = [json.loads(str(d["payload"])) for d in decs]
        namespace = str(session["namespace"])
        ops = self._rt.log.read(namespace, ops=kinds, after=int(opened) - 1 if opened is not None else 0)
        if opened is not None:
            chain, prompts = self._logged_prompts(namespace, int(opened))
            if not kinds:  # an export holds the prompts its run names (logged by it or before it), no others,
                # and the earlier openings a chained one continues (what says which prompts it names)
                ops = sorted([*chain[:-1], *prompts, *(op for op in ops if op.op != PROMPT_OP)], key=lambda op: op.seq)
            self._request_in_log(namespace, session, [*chain, *prompts])
        settled = self._settled_in_log(namespace, run_id, decisions, [dict(a) for a in approvals], ops)
        run = {
            "session": session,
            "observations": [dict(o) for o in obs],
            "decisions": decisions,
            "approvals": [dict(a) for a in approvals],
            "settled": settled,
            "postconditions": [{**dict(c), "passed": bool(c["passed"])} for c in checked],
        }
        return run, ops

    def _logged_prompts(self, namespace: str, opened: int) -> tuple[list[Operation], list[Operation]]:
        """The run's opening (at ``opened``) and the earlier openings it continues (oldest
        first), and the ``GATE_PROMPT_LOGGED`` operations they name, each once, oldest first:
        logged by this run or by an earlier one of the conversation."""
        chain = [self._rt.log.get(namespace, opened)]

        def opening_at(seq: int) -> tuple[str, str, Mapping[str, Any]] | None:
            try:
                op = self._rt.log.get(namespace, seq)
            except NotFound:
                return None
            chain.append(op)
            return op.op, op.target, op.payload

        opening = chain[0].payload
        digests = [] if "request" in opening else prompts_of(opening, opening_at, stream=namespace, seq=opened)
        found: dict[str, Operation] = {}
        for digest in digests:
            if digest not in found:
                logged = self._rt.log.read(namespace, op=PROMPT_OP, target=digest, limit=1)
                if logged:
                    found[digest] = logged[0]
        return chain[::-1], sorted(found.values(), key=lambda op: op.seq)

    def _request_in_log(self, namespace: str, session: dict[str, Any], logged: list[Operation]) -> None:
        """The run's request and reading as its table row shows them are what its logged opening
        (the last of ``logged``'s openings; the earlier ones it continues, and the prompts they
        name, are the rest) say: what ``explain`` prints as the request is the log's."""
        opening = next(op for op in reversed(logged) if op.op == OPENED_OP and op.target == session["id"])
        request, resolved = _read_among([op.to_json() for op in logged], opening.to_json())
        if request != session["request"] or resolved != session["resolved"]:
            raise TableMismatch(
                f"the request of run {session['id']} differs from its logged opening: the gate's table was "
                "changed outside the log; `intently log replay` rebuilds it from the log",
                stream=namespace,
                seq=opening.seq,
            )

    def logged_request(self, run_id: str) -> str:
        """The exact text run ``run_id`` was decided on, read from the log alone (its opening,
        and the prompts the opening names), not from the gate's tables."""
        run, _ = self._run(run_id, _SETTLING_OPS)
        return str(run["session"]["request"])  # proven equal to the log's by _run

    @staticmethod
    def _settled_in_log(
        namespace: str,
        run_id: str,
        decisions: list[dict[str, Any]],
        approvals: list[dict[str, Any]],
        ops: list[Operation],
    ) -> dict[str, dict[str, Any]]:
        """Check the run's decisions and approvals against the log, and return how each waiting
        decision was settled (approved or denied, by whom, when), as the log says.

        The gate's tables are a projection of the log for quick queries; the audit trail is the
        log. A table row changed behind the log's back (a block rewritten as an allow) would
        otherwise be explained and exported as fact while ``log verify`` still passed, so every
        reader of a run (explain, export) first proves the rows equal the logged operations."""
        logged = {
            op.target: (op, op.payload.get("decision"))
            for op in ops
            if op.op == "GATE_DECIDED"
            and isinstance(op.payload.get("decision"), dict)
            and op.payload["decision"].get("session_id") == run_id
        }
        for d in decisions:
            entry = logged.get(str(d.get("id")))
            if entry is None or entry[1] != d:
                raise TableMismatch(
                    f"decision {d.get('id')} of run {run_id} differs from its logged operation: the gate's table "
                    "was changed outside the log; `intently log replay` rebuilds it from the log",
                    stream=namespace,
                    seq=entry[0].seq if entry is not None else None,
                )
        missing = sorted(set(logged) - {str(d.get("id")) for d in decisions})
        if missing:
            raise TableMismatch(
                f"run {run_id} has logged decision(s) its table lacks ({', '.join(missing)}): the table was "
                "changed outside the log; `intently log replay` rebuilds it from the log",
                stream=namespace,
                seq=logged[missing[0]][0].seq,
            )
        settled: dict[str, dict[str, Any]] = {}
        for kind, name in (("GATE_APPROVED", "approved"), ("GATE_DENIED", "denied")):
            for op in ops:
                if op.op == kind and op.payload.get("session_id") == run_id:
                    settled[op.target] = {
                        "how": name,
                        "by": op.actor,
                        "at": op.time,
                        **({"reason": op.payload.get("reason", "")} if name == "denied" else {}),
                    }
        rows = {str(a["decision_id"]) for a in approvals}
        if rows != set(settled):
            raise TableMismatch(
                f"the approvals of run {run_id} differ from the logged ones: the table was changed outside the "
                "log; `intently log replay` rebuilds it from the log",
                stream=namespace,
            )
        return settled

    def explain(self, run_id: str) -> dict[str, Any]:
        """Plain words for each decision of a run: what was asked, what ran, what was stopped and why."""
        run = self.run(run_id)
        resolved = run["session"]["resolved"]
        lines = [f"Request: {run['session']['request']}"]
        asked = ", ".join(resolved.get("intents", [])) or "nothing beyond reading"
        lines.append(f"The request was read as asking to: {asked}.")
        if resolved.get("negated"):
            lines.append(f"It said not to: {', '.join(resolved['negated'])}.")
        if resolved.get("excluded_paths"):
            by = resolved.get("excluded_path_prompts", {})
            named = [f"{p} (prompt {by[p]})" if p in by else p for p in resolved["excluded_paths"]]
            lines.append(f"It said not to change: {', '.join(named)}.")
        if resolved.get("lifted_paths"):
            freed = [
                f"{x['path']} (said in prompt {x['protected_by']}, lifted by prompt {x['lifted_by']})"
                for x in resolved["lifted_paths"]
            ]
            lines.append(f"A later prompt allowed changing again: {', '.join(freed)}.")
        if resolved.get("delegated"):
            lines.append("It hands authority to a document the user pointed at (delegation).")
        if resolved.get("unplaced"):
            lines.append(f"Phrases the resolver could not place: {'; '.join(resolved['unplaced'])}.")
        counts: dict[str, int] = {}
        items = []
        for i, d in enumerate(run["decisions"], 1):
            level = Level(d["level"])
            counts[str(level)] = counts.get(str(level), 0) + 1
            verb = {
                Level.ALLOW: "was allowed",
                Level.WARN: "ran with a warning",
                Level.CONFIRM: "waited for the user's confirmation",
                Level.REVIEW: "waited for review",
                Level.BLOCK: "was blocked",
            }[level]
            text = f"{i}. {d['tool']} {verb} (rule {', '.join(d['rule_ids'])}): {d['reason']}."
            how = run["settled"].get(d["id"])
            if how is not None and how["how"] == "approved":
                text += f" Approved by {how['by']} at {how['at']}."
            elif how is not None:
                why = f": {how['reason']}" if how.get("reason") else ""
                text += f" Denied by {how['by']} at {how['at']}{why}."
            elif level.needs_approval:
                text += " Not approved or denied (yet)."
            if d.get("approval_used"):
                text += f" It ran on the approval of {d['approval_used']}."
            lines.append(text)
            items.append(
                {
                    "n": i,
                    "id": d["id"],
                    "tool": d["tool"],
                    "level": d["level"],
                    "rules": d["rule_ids"],
                    "why": d["reason"],
                    "settled": run["settled"].get(d["id"]),
                }
            )
        failed = [c for c in run["postconditions"] if not c["passed"]]
        if run["postconditions"]:
            lines.append(
                f"After the run, {len(run['postconditions'])} postcondition(s) were checked on the state change; "
                f"{len(failed)} failed."
            )
        for c in failed:
            lines.append(
                f"Postcondition {c['check_id']} failed after {c['tool']} (decision {c['decision_id']}): {c['detail']}."
            )
        summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no calls"
        lines.insert(1, f"{len(run['decisions'])} call(s): {summary}.")
        return {
            "run": run_id,
            "summary": summary,
            "decisions": items,
            "failed_postconditions": failed,
            "text": "\n".join(lines),
        }

    # -- signed trace bundles ---------------------------------------------------

    def export_run(self, run_id: str) -> dict[str, Any]:
        """The run, with its log operations, signed with this home's Ed25519 key.

        Its operations are every operation of the namespace on the run or one of its
        decisions, whatever its kind: the stream is read once, from the run's opening on
        (see :meth:`_run`)."""
        run, logged = self._run(run_id, ())
        targets = {str(run["session"]["id"]), *(d["id"] for d in run["decisions"])}
        targets |= {op.target for op in logged if op.op == PROMPT_OP}  # only the prompts the run names
        opened = min((op.seq for op in logged if op.op == OPENED_OP and op.target in targets), default=0)
        # The openings before the run's own are those it continues: the prompts it names are theirs and its added ones.
        ops = [op.to_json() for op in logged if op.target in targets or (op.op == OPENED_OP and op.seq < opened)]
        now = format_time(self._rt.clock.now())
        body = {"format": TRACE_FORMAT, "run": run, "operations": ops, "origin": self._rt.log.origin, "signed_at": now}
        ring = self._rt.log.keyring
        key_id, signature = ring.sign(canonical_json(body), now)  # first: a home that cannot sign says so
        public = ring.entries[key_id].public_key.public_bytes_raw()
        inclusion = self._inclusion(ops)
        return {
            **body,
            "key_id": key_id,
            "public_key": base64.b64encode(public).decode(),
            "signature": base64.b64encode(signature).decode(),
            "inclusion": inclusion,
        }

    def _inclusion(self, ops: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Each operation's audit path in its stream's latest signed tree, and that tree's
        checkpoint: what binds the trace's operations to the log for a verifier holding only the
        public keyring. The signature over the trace says who exported it; a key that signed it
        may leak after a rotation and re-sign anything within the sequence numbers it had signed,
        but it cannot make a rewritten operation hash into the tree it last signed.

        Outside the signed body on purpose: the proofs check against the signed checkpoint, and a
        verifier of the format before them still reads the trace."""
        by_stream: dict[str, list[int]] = {}
        for n, op in enumerate(ops):
            by_stream.setdefault(str(op["namespace"]), []).append(n)
        checkpoints: dict[str, Any] = {}
        proofs: list[list[str]] = [[] for _ in ops]
        for stream, places in by_stream.items():
            cp, paths = self._rt.log.inclusion_proofs(stream, [int(ops[n]["seq"]) for n in places])
            checkpoints[stream] = cp.to_json()
            for n, path in zip(places, paths, strict=True):
                proofs[n] = path
        return {"checkpoints": checkpoints, "proofs": proofs}

    def vocab_suggest(self, limit: int = 200) -> list[dict[str, Any]]:
        """Proposed vocabulary entries from the phrases the resolver could not place, for review."""
        from ._suggest import suggest

        with self._rt.store.transaction(write=False) as tx:
            self._rt.access.require(self._rt.actor, self._rt.namespace, Permission.READ, tx)
            rows = tx.query(
                "SELECT * FROM gate_sessions WHERE namespace = ? ORDER BY started DESC LIMIT ?",
                (self._rt.namespace, limit),
            )
            sessions = [_session_row(tx, r) for r in rows]
        phrases = [p for s in sessions for p in s["resolved"].get("unplaced", [])]
        return suggest(phrases)


def verify_trace(
    doc: Mapping[str, Any],
    keyring: KeyRing,
    *,
    allow_unbound: bool = False,
    consistency: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Check a trace bundle offline against a public keyring; raise on any mismatch.

    The key embedded in the bundle is informational only: trust comes from ``keyring``. The
    operations are bound to the log by the inclusion proofs the bundle carries (each operation's
    audit path in a signed checkpoint's tree, see :func:`verify_included`). A bundle exported
    before those proofs is *unbound*: its operations rest on the signature alone. That still
    holds for a key in use, with an :class:`UnboundTraceWarning`; a retired key may have leaked
    and re-signed rewritten operations within the sequence numbers it had signed, so an unbound
    trace it signed is refused where keys/public.json records the tree it last signed, unless
    ``allow_unbound`` (then it is accepted with the warning). ``consistency``: proofs that a
    checkpoint the trace carries, signed by a since-retired key, is a prefix of the last tree that
    key signed (see :func:`verify_included`).
    """
    try:
        legacy = doc["format"] == _LEGACY_TRACE_FORMAT
        fields = ("format", "run", "operations", "origin") + (() if legacy else ("signed_at",))
        body = {k: doc[k] for k in fields}
        signature = base64.b64decode(doc["signature"])
        key_id = str(doc["key_id"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInput(f"not a gate trace bundle ({exc})") from exc
    if body["format"] not in (TRACE_FORMAT, _LEGACY_TRACE_FORMAT):
        raise InvalidInput(f"unknown trace format {body['format']!r}")
    _consistent(body)
    _request_consistent(body)
    entry = keyring.entries.get(key_id)
    if entry is None:
        raise UnknownKey(f"trace signed by unknown key {key_id}")
    try:
        entry.public_key.verify(signature, canonical_json(body))
    except InvalidSignature as exc:
        raise BadSignature(
            f"trace signature does not verify under key {key_id}: the file was changed after signing"
        ) from exc
    ops = [op if isinstance(op, Mapping) else {} for op in body["operations"]]
    inclusion = doc.get("inclusion")
    if entry.retired is not None:
        # A retired key may have leaked (that is why keys are rotated): it vouches only for what
        # it signed before retirement, and a trace it signed holds nothing newer than its signing.
        signed_at = None if legacy else str(body["signed_at"])
        newest = max((str(op.get("time", "")) for op in ops), default="")
        if signed_at is None or signed_at > entry.retired or newest > signed_at:
            raise BadSignature(
                f"trace signed by key {key_id}, retired at {entry.retired}, "
                + (
                    "without a signing time"
                    if signed_at is None
                    else f"at {signed_at}, holding operations up to {newest}"
                )
            )
        # Dates are the signer's to choose; sequence numbers are not: the keyring records how far
        # the key had signed each stream when it was retired, and a trace of anything later is
        # not its own (a leaked key backdating every time in the trace).
        for op in ops:
            beyond = entry.signed_beyond(str(op.get("namespace")), _int_or(op.get("seq"), 2**62))
            if beyond is not None:
                raise BadSignature(f"trace holds operation {op.get('id')} (seq {op.get('seq')}): {beyond}")
        # Within those numbers the content is the signer's to choose too: only a proof that each
        # operation is a leaf of the tree the key last signed (its root is in the keyring) shows
        # it is the log's, and an unbound trace carries none.
        for op in [] if inclusion is not None or allow_unbound else ops:
            stream = str(op.get("namespace"))
            head = entry.last_signed_head(stream)
            if head is not None:
                raise BadSignature(
                    f"trace signed by key {key_id}, retired at {entry.retired}: operation seq {op.get('seq')} "
                    f"({op.get('id')}) carries no inclusion proof, so nothing binds it to the tree of size {head[0]} "
                    "the key last signed (keys/public.json) and a leaked key could have rewritten it; export "
                    "the run again in its home (`intently gate export`) for a trace with proofs, or accept "
                    "it on the signature alone with --allow-unbound",
                    stream=stream,
                    seq=_int_or(op.get("seq"), 0),
                )
    # After the retirement checks, which name a trace past the key's signing more plainly.
    anchors = (
        []
        if inclusion is None
        else verify_included(ops, inclusion, keyring, origin=str(body["origin"]), consistency=consistency)
    )
    run_id = str(body["run"]["session"]["id"])
    chain = _chain(ops, run_id)  # refuses a trace with a gap in its run's chain
    found: list[str] = []
    if inclusion is None:
        found.append(
            f"trace of run {run_id} carries no inclusion proofs (exported by an older "
            f"intently): its operations are bound to the log by the signature of key {key_id} alone, not to a "
            "signed tree head"
        )
        warnings.warn(found[-1], UnboundTraceWarning, stacklevel=2)
    complete, why = _completeness(chain, run_id, bound=inclusion is not None)
    if chain is None or inclusion is None:  # not proven either way: said as the unbound warning is
        found.append(f"completeness not proven: {why}")
        warnings.warn(found[-1], IncompleteTraceWarning, stacklevel=2)
    return {
        "ok": True,
        "key_id": key_id,
        "run": run_id,
        "decisions": len(body["run"]["decisions"]),
        "bound": inclusion is not None,
        "checkpoints": [{"stream": cp.stream, "size": cp.size, "key_id": cp.key_id, "time": cp.time} for cp in anchors],
        "warnings": found,
        "complete": complete,
        "completeness": why,
        "run_operations": None if chain is None else len(chain),
        "closed": chain is not None and str(chain[-1].get("op")) == CLOSED_OP,
    }


def _chain(ops: Sequence[Mapping[str, Any]], run_id: str) -> list[Mapping[str, Any]] | None:
    """The trace's operations of run ``run_id`` in their chain's order (``payload.chain``, see
    HomeJournal._place), or ``None`` for a run logged before operations recorded their place.

    Refuses (:class:`TableMismatch`, naming the place) a chain with a gap or a fork: operation
    ``n`` must follow operation ``n - 1`` at the seq it names, the first being the run's opening;
    an honest export holds the run's every operation, so a gap is one left out. Also refused: an
    operation of a chained run that records no place (it would hide beside the chain)."""
    places: dict[int, Mapping[str, Any]] = {}
    mine: list[Mapping[str, Any]] = []
    for op in ops:
        payload = op.get("payload")
        place = payload.get("chain") if isinstance(payload, Mapping) else None
        if isinstance(place, Mapping) and place.get("run") == run_id:
            n = _int_or(place.get("n"), 0)
            if n < 1 or n in places:
                raise TableMismatch(
                    f"operation seq {op.get('seq')} of the trace's run {run_id} records place {place.get('n')!r} "
                    "in the run, which is not a free place from 1 on"
                )
            places[n] = op
        elif _of_run(op, run_id):
            mine.append(op)
    opening = places.get(1)
    if opening is None or opening.get("op") != OPENED_OP or opening.get("target") != run_id:
        if places:
            raise TableMismatch(f"the trace's run {run_id} lacks operation 1 of its chain (its opening)")
        return None  # logged before the chain: nothing to prove it by
    if mine:
        raise TableMismatch(
            f"operation seq {mine[0].get('seq')} ({mine[0].get('op')}) of the trace's run {run_id} records no "
            "place in the run's chain, which its opening starts"
        )
    chain = [places[n] for n in sorted(places)]
    for before, op in pairwise(chain):
        n, prev = op["payload"]["chain"]["n"], op["payload"]["chain"].get("prev")
        if before.get("op") == CLOSED_OP:
            raise TableMismatch(f"the trace's run {run_id} has operation {n} (seq {op.get('seq')}) after its closing")
        if before["payload"]["chain"]["n"] != n - 1 or prev != before.get("seq"):
            raise TableMismatch(
                f"the trace of run {run_id} leaves out operation {n - 1} of the run: operation {n} (seq "
                f"{op.get('seq')}) follows the one at seq {prev}, which the trace does not hold as operation {n - 1}; "
                "an operation of the run was left out of the trace",
                stream=str(op.get("namespace")),
                seq=_int_or(prev, 0),
            )
    return chain


def _of_run(op: Mapping[str, Any], run_id: str) -> bool:
    """Whether ``op`` is one of run ``run_id``'s own operations (not a prompt or an earlier opening it names)."""
    payload = op.get("payload")
    if not isinstance(payload, Mapping):
        return False
    kind = op.get("op")
    if kind in (OPENED_OP, "GATE_OUTPUT_OBSERVED", "GATE_POSTCONDITIONS_CHECKED", CLOSED_OP):
        return bool(op.get("target") == run_id)
    if kind == "GATE_DECIDED":
        decision = payload.get("decision")
        return isinstance(decision, Mapping) and decision.get("session_id") == run_id
    if kind in ("GATE_APPROVED", "GATE_DENIED"):
        return bool(payload.get("session_id") == run_id)
    return False


def _completeness(chain: Sequence[Mapping[str, Any]] | None, run_id: str, *, bound: bool) -> tuple[bool, str]:
    """Whether the trace proves it holds every operation of its run, and why (what verify_trace
    says as ``complete`` and ``completeness``). Proven only by a whole chain that ends in the
    run's closing, each operation bound to a signed tree: the chain is in the leaves, so a key
    holder who re-signs a cut trace cannot hide the cut, but without proofs the places rest on
    the signature alone."""
    if chain is None:
        return False, (
            f"run {run_id} was logged before intently recorded each operation's place in its run: the trace "
            "proves each operation it holds, not that it holds all of them"
        )
    last = chain[-1]
    if not bound:
        return False, (
            f"the places of run {run_id}'s {len(chain)} operation(s) rest on the trace's signature alone "
            "(the trace is unbound): a key holder could have cut and re-signed it"
        )
    if last.get("op") == CLOSED_OP:
        return (
            True,
            f"the trace holds all {len(chain)} operation(s) of run {run_id}, which was closed (seq {last.get('seq')})",
        )
    return False, (
        f"complete up to operation {len(chain)} (seq {last.get('seq')}) at export; the run was open, so later "
        "operations of it are not covered (close it with `intently gate close` and export again)"
    )


class IncompleteTraceWarning(UserWarning):
    """A trace verified without proof that it holds every operation of its run (an older run, or unbound)."""


class UnboundTraceWarning(UserWarning):
    """A trace bundle verified without inclusion proofs: its operations rest on its signature."""


def _count(value: object, where: str) -> int:
    """A row count or offset a reader passed: a whole number of at least 0, or refused by name."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidInput(f"must be a whole number of at least 0, got {value!r}", where=where)
    return value


def _int_or(value: object, default: int) -> int:
    """``value`` as an int; anything else (a forged trace) is ``default``."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _consistent(body: Mapping[str, Any]) -> None:
    """Every decision the trace's run shows is the one its own logged operation records.

    Checked before the signature so that a changed file is reported where it was changed
    ("decision X says allow, its operation says block"), not only as a bad signature."""
    try:
        logged = {
            str(op["target"]): op.get("payload", {}).get("decision")
            for op in body["operations"]
            if op.get("op") == "GATE_DECIDED"
        }
        decisions = list(body["run"]["decisions"])
    except (KeyError, TypeError, AttributeError) as exc:
        raise InvalidInput(f"not a gate trace bundle ({exc})") from exc
    for d in decisions:
        op = logged.get(str(d.get("id")))
        if op is None:
            raise TableMismatch(f"decision {d.get('id')} of the trace's run has no operation in the trace")
        if op != d:
            changed = sorted(k for k in set(op) | set(d) if op.get(k) != d.get(k))
            raise TableMismatch(
                f"decision {d.get('id')} of the trace's run differs from its operation in {', '.join(changed)}"
            )
    extra = sorted(set(logged) - {str(d.get("id")) for d in decisions})
    if extra:
        raise TableMismatch(f"the trace's operations hold decision(s) its run leaves out: {', '.join(extra)}")


def _read_among(ops: Sequence[Mapping[str, Any]], opening: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The request ``opening`` (an operation as JSON) was made on, and its reading, from ``ops`` alone: the
    prompts, and the earlier openings of its stream a chained opening continues, that they
    hold. What a trace bundle's verification and the check of a run's row against the log
    both rebuild it from, so an export proves what ``gate explain`` proves."""
    stream = str(opening["namespace"])
    mine = [op for op in ops if op.get("namespace") == stream]
    by_seq = {op.get("seq"): op for op in mine}
    texts = {str(op.get("target")): str(op["payload"].get("text")) for op in mine if op.get("op") == PROMPT_OP}

    def opening_at(seq: int) -> tuple[str, str, Mapping[str, Any]] | None:
        op = by_seq.get(seq)
        return None if op is None else (str(op.get("op")), str(op.get("target")), dict(op["payload"]))

    seq = opening.get("seq")
    return read_opening(
        opening["payload"],
        texts.get,
        stream=stream,
        seq=seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
        opening_at=opening_at,
    )


def _request_consistent(body: Mapping[str, Any]) -> None:
    """The request and reading the trace's run shows are what its opening (and the prompts and
    earlier openings it names, all in the trace) say: a trace carries what it needs to prove
    which text its decisions were made on, and a run shown on another text does not verify."""
    try:
        ops = [op for op in body["operations"] if isinstance(op, Mapping)]
        session = body["run"]["session"]
        run_id = session["id"]
        opening = next((op for op in ops if op.get("op") == OPENED_OP and op.get("target") == run_id), None)
        if opening is None:
            raise TableMismatch(
                f"the trace's run {run_id} has no opening among its operations: its request is unproven"
            )
        request, resolved = _read_among(ops, opening)
    except LogIntegrityError as exc:
        raise TableMismatch(f"the request of the trace's run cannot be rebuilt from its operations: {exc}") from exc
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise InvalidInput(f"not a gate trace bundle ({exc})") from exc
    if request != session.get("request") or resolved != session.get("resolved"):
        raise TableMismatch(f"the request of the trace's run {run_id} differs from the one its opening was made on")
