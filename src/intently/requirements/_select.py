"""Choosing the requirements one task should see, and saying why for each.

Pipeline: status → deterministic scope (project level; domains by key or path overlap; the
globs and languages of the files the task touches or mentions) → meaning (a hybrid of
embedding cosine and BM25, above a floor) → a cap on project-level rules → contradictions
(of two rules that say opposite things about the same subject only the user-edited or newer
one stays, see :mod:`._conflicts`) → packing by value into the token budget → display
order. Every requirement gets a :class:`Decision`; every candidate that is not shown is in
:attr:`Selection.omissions` with its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from ..core.tokens import TokenCounting, default_counter
from ..embed import Embedder
from ._bm25 import BM25
from ._conflicts import Conflict, resolve_conflicts
from ._model import Domain, Requirement
from ._render import HEADER, bullet, omitted_marker, render_block
from ._scope import canonical_language, glob_depth, language_of, matching_globs, mentioned_paths, overlaps
from ._tokencache import TokenCache

if TYPE_CHECKING:
    from ..embed import VectorIndex

__all__ = ["Decision", "Omission", "Policy", "Scored", "Selection", "requirement_text", "scored", "select"]

_CONFIDENCE = {"high": 0.03, "medium": 0.0, "low": -0.03}


@dataclass(frozen=True)
class Policy:
    """The documented knobs of selection (see docs/requirements.md, "Floors").

    ``floor`` is for a rule no deterministic scope caught; ``scoped_floor`` for one whose
    path or language matched through a glob that more than ``crowd`` rules share (a domain
    match, or a glob few rules share, decides without a floor); ``elsewhere_margin`` is added to ``floor`` for a rule
    whose paths or languages exist but miss every file of the task. ``project_cap`` bounds
    how many project-level rules may be kept, so they cannot crowd out specific ones.
    """

    floor: float
    scoped_floor: float
    elsewhere_margin: float = 0.0
    project_cap: int = 4
    cosine_weight: float = 0.2
    lexical_half: float = 8.0  # BM25 score that maps to 0.5 on the lexical scale
    path_bonus: float = 0.1
    path_depth_bonus: float = 0.04
    crowd: int = 3  # a matched glob shared by at most this many rules keeps them without a floor

    @classmethod
    def for_model(cls, model_id: str | None) -> Policy:
        if model_id is None or model_id.startswith("hashing"):
            return cls(floor=0.4, scoped_floor=0.1, cosine_weight=0.0)
        return cls(floor=0.35, scoped_floor=0.1, cosine_weight=0.2)


@dataclass
class Decision:
    """Why one requirement was kept or dropped."""

    id: str
    kept: bool
    stage: str  # status | scope | floor | cap | conflict | budget | selected
    scope: str  # project | path | language | domain | none | elsewhere | inactive
    reason: str
    score: float | None = None
    cosine: float | None = None
    lexical: float | None = None
    value: float | None = None
    rank: int | None = None
    tokens: int | None = None
    conflicts_with: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kept": self.kept,
            "stage": self.stage,
            "scope": self.scope,
            "reason": self.reason,
            "score": None if self.score is None else round(self.score, 4),
            "cosine": None if self.cosine is None else round(self.cosine, 4),
            "lexical": None if self.lexical is None else round(self.lexical, 4),
            "value": None if self.value is None else round(self.value, 4),
            "rank": self.rank,
            "tokens": self.tokens,
            "conflicts_with": self.conflicts_with,
        }


@dataclass(frozen=True)
class Omission:
    """A requirement that passed scope and floor but is not in the block, and why
    (``budget``: cut by the token budget; ``conflict``: contradicts ``conflicts_with``)."""

    id: str
    stage: str
    reason: str
    conflicts_with: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "stage": self.stage, "reason": self.reason, "conflicts_with": self.conflicts_with}


@dataclass
class Selection:
    """What a task gets: ``items`` in display order, how many were cut by the budget."""

    items: list[Requirement]
    omitted: int
    tokens: int
    block: str
    decisions: list[Decision] = field(default_factory=list)
    explained: bool = False
    model_id: str | None = None
    files: list[str] = field(default_factory=list)
    omissions: list[Omission] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.items]

    @property
    def explain(self) -> list[Decision] | None:
        return self.decisions if self.explained else None

    def render(self) -> str:
        return self.block

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "ids": self.ids,
            "omitted": self.omitted,
            "tokens": self.tokens,
            "model": self.model_id,
            "files": self.files,
            "block": self.block,
            "omissions": [o.to_json() for o in self.omissions],
            "conflicts": [c.to_json() for c in self.conflicts],
        }
        if self.explained:
            data["explain"] = [d.to_json() for d in self.decisions]
        return data


def requirement_text(req: Requirement) -> str:
    """What is embedded and indexed: domain names, statement, rationale, then the hints."""
    head = f"{', '.join(req.scope.domains)}: " if req.scope.domains else ""
    parts = [head + req.statement]
    if req.rationale:
        parts.append(req.rationale)
    parts.extend(req.meta.hints)
    return "\n".join(parts)


def query_text(task: str, files: Sequence[str]) -> str:
    if not files:
        return task
    return task + "\nFiles: " + " ".join(files[:30])


def _scope_of(
    req: Requirement, files: list[str], domains: set[str], domain_paths: dict[str, list[str]]
) -> tuple[str, str, int]:
    """``(scope kind, reason, glob depth)`` from the deterministic stage alone."""
    sc = req.scope
    if sc.level == "project" and not sc.paths and not sc.languages:
        return "project", "project-level rule", 0
    if sc.paths and files:
        hits = matching_globs(sc.paths, files)
        if hits:
            depth = max(glob_depth(g) for g, _ in hits)
            glob, f = hits[0]
            return "path", f"path {glob!r} matches {f}", depth
        names = {PurePosixPath(f).name for f in files}
        for glob in sc.paths:
            last = PurePosixPath(glob.strip()).name
            if last in names and not any(ch in last for ch in "*?[{"):
                return "path", f"file name {last} of {glob!r} is touched by the task", 0
    if sc.languages and files:
        langs = {lang for f in files if (lang := language_of(f)) is not None}
        wanted = {canonical_language(x) for x in sc.languages}
        hit = sorted(langs & wanted)
        if hit:
            return "language", f"language {hit[0]} is used by the task's files", 0
    named = [d for d in sc.domains if d in domains]
    if named:
        return "domain", f"domain {named[0]!r} named by the caller", 1
    for d in sc.domains:
        for glob in domain_paths.get(d, []):
            covered = next((f for f in files if overlaps(glob, f)), None)
            if covered is not None:
                return "domain", f"domain {d!r} covers {covered}", 1
    if (sc.paths or sc.languages) and files:
        return "elsewhere", "its paths/languages miss every file of the task", 0
    if sc.level == "project":
        return "project", "project-level rule", 0
    return "none", "no domain, path or language of the task", 0


def select(
    requirements: Sequence[Requirement],
    task: str,
    *,
    paths: Sequence[str] = (),
    domains: Sequence[str] = (),
    domain_map: Sequence[Domain] = (),
    budget: int = 2000,
    embedder: Embedder | None = None,
    index: VectorIndex | None = None,
    policy: Policy | None = None,
    counter: TokenCounting | None = None,
    explain: bool = False,
    tokens: TokenCache | None = None,
) -> Selection:
    """Run the pipeline over already-loaded requirements (pure: no I/O beyond the index)."""
    return scored(
        requirements,
        task,
        paths=paths,
        domains=domains,
        domain_map=domain_map,
        embedder=embedder,
        index=index,
        policy=policy,
        counter=counter,
        explain=explain,
        tokens=tokens,
    ).pack(budget)


@dataclass
class Scored:
    """The pipeline up to the budget: every stage but packing, which :meth:`pack` runs.

    Only packing depends on the budget, so a caller that tries several budgets for one task
    (the context assembler: a section's share, then the room the others left) scores once
    (loading, embedding, BM25, scopes, conflicts) and packs as often as it needs."""

    requirements: Sequence[Requirement]
    decisions: dict[str, Decision]
    candidates: list[tuple[float, Requirement, Decision]]
    omissions: list[Omission]
    conflicts: list[Conflict]
    files: list[str]
    model_id: str | None
    counter: TokenCounting
    explain: bool
    tokens: TokenCache | None = None
    lines: dict[str, tuple[str, int]] | None = None

    def pack(self, budget: int) -> Selection:
        """The selection within ``budget``; this scoring is left as it was, for the next."""
        copies = {k: replace(d) for k, d in self.decisions.items()}
        candidates = [(v, r, copies[d.id]) for v, r, d in self.candidates]
        return _pack(self, copies, candidates, list(self.omissions), budget)

    def bullets(self) -> dict[str, tuple[str, int]]:
        """Each candidate's line and its tokens, made and counted once for every budget.

        Counting was a tokenizer call per candidate per pack: at 2,000 rules 0.5 s of each
        context block (which packs twice). Now each line is counted once, in one batch, and
        with ``tokens`` a line counted by an earlier process is not counted again."""
        if self.lines is None:
            texts = [bullet(r) for _, r, _ in self.candidates]
            cache = self.tokens if self.tokens is not None else TokenCache(None)
            counts = cache.counts(texts, self.counter)
            self.lines = {r.id: (t, n) for (_, r, _), t, n in zip(self.candidates, texts, counts, strict=True)}
        return self.lines


def scored(
    requirements: Sequence[Requirement],
    task: str,
    *,
    paths: Sequence[str] = (),
    domains: Sequence[str] = (),
    domain_map: Sequence[Domain] = (),
    embedder: Embedder | None = None,
    index: VectorIndex | None = None,
    policy: Policy | None = None,
    counter: TokenCounting | None = None,
    explain: bool = False,
    tokens: TokenCache | None = None,
) -> Scored:
    """Every stage of :func:`select` before the budget. ``index`` and ``tokens`` keep each
    rule text's vector and BM25 tokens between calls (and processes); without them every
    text is embedded and tokenised anew, with the same result."""
    counter = counter or default_counter()
    pol = policy or Policy.for_model(embedder.model_id if embedder is not None else None)
    files = list(dict.fromkeys([p.strip() for p in paths if p.strip()] + mentioned_paths(task)))
    wanted_domains = {d.strip().lower() for d in domains if d.strip()}
    domain_paths = {d.name: list(d.paths) for d in domain_map}
    decisions: dict[str, Decision] = {}

    active = [r for r in requirements if r.status == "active"]
    for r in requirements:
        if r.status != "active":
            why = f"status is {r.status}" + (
                ": awaiting review (intently req accept)" if r.status == "proposed" else ""
            )
            decisions[r.id] = Decision(r.id, False, "status", "inactive", why)

    # Meaning: cosine and BM25 over statement + rationale + hints.
    texts = [requirement_text(r) for r in active]
    query = query_text(task, files)
    cosines = [0.0] * len(active)
    if embedder is not None and active and query.strip():
        import numpy as np  # here, not at import: a prompt with no active rule ranks nothing by meaning

        from ..embed import dot_scores

        if index is not None:
            vecs = index.matrix(texts)
        else:
            vecs = np.asarray(embedder.embed(texts), dtype=np.float64).reshape(len(texts), embedder.dim)
        cosines = dot_scores(vecs, embedder.embed_one(query))
    words: list[list[str]] | None = None
    said: dict[str, list[str]] = {}  # the tokens of each active rule's statement, for conflicts
    if tokens is not None and active:
        both = tokens.tokens(texts + [r.statement for r in active])
        words = both[: len(texts)]
        said = {r.id: w for r, w in zip(active, both[len(texts) :], strict=True)}
    lexical = [s / (s + pol.lexical_half) for s in BM25(texts, tokenized=words).scores(query)] if active else []
    w = pol.cosine_weight if embedder is not None else 0.0

    crowds: dict[str, int] = {}
    for r in active:
        for g in set(r.scope.paths):
            crowds[g] = crowds.get(g, 0) + 1
    candidates: list[tuple[float, Requirement, Decision]] = []
    project: list[tuple[float, Requirement, Decision]] = []
    for r, cos, lex in zip(active, cosines, lexical, strict=True):
        score = w * cos + (1 - w) * lex
        kind, reason, depth = _scope_of(r, files, wanted_domains, domain_paths)
        crowd = min((crowds[g] for g, _ in matching_globs(r.scope.paths, files)), default=0) if kind == "path" else 0
        value = score + _CONFIDENCE.get(r.meta.confidence, 0.0)
        d = Decision(r.id, False, "scope", kind, reason, score=score, cosine=cos if w else None, lexical=lex)
        decisions[r.id] = d
        if kind == "project":
            d.value = value
            project.append((value, r, d))
            continue
        if kind == "path":
            value += pol.path_bonus + pol.path_depth_bonus * min(depth, 4)
        elif kind in ("language", "domain"):
            value += pol.path_bonus / 2
        if kind == "path" and 0 < crowd <= pol.crowd:
            floor = -1.0
            d.reason += f"; a glob only {crowd} rule(s) use, so scope decides"
        elif kind == "domain":
            floor = -1.0  # a domain named by the caller or covering a touched file decides alone
        elif kind in ("path", "language"):
            floor = pol.scoped_floor
        elif kind == "elsewhere":
            floor = pol.floor + pol.elsewhere_margin
        else:
            floor = pol.floor
        d.value = value
        if score < floor:
            d.stage = "floor"
            d.reason += f"; score {score:.3f} below floor {floor:.2f}"
            continue
        d.reason += f"; score {score:.3f} at or above floor {floor:.2f}"
        candidates.append((value, r, d))

    # Project-level rules always apply, but only the best few compete for the budget.
    project.sort(key=lambda t: (-t[0], t[1].order, t[1].id))
    for i, (value, r, d) in enumerate(project):
        if i < pol.project_cap:
            d.reason += f"; among the {pol.project_cap} best-scoring project-level rules"
            candidates.append((value + 0.5, r, d))  # packed first: they apply to every task
        else:
            d.stage = "cap"
            d.reason += f"; project-level cap of {pol.project_cap} reached"

    # Contradictions: of each pair only the user-edited or newer rule competes for the budget.
    omissions: list[Omission] = []
    contenders = [r for _, r, _ in candidates]
    stated = [said[r.id] for r in contenders] if said else None
    survivors, conflicts = resolve_conflicts(contenders, embedder=embedder, tokens=stated)
    if conflicts:
        alive = {r.id for r in survivors}
        for c in conflicts:
            d = decisions[c.dropped]
            d.stage, d.conflicts_with = "conflict", c.kept
            d.reason += f"; conflicts with [{c.kept}], which is kept ({c.why})"
            omissions.append(Omission(c.dropped, "conflict", d.reason, c.kept))
        candidates = [t for t in candidates if t[1].id in alive]
    candidates.sort(key=lambda t: (-t[0], t[1].order, t[1].id))
    return Scored(
        requirements,
        decisions,
        candidates,
        omissions,
        conflicts,
        files,
        embedder.model_id if embedder is not None else None,
        counter,
        explain,
        tokens,
    )


def _pack(
    scoring: Scored,
    decisions: dict[str, Decision],
    candidates: list[tuple[float, Requirement, Decision]],
    omissions: list[Omission],
    budget: int,
) -> Selection:
    """Pack by value into the budget (the header and the marker count too)."""
    counter = scoring.counter
    header = counter.count(HEADER) + 2
    marker = counter.count(omitted_marker(len(candidates)))
    used = header
    kept: list[tuple[float, Requirement, Decision]] = []
    omitted = 0
    lines = scoring.bullets()
    for rank, (value, r, d) in enumerate(candidates, start=1):
        cost = lines[r.id][1] + 1
        d.rank, d.tokens = rank, cost
        # Room for the "(N more omitted)" line whenever something is or may still be left out.
        # A rule that does not fit is passed over, not the end of packing: one oversized rule
        # must not push out every smaller one ranked after it.
        reserve = marker if (omitted or rank < len(candidates)) else 0
        if used + cost + reserve <= budget:
            used += cost
            d.kept, d.stage = True, "selected"
            kept.append((value, r, d))
        else:
            omitted += 1
            d.stage = "budget"
            d.reason += f"; cut by the {budget}-token budget"
            omissions.append(Omission(r.id, "budget", d.reason))
    # Display: project-level first, then by value.
    kept.sort(key=lambda t: (t[2].scope != "project", -t[0], t[1].order, t[1].id))
    items = [r for _, r, _ in kept]
    block = render_block([lines[r.id][0] for r in items], omitted)
    tokens = counter.count(block) if block else 0
    ordered = [decisions[r.id] for r in scoring.requirements if r.id in decisions]
    return Selection(
        items=items,
        omitted=omitted,
        tokens=tokens,
        block=block,
        decisions=ordered,
        explained=scoring.explain,
        model_id=scoring.model_id,
        files=list(scoring.files),
        omissions=omissions,
        conflicts=list(scoring.conflicts),
    )
