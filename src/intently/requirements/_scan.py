"""``intently req scan``: collect → extract → reconcile → apply → commit.

Reconciliation compares each candidate with every requirement (any status) and with the
candidates already accepted in this scan, by embedding cosine (BM25-token Jaccard without
an embedder), the active rules first:

- the exact wording of a disabled rule is dropped (a person turned it off);
- at or above ``RELATED`` with opposite polarity ("never X" against "X") it contradicts the
  closest active rule, which a new requirement supersedes (status change only, never a
  rewrite), even when an older superseded or disabled wording is closer;
- at or above ``DUPLICATE`` it is the same rule: its source is merged as evidence of an
  active one, or dropped when the match is disabled or superseded (never re-enabled);
- a rewording from the same source file supersedes the old text unless a person edited it;
- otherwise it is created.

The three hard rules hold whatever a proposer says: a disabled requirement is never
re-enabled or superseded away; a ``user_edited`` statement or scope is never rewritten;
nothing is deleted. The changes are applied as one journaled batch (:mod:`._apply`): a
failure or a hard kill leaves either the old state or, rolled forward, the new one, and
the log records the files only once they are in place. Only ``.intently/`` paths are committed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import re
import subprocess
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from ..core import locks
from ..core.errors import ConflictError, IntentlyError, InvalidInput
from ..embed import cosine
from ._apply import apply_changes
from ._bm25 import tokenize
from ._conflicts import _NEG, JACCARD_RELATED, RELATED
from ._extract import Candidate, extract_file, slug
from ._files import FileError, parse_requirement, render_domains, render_new_requirement, rewrite_requirement
from ._llm import LLMExtractor
from ._load import DOMAINS_FILE, SCAN_STATE_FILE, rel
from ._model import Domain, Provenance, Requirement
from ._sources import Source, collect, commit_sources, rewritten_commits
from ._store import Change

if TYPE_CHECKING:
    from .._runtime import Runtime
    from ._engine import Requirements

__all__ = ["DUPLICATE", "RELATED", "ScanReport", "run_scan"]

DUPLICATE = 0.85  # MiniLM cosine: the same rule, reworded at most slightly
JACCARD_DUPLICATE = 0.6
EXTRACTOR = "intently-scan/deterministic@1"
#: Held (``flock``, under the home's git-ignored ``state/``) for the whole of a scan. Not the
#: hooks' ``scan.lock``: a queue drain holds that one while it calls the scan, and a second
#: ``flock`` of the same file in the same process would wait for itself.
SCAN_LOCK = "scan-run.lock"
#: How long a scan waits for another scan of the same home to finish before giving up.
SCAN_LOCK_WAIT = 600.0
_P = ParamSpec("_P")
_LIVE = ("active", "proposed")


@dataclass
class ScanReport:
    created: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    dropped: int = 0
    domains_added: list[str] = field(default_factory=list)
    sources: dict[str, int] = field(default_factory=dict)
    commit: str | None = None
    decisions: list[dict[str, Any]] = field(default_factory=list)
    #: Parts of sources that could not be read (``file:line: ...``); the rest was scanned.
    problems: list[str] = field(default_factory=list)
    #: Created rules that wait for a person's review (``[requirements] scanned = "proposed"``).
    proposed: list[str] = field(default_factory=list)
    #: A proposed rule -> the active rule it replaces once accepted (that one stays in force).
    replaces: dict[str, str] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.merged or self.superseded or self.domains_added)

    def message(self) -> str:
        text = (
            f"intently scan: created {len(self.created)}, merged {len(self.merged)}, "
            f"superseded {len(self.superseded)}, dropped {self.dropped}"
        )
        if self.domains_added:
            text += f"; domains added {len(self.domains_added)}"
        return text

    def summary(self) -> str:
        src = " · ".join(f"{v} {k}" for k, v in sorted(self.sources.items())) or "no new material"
        text = f"{self.message()} ({src})" + (f"; committed {self.commit[:12]}" if self.commit else "")
        if self.proposed:
            text += (
                f"\n{len(self.proposed)} proposed rule(s) wait for review and are not injected until accepted: "
                "intently req list --status proposed, then intently req accept ID / intently req dismiss ID"
            )
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "created": self.created,
            "merged": self.merged,
            "superseded": self.superseded,
            "dropped": self.dropped,
            "domains_added": self.domains_added,
            "sources": self.sources,
            "commit": self.commit,
            "message": self.message(),
            "decisions": self.decisions,
            "problems": self.problems,
            "proposed": self.proposed,
            "replaces": self.replaces,
        }


@dataclass
class _Pending:
    """A requirement as it will be after this scan (existing or new)."""

    id: str
    statement: str
    status: str
    user_edited: bool
    ref: str
    refs: set[str]
    req: Requirement | None = None
    new_text: str | None = None
    evidence_added: list[str] = field(default_factory=list)
    supersede_by: str = ""


def _read_state(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8"))
    except (YAMLError, OSError) as exc:
        raise InvalidInput(f"cannot read the scan state: {exc}", where=str(path)) from exc
    return data if isinstance(data, dict) else {}


def _dump_state(state: dict[str, Any]) -> str:
    y = YAML(typ="safe")
    y.default_flow_style = False
    buf = io.StringIO()
    y.dump(state, buf)
    return "# Written by `intently req scan`: what it has read (cursors). Safe to delete for a full re-scan.\n" + (
        buf.getvalue()
    )


# "OK, let's use httpx instead of requests" was the decision; the rule it leaves is the imperative.
_PROPOSAL = re.compile(r"^(?:(?:ok|okay|so|then|actually|alright|yes)[,.!]?\s+)*(?:let's|lets|let us)\s+", re.I)


def _as_rule(text: str) -> str:
    """A decision's words as a standing rule: a leading "let's" made into the imperative."""
    rule = _PROPOSAL.sub("", text, count=1)
    return text if len(rule.split()) < 2 else rule[0].upper() + rule[1:]


