"""Intent retrieval (RFC-0013 sections 7 and 8) packed into a token budget.

DEFAULT mode, in this order, each candidate taken whole or not at all:

1. unresolved CRITICAL risks (ACTIVE, ON_HOLD or EXPIRED): in every bundle of the namespace;
2. HIGH risks not yet surfaced in this session (without a session id, each request is its
   own session: the HIGH risks on hold or expired are offered here, the ACTIVE ones in 3);
3. every other ACTIVE HIGH and CRITICAL intent (risks first, then most recently changed);
4. ACTIVE MEDIUM intents that touch the query's entities (most shared terms first);
5. ACTIVE MEDIUM intents (LOW ones with ``include_low``) waiting on a prerequisite that was
   cancelled, expired or dismissed, whatever the query: their owner must decide (RFC-0013
   section 6), and the line says what blocks them (``blocked_by``);
6. ACTIVE LOW intents that touch the query, only with ``include_low``;
7. completion summaries that touch the query, in their own ``completed_goals`` block.

Intents awaiting review (INFERRED) are left out unless ``include_inferred``: extraction
proposes, the user decides. EXPLICIT mode lists every intent matching the filters (state,
type, owner, priority, epistemic), after the mandatory risks. The budget is never exceeded:
what does not fit is counted in :attr:`Bundle.omitted`, never cut mid-item.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from ..core.errors import InvalidInput
from ..core.tokens import TokenCounting
from ..store import Row, Transaction
from ._model import EpistemicType, Intent, IntentState, IntentType, Priority, Summary, parse_enum
from ._render import BLOCK_CLOSE, BLOCK_OPEN, SUMMARY_CLOSE, SUMMARY_OPEN, intent_line, summary_line
from ._semantic import SemanticMatcher
from ._store import load_intents, row_to_summary
from ._text import Terms, terms_of
from ._writes import actor_text

__all__ = ["Bundle", "BundleItem", "Mode", "Omitted", "assemble"]

Mode = Literal["DEFAULT", "EXPLICIT"]
_UNRESOLVED = ("ACTIVE", "ON_HOLD", "EXPIRED")
_PAGE = 64
_FIRST_PAGE = 24
_MATCH_LIMIT = 200
_MISSES = 16
# Terms touching a query: the query's entities among an object's words, or the object's
# entities among the query's words (two index range scans, not an OR over the whole table).
_HITS_SQL = (
    "SELECT ref_id FROM goals_terms WHERE namespace = ? AND term IN ({ents}) "
    "UNION ALL SELECT ref_id FROM goals_terms WHERE namespace = ? AND term IN ({words}) AND is_entity = 1"
)
_FILTERS = {"state": IntentState, "type": IntentType, "priority": Priority, "epistemic": EpistemicType}


@dataclass(frozen=True)
class BundleItem:
    """One intent in the bundle, why it is there, and what its line costs."""

    intent: Intent
    reason: str
    tokens: int
    line: str

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason, "tokens": self.tokens, "intent": self.intent.to_json()}


@dataclass(frozen=True)
class Omitted:
    """What was left out: a total and the count per reason; ``over_budget_ids`` names the
    candidates that qualified but did not fit (as far as they were looked at)."""

    count: int
    reasons: dict[str, int]
    over_budget_ids: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "reasons": self.reasons, "over_budget_ids": list(self.over_budget_ids)}


@dataclass
class Bundle:
    mode: Mode
    query: str
    session: str | None
    budget: int
    items: list[BundleItem] = field(default_factory=list)
    summaries: list[tuple[Summary, str, int]] = field(default_factory=list)
    omitted: Omitted = field(default_factory=lambda: Omitted(0, {}))
    tokens: int = 0

    @property
    def intents(self) -> list[Intent]:
        return [i.intent for i in self.items]

    def render(self) -> str:
        """The ``active_goals`` block (and ``completed_goals`` when summaries matched); empty when nothing fits."""
        parts: list[str] = []
        if self.items:
            parts.extend([BLOCK_OPEN, *(i.line for i in self.items), BLOCK_CLOSE])
        if self.summaries:
            parts.extend([SUMMARY_OPEN, *(s[1] for s in self.summaries), SUMMARY_CLOSE])
        return "\n".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "query": self.query,
            "session": self.session,
            "budget": self.budget,
            "tokens": self.tokens,
            "items": [i.to_json() for i in self.items],
            "summaries": [s[0].to_json() for s in self.summaries],
            "omitted": self.omitted.to_json(),
            "rendered": self.render(),
        }


class _Packer:
    """Greedy, whole-item packing. The block's open and close tags are paid by its first item."""

    def __init__(self, counter: TokenCounting, budget: int) -> None:
        self.counter = counter
        self.budget = budget
        self.used = 0
        self.block_cost = counter.count(BLOCK_OPEN) + counter.count(BLOCK_CLOSE)
        self.summary_cost = counter.count(SUMMARY_OPEN) + counter.count(SUMMARY_CLOSE)
        self.items: list[BundleItem] = []
        self.summaries: list[tuple[Summary, str, int]] = []
        self.seen: set[str] = set()
        self.refused: list[str] = []
        self.nonactive_offered = 0
        self.misses = 0

    @property
    def full(self) -> bool:
        """Stop looking: no line can fit in what is left, or ``_MISSES`` candidates in a row did not
        fit (the rest are counted as over budget without being rendered)."""
        return self.budget - self.used < 12 or self.misses >= _MISSES

    def offer(self, intent: Intent, reason: str) -> bool:
        if intent.id in self.seen:
            return True
        self.seen.add(intent.id)
        if intent.state is not IntentState.ACTIVE:
            self.nonactive_offered += 1
        line = intent_line(intent)
        cost = self.counter.count(line)
        extra = 0 if self.items else self.block_cost
        if self.used + cost + extra > self.budget:
            self.refused.append(intent.id)
            self.misses += 1
            return False
        self.misses = 0
        self.used += cost + extra
        self.items.append(BundleItem(intent, reason, cost, line))
        return True

    def offer_summary(self, summary: Summary) -> bool:
        line = summary_line(summary)
        cost = self.counter.count(line)
        extra = 0 if self.summaries else self.summary_cost
        if self.used + cost + extra > self.budget:
            return False
        self.used += cost + extra
        self.summaries.append((summary, line, cost))
        return True


