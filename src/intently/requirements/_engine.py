"""The :class:`Requirements` facade: files in, selections out, every change in the log."""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from pydantic import ValidationError

from ..access import Permission, may_review, require_reviewer
from ..core.errors import ConflictError, InvalidInput, InvalidTransition, NotFound, first_problem
from ..core.gcpause import gc_paused
from ..core.strings import str_list
from ..embed import Embedder, get_embedder
from ._apply import recover
from ._conflicts import Conflict, RequirementConflictWarning, find_conflicts
from ._files import FileError, parse_requirement, render_domains, render_new_requirement, rewrite_requirement
from ._load import DOMAINS_FILE, LoadResult, load_home, rel
from ._model import Domain, Frontmatter, Provenance, Requirement, Scope, Status, new_requirement_id
from ._render import place
from ._select import Policy, Selection, scored
from ._store import Change, hand_edited, hand_reviewed, observe, write_files
from ._store import record as record_op
from ._tokencache import TokenCache

if TYPE_CHECKING:
    from .._runtime import Runtime
    from ._scan import ScanReport

__all__ = ["Requirements"]

_STATUSES: tuple[str, ...] = get_args(Status)
_List = list  # the facade has a `list` method; annotations inside the class need the builtin

_UNSET: Any = object()


class Requirements:
    """Durable project rules in ``.intently/requirements/``, selected per task under a budget.

    ``embedder``: an :class:`Embedder`, or the name of one (``minilm`` default, ``wordllama``,
    ``hashing``, ``none``); ``INTENTLY_EMBEDDER`` overrides the default name.
    """

    def __init__(self, runtime: Runtime, *, embedder: Embedder | str | None = None) -> None:
        self._rt = runtime
        self._embedder_spec = embedder
        self._embedder: Embedder | Any | None = _UNSET

    # -- loading ----------------------------------------------------------------

    @property
    def embedder(self) -> Embedder | None:
        if self._embedder is _UNSET:
            spec = self._embedder_spec
            if isinstance(spec, Embedder):
                self._embedder = spec
            else:
                self._embedder = get_embedder(spec or os.environ.get("INTENTLY_EMBEDDER") or "minilm")
        result: Embedder | None = self._embedder
        return result

    def load(self) -> LoadResult:
        """Every valid file (bad ones skipped with a warning); outside edits get logged.

        A scan apply that a killed process left half-done is finished (or discarded) first,
        so nothing ever loads, or gets logged as an outside change, from a half-applied scan."""
        self._rt.access.require(self._rt.actor, self._rt.namespace, Permission.READ)
        recover(self._rt)
        result = self._observed(warn=True)
        if self._mark_hand_edits(result):
            result = self._observed()
        if self._settle_hand_reviews(result):
            result = self._observed()
        return result

    def _observed(self, *, warn: bool = False) -> LoadResult:
        """The files as they are, outside changes logged, and hand reviews not yet recorded held."""
        result = load_home(self._rt.home, warn=warn)
        observe(self._rt, result.hashes)
        return self._hold_hand_reviews(result)

    def _hold_hand_reviews(self, loaded: LoadResult) -> LoadResult:
        """Keep a proposal that someone set to ``active`` (or ``disabled``) in the file itself
        a proposal until a logged review records that decision.

        `req accept` is a person's act, logged with ``detail.review``; editing the file was a
        way around both: an agent that may write files (or a pull of someone's unreviewed
        edit) put a proposal in force with nothing in the log saying who reviewed it. So such
        a rule is seen as ``proposed`` (listed, never injected) until :meth:`_settle_hand_reviews`
        records the review: at the next command of an actor who may review and write."""
        prefix = rel(self._rt.home, self._rt.home.requirements_dir)
        names = {f"{prefix}/{r.path.name}": r for r in loaded.requirements}
        reviewed = set(hand_reviewed(self._rt, names))
        if not reviewed:
            return loaded
        held: dict[str, str] = {}
        reqs: _List[Requirement] = []
        for name, req in names.items():
            if name in reviewed:
                held[req.id] = req.status
                req = replace(req, meta=req.meta.model_copy(update={"status": "proposed"}))
            reqs.append(req)
        return replace(loaded, requirements=reqs, held=held)

    def _settle_hand_reviews(self, loaded: LoadResult) -> bool:
        """Finish a review a person made in the file itself, as `req accept` / `dismiss` would.

        A proposal whose file now says ``status: active`` (or ``disabled``) was reviewed in an
        editor; until that review is logged it is held as a proposal (see
        :meth:`_hold_hand_reviews`). Here it is recorded: ``REQ_STATUS`` from ``proposed`` with
        ``detail.review: accept (outside edit)`` (or ``dismiss``), by the actor running the
        command, exactly what `req accept` would have logged.

        A proposed replacement also names the active rule it replaces (``replaces``); `req
        accept` makes it active and supersedes that rule in one write. A person who sets
        ``status: active`` in an editor accepts it just the same, but nothing acted on
        ``replaces``: the old rule and its replacement were both in force. So a rule no longer
        proposed that still names what it ``replaces`` is settled here too: when it is active
        and the replaced rule still is, that one is superseded by it (``REQ_STATUS`` with
        ``detail.review: accept <id> (outside edit)``); in every case ``replaces`` is cleared.
        All writes are one logged batch. Written only by an actor allowed to write and, unless
        ``[review] agents_may_review``, a person (a review act `req accept` keeps for people);
        meanwhile `req validate` names the file and line."""
        held = loaded.held

        def in_file(req: Requirement) -> str:
            return held.get(req.id, req.status)

        pending = [r for r in loaded.requirements if r.id in held or (r.meta.replaces and in_file(r) != "proposed")]
        if not pending or not self._rt.access.can(self._rt.actor, self._rt.namespace, Permission.WRITE):
            return False
        if not may_review(self._rt.actor, self._rt.config.review.agents_may_review):
            return False
        by_id = loaded.by_id()
        now = self._rt.clock.now()
        # One rewrite per file (a rule can both lose its ``replaces`` and be superseded, as in
        # a pair that replace each other: the first one settled wins, never neither).
        fields: dict[str, dict[str, Any]] = {}
        details: dict[str, dict[str, Any]] = {}
        for req in pending:
            status = in_file(req)
            change = fields.setdefault(req.id, {})
            if req.id in held:
                act = "accept" if status == "active" else "dismiss" if status == "disabled" else f"mark {status}"
                details[req.id] = {
                    "by": "outside edit",
                    "from": "proposed",
                    "to": status,
                    "review": f"{act} (outside edit)",
                }
            else:
                details.setdefault(req.id, {"by": "outside edit", "why": f"status set to {status} in the file"})
            if req.meta.replaces:
                change["replaces"] = ""
                details[req.id]["fields"] = ["replaces"]
            old = by_id.get(req.meta.replaces) if req.meta.replaces else None
            retired = {i for i, f in fields.items() if f.get("status") == "superseded"}
            if (
                status == "active"
                and req.id not in retired
                and old is not None
                and old.id != req.id
                and old.status == "active"
                and old.id not in held
                and old.id not in retired
            ):
                fields.setdefault(old.id, {}).update(status="superseded", superseded_by=req.id)
                details[old.id] = {
                    "from": "active",
                    "to": "superseded",
                    "superseded_by": req.id,
                    "review": f"accept {req.id} (outside edit)",
                }
        changes: _List[Change] = []
        for req_id, change in fields.items():
            req = by_id[req_id]
            text = rewrite_requirement(
                req.path.read_text(encoding="utf-8"), req.path.name, {**change, "updated": now}, None
            )
            status = str(change.get("status", in_file(req)))
            op = "REQ_STATUS" if status != in_file(req) or req_id in held else "REQ_UPDATE"
            changes.append(Change(self._file(req_id), text, op, req_id, status, details[req_id], req.content_hash))
        try:
            write_files(self._rt, changes)
        except ConflictError:
            return False  # changed again meanwhile: the next load sees it
        return True

    def _mark_hand_edits(self, loaded: LoadResult) -> bool:
        """Set ``user_edited`` on each requirement whose statement or scope a person changed
        in the file itself, as `req edit` would: the spec's "user_edited once a human touches
        statement/scope" holds for any editor, so a later scan never supersedes the person's
        wording as a rewording. Written (and logged, ``REQ_UPDATE`` by ``outside edit``) only
        by an actor allowed to write; otherwise the next writer's load records it."""
        prefix = rel(self._rt.home, self._rt.home.requirements_dir)  # once: resolve() per file cost seconds
        names = {f"{prefix}/{r.path.name}": r for r in loaded.requirements}
        edited = hand_edited(self._rt, names)
        if not edited or not self._rt.access.can(self._rt.actor, self._rt.namespace, Permission.WRITE):
            return False
        now = self._rt.clock.now()
        changes: _List[Change] = []
        for name in edited:
            req = names[name]
            raw = req.path.read_text(encoding="utf-8")
            text = rewrite_requirement(raw, req.path.name, {"user_edited": True, "updated": now}, None)
            detail = {"by": "outside edit", "fields": ["user_edited"], "why": "statement or scope changed in the file"}
            changes.append(Change(name, text, "REQ_UPDATE", req.id, req.status, detail, req.content_hash))
        try:
            write_files(self._rt, changes)
        except ConflictError:
            return False  # changed again meanwhile: the next load sees it
        return True

    def validate(self) -> _List[FileError]:
        """Problems in the files, each naming file, line and field (nothing is skipped silently).

        Active requirements that contradict each other are not errors (each file is valid)
        but are warned about, naming both files, since selection will show only one of them."""
        self._rt.access.require(self._rt.actor, self._rt.namespace, Permission.READ)
        recover(self._rt)
        loaded = self._hold_hand_reviews(load_home(self._rt.home, warn=False))
        if self._settle_hand_reviews(loaded):
            loaded = self._hold_hand_reviews(load_home(self._rt.home, warn=False))
        for conflict in self._conflicts(loaded):
            warnings.warn(conflict.message(), RequirementConflictWarning, stacklevel=2)
        return loaded.errors + self._broken_supersedes(loaded)

    def _broken_supersedes(self, loaded: LoadResult) -> _List[FileError]:
        """Each file is valid alone, but supersession links files: a superseded rule must point
        at another rule that exists, the chain of successors must end (a cycle A -> B -> A leaves
        no rule in force, so both vanish from selection), and a rule still in force names no
        successor (``superseded_by`` is set only when the status is superseded). `req supersede`
        refuses all of these; a hand edit must not slip them in."""
        by_id = loaded.by_id()
        errors: _List[FileError] = []
        for req in loaded.requirements:
            target = req.meta.superseded_by
            if req.status != "superseded":
                why = (
                    f"a rule with status {req.status} names no successor (superseded_by {target}); "
                    "set status: superseded or clear it"
                    if target
                    else None
                )
            elif not target:
                why = "a superseded rule names the rule that replaces it"
            elif target == req.id:
                why = "a rule cannot supersede itself"
            elif target not in by_id:
                why = f"no requirement {target}"
            else:
                why = _cycle(req.id, by_id)
            if why is not None:
                errors.append(self._field_error(req, "superseded_by", why))
            if req.id in loaded.held:
                # Reviewed in the file (see _hold_hand_reviews), by no one who may review yet.
                why = (
                    f"status {loaded.held[req.id]} set in the file on a proposed rule, a review nothing logged: "
                    "it stays proposed (not injected) until the next `intently req` command by a person who "
                    "may write records it (or run `intently req accept` / `dismiss`)"
                )
                errors.append(self._field_error(req, "status", why))
            elif req.meta.replaces and req.status != "proposed":
                # Reviewed in the file (see _settle_hand_reviews), by an actor who may not write.
                why = (
                    f"status {req.status} but still replaces {req.meta.replaces}: a review made in the file; "
                    "the next `intently req` command by a person who may write settles it "
                    "(or clear replaces and supersede the old rule)"
                )
                errors.append(self._field_error(req, "replaces", why))
        return errors

    def _field_error(self, req: Requirement, field: str, why: str) -> FileError:
        """A problem with one top-level field of ``req``'s file, at the line that sets it."""
        text = req.path.read_text(encoding="utf-8", errors="replace").splitlines()
        line = next((n for n, t in enumerate(text, 1) if t.lstrip().startswith(f"{field}:")), None)
        return FileError(rel(self._rt.home, req.path), line, field, why)

    def conflicts(self) -> _List[Conflict]:
        """Every pair of active requirements that contradict each other (see :mod:`._conflicts`)."""
        return self._conflicts(self.load())

    def _conflicts(self, loaded: LoadResult) -> _List[Conflict]:
        active = [r for r in loaded.requirements if r.status == "active"]
        home = self._rt.home
        return [
            replace(
                c,
                kept_file=rel(home, home.requirements_dir / f"{c.kept}.md"),
                dropped_file=rel(home, home.requirements_dir / f"{c.dropped}.md"),
            )
            for c in find_conflicts(active, embedder=self.embedder)
        ]

    def list(self, *, status: str | None = None, domain: str | None = None) -> _List[Requirement]:
        """The requirements, filtered by status and domain. A status that no requirement can
        have (``activ``, ``ACTIVE``) is :class:`InvalidInput` naming ``status``: matching it
        literally would answer "no requirements" and send the reader looking for a missing file."""
        reqs = self.load().requirements
        if status:
            wanted = status.strip().lower()
            if wanted not in _STATUSES:
                raise InvalidInput(f"unknown status {status!r} (one of {', '.join(_STATUSES)})", where="status")
            reqs = [r for r in reqs if r.status == wanted]
        if domain:
            reqs = [r for r in reqs if domain in r.scope.domains]
        return reqs

    def get(self, req_id: str) -> Requirement:
        found = self.load().by_id().get(req_id)
        if found is None:
            raise NotFound(f"no requirement {req_id!r}")
        return found

    def domains(self) -> _List[Domain]:
        return self.load().domains

    # -- writing ----------------------------------------------------------------

    def _file(self, req_id: str) -> str:
        return rel(self._rt.home, self._rt.home.requirements_dir / f"{req_id}.md")

    def add(
        self,
        statement: str,
        *,
        rationale: str = "",
        level: str | None = None,
        domains: Sequence[str] = (),
        paths: Sequence[str] = (),
        languages: Sequence[str] = (),
        hints: Sequence[str] = (),
        confidence: str = "high",
        provenance: Provenance | None = None,
        user_edited: bool = True,
    ) -> Requirement:
        """A new requirement (``user_edited``, confidence high by default): ``active`` when a
        person writes it, ``proposed`` when an agent does.

        A rule in force is injected into every agent's prompt. A scan's findings wait for a
        person's review (``req accept``) because what it read may carry a prompt injection;
        an agent's ``add`` is the same risk one step shorter (it writes what a page or a commit
        message told it to), so it is a proposal too: ``proposed``, listed, never injected until
        a person accepts it, unless the home lets agents review (``[review] agents_may_review``),
        the same rule that lets an agent accept a proposal."""
        reviewed = may_review(self._rt.actor, self._rt.config.review.agents_may_review)
        status = "active" if reviewed else "proposed"
        meta = self.build(
            statement,
            level=level,
            domains=domains,
            paths=paths,
            languages=languages,
            hints=hints,
            confidence=confidence,
            provenance=provenance or Provenance(kind="user", ref="", extracted_by=str(self._rt.actor)),
            user_edited=user_edited,
            status=status,
        )
        text = render_new_requirement(meta, statement.strip(), rationale.strip())
        detail = None if reviewed else {"review": "awaiting: added by an agent"}
        write_files(self._rt, [Change(self._file(meta.id), text, "REQ_CREATE", meta.id, status, detail)])
        return self.get(meta.id)

    def build(
        self,
        statement: str,
        *,
        level: str | None,
        domains: Sequence[str],
        paths: Sequence[str],
        languages: Sequence[str],
        hints: Sequence[str],
        confidence: str,
        provenance: Provenance,
        user_edited: bool,
        existing: set[str] | None = None,
        status: str = "active",
        replaces: str = "",
    ) -> Frontmatter:
        """Frontmatter for a new requirement with a fresh, unused id."""
        _check_statement(statement.strip(), where="statement")
        # Every file name taken (a superset of the valid ids), without parsing each file.
        taken = existing if existing is not None else {p.stem for p in self._rt.home.requirements_dir.glob("req-*.md")}
        req_id = new_requirement_id()
        while req_id in taken:
            req_id = new_requirement_id()
        now = self._rt.clock.now()
        lvl = level or ("domain" if (domains or paths or languages) else "project")
        _check_reachable({"level": lvl, "domains": domains, "paths": paths, "languages": languages}, where="scope")
        try:
            return Frontmatter.model_validate(
                {
                    "id": req_id,
                    "status": status,
                    "replaces": replaces,
                    "scope": {
                        "level": lvl,
                        "domains": list(domains),
                        "paths": list(paths),
                        "languages": list(languages),
                    },
                    "hints": list(hints),
                    "confidence": confidence,
                    "user_edited": user_edited,
                    "provenance": provenance.model_dump(),
                    "created": now,
                    "updated": now,
                }
            )
        except ValidationError as exc:
            field, message = first_problem(exc)
            raise InvalidInput(message, where=field or "requirement") from exc

    def edit(
        self,
        req_id: str,
        *,
        statement: str | None = None,
        rationale: str | None = None,
        level: str | None = None,
        domains: Sequence[str] | None = None,
        paths: Sequence[str] | None = None,
        languages: Sequence[str] | None = None,
        hints: Sequence[str] | None = None,
        confidence: str | None = None,
    ) -> tuple[Requirement, _List[str]]:
        """Change fields in place (comments and key order kept). Returns the requirement and
        the fields that actually changed; ``user_edited`` is set only when the statement or
        the scope changed, so re-saving the same text does not pin a requirement."""
        req = self.get(req_id)
        changes: dict[str, Any] = {}
        changed: _List[str] = []
        new_statement = statement.strip() if statement is not None else req.statement
        if statement is not None:
            _check_statement(new_statement, where=f"{req_id}: statement")
        new_rationale = " ".join(rationale.split()) if rationale is not None else req.rationale
        if new_statement != req.statement:
            changed.append("statement")
        if new_rationale != req.rationale:
            changed.append("rationale")
        scope = req.scope.model_dump()
        for key, value in (("level", level), ("domains", domains), ("paths", paths), ("languages", languages)):
            if value is not None:
                new = value if isinstance(value, str) else list(value)
                if new != scope[key]:
                    scope[key] = new
                    changes[f"scope.{key}"] = new
                    changed.append(f"scope.{key}")
        _check_reachable(scope, where=f"{req_id}: scope")
        try:
            Scope.model_validate(scope)
            if confidence is not None:
                Frontmatter.model_validate({**req.meta.model_dump(), "confidence": confidence})
        except ValidationError as exc:
            field, message = first_problem(exc)
            raise InvalidInput(message, where=f"{req_id}: {field}" if field else req_id) from exc
        if hints is not None and list(hints) != req.meta.hints:
            changes["hints"] = list(hints)
            changed.append("hints")
        if confidence is not None and confidence != req.meta.confidence:
            changes["confidence"] = confidence
            changed.append("confidence")
        if not changed:
            return req, []
        scope_or_statement = "statement" in changed or any(c.startswith("scope.") for c in changed)
        if scope_or_statement and not req.meta.user_edited:
            changes["user_edited"] = True
        changes["updated"] = self._rt.clock.now()
        raw = req.path.read_text(encoding="utf-8")
        body = (new_statement, new_rationale) if ("statement" in changed or "rationale" in changed) else None
        text = rewrite_requirement(raw, req.path.name, changes, body)
        write_files(
            self._rt,
            [Change(self._file(req_id), text, "REQ_UPDATE", req_id, req.status, {"fields": changed}, req.content_hash)],
        )
        return self.get(req_id), changed

    def edit_text(self, req_id: str, text: str, *, base_hash: str | None = None) -> tuple[Requirement, _List[str]]:
        """Replace a file with ``text`` (an editor's result): validated first, then written
        with ``user_edited`` set only if the statement or scope changed. The id and the
        status cannot change this way.

        ``base_hash`` is the content hash of the file the text was edited from. An editor can
        stay open for minutes; if the file changed meanwhile, writing ``text`` would silently
        undo that change, so it raises :class:`ConflictError` and writes nothing."""
        req = self.get(req_id)
        if base_hash is not None and base_hash != req.content_hash:
            raise ConflictError(f"{self._file(req_id)}: changed while it was being edited; re-open it and edit again")
        parsed = parse_requirement(req.path, text.encode("utf-8"), display=self._file(req_id))
        if isinstance(parsed, FileError):
            raise InvalidInput(parsed.message, where=str(parsed).rsplit(": ", 1)[0])
        if parsed.status != req.status:
            raise InvalidInput("change the status with enable, disable or supersede", where=f"{req_id}: status")
        changed = [
            name
            for name, old, new in (
                ("statement", req.statement, parsed.statement),
                ("rationale", req.rationale, parsed.rationale),
                ("scope", req.scope, parsed.scope),
                ("hints", req.meta.hints, parsed.meta.hints),
                ("confidence", req.meta.confidence, parsed.meta.confidence),
            )
            if old != new
        ]
        if parsed.content_hash == req.content_hash:
            return req, []
        extra: dict[str, Any] = {"updated": self._rt.clock.now()}
        if ("statement" in changed or "scope" in changed) and not parsed.meta.user_edited:
            extra["user_edited"] = True
        final = rewrite_requirement(text, req.path.name, extra, None)
        detail = {"fields": changed or ["format"]}
        write_files(
            self._rt, [Change(self._file(req_id), final, "REQ_UPDATE", req_id, req.status, detail, req.content_hash)]
        )
        return self.get(req_id), changed

    def _set_status(
        self, req_id: str, status: str, *, superseded_by: str = "", review: str = "", req: Requirement | None = None
    ) -> Requirement:
        req = req or self.get(req_id)
        if req.status == status and req.meta.superseded_by == superseded_by:
            return req  # idempotent
        if req.status == "superseded":
            raise InvalidTransition("requirement", req.status, status, detail="superseded is terminal")
        if status == "proposed":
            raise InvalidTransition("requirement", req.status, status, detail="only a scan proposes a rule")
        if req.status == "proposed":
            # A scan proposes and a person decides, as for the goals engine's candidates: an
            # agent that could accept proposals could put what it (or a prompt injection in a
            # page it read, or in a commit message) proposed into every agent's prompt.
            act = "accept" if status == "active" else "dismiss" if status == "disabled" else f"mark {status}"
            require_reviewer(
                self._rt.actor,
                self._rt.config.review.agents_may_review,
                f"{act} requirement {req_id} awaiting review",
                review_with="`intently req accept` / `dismiss`",
            )
        now = self._rt.clock.now()
        changes: dict[str, Any] = {"status": status, "updated": now}
        if superseded_by or req.meta.superseded_by:
            changes["superseded_by"] = superseded_by
        replaced: Requirement | None = None
        if req.meta.replaces:
            changes["replaces"] = ""  # settled: accepted (it supersedes that rule now) or not
            if status == "active":
                found = self.load().by_id().get(req.meta.replaces)
                replaced = found if found is not None and found.status == "active" else None
        text = rewrite_requirement(req.path.read_text(encoding="utf-8"), req.path.name, changes, None)
        detail: dict[str, Any] = {"from": req.status, "to": status, "superseded_by": superseded_by}
        if review:
            detail["review"] = review
        batch = [Change(self._file(req_id), text, "REQ_STATUS", req_id, status, detail, req.content_hash)]
        if replaced is not None:
            # Accepting a proposed replacement retires the rule it replaces in the same batch:
            # never both in force, never neither.
            old = rewrite_requirement(
                replaced.path.read_text(encoding="utf-8"),
                replaced.path.name,
                {"status": "superseded", "superseded_by": req_id, "updated": now},
                None,
            )
            why = {"from": "active", "to": "superseded", "superseded_by": req_id, "review": f"{review} {req_id}"}
            batch.append(
                Change(
                    self._file(replaced.id), old, "REQ_STATUS", replaced.id, "superseded", why, replaced.content_hash
                )
            )
        write_files(self._rt, batch)
        return self.get(req_id)

    def disable(self, req_id: str) -> Requirement:
        """Stop injecting a rule; a proposed one is dismissed (a scan never proposes it again)."""
        req = self.get(req_id)
        return self._set_status(req_id, "disabled", review="dismiss" if req.status == "proposed" else "", req=req)

    def enable(self, req_id: str) -> Requirement:
        """Make a disabled rule active again; a proposed one is accepted (see :meth:`accept`)."""
        req = self.get(req_id)
        return self._set_status(req_id, "active", review="accept" if req.status == "proposed" else "", req=req)

    def accept(self, req_id: str) -> Requirement:
        """A person accepts a rule a scan proposed: it becomes ``active`` and is injected from
        now on; the active rule it ``replaces`` (if still active) is superseded by it in the
        same write. Logged as ``REQ_STATUS`` with ``detail.review: accept``. Accepting an
        active rule changes nothing; a disabled or superseded one is refused (``enable`` is
        the person's way back for a disabled rule)."""
        return self._review(req_id, "active", "accept", way_back="enable")

    def dismiss(self, req_id: str) -> Requirement:
        """A person rejects a rule a scan proposed: it becomes ``disabled`` (kept, never
        injected, never proposed again by a scan). Logged as ``REQ_STATUS`` with
        ``detail.review: dismiss``. Dismissing a disabled rule changes nothing; an active or
        superseded one is refused (``disable`` turns off a rule in force)."""
        return self._review(req_id, "disabled", "dismiss", way_back="disable")

    def _review(self, req_id: str, status: str, review: str, *, way_back: str) -> Requirement:
        """Decide a proposed rule (``review``: accept or dismiss) by moving it to ``status``;
        already there changes nothing, and any other rule is refused, naming ``way_back``."""
        req = self.get(req_id)
        if req.status == status:
            return req
        if req.status != "proposed":
            raise InvalidTransition(
                "requirement", req.status, status, detail=f"{req_id} is not awaiting review; use {way_back}"
            )
        return self._set_status(req_id, status, review=review, req=req)

    def supersede(self, req_id: str, *, by: str) -> Requirement:
        """Mark ``req_id`` superseded by the existing requirement ``by`` (terminal)."""
        if by == req_id:
            raise InvalidInput("a requirement cannot supersede itself", where=req_id)
        target = self.get(by)
        if target.status != "active":
            raise InvalidInput(f"{by} is {target.status}; only an active requirement can supersede", where=by)
        return self._set_status(req_id, "superseded", superseded_by=by)

    # -- domains ----------------------------------------------------------------

    def add_domain(self, name: str, *, description: str = "", paths: Sequence[str] = ()) -> Domain:
        loaded = self.load()
        if any(d.name == name for d in loaded.domains):
            raise InvalidInput(f"domain {name!r} already exists", where=DOMAINS_FILE)
        try:
            dom = Domain(name=name, description=description, paths=list(paths), user_edited=True)
        except ValidationError as exc:
            # The first problem's own message: the first line of pydantic's text is only
            # "1 validation error for Domain", which says neither what nor why.
            field, message = first_problem(exc)
            raise InvalidInput(message.removeprefix("Value error, "), where=f"{DOMAINS_FILE}: {field}") from exc
        self._write_domains([*loaded.domains, dom], loaded, {"added": [name]})
        return dom

    def edit_domain(self, name: str, *, description: str | None = None, paths: Sequence[str] | None = None) -> Domain:
        loaded = self.load()
        current = next((d for d in loaded.domains if d.name == name), None)
        if current is None:
            raise NotFound(f"no domain {name!r}")
        updated = current.model_copy(
            update={
                "description": current.description if description is None else description,
                "paths": current.paths if paths is None else list(paths),
                "user_edited": True,
            }
        )
        doms = [updated if d.name == name else d for d in loaded.domains]
        self._write_domains(doms, loaded, {"edited": [name]})
        return updated

    def _write_domains(self, domains: _List[Domain], loaded: LoadResult, detail: dict[str, Any]) -> None:
        if any(e.file == DOMAINS_FILE for e in loaded.errors):
            raise InvalidInput("fix domains.yaml before changing domains", where=DOMAINS_FILE)
        text = render_domains(domains, loaded.domains_data)
        write_files(self._rt, [Change(DOMAINS_FILE, text, "DOMAINS_UPDATE", DOMAINS_FILE, "ok", detail)])

    # -- selection --------------------------------------------------------------

    def injection_enabled(self) -> bool:
        return self._rt.config.requirements.inject != "off"

    def select(
        self,
        task: str,
        *,
        paths: str | Sequence[str] = (),
        domains: str | Sequence[str] = (),
        budget: int | None = None,
        explain: bool = False,
        inject: bool = True,
        record: bool = True,
        policy: Policy | None = None,
    ) -> Selection:
        """The requirements ``task`` should see. ``inject=False`` (or ``[requirements] inject =
        "off"``) opts out and returns an empty selection. With ``record`` the injected ids go
        into the log as ``REQ_INJECTED``; a caller that may still leave the block out selects
        with ``record=False`` and calls :meth:`record_injected` once it is delivered.
        ``paths`` and ``domains`` take a list, or one bare string as a single item."""
        if not inject or not self.injection_enabled():
            self._rt.access.require(self._rt.actor, self._rt.namespace, Permission.READ)
            return Selection(items=[], omitted=0, tokens=0, block="", explained=explain)
        chosen = self.selector(task, paths=paths, domains=domains, explain=explain, policy=policy)(budget)
        if record:
            self.record_injected(chosen, task)
        return chosen

    @gc_paused()  # loading and scoring every rule: many objects and no cycles (core/gcpause)
    def selector(
        self,
        task: str,
        *,
        paths: str | Sequence[str] = (),
        domains: str | Sequence[str] = (),
        explain: bool = False,
        policy: Policy | None = None,
    ) -> Callable[[int | None], Selection]:
        """:meth:`select` for one task under any budget: the rules are loaded and ranked once,
        here, and the function returned packs them into the budget it is given (``None``: the
        configured one) without recording anything. The context assembler tries a section's
        share, then the room the others left; selecting anew each time loaded, embedded and
        ranked every rule again (twice per block with 1,000 rules: seconds)."""
        if not self.injection_enabled():
            self._rt.access.require(self._rt.actor, self._rt.namespace, Permission.READ)
            return lambda budget: Selection(items=[], omitted=0, tokens=0, block="", explained=explain)
        loaded = self.load()
        # With no active rule there is nothing to rank by meaning: loading the embedder (an
        # onnxruntime session, about a second of CPU in a hook's one-shot process) would buy
        # nothing but the model's name in the explanation.
        emb = self.embedder if any(r.status == "active" for r in loaded.requirements) else None
        index = None
        if emb is not None:
            from ..embed import VectorIndex  # numpy with it: only when there is something to rank

            index = VectorIndex(self._rt.home.index_dir, emb, name="requirements")
        scoring = scored(
            loaded.requirements,
            task,
            paths=project_paths(str_list(paths), task, self._rt.home.project_root),
            domains=str_list(domains),
            domain_map=loaded.domains,
            embedder=emb,
            index=index,
            policy=policy,
            explain=explain,
            tokens=TokenCache(self._rt.home.index_dir),
        )
        default = self._rt.config.requirements.budget
        return lambda budget: scoring.pack(budget if budget is not None else default)

    def record_injected(self, chosen: Selection, task: str) -> bool:
        """Log (``REQ_INJECTED``) that ``chosen`` was injected for ``task``; False when it held
        nothing. Only for a block that was delivered: the log is the record of what rules an
        agent was actually shown."""
        if not chosen.items:
            return False
        payload = {
            "ids": chosen.ids,
            "omitted": chosen.omitted,
            "tokens": chosen.tokens,
            "task_sha256": hashlib.sha256(task.encode("utf-8")).hexdigest(),
            "model": chosen.model_id,
        }
        with self._rt.store.transaction() as tx:
            self._rt.access.require(self._rt.actor, self._rt.namespace, Permission.READ, tx)
            record_op(self._rt, tx, "REQ_INJECTED", target="requirements", payload=payload)
        return True

    def inject(
        self,
        prompt: str,
        task: str,
        *,
        paths: str | Sequence[str] = (),
        domains: str | Sequence[str] = (),
        budget: int | None = None,
        inject: bool = True,
    ) -> str:
        """``prompt`` with the block at ``{{ intent }}``, or prepended; unchanged when opted out."""
        chosen = self.select(task, paths=paths, domains=domains, budget=budget, inject=inject)
        return place(prompt, chosen.block)

    # -- scanning ---------------------------------------------------------------

    def scan(
        self,
        *,
        full: bool = False,
        commit: bool = True,
        project: Path | None = None,
        llm: bool = False,
        transcripts: Sequence[str | Path] | None = None,
        progress: Callable[[int, int, str], None] | None = None,
    ) -> ScanReport:
        """Collect, extract, reconcile and apply (see :mod:`._scan`). ``llm`` lets the
        ``[llm]`` endpoint propose the candidates instead of the deterministic extractor.
        ``transcripts`` are Claude Code session transcripts (JSONL) to mine as well, from
        where the last scan of each stopped (the hooks' scan queue hands them over).
        ``progress(done, total, ref)`` is called before each source is read, and once at the end."""
        from ._scan import run_scan

        return run_scan(
            self,
            self._rt,
            full=full,
            commit=commit,
            project=project,
            llm=llm,
            transcripts=transcripts,
            progress=progress,
        )


