"""``intently req``: project requirements as files: list, show, add, edit, select, scan."""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from ..core.errors import ConflictError, IntentlyError, InvalidInput
from ._common import JsonOpt, emit, err, escape, open_home, out, progress_bar, table

req_app = typer.Typer(help="Standing project requirements: files in .intently/requirements/.", no_args_is_help=True)
domains_app = typer.Typer(help="The domain map in .intently/domains.yaml.", no_args_is_help=True)

# What each repeatable scope option means, so `--help` says more than "repeat for several".
DomainOpt = Annotated[
    list[str] | None, typer.Option("--domain", help="A domain of domains.yaml the rule belongs to (repeatable).")
]
PathOpt = Annotated[
    list[str] | None,
    typer.Option("--path", help="A glob of the files it governs, gitignore-style: src/api/** (repeatable)."),
]
LanguageOpt = Annotated[
    list[str] | None,
    typer.Option("--language", help="A language it governs, matched by file extension: go, py (repeatable)."),
]
HintOpt = Annotated[
    list[str] | None,
    typer.Option("--hint", help="A phrasing that should find it (retrieval only, never injected; repeatable)."),
]
ReqIdArg = Annotated[str, typer.Argument(help="The requirement id, as `req list` shows it (req-3f9a0c2b71de).")]


@contextlib.contextmanager
def _home(ctx: typer.Context) -> Iterator[Any]:
    """Open the home; a skipped requirement file becomes one ``warning:`` line on stderr."""
    from ..requirements import RequirementFileWarning  # the engine loads here, not for `intently --help`

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RequirementFileWarning)
        with open_home(ctx) as ix:
            yield ix
    for item in caught:
        if issubclass(item.category, RequirementFileWarning):
            err.print(f"[yellow]warning:[/yellow] {escape(str(item.message))}")
        else:
            warnings.showwarning(item.message, item.category, item.filename, item.lineno)


def _row(r: Any) -> list[Any]:
    scope = "project" if r.scope.level == "project" else ",".join(r.scope.domains) or "domain"
    if r.scope.paths:
        scope += " @" + ",".join(r.scope.paths)
    first = r.statement.splitlines()[0]
    return [r.id, r.status, scope, r.meta.provenance.kind, first[:60] + ("…" if len(first) > 60 else "")]