def _marks(values: Iterable[Any]) -> str:
    return ", ".join("?" for _ in values)


def _epistemics(include_inferred: bool) -> tuple[str, ...]:
    return ("ASSERTED", "INFERRED") if include_inferred else ("ASSERTED",)


def _pages(tx: Transaction, sql: str, params: list[Any], now: datetime) -> Iterator[Intent]:
    """Rows of ``sql`` as intents, a small page first (a budget is usually full within it)."""
    offset, size = 0, _FIRST_PAGE
    while True:
        rows = tx.query(f"{sql} LIMIT {size} OFFSET {offset}", params)
        yield from load_intents(tx, rows, now)
        if len(rows) < size:
            return
        offset += size
        size = _PAGE


def _mandatory(tx: Transaction, pk: _Packer, ns: str, session: str | None, epi: tuple[str, ...], now: datetime) -> int:
    """Offer the risks that must be surfaced; return how many of them are not ACTIVE (those
    qualify here although DEFAULT retrieval otherwise leaves non-active intents out)."""
    base = (
        f"FROM goals_intents WHERE namespace = ? AND intent_type = 'RISK' AND state IN {_UNRESOLVED} "
        f"AND epistemic_type IN ({_marks(epi)})"
    )
    crit = f"{base} AND priority_rank = {Priority.CRITICAL.rank}"
    queries = [(crit, [ns, *epi], "critical_risk")]
    high = f"{base} AND priority_rank = {Priority.HIGH.rank}"
    if session:
        unseen = "AND id NOT IN (SELECT intent_id FROM goals_risk_sessions WHERE namespace = ? AND session = ?)"
        queries.append((f"{high} {unseen}", [ns, *epi, ns, session], "session_risk"))
    else:
        # No session id: nothing says this caller has seen any risk, so each request is a
        # session of its own (RFC-0013 §8: a HIGH risk is surfaced at least once per session).
        # ACTIVE ones already lead step 3; the ones on hold or expired would otherwise never show.
        queries.append((f"{high} AND state <> 'ACTIVE'", [ns, *epi], "session_risk"))
    nonactive = 0
    for where, params, reason in queries:
        for intent in _pages(tx, f"SELECT * {where} ORDER BY last_modified_at DESC, id", params, now):
            if pk.full:
                break
            pk.offer(intent, reason)
        nonactive += int(tx.scalar(f"SELECT COUNT(*) {where} AND state <> 'ACTIVE'", params) or 0)
    return nonactive