def _decisions(engine: Requirements, since: str | None) -> list[Source]:
    """Decisions the goals engine recorded, if it offers ``decisions(since=...)``."""
    from .._intently import Intently

    goals = Intently(engine._rt).goals
    reader = getattr(goals, "decisions", None)  # optional: the goals engine may not have it yet
    if reader is None:
        return []
    try:
        found = reader(since=since)
    except (NotImplementedError, TypeError, IntentlyError):
        return []  # a goals engine without usable decisions must not stop a scan
    out: list[Source] = []
    for item in found or []:
        data = item if isinstance(item, dict) else getattr(item, "__dict__", {})
        text = _as_rule(str(data.get("statement") or data.get("text") or data.get("title") or "").strip())
        ident = str(data.get("id") or "")
        if text:
            out.append(Source("decision", f"decision:{ident}", text, ident, "project", [], "medium", "decision"))
    return out


class _Similarity:
    def __init__(self, engine: Requirements) -> None:
        self.emb = engine.embedder
        self.dup = DUPLICATE if self.emb is not None else JACCARD_DUPLICATE
        self.related = RELATED if self.emb is not None else JACCARD_RELATED
        self._cache: dict[str, Any] = {}

    def prepare(self, texts: list[str]) -> None:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if not missing:
            return
        if self.emb is not None:
            for t, v in zip(missing, self.emb.embed(missing), strict=True):
                self._cache[t] = v
        else:
            for t in missing:
                self._cache[t] = set(tokenize(t))

    def __call__(self, a: str, b: str) -> float:
        self.prepare([a, b])
        va, vb = self._cache[a], self._cache[b]
        if self.emb is not None:
            return cosine(va, vb)
        return len(va & vb) / len(va | vb) if va | vb else 0.0


@contextlib.contextmanager
def _scan_lock(state_dir: Path) -> Iterator[None]:
    """One scan of a home at a time, across processes and threads.

    Two scans that overlap both read the same scan state and requirements, so each proposes
    every new rule and the second apply writes them all again under new ids (every rule
    twice). A scan therefore waits for a running one to finish (it then finds nothing new)
    and, after :data:`SCAN_LOCK_WAIT` seconds, fails naming the lock instead of hanging.
    The operating system drops the lock when its process dies, so a killed scan never blocks the next.
    """
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / SCAN_LOCK
    with open(path, "a+") as fh:
        deadline = time.monotonic() + SCAN_LOCK_WAIT
        while not locks.try_lock(fh):
            if time.monotonic() >= deadline:
                raise ConflictError(
                    f"{path}: another scan of this project is still running "
                    f"after {SCAN_LOCK_WAIT:g}s; try again when it has finished"
                )
            time.sleep(0.05)
        try:
            yield
        finally:
            locks.unlock(fh)