@req_app.command("list")
def list_cmd(
    ctx: typer.Context,
    status: Annotated[
        str | None, typer.Option(help="active, proposed (found by a scan, awaiting review), disabled or superseded.")
    ] = None,
    domain: Annotated[str | None, typer.Option(help="Only requirements of this domain.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """List requirements (bad files are reported on stderr and skipped)."""
    with _home(ctx) as ix:
        reqs = ix.requirements.list(status=status, domain=domain)
    data = [r.to_json() for r in reqs]

    def render(_: Any) -> None:
        if not reqs:
            out.print("No requirements found.")
            return
        table("requirements", ["ID", "STATUS", "SCOPE", "SOURCE", "STATEMENT"], [_row(r) for r in reqs], one_line=True)

    emit(data, as_json, render)


@req_app.command("show")
def show_cmd(ctx: typer.Context, req_id: ReqIdArg, as_json: JsonOpt = False) -> None:
    """Every field of one requirement, then its body."""
    with _home(ctx) as ix:
        req = ix.requirements.get(req_id)

    def render(_: Any) -> None:
        m = req.meta
        for key, value in (
            ("id", req.id),
            ("status", m.status),
            ("superseded_by", m.superseded_by),
            ("scope", m.scope.model_dump()),
            ("confidence", m.confidence),
            ("user_edited", m.user_edited),
            ("provenance", m.provenance.model_dump(mode="json")),
            ("evidence", m.evidence),
            ("hints", m.hints),
            ("created", m.created.isoformat()),
            ("updated", m.updated.isoformat()),
            ("file", str(req.path)),
        ):
            out.print(f"[bold]{key}[/bold]: {escape(str(value))}")
        out.print()
        out.print(escape(req.body))

    emit(req.to_json(), as_json, render)


@req_app.command("add")
def add_cmd(
    ctx: typer.Context,
    statement: Annotated[str, typer.Argument(help="The rule, as the agent should read it.")],
    why: Annotated[str, typer.Option("--why", help="Rationale.")] = "",
    domain: DomainOpt = None,
    path: PathOpt = None,
    language: LanguageOpt = None,
    hint: HintOpt = None,
    level: Annotated[str | None, typer.Option(help="project or domain (default: domain if scoped).")] = None,
    confidence: Annotated[str, typer.Option(help="high, medium or low.")] = "high",
    as_json: JsonOpt = False,
) -> None:
    """Write a new requirement file (provenance user, user_edited); an agent's is proposed."""
    with _home(ctx) as ix:
        req = ix.requirements.add(
            statement,
            rationale=why,
            level=level,
            domains=domain or [],
            paths=path or [],
            languages=language or [],
            hints=hint or [],
            confidence=confidence,
        )

    def render(_: Any) -> None:
        out.print(f"created {req.id} ({req.path})")
        if req.status == "proposed":
            # Said, not left to be found: an agent's rule is not injected until a person accepts it.
            out.print(f"proposed: awaiting review, not injected until a person runs `intently req accept {req.id}`")

    emit(req.to_json(), as_json, render)


@req_app.command("edit")
def edit_cmd(
    ctx: typer.Context,
    req_id: ReqIdArg,
    statement: Annotated[str | None, typer.Option(help="New statement.")] = None,
    why: Annotated[str | None, typer.Option("--why", help="New rationale.")] = None,
    domain: DomainOpt = None,
    path: PathOpt = None,
    language: LanguageOpt = None,
    hint: HintOpt = None,
    level: Annotated[str | None, typer.Option(help="project or domain.")] = None,
    confidence: Annotated[str | None, typer.Option(help="high, medium or low.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Change fields, or with no field option open the file in $EDITOR. ``user_edited`` is
    set only when the statement or scope actually changed."""
    with _home(ctx) as ix:
        fields = (statement, why, domain, path, language, hint, level, confidence)
        if all(v is None for v in fields):
            req = ix.requirements.get(req_id)
            original = req.path.read_text(encoding="utf-8")
            text = _edit_in_editor(original)
            try:
                req, changed = ix.requirements.edit_text(req_id, text, base_hash=req.content_hash)
            except ConflictError as exc:
                kept = _keep_text(req_id, text)
                raise ConflictError(f"{exc}; your text is kept in {kept}") from exc
            except IntentlyError as exc:
                # A slip in the frontmatter (a bad enum, broken YAML), a status change or a
                # missing write grant refuses the whole text; after minutes in an editor that
                # must not throw the work away. Same error, same exit code, and where it is.
                if text != original:
                    exc.args = (f"{exc}; your text is kept in {_keep_text(req_id, text)}",)
                raise
        else:
            req, changed = ix.requirements.edit(
                req_id,
                statement=statement,
                rationale=why,
                level=level,
                domains=domain,
                paths=path,
                languages=language,
                hints=hint,
                confidence=confidence,
            )
    data = {**req.to_json(), "changed": changed}
    emit(data, as_json, lambda _: out.print(f"{req.id}: " + (", ".join(changed) if changed else "no change")))


def _keep_text(req_id: str, text: str) -> Path:
    """Save an editor's result that could not be written, so a conflict loses no one's work."""
    handle, name = tempfile.mkstemp(prefix=f"{req_id}-", suffix=".md")
    with os.fdopen(handle, "w", encoding="utf-8") as fh:
        fh.write(text)
    return Path(name)


def _edit_in_editor(text: str) -> str:
    editor = os.environ.get("EDITOR") or os.environ.get("VISUAL") or "vi"
    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False, encoding="utf-8") as fh:
        fh.write(text)
        name = fh.name
    try:
        try:
            code = subprocess.call([*shlex.split(editor), name])
        except OSError as exc:  # not installed, not executable: say which setting to fix
            raise InvalidInput(
                f"cannot run editor {editor!r}: {exc.strerror or exc}; nothing changed", where="EDITOR"
            ) from exc
        if code != 0:
            raise InvalidInput(f"editor {editor!r} exited with {code}; nothing changed", where="EDITOR")
        return Path(name).read_text(encoding="utf-8")
    finally:
        Path(name).unlink(missing_ok=True)


def _status_cmd(name: str, help_text: str) -> None:
    @req_app.command(name, help=help_text)
    def cmd(ctx: typer.Context, req_id: ReqIdArg, as_json: JsonOpt = False) -> None:
        with _home(ctx) as ix:
            req = getattr(ix.requirements, name)(req_id)
        emit(req.to_json(), as_json, lambda _: out.print(f"{req.id}: {req.status}"))


_status_cmd("disable", "Stop injecting a requirement (a scan never re-enables it); dismisses a proposed one.")
_status_cmd("enable", "Make a disabled requirement active again; accepts a proposed one.")

ReqIdsArg = Annotated[
    list[str] | None, typer.Argument(help="Requirement ids awaiting review, as `req list --status proposed` shows.")
]
AllOpt = Annotated[bool, typer.Option("--all", help="Every requirement awaiting review.")]


def _review_cmd(name: str, help_text: str) -> None:
    @req_app.command(name, help=help_text)
    def cmd(ctx: typer.Context, req_ids: ReqIdsArg = None, every: AllOpt = False, as_json: JsonOpt = False) -> None:
        if bool(req_ids) == every:
            raise typer.BadParameter("give the requirement ids, or --all for every proposed one")
        with _home(ctx) as ix:
            ids = req_ids or [r.id for r in ix.requirements.list(status="proposed")]
            done = [getattr(ix.requirements, name)(rid) for rid in ids]

        def render(_: Any) -> None:
            if not done:
                out.print("No requirements await review.")
            for req in done:
                out.print(f"{req.id}: {req.status}")

        emit([r.to_json() for r in done], as_json, render)


_review_cmd(
    "accept",
    "Accept rules a scan proposed: they become active and are injected (one it replaces is superseded).",
)
_review_cmd("dismiss", "Dismiss rules a scan proposed: they become disabled and are never proposed again.")


@req_app.command("supersede")
def supersede_cmd(
    ctx: typer.Context,
    req_id: ReqIdArg,
    by: Annotated[str, typer.Option("--by", help="The active requirement that replaces it.")],
    as_json: JsonOpt = False,
) -> None:
    """Mark a requirement superseded by another (terminal; nothing is deleted)."""
    with _home(ctx) as ix:
        req = ix.requirements.supersede(req_id, by=by)
    emit(req.to_json(), as_json, lambda _: out.print(f"{req.id}: superseded by {by}"))


@req_app.command("validate")
def validate_cmd(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Check every file; each problem names file, line and field. Exit 2 if any."""
    with _home(ctx) as ix:
        errors = ix.requirements.validate()
        conflicts = [c.to_json() for c in ix.requirements.conflicts()]

    def render(_: Any) -> None:
        if not errors:
            out.print("all requirement files are valid")
        for e in errors:
            err.print(escape(str(e)))

    emit({"ok": not errors, "errors": [e.to_json() for e in errors], "conflicts": conflicts}, as_json, render)
    if errors:
        raise InvalidInput(f"{len(errors)} requirement file(s) are invalid", where=".intently")


@req_app.command("preview")
def preview_cmd(
    ctx: typer.Context,
    text: Annotated[
        str | None, typer.Argument(metavar="[TASK]", help="The task description (or give it with --task).")
    ] = None,
    task: Annotated[str | None, typer.Option("--task", help="The task description.")] = None,
    paths: Annotated[list[str] | None, typer.Option("--paths", help="Files the task touches (repeat).")] = None,
    domain: Annotated[
        list[str] | None, typer.Option("--domain", help="A domain the task is about (repeatable).")
    ] = None,
    budget: Annotated[
        int | None, typer.Option(min=50, max=200_000, help="Token budget (default: \\[requirements] budget).")
    ] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Why each requirement was kept or dropped.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Print the exact block that would be injected for a task (nothing is recorded)."""
    if (text is None) == (task is None):
        raise typer.BadParameter("give the task once: as TASK, like `intently context`, or with --task")
    query = text if text is not None else str(task)
    files = [p for item in paths or [] for p in item.split(",") if p]
    with _home(ctx) as ix:
        sel = ix.requirements.select(
            query, paths=files, domains=domain or [], budget=budget, explain=explain, record=False
        )
        enabled = ix.requirements.injection_enabled()

    def render(_: Any) -> None:
        if sel.block:
            out.print(escape(sel.block))
        elif not enabled:
            # The project opted out: say so, or "(no requirements selected)" and an empty
            # --explain table send the reader looking for a scope or budget problem.
            out.print(
                '(no requirements selected: injection is off for this project, [requirements] inject = "off" '
                f"in {ix.home.config_path})",
                markup=False,
            )
        elif sel.omitted:
            out.print(f"(no requirements selected: {sel.omitted} did not fit the token budget; raise --budget)")
        else:
            out.print("(no requirements selected)")
        if explain and sel.explain is not None and enabled:
            rows = [
                [d.id, "kept" if d.kept else "dropped", d.stage, d.scope, d.score and round(d.score, 3), d.reason]
                for d in sel.explain
            ]
            table("why", ["ID", "RESULT", "STAGE", "SCOPE", "SCORE", "REASON"], rows)

    emit(sel.to_json(), as_json, render)


@req_app.command("scan")
def scan_cmd(
    ctx: typer.Context,
    full: Annotated[bool, typer.Option("--full", help="Re-read every source, not only what changed.")] = False,
    no_commit: Annotated[bool, typer.Option("--no-commit", help="Leave the changes uncommitted.")] = False,
    llm: Annotated[bool, typer.Option("--llm", help="Let the \\[llm] endpoint propose candidates.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Collect guidance, docs, ADRs, commits and transcripts; extract, reconcile, apply, commit."""
    with _home(ctx) as ix, progress_bar("scanning") as bar:
        report = ix.requirements.scan(full=full, commit=not no_commit, llm=llm, progress=bar.update)

    def render(_: Any) -> None:
        # What could not be read (``file:line: why``) is said, not only counted in --json:
        # a skipped file is a rule the person may believe is in force.
        for problem in report.problems:
            err.print(f"[yellow]warning:[/yellow] {escape(problem)}")
        out.print(report.summary())

    emit(report.to_json(), as_json, render)


@domains_app.command("list")
def domains_list(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """The domains of domains.yaml."""
    with _home(ctx) as ix:
        doms = ix.requirements.domains()
    emit(
        [d.model_dump() for d in doms],
        as_json,
        lambda _: table(
            "domains",
            ["NAME", "DESCRIPTION", "PATHS", "USER_EDITED"],
            [[d.name, d.description, ", ".join(d.paths), d.user_edited] for d in doms],
        ),
    )


@domains_app.command("add")
def domains_add(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The new domain: lower-case letters, digits or ._-.")],
    description: Annotated[str, typer.Option(help="What the domain covers.")] = "",
    path: Annotated[
        list[str] | None, typer.Option("--path", help="A glob of the files the domain covers (repeatable).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Add a domain (marked user_edited, so scans never change it)."""
    with _home(ctx) as ix:
        dom = ix.requirements.add_domain(name, description=description, paths=path or [])
    emit(dom.model_dump(), as_json, lambda _: out.print(f"added domain {dom.name}"))


@domains_app.command("edit")
def domains_edit(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The domain to change.")],
    description: Annotated[str | None, typer.Option(help="New description.")] = None,
    path: Annotated[
        list[str] | None, typer.Option("--path", help="A glob of the files the domain covers (repeatable).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Change a domain's description or paths (marks it user_edited)."""
    with _home(ctx) as ix:
        dom = ix.requirements.edit_domain(name, description=description, paths=path)
    emit(dom.model_dump(), as_json, lambda _: out.print(f"edited domain {dom.name}"))


req_app.add_typer(domains_app, name="domains")


def register(app: typer.Typer) -> None:
    """Add the ``req`` group to ``app``."""
    app.add_typer(req_app, name="req")