def _matches(
    tx: Transaction, ns: str, q: Terms, rank: int, epi: tuple[str, ...], now: datetime
) -> tuple[list[Intent], int]:
    """ACTIVE intents of one priority that touch the query, best first; and how many match."""
    if not q.words:
        return [], 0
    ents, words = sorted(q.entities), sorted(q.words)
    rows = tx.query(
        f"WITH h AS ({_HITS_SQL.format(ents=_marks(ents) or 'NULL', words=_marks(words))}) "
        "SELECT i.*, COUNT(*) AS hits FROM h JOIN goals_intents i ON i.id = h.ref_id "
        "WHERE i.state = 'ACTIVE' AND i.priority_rank = ? "
        f"AND i.epistemic_type IN ({_marks(epi)}) GROUP BY i.id ORDER BY hits DESC, i.last_modified_at DESC, i.id "
        f"LIMIT {_MATCH_LIMIT + 1}",
        [ns, *ents, ns, *words, rank, *epi],
    )
    hits = {r["id"]: int(r["hits"]) for r in rows}
    intents = load_intents(tx, [{k: v for k, v in r.items() if k != "hits"} for r in rows[:_MATCH_LIMIT]], now)
    intents.sort(key=lambda i: (-hits[i.id], -i.current_salience, i.id))
    return intents, len(rows)


def _summaries(tx: Transaction, ns: str, q: Terms) -> list[Summary]:
    if not q.words:
        return []
    ents, words = sorted(q.entities), sorted(q.words)
    rows = tx.query(
        f"SELECT s.* FROM goals_summaries s WHERE s.namespace = ? AND s.id IN "
        f"({_HITS_SQL.format(ents=_marks(ents) or 'NULL', words=_marks(words))}) "
        "ORDER BY s.salience DESC, s.created_at DESC LIMIT 20",
        [ns, ns, *ents, ns, *words],
    )
    return [row_to_summary(r) for r in rows]


def _active_counts(tx: Transaction, ns: str) -> tuple[dict[int, int], dict[str, int]]:
    """ACTIVE counts per priority rank among ASSERTED intents, and all counts per epistemic/state group."""
    by_rank: dict[int, int] = {}
    groups: dict[str, int] = {}
    rows: list[Row] = tx.query(
        "SELECT state, epistemic_type, priority_rank, COUNT(*) AS n FROM goals_intents WHERE namespace = ? "
        "GROUP BY state, epistemic_type, priority_rank",
        (ns,),
    )
    for r in rows:
        n = int(r["n"])
        if r["state"] == "ACTIVE" and r["epistemic_type"] == "ASSERTED":
            by_rank[int(r["priority_rank"])] = by_rank.get(int(r["priority_rank"]), 0) + n
        key = "deprecated" if r["epistemic_type"] == "DEPRECATED" else f"{r['state']}:{r['epistemic_type']}"
        groups[key] = groups.get(key, 0) + n
    return by_rank, groups