def _one_at_a_time(
    scan: Callable[Concatenate[Requirements, Runtime, _P], ScanReport],
) -> Callable[Concatenate[Requirements, Runtime, _P], ScanReport]:
    """Run ``scan`` under the home's scan lock: never two scans of one home at once (see
    :func:`_scan_lock`), whoever calls it."""

    @functools.wraps(scan)
    def locked(engine: Requirements, rt: Runtime, /, *args: _P.args, **kwargs: _P.kwargs) -> ScanReport:
        with _scan_lock(rt.home.state_dir):
            return scan(engine, rt, *args, **kwargs)

    return locked


@_one_at_a_time
def run_scan(
    engine: Requirements,
    rt: Runtime,
    *,
    full: bool,
    commit: bool,
    project: Path | None,
    llm: bool = False,
    transcripts: Sequence[str | Path] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> ScanReport:
    """One scan. ``transcripts`` are Claude Code session transcripts (JSONL, e.g. the hooks'
    scan queue) mined from their cursor on, unless the project opted out.

    ``progress(done, total, ref)`` is called before each source is read: a first scan of a
    project with a long history reads hundreds of commits and files through the embedding
    model (tens of seconds), which a command line should show rather than look hung."""
    root = (project or rt.home.project_root).resolve()
    loaded = engine.load()
    state_path = rt.home.path / SCAN_STATE_FILE
    state = _read_state(state_path)
    report = ScanReport()
    cfg = rt.config.requirements
    unreadable: list[str] = []
    sources, hashes = collect(
        root,
        state,
        full=full,
        transcripts=cfg.transcripts,
        mine_transcripts=cfg.inject != "off",
        transcript_files=[Path(t) for t in transcripts or []],
        problems=unreadable,
    )
    report.problems.extend(unreadable)
    commits, head = commit_sources(root, state.get("last_commit"), full=full)
    decisions = _decisions(engine, None if full else state.get("decisions_since"))
    sources += commits + decisions
    for s in sources:
        report.sources[s.kind + "s"] = report.sources.get(s.kind + "s", 0) + 1
        report.problems.extend(s.problems)

    now = rt.clock.now()
    sim = _Similarity(engine)
    pending: list[_Pending] = []
    for r in loaded.requirements:
        refs = {r.meta.provenance.ref, *r.meta.evidence} - {""}
        pending.append(_Pending(r.id, r.statement, r.status, r.meta.user_edited, r.meta.provenance.ref, refs, req=r))
    taken = {p.id for p in pending}
    domains = list(loaded.domains)
    known_domains = {d.name for d in domains}
    changes: list[Change] = []
    new_files: dict[str, str] = {}

    proposed: dict[str, str] = dict(state.get("proposed") or {})
    _carry_over_rewritten(root, state.get("last_commit"), proposed)
    extractor = LLMExtractor.from_config(rt.config.llm) if llm else None
    extracted_by = extractor.name if extractor is not None else EXTRACTOR
    status = cfg.scanned  # "proposed": nothing a scan finds is injected before a person accepts it
    for done, source in enumerate(sources):
        if progress is not None:
            progress(done, len(sources), source.ref)
        strict = source.kind in ("commit", "transcript") or source.format == "doc"
        if extractor is not None:
            cands = extractor.extract(source.ref, source.text) if source.text else []
        elif source.candidates is not None:
            cands = source.candidates
        else:
            cands = extract_file(source.ref, source.text, strict=strict)
        sim.prepare([c.statement for c in cands] + [p.statement for p in pending])
        for cand in cands:
            print_ = _fingerprint(cand, source.identity)
            legacy = _fingerprint(cand) if source.identity else print_
            if print_ not in proposed and legacy in proposed:
                # Proposed by a version that keyed commits by hash (scan-state.yaml of an older
                # home): the same candidate, so it stays dropped, now under its lasting key.
                proposed[print_] = proposed[legacy]
            if print_ in proposed:
                # Already proposed once: whatever people did since (edit, disable, supersede) stands.
                report.dropped += 1
                report.decisions.append(
                    {
                        "statement": cand.statement,
                        "ref": cand.ref,
                        "action": "drop",
                        "reason": "already proposed",
                        "target": proposed[print_],
                    }
                )
                continue
            decision = _reconcile(cand, source, pending, sim)
            proposed[print_] = str(decision.get("target") or "")
            report.decisions.append({"statement": cand.statement, "ref": cand.ref, **decision})
            action = decision["action"]
            if action == "drop":
                report.dropped += 1
                continue
            target = next((p for p in pending if p.id == decision.get("target")), None)
            if action == "merge" and target is not None:
                if cand.ref not in target.refs:
                    target.refs.add(cand.ref)
                    target.evidence_added.append(cand.ref)
                    if target.id not in report.merged:
                        report.merged.append(target.id)
                else:
                    report.dropped += 1
                continue
            # create (and possibly supersede the target)
            # A proposed rule is not in force yet, so the active one it contradicts or rewords
            # stays in force until a person accepts the proposal (which then supersedes it).
            defer = action == "supersede" and target is not None and target.status == "active" and status == "proposed"
            domain = "" if cand.top else slug(cand.heading)
            level = "domain" if (source.paths or domain) else source.level
            prov = Provenance.model_validate(
                {"kind": source.kind, "ref": cand.ref, "extracted_at": now, "extracted_by": extracted_by}
            )
            meta = engine.build(
                cand.statement,
                level=level,
                domains=[domain] if domain else [],
                paths=source.paths,
                languages=[],
                hints=[cand.heading] if cand.heading and not cand.top else [],
                confidence=source.confidence,
                provenance=prov,
                user_edited=False,
                existing=taken,
                status=status,
                replaces=target.id if defer and target is not None else "",
            )
            taken.add(meta.id)
            proposed[print_] = meta.id
            text = render_new_requirement(meta, cand.statement, cand.rationale)
            new_files[meta.id] = text
            pending.append(_Pending(meta.id, cand.statement, status, False, cand.ref, {cand.ref}, new_text=text))
            sim.prepare([cand.statement])
            report.created.append(meta.id)
            if domain and domain not in known_domains:
                known_domains.add(domain)
                paths = list(source.paths) or paths_named_in(cand.heading, rt.home.project_root)
                domains.append(Domain(name=domain, description=cand.heading, paths=paths))
                report.domains_added.append(domain)
            if status == "proposed":
                report.proposed.append(meta.id)
            if defer and target is not None:
                report.replaces[meta.id] = target.id
            elif action == "supersede" and target is not None:
                target.supersede_by = meta.id
                target.status = "superseded"
                report.superseded.append(target.id)

    if progress is not None:
        progress(len(sources), len(sources), "")
    req_dir = rel(rt.home, rt.home.requirements_dir)
    for rid, text in new_files.items():
        changes.append(Change(f"{req_dir}/{rid}.md", text, "REQ_CREATE", rid, status, {"by": "scan"}))
    for p in pending:
        if p.req is None or not (p.evidence_added or p.supersede_by):
            continue
        upd: dict[str, Any] = {"updated": now}
        if p.evidence_added:
            upd["evidence"] = [*p.req.meta.evidence, *p.evidence_added]
        if p.supersede_by:
            upd["status"] = "superseded"
            upd["superseded_by"] = p.supersede_by
        text = rewrite_requirement(p.req.path.read_text(encoding="utf-8"), p.req.path.name, upd, None)
        op = "REQ_STATUS" if p.supersede_by else "REQ_UPDATE"
        detail = {"by": "scan", "evidence": p.evidence_added, "superseded_by": p.supersede_by}
        changes.append(Change(rel(rt.home, p.req.path), text, op, p.id, p.status, detail))
    if report.domains_added:
        changes.append(
            Change(
                DOMAINS_FILE,
                render_domains(domains, loaded.domains_data),
                "DOMAINS_UPDATE",
                DOMAINS_FILE,
                "ok",
                {"added": report.domains_added},
            )
        )
    _validate(changes, rt)
    new_state: dict[str, Any] = {
        "version": 1,
        "last_commit": head,
        "decisions_since": now.isoformat() if decisions or state.get("decisions_since") else None,
        "scanned_docs": hashes["scanned_docs"],
        "scanned_transcripts": hashes["scanned_transcripts"],
        "proposed": dict(sorted(proposed.items())),
    }
    old_core = {k: state.get(k) for k in new_state if k != "decisions_since"}
    if report.changed or old_core != {k: v for k, v in new_state.items() if k != "decisions_since"}:
        new_state["last_scan_at"] = now.isoformat()
        new_state["last_scan_stats"] = {"sources": dict(report.sources), "message": report.message()}
        changes.append(Change(SCAN_STATE_FILE, _dump_state(new_state), "SCAN_STATE", SCAN_STATE_FILE, "ok"))
    if not changes:
        return report
    summary = (
        "REQ_SCAN",
        {"message": report.message(), "sources": report.sources, "full": full, "created": report.created},
    )
    apply_changes(rt, changes, summary=summary, commit=(root, report.message()) if commit and report.changed else None)
    if commit and report.changed:
        report.commit = _git_commit(root, rt.home.path, report.message(), report.problems)
    return report


def _carry_over_rewritten(root: Path, last_commit: str | None, proposed: dict[str, str]) -> None:
    """Key what an older scan proposed from commits a rebase has since rewritten by the
    identity their copies share (see :func:`rewritten_commits`): an older ``scan-state.yaml``
    keyed commit candidates by hash, so without this the copies' rules, reworded or disabled
    since, came back as new rules."""
    for source in rewritten_commits(root, last_commit):
        for cand in extract_file(source.ref, source.text, strict=True) if source.text else []:
            legacy = _fingerprint(cand)
            if legacy in proposed:
                proposed.setdefault(_fingerprint(cand, source.identity), proposed[legacy])


def _fingerprint(cand: Candidate, identity: str = "") -> str:
    """Identifies a candidate by its source (file, or ``identity`` when the source has one
    that outlives its ref, as a rebased commit does) and wording, across scans."""
    key = (identity or cand.ref.split("#", 1)[0]) + "\n" + " ".join(cand.statement.lower().split())
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def _reconcile(cand: Candidate, source: Source, pending: list[_Pending], sim: _Similarity) -> dict[str, Any]:
    """One decision for ``cand``, taken against the *active* rules first.

    A rule that stopped applying (superseded, disabled) must not hide the active rule a
    candidate contradicts: a decision reverted in the sources ("use tabs" -> "never use
    tabs" -> "use tabs") has to supersede the rule now in force, although the closest match
    is the old, superseded wording. Only the exact wording of a rule a person disabled is
    dropped whatever else matches: that rule is never brought back by a scan.
    """
    if not pending:
        return {"action": "create", "reason": "no existing requirement"}
    scored = sorted(((sim(cand.statement, p.statement), p) for p in pending), key=lambda sp: -sp[0])
    neg = bool(_NEG.search(cand.statement))

    def info(score: float, p: _Pending) -> dict[str, Any]:
        return {"target": p.id, "similarity": round(score, 3)}

    wording = _normal(cand.statement)
    for score, p in scored:
        if p.status == "disabled" and _normal(p.statement) == wording:
            return {"action": "drop", "reason": f"same as disabled {p.id}; never re-enabled", **info(score, p)}
    # Embeddings barely see negation ("use X" and "do not use X" score ~0.97), so polarity is
    # compared explicitly before anything counts as the same rule.
    # A proposed rule (awaiting review) counts as live: a re-scan merges into it or replaces
    # it rather than proposing the same rule twice.
    active = [(score, p) for score, p in scored if p.status in _LIVE]
    if active:
        score, p = active[0]
        if score >= sim.related and bool(_NEG.search(p.statement)) != neg:
            if p.req is not None:  # only what existed before this scan
                return {"action": "supersede", "reason": "newer source contradicts it", **info(score, p)}
            return {"action": "create", "reason": f"contradicts active {p.id}; left as it is", **info(score, p)}
    same = [(score, p) for score, p in scored if bool(_NEG.search(p.statement)) == neg]
    if same and same[0][0] >= sim.dup:
        score, p = same[0]
        if p.status not in _LIVE:
            return {"action": "drop", "reason": f"same as {p.status} {p.id}; never re-enabled", **info(score, p)}
        return {"action": "merge", "reason": "near-duplicate: source added as evidence", **info(score, p)}
    if active:
        score, p = active[0]
        if score >= sim.related and p.req is not None:
            same_file = p.ref.split("#", 1)[0] == cand.ref.split("#", 1)[0] and source.kind == "doc"
            if same_file and not p.user_edited:
                return {"action": "supersede", "reason": "reworded in the same source", **info(score, p)}
    score, p = scored[0]
    if score >= sim.related and p.status not in _LIVE and bool(_NEG.search(p.statement)) != neg:
        return {"action": "create", "reason": f"contradicts {p.status} {p.id}; left as it is", **info(score, p)}
    return {"action": "create", "reason": "novel", **info(score, p)}


def _validate(changes: list[Change], rt: Runtime) -> None:
    """Every file this scan would write must parse; otherwise nothing is written."""
    for change in changes:
        if change.op in ("REQ_CREATE", "REQ_UPDATE", "REQ_STATUS"):
            parsed = parse_requirement(rt.home.path / change.file, change.text.encode("utf-8"), display=change.file)
            if isinstance(parsed, FileError):
                raise InvalidInput(f"scan produced an invalid file: {parsed}", where=change.file)


def _git_commit(root: Path, home: Path, message: str, problems: list[str] | None = None) -> str | None:
    """Commit only the requirement files, domains.yaml and scan-state.yaml under ``.intently/``.

    Never raises: by now the files are written and logged, so a git that refuses (a corrupt
    index, a hook-less lock, "dubious ownership") must not turn a finished scan into an
    "internal error", nor break the roll-forward that every later load runs. Why nothing
    was committed goes to ``problems``; the files stay for the person to commit.
    """
    try:
        top = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=root,
            capture_output=True,
            text=True,
            encoding="utf-8",
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    try:
        base = home.relative_to(Path(top).resolve())
    except ValueError:
        return None
    paths = [
        p
        for p in (f"{base}/requirements", f"{base}/{DOMAINS_FILE}", f"{base}/{SCAN_STATE_FILE}")
        if (Path(top) / p).exists()
    ]
    try:
        subprocess.run(
            ["git", "add", "--", *paths], cwd=top, capture_output=True, text=True, encoding="utf-8", check=True
        )
        proc = subprocess.run(
            ["git", "commit", "--no-verify", "-q", "-m", message, "--", *paths],
            cwd=top,
            capture_output=True,
            text=True,
            encoding="utf-8",
        )
        if proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, proc.args, proc.stdout, proc.stderr)
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=top, capture_output=True, text=True, encoding="utf-8", check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        if problems is not None:
            detail = exc.stderr if isinstance(exc, subprocess.CalledProcessError) else exc.strerror
            first = next((line.strip() for line in str(detail or exc).splitlines() if line.strip()), str(exc))
            problems.append(f"{top}: git commit failed ({first}); the files are written, commit them yourself")
        return None


_PATHLIKE = re.compile(r"`?([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.*-]+)*/?)`?")


def paths_named_in(heading: str, root: Path) -> list[str]:
    """Globs for the project folders and files a section heading names ("API (src/api/)",
    "`docs/` conventions"), so the domain it founds reaches the files it is about. Only names
    that exist in the project count, and at least one ``/`` or a dot-extension is required, so
    ordinary words never become paths."""
    found: list[str] = []
    for match in _PATHLIKE.finditer(heading):
        name = match.group(1).strip("/")
        if not name or ("/" not in match.group(1) and "." not in name) or ".." in name.split("/"):
            continue
        target = root / name
        try:
            if target.is_dir():
                found.append(f"{name}/**")
            elif target.is_file():
                found.append(name)
        except OSError:
            continue
    return sorted(set(found))