#: A rule is a sentence or a short paragraph; anything longer is a document, not a requirement
#: (and would crowd every other rule out of the block).
MAX_STATEMENT_CHARS = 5000


def _check_statement(statement: str, *, where: str) -> None:
    """Refuse, before anything is written, a statement that would make the file unreadable
    (empty: the loader skips a file with no statement, so saving one would lose the rule)."""
    if not statement:
        raise InvalidInput("a requirement needs a statement; disable it instead of emptying it", where=where)
    if len(statement) > MAX_STATEMENT_CHARS:
        raise InvalidInput(
            f"a statement is at most {MAX_STATEMENT_CHARS} characters ({len(statement)} given)", where=where
        )


def _check_reachable(scope: dict[str, Any], *, where: str) -> None:
    """A domain-level rule with no domain, path or language would never be selected."""
    if scope.get("level") == "domain" and not (scope.get("domains") or scope.get("paths") or scope.get("languages")):
        raise InvalidInput(
            "a domain-level rule needs a domain, a path or a language, or it never applies; use level project",
            where=where,
        )


_SEGMENT = r"[\w.@+-]+"


def project_paths(paths: Sequence[str], task: str, root: Path) -> _List[str]:
    """The task's files as the globs see them: relative to the project, with ``/``.

    Globs are project-relative (``pkg/gui/**``), but an agent names files as its tools do:
    absolute (``/home/me/proj/pkg/gui/refresh.go`` from Claude Code's ``file_path``, or in the
    prompt's text) or with Windows separators. Those missed every path-scoped rule, so the
    rule written for exactly that file was not injected. An absolute path inside the project
    becomes relative; one outside it is kept as given (no project rule governs it). Absolute
    paths under the project named in ``task`` are added too (the text scan skips them)."""
    roots = sorted({root.as_posix().rstrip("/"), root.resolve().as_posix().rstrip("/")}, key=len, reverse=True)
    out: _List[str] = []
    for given in paths:
        path = given.strip().replace("\\", "/")
        if path.startswith("/"):
            norm = posixpath.normpath(path)
            inside = next((norm[len(r) + 1 :] for r in roots if norm.startswith(r + "/")), None)
            path = inside or path
        out.append(path)
    for r in roots:
        for match in re.finditer(re.escape(r) + rf"/({_SEGMENT}(?:/{_SEGMENT})*)", task):
            out.append(posixpath.normpath(match.group(1)).rstrip("."))
    return _List(dict.fromkeys(p for p in out if p))


def _cycle(start: str, by_id: dict[str, Requirement]) -> str | None:
    """The message for a supersession chain from ``start`` that comes back to it, else ``None``."""
    chain = [start]
    current = by_id[start]
    while current.status == "superseded" and current.meta.superseded_by in by_id:
        nxt = current.meta.superseded_by
        if nxt == start:
            return "supersession cycle: " + " -> ".join([*chain, start]) + "; no rule of it is in force"
        if nxt in chain:
            return None  # a cycle further down the chain: reported on its own members
        chain.append(nxt)
        current = by_id[nxt]
    return None