def assemble(
    tx: Transaction,
    *,
    namespace: str,
    now: datetime,
    counter: TokenCounting,
    query: str,
    session: str | None,
    budget: int,
    mode: Mode,
    include_low: bool,
    include_inferred: bool,
    filters: dict[str, Any],
    semantic: SemanticMatcher | None = None,
) -> Bundle:
    """Select and pack; pure reading (the caller records which risks a session has seen)."""
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise InvalidInput(f"the token budget must be a whole number, got {type(budget).__name__}", where="budget")
    if budget < 0:
        raise InvalidInput("the token budget cannot be negative", where="budget")
    mode_text = str(mode).upper()
    if mode_text not in ("DEFAULT", "EXPLICIT"):
        raise InvalidInput(f"unknown retrieval mode {mode!r} (DEFAULT or EXPLICIT)", where="mode")
    if filters and mode_text != "EXPLICIT":
        raise InvalidInput(f"filters {sorted(filters)} apply to EXPLICIT retrieval only", where="mode")
    pk = _Packer(counter, budget)
    explicit = mode_text == "EXPLICIT"
    epi = ("ASSERTED", "INFERRED") if explicit else _epistemics(include_inferred)
    mandatory_nonactive = _mandatory(tx, pk, namespace, session, epi, now)
    if explicit:
        reasons = _explicit(tx, pk, namespace, now, filters)
    else:
        reasons = _default(tx, pk, namespace, now, terms_of(query), include_low, include_inferred, mandatory_nonactive)
        if semantic is not None:
            reasons = _add_semantic(tx, pk, namespace, now, query, include_inferred, semantic, reasons)
    q = terms_of(query)
    for summary in _summaries(tx, namespace, q):
        if not pk.offer_summary(summary):
            break
    bundle = Bundle(
        mode="EXPLICIT" if explicit else "DEFAULT",
        query=query,
        session=session,
        budget=budget,
        items=pk.items,
        summaries=pk.summaries,
        omitted=Omitted(sum(reasons.values()), {k: v for k, v in reasons.items() if v}, tuple(pk.refused)),
    )
    bundle.tokens = counter.count(bundle.render()) if bundle.items or bundle.summaries else 0
    while bundle.tokens > budget:  # belt and braces: per-line counts are additive for this tokenizer
        if bundle.summaries:
            bundle.summaries.pop()
        else:
            dropped = bundle.items.pop()
            reasons["over_budget"] = reasons.get("over_budget", 0) + 1
            bundle.omitted = Omitted(
                sum(reasons.values()), {k: v for k, v in reasons.items() if v}, (*pk.refused, dropped.intent.id)
            )
        bundle.tokens = counter.count(bundle.render()) if bundle.items or bundle.summaries else 0
    return bundle


def _default(
    tx: Transaction,
    pk: _Packer,
    ns: str,
    now: datetime,
    q: Terms,
    include_low: bool,
    include_inferred: bool,
    mandatory_nonactive: int,
) -> dict[str, int]:
    """Fill the bundle; every qualifying intent that is not in it counts as ``over_budget``."""
    epi = _epistemics(include_inferred)
    hi_where = (
        "FROM goals_intents WHERE namespace = ? AND state = 'ACTIVE' AND band >= ? "
        f"AND epistemic_type IN ({_marks(epi)})"
    )
    hi_params = [ns, Priority.HIGH.rank * 2, *epi]
    order = "ORDER BY band DESC, last_modified_at DESC, id"
    for intent in _pages(tx, f"SELECT * {hi_where} {order}", hi_params, now):
        if pk.full:
            break
        pk.offer(intent, "priority")
    qualifying = int(tx.scalar(f"SELECT COUNT(*) {hi_where}", hi_params) or 0) + mandatory_nonactive
    medium, medium_matched = _matches(tx, ns, q, Priority.MEDIUM.rank, epi, now)
    qualifying += medium_matched
    for intent in medium:
        if pk.full:
            break
        pk.offer(intent, "entity_match")
    blocked = _blocked(tx, pk, ns, now, epi, include_low)
    low_matched = 0
    low: list[Intent] = []
    if include_low:
        if q.words:
            low, low_matched = _matches(tx, ns, q, Priority.LOW.rank, epi, now)
        else:
            low_where = (
                "FROM goals_intents WHERE namespace = ? AND state = 'ACTIVE' AND priority = 'LOW' "
                f"AND epistemic_type IN ({_marks(epi)})"
            )
            low = list(_pages(tx, f"SELECT * {low_where} ORDER BY last_modified_at DESC, id", [ns, *epi], now))
            low_matched = len(low)
        qualifying += low_matched
        for intent in low:
            if pk.full:
                break
            pk.offer(intent, "requested")
    # The blocked ones no query touched qualify on their own (counted once, not as "not relevant").
    matched = {i.id for i in (*medium, *low)}
    blocked_medium = sum(1 for i, rank in blocked if i not in matched and rank == Priority.MEDIUM.rank)
    blocked_low = sum(1 for i, rank in blocked if i not in matched and rank == Priority.LOW.rank)
    qualifying += blocked_medium + blocked_low
    by_rank, groups = _active_counts(tx, ns)
    not_active = sum(n for k, n in groups.items() if k != "deprecated" and not k.startswith("ACTIVE:"))
    return {
        "over_budget": max(0, qualifying - len(pk.items)),
        "not_relevant": max(0, by_rank.get(Priority.MEDIUM.rank, 0) - medium_matched - blocked_medium),
        "low_not_requested": max(0, by_rank.get(Priority.LOW.rank, 0) - low_matched - blocked_low),
        "not_active": max(0, not_active - mandatory_nonactive),
        "awaiting_review": 0 if include_inferred else groups.get("ACTIVE:INFERRED", 0),
    }


# The dependants of prerequisites that can no longer be done as they stand (the same three
# cases as ``STUCK_PREREQUISITE``), each query one range of ``goals_intents_counts``.
_STUCK = (
    "SELECT e.dependent FROM goals_intents p JOIN goals_edges e ON e.prerequisite = p.id "
    "WHERE p.namespace = ? AND p.state IN ('CANCELLED', 'EXPIRED')",
    "SELECT e.dependent FROM goals_intents p JOIN goals_edges e ON e.prerequisite = p.id "
    "WHERE p.namespace = ? AND p.state IN ('ACTIVE', 'ON_HOLD') AND p.epistemic_type = 'DEPRECATED'",
)


def _blocked(
    tx: Transaction, pk: _Packer, ns: str, now: datetime, epi: tuple[str, ...], include_low: bool
) -> list[tuple[str, int]]:
    """Offer the ACTIVE MEDIUM intents (LOW ones too with ``include_low``) waiting on a
    prerequisite that was cancelled, expired or dismissed, whatever the query; return all of
    them as ``(id, priority rank)`` for the omission counts.

    RFC-0013 section 6: such an intent is not cancelled with its prerequisite; a
    DEPENDENCY_CANCELLED event is generated and "the user or owning agent MUST decide". Shown
    only when the query touched it, a dependant waited unseen, blocked for ever; here it comes
    with ``blocked_by`` naming what it waits on, until someone decides (drops or replaces the
    edge, cancels it, or the prerequisite is reopened). HIGH and CRITICAL ones are in anyway;
    these come after the query's own matches, and are loaded page by page as the budget allows."""
    ranks = [Priority.MEDIUM.rank, *([Priority.LOW.rank] if include_low else [])]
    # From the stuck prerequisites to their dependants (two index range scans, then edge and
    # primary-key lookups), not over every ACTIVE intent: cost follows the few that are stuck.
    dependants: set[str] = set()
    for stuck in _STUCK:
        dependants.update(str(r["dependent"]) for r in tx.query(stuck, (ns,)))
    found: list[tuple[str, int, str]] = []
    ids = sorted(dependants)
    for first in range(0, len(ids), 500):
        chunk = ids[first : first + 500]
        found.extend(
            (str(r["id"]), int(r["priority_rank"]), str(r["last_modified_at"]))
            for r in tx.query(
                f"SELECT id, priority_rank, last_modified_at FROM goals_intents WHERE id IN ({_marks(chunk)}) "
                f"AND namespace = ? AND state = 'ACTIVE' AND priority_rank IN ({_marks(ranks)}) "
                f"AND epistemic_type IN ({_marks(epi)})",
                [*chunk, ns, *ranks, *epi],
            )
        )
    # priority first, then most recently changed (ISO times: the reversed string order), then id
    found.sort(key=lambda f: f[0])
    found.sort(key=lambda f: f[2], reverse=True)
    found.sort(key=lambda f: f[1], reverse=True)
    for first in range(0, len(found), _FIRST_PAGE):
        if pk.full:
            break
        page = [f[0] for f in found[first : first + _FIRST_PAGE]]
        rows = tx.query(f"SELECT * FROM goals_intents WHERE id IN ({_marks(page)})", page)
        by_id = {i.id: i for i in load_intents(tx, rows, now)}
        for intent_id in page:
            if pk.full:
                break
            pk.offer(by_id[intent_id], "blocked_prerequisite")
    return [(f[0], f[1]) for f in found]


def _add_semantic(
    tx: Transaction,
    pk: _Packer,
    ns: str,
    now: datetime,
    query: str,
    include_inferred: bool,
    semantic: SemanticMatcher,
    reasons: dict[str, int],
) -> dict[str, int]:
    """MEDIUM intents close in meaning to the query, after the lexical matches."""
    epi = _epistemics(include_inferred)
    rows = tx.query(
        "SELECT * FROM goals_intents WHERE namespace = ? AND state = 'ACTIVE' AND priority_rank = ? "
        f"AND epistemic_type IN ({_marks(epi)}) ORDER BY last_modified_at DESC, id LIMIT {int(semantic.limit)}",
        [ns, Priority.MEDIUM.rank, *epi],
    )
    fresh = [i for i in load_intents(tx, rows, now) if i.id not in pk.seen]
    found = semantic.matches(query, fresh)
    for intent, _score in found:
        if pk.full:
            break
        pk.offer(intent, "semantic_match")
    out = dict(reasons)
    out["not_relevant"] = max(0, out.get("not_relevant", 0) - len(found))
    out["over_budget"] = out.get("over_budget", 0) + sum(1 for i, _ in found if i.id not in _ids(pk))
    return out


def _ids(pk: _Packer) -> set[str]:
    return {i.intent.id for i in pk.items}


def _explicit(tx: Transaction, pk: _Packer, ns: str, now: datetime, filters: dict[str, Any]) -> dict[str, int]:
    """Every intent matching the filters, after the mandatory risks; what does not fit is over budget."""
    where = ["namespace = ?"]
    params: list[Any] = [ns]
    for key, raw in filters.items():
        if raw is None:
            continue
        values = [raw] if isinstance(raw, str) else list(raw)
        if key == "owner":
            # Owners are stored as actors (``bob`` is ``user:bob``), as ``list_intents`` reads
            # them; compared raw, ``owner="bob"`` matched nothing and the bundle came back empty.
            where.append(f"owner IN ({_marks(values)})")
            params.extend(str(actor_text(v)) for v in values)
            continue
        if key not in _FILTERS:
            raise InvalidInput(f"unknown filter {key!r} (state, type, owner, priority, epistemic)", where=key)
        column = {"type": "intent_type", "epistemic": "epistemic_type"}.get(key, key)
        parsed = [parse_enum(_FILTERS[key], v, key).value for v in values]
        where.append(f"{column} IN ({_marks(parsed)})")
        params.extend(parsed)
    if filters.get("epistemic") is None:
        where.append("epistemic_type <> 'DEPRECATED'")
    cond = " AND ".join(where)
    mandatory_refused = len(pk.refused)
    sql = f"SELECT * FROM goals_intents WHERE {cond} ORDER BY priority_rank DESC, created_at DESC, id"
    for intent in _pages(tx, sql, params, now):
        if pk.full:
            break
        pk.offer(intent, "explicit")
    total = int(tx.scalar(f"SELECT COUNT(*) FROM goals_intents WHERE {cond}", params) or 0)
    inside = [i.intent.id for i in pk.items]
    included = 0
    for first in range(0, len(inside), 500):
        chunk = inside[first : first + 500]
        included += int(
            tx.scalar(f"SELECT COUNT(*) FROM goals_intents WHERE {cond} AND id IN ({_marks(chunk)})", [*params, *chunk])
            or 0
        )
    return {"over_budget": max(0, total - included) + mandatory_refused}
