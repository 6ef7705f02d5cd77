"""``intently goal``: add, list, show and move intents through their lifecycle; dependencies,
review, the organiser and the ``active_goals`` bundle. Every command takes ``--json``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ._common import JsonOpt, emit, escape, open_home, out, plain, table

if TYPE_CHECKING:  # the engine loads when a command runs, not for `intently --help`
    from ..goals import Goals, Intent

# no_args_is_help, as every other group: a bare `intently goal` lists the commands instead of "Missing command".
goal_app = typer.Typer(
    help="Goals, commitments, open questions, decisions in progress, risks, follow-ups.", no_args_is_help=True
)

IdArg = Annotated[str, typer.Argument(help="Intent id (or a unique 6+ character prefix/suffix).")]
VersionOpt = Annotated[
    int | None, typer.Option("--expected-version", help="Refuse if the intent changed since this version.")
]
ReasonOpt = Annotated[str | None, typer.Option("--reason", help="Why (recorded in the log).")]
NoSummaryOpt = Annotated[bool, typer.Option("--no-summary", help="Do not keep a completion summary.")]


def register(app: typer.Typer) -> None:
    app.add_typer(goal_app, name="goal")


def _short(intent_id: str) -> str:
    return intent_id[-8:]


_COLUMNS = ["id", "type", "priority", "state", "epistemic", "owner", "due", "text"]


def _render_list(title: str) -> Callable[[Any], None]:
    def render(data: Any) -> None:
        table(
            title,
            _COLUMNS,
            [[d["id"][-8:], d["intent_type"], d["priority"], d["state"], d["epistemic_type"], d["owner"] or "",
              (d["target_completion"] or "")[:10], d["value"]] for d in data],
        )  # fmt: skip

    return render


def _render_one(data: Any) -> None:
    rows = [[k, v if not isinstance(v, list | dict) else ", ".join(map(str, v)) or "-"] for k, v in data.items()]
    table(f"Intent {data['id']}", ["field", "value"], [r for r in rows if r[0] not in ("events", "completion_claim")])
    out.print(escape(_provenance(data)), highlight=False)
    claim = data.get("completion_claim")
    if claim:
        out.print(escape(_claim_line(data["id"], claim)), highlight=False)
    if data.get("events"):
        table("Events", ["time", "kind", "payload"], [[e["time"], e["kind"], e["payload"]] for e in data["events"]])


def _provenance(data: Any) -> str:
    """Whose word the intent is, in one line: the fields alone (``source_type`` among thirty)
    did not tell a reader that an agent's goal is the agent's reading until they endorse it."""
    line = (
        f"Provenance: {data['epistemic_type']} from {data['source_type']} (confidence {data['confidence']:.2f}), "
        f"asserted by {data['asserted_by']}"
    )
    endorsed = [e for e in data.get("events") or [] if "endorsed_by" in (e.get("payload") or {})]
    if endorsed:
        last = endorsed[-1]
        line += f"; endorsed by {last['payload']['endorsed_by']} at {last['time']}"
    elif data["epistemic_type"] == "ASSERTED" and data["source_type"] not in ("USER_STATED", "USER_DEMONSTRATED"):
        line += f"; not the user's own word until they endorse it (intently goal endorse {data['id']})"
    return line


def _claim_line(intent_id: str, claim: dict[str, Any]) -> str:
    """The open completion claim, in one line with what the person runs to decide it."""
    line = f"Completion claimed by {claim['claimed_by']} at {claim['claimed_at']}, awaits {claim['awaits']}"
    if claim.get("note"):
        line += f": {claim['note']}"
    if claim.get("evidence_ids"):
        line += f" (evidence {', '.join(claim['evidence_ids'])})"
    return line + f"; confirm: intently goal confirm {intent_id}; reject: intently goal reject {intent_id}"


def _one(ctx: typer.Context, as_json: bool, action: Callable[[Goals, str], Intent], ref: str) -> None:
    with open_home(ctx) as ix:
        goals = ix.goals
        intent = action(goals, goals.resolve(ref))
    emit(intent.to_json(), as_json, _render_one)


@goal_app.command("add")
def add(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="What is intended.")],
    type: Annotated[str, typer.Option("--type", "-t", help="GOAL, COMMITMENT, OPEN_QUESTION, ...")] = "GOAL",
    priority: Annotated[str, typer.Option("--priority", "-p", help="LOW, MEDIUM, HIGH or CRITICAL.")] = "MEDIUM",
    owner: Annotated[str | None, typer.Option(help="Who is responsible (name or kind:name).")] = None,
    due: Annotated[str | None, typer.Option(help="Target completion (RFC 3339 or a date).")] = None,
    stakeholder: Annotated[list[str] | None, typer.Option(help="Someone else involved (repeatable).")] = None,
    criteria: Annotated[str | None, typer.Option(help="How we will know it is done.")] = None,
    note: Annotated[str | None, typer.Option(help="Free-text context.")] = None,
    depends_on: Annotated[
        list[str] | None, typer.Option("--depends-on", help="A prerequisite id (repeatable).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Record an intent you state (ASSERTED)."""
    with open_home(ctx) as ix:
        goals = ix.goals
        prereqs = [goals.resolve(d) for d in depends_on or []]
        intent = goals.add(
            text,
            type=type,
            priority=priority,
            owner=owner,
            due=due,
            stakeholders=stakeholder or [],
            completion_criteria=criteria,
            context_note=note,
            depends_on=prereqs,
        )
    emit(intent.to_json(), as_json, lambda d: out.print(f"Added {d['intent_type']} {d['id']}"))


@goal_app.command("list")
def list_(
    ctx: typer.Context,
    explicit: Annotated[bool, typer.Option("--explicit", help="All states, not only open ones.")] = False,
    state: Annotated[list[str] | None, typer.Option(help="Only these states (repeatable).")] = None,
    type: Annotated[list[str] | None, typer.Option("--type", help="Only these types (repeatable).")] = None,
    owner: Annotated[str | None, typer.Option(help="Only this owner.")] = None,
    priority: Annotated[list[str] | None, typer.Option(help="Only these priorities (repeatable).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """List intents: open ones (ACTIVE, ON_HOLD, EXPIRED) by default, every state with --explicit.

    EXPIRED is open: its target passed unresolved and it waits for its owner to reopen it,
    archive it (`intently goal archive`), or, for a risk, close it out. Left out, a goal
    vanished from the list the day it fell due. An archived one shows with --state or --explicit."""
    states = state or (None if explicit else ["ACTIVE", "ON_HOLD", "EXPIRED"])
    with open_home(ctx) as ix:
        intents = ix.goals.list_intents(
            state=states, type=type, owner=owner, priority=priority, include_archived=bool(state or explicit)
        )
        title = f"Intents in {ix.namespace}"
    emit([i.to_json() for i in intents], as_json, _render_list(title))


@goal_app.command("queue")
def queue(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Candidates proposed by extraction, waiting for promote or dismiss."""
    with open_home(ctx) as ix:
        intents = ix.goals.review_queue()
    emit([i.to_json() for i in intents], as_json, _render_list("Awaiting review"))


@goal_app.command("show")
def show(ctx: typer.Context, intent_id: IdArg, as_json: JsonOpt = False) -> None:
    """Every field of one intent, whose word it is (provenance: source, confidence, who asserted and
    who endorsed it), and its events (DEPENDENCY_CANCELLED, EXPIRED_RISK_ALERT, an endorsement)."""
    _one(ctx, as_json, lambda g, i: g.get(i), intent_id)


@goal_app.command("edit")
def edit(
    ctx: typer.Context,
    intent_id: IdArg,
    text: Annotated[str | None, typer.Option(help="New text.")] = None,
    type: Annotated[str | None, typer.Option("--type", help="New type.")] = None,
    priority: Annotated[str | None, typer.Option(help="New priority (downgrading a risk is yours to do).")] = None,
    owner: Annotated[str | None, typer.Option(help="New owner; - for none.")] = None,
    due: Annotated[str | None, typer.Option(help="New target date (RFC 3339); - for none.")] = None,
    stakeholder: Annotated[
        list[str] | None, typer.Option(help="The people involved (repeatable; replaces the list); - for none.")
    ] = None,
    criteria: Annotated[str | None, typer.Option(help="How we will know it is done; - for none.")] = None,
    note: Annotated[str | None, typer.Option(help="Free-text context; - for none.")] = None,
    expected_version: VersionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Change fields of a live intent (``-`` empties an optional field, as in ``review edit``)."""
    _one(
        ctx,
        as_json,
        lambda g, i: g.edit(
            i,
            text=text,
            type=type,
            priority=priority,
            owner=_cleared(owner),
            due=_cleared(due),
            stakeholders=None if not stakeholder else _cleared_list(stakeholder),
            completion_criteria=_cleared(criteria),
            context_note=_cleared(note),
            expected_version=expected_version,
        ),
        intent_id,
    )


def _cleared(value: str | None) -> Any:
    """``-`` asks to empty an optional field: the engine's ``CLEAR``; anything else as given."""
    from ..goals import CLEAR

    return CLEAR if value == "-" else value


def _cleared_list(values: list[str]) -> Any:
    """A lone ``-`` empties a list field (stakeholders); otherwise the values as given."""
    from ..goals import CLEAR

    return CLEAR if values == ["-"] else values


@goal_app.command("done")
def done(
    ctx: typer.Context,
    intent_id: IdArg,
    no_summary: NoSummaryOpt = False,
    reason: ReasonOpt = None,
    expected_version: VersionOpt = None,
    evidence: Annotated[
        list[str] | None,
        typer.Option("--evidence", help="What shows the work is done (repeatable; kept with a completion claim)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Mark complete (archived); keeps a summary unless --no-summary. Run by an agent on a
    person's goal, it keeps a completion claim for them to confirm and exits 4 ("claimed,
    awaits <person>"): the goal is not completed."""
    _one(
        ctx,
        as_json,
        lambda g, i: g.complete(
            i, summary=not no_summary, reason=reason, expected_version=expected_version, evidence_ids=evidence or None
        ),
        intent_id,
    )


@goal_app.command("confirm")
def confirm(
    ctx: typer.Context,
    intent_id: IdArg,
    no_summary: NoSummaryOpt = False,
    reason: ReasonOpt = None,
    expected_version: VersionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Confirm an agent's completion claim on your goal: it completes, crediting the claim."""
    _one(
        ctx,
        as_json,
        lambda g, i: g.confirm_completion(i, summary=not no_summary, reason=reason, expected_version=expected_version),
        intent_id,
    )


@goal_app.command("reject")
def reject(
    ctx: typer.Context, intent_id: IdArg, reason: ReasonOpt = None, expected_version: VersionOpt = None,
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Reject an agent's completion claim on your goal: the claim is closed, the goal stays as it was."""
    _one(ctx, as_json, lambda g, i: g.reject_completion(i, reason=reason, expected_version=expected_version), intent_id)


@goal_app.command("cancel")
def cancel(
    ctx: typer.Context, intent_id: IdArg, reason: ReasonOpt = None, expected_version: VersionOpt = None,
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Cancel (never cascades: dependents get a DEPENDENCY_CANCELLED event)."""
    _one(ctx, as_json, lambda g, i: g.cancel(i, reason=reason, expected_version=expected_version), intent_id)


@goal_app.command("archive")
def archive(
    ctx: typer.Context, intent_id: IdArg, reason: ReasonOpt = None, expected_version: VersionOpt = None,
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Put an EXPIRED intent out of the open list (it stays EXPIRED, archived; reopen brings it
    back). RFC-0013 draws no cancel from EXPIRED; this is how to drop one. Its owner only."""
    _one(ctx, as_json, lambda g, i: g.archive(i, reason=reason, expected_version=expected_version), intent_id)


@goal_app.command("hold")
def hold(
    ctx: typer.Context, intent_id: IdArg, reason: ReasonOpt = None, expected_version: VersionOpt = None,
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Put on hold."""
    _one(ctx, as_json, lambda g, i: g.hold(i, reason=reason, expected_version=expected_version), intent_id)


@goal_app.command("resume")
def resume(
    ctx: typer.Context,
    intent_id: IdArg,
    due: Annotated[
        str | None, typer.Option(help="A new target date (needed when the old one passed while on hold).")
    ] = None,
    reason: ReasonOpt = None,
    expected_version: VersionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Resume an intent on hold (with --due, a new target date)."""
    _one(ctx, as_json, lambda g, i: g.resume(i, due=due, reason=reason, expected_version=expected_version), intent_id)


@goal_app.command("reopen")
def reopen(
    ctx: typer.Context,
    intent_id: IdArg,
    due: Annotated[str, typer.Option(help="The new target date (required, in the future).")],
    reason: ReasonOpt = None,
    expected_version: VersionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Reopen an EXPIRED intent with a new target (its owner only)."""
    _one(ctx, as_json, lambda g, i: g.reopen(i, due=due, reason=reason, expected_version=expected_version), intent_id)


@goal_app.command("supersede")
def supersede(
    ctx: typer.Context,
    intent_id: IdArg,
    by: Annotated[str | None, typer.Option(help="The intent that replaces it.")] = None,
    text: Annotated[str | None, typer.Option(help="Text of a new intent that replaces it.")] = None,
    reason: ReasonOpt = None,
    expected_version: VersionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Replace an intent by another (existing, or new from --text), which takes over its live
    dependencies; prints the replacement."""

    def act(g: Goals, i: str) -> Intent:
        target = g.resolve(by) if by else None
        return g.supersede(i, by=target, text=text, reason=reason, expected_version=expected_version)

    _one(ctx, as_json, act, intent_id)


@goal_app.command("depend")
def depend(
    ctx: typer.Context,
    intent_id: IdArg,
    on: Annotated[str, typer.Option("--on", help="The prerequisite it depends on.")],
    expected_version: VersionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Make an intent depend on another (refused if it closes a cycle, or breaks depth 10 / fan-in 20)."""
    _one(ctx, as_json, lambda g, i: g.depend(i, g.resolve(on), expected_version=expected_version), intent_id)


@goal_app.command("undepend")
def undepend(
    ctx: typer.Context,
    intent_id: IdArg,
    on: Annotated[str, typer.Option("--on", help="The prerequisite to drop.")],
    expected_version: VersionOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove a dependency."""
    _one(ctx, as_json, lambda g, i: g.undepend(i, g.resolve(on), expected_version=expected_version), intent_id)


@goal_app.command("promote")
def promote(
    ctx: typer.Context, intent_id: IdArg, expected_version: VersionOpt = None, as_json: JsonOpt = False
) -> None:
    """Confirm a proposed intent (INFERRED -> ASSERTED)."""
    _one(ctx, as_json, lambda g, i: g.promote(i, expected_version=expected_version), intent_id)


@goal_app.command("endorse")
def endorse(
    ctx: typer.Context, intent_id: IdArg, expected_version: VersionOpt = None, as_json: JsonOpt = False
) -> None:
    """Make an intent an agent added your own word (source USER_STATED, confidence 0.80); a person's act."""
    _one(ctx, as_json, lambda g, i: g.endorse(i, expected_version=expected_version), intent_id)


@goal_app.command("dismiss")
def dismiss(
    ctx: typer.Context, intent_id: IdArg, reason: ReasonOpt = None, expected_version: VersionOpt = None,
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Reject a proposed intent; the same text from the same evidence is not proposed again."""
    _one(ctx, as_json, lambda g, i: g.dismiss(i, reason=reason, expected_version=expected_version), intent_id)


def organise(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Expire overdue intents and escalate expired risks now (also runs on every read and write)."""
    with open_home(ctx) as ix:
        report = ix.goals.organise()
    emit(
        report.to_json(),
        as_json,
        lambda d: out.print(
            f"Expired {len(d['expired'])}, risk alerts {len(d['risk_alerts'])}, "
            f"candidates returned to review {len(d['returned_to_review'])}, left for later {d['remaining']}"
        ),
    )


goal_app.command("organise")(organise)
goal_app.command("organize", hidden=True)(organise)


@goal_app.command("bundle")
def bundle(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="The request the bundle is for.")] = "",
    session: Annotated[str | None, typer.Option(help="Session id (HIGH risks surface once per session).")] = None,
    budget: Annotated[int, typer.Option(help="Token budget.")] = 800,
    explicit: Annotated[bool, typer.Option("--explicit", help="EXPLICIT mode: every intent matching filters.")] = False,
    include_low: Annotated[bool, typer.Option("--include-low", help="Also LOW intents touching the query.")] = False,
    state: Annotated[list[str] | None, typer.Option(help="EXPLICIT: only these states.")] = None,
    type: Annotated[list[str] | None, typer.Option("--type", help="EXPLICIT: only these types.")] = None,
    owner: Annotated[str | None, typer.Option(help="EXPLICIT: only this owner.")] = None,
    priority: Annotated[list[str] | None, typer.Option(help="EXPLICIT: only these priorities.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the ``active_goals`` block an agent would get for QUERY."""
    filters: dict[str, Any] = {"state": state, "type": type, "owner": owner, "priority": priority}
    with open_home(ctx) as ix:
        result = ix.goals.bundle(
            query,
            session=session,
            budget=budget,
            mode="EXPLICIT" if explicit else "DEFAULT",
            include_low=include_low,
            **{k: v for k, v in filters.items() if v},
        )
    data = result.to_json()

    def render(d: Any) -> None:
        # The block is plain text, not Rich markup: print it verbatim.
        out.print(plain(d["rendered"]) or "(no intents)", markup=False, highlight=False)
        omitted = d["omitted"]
        why = ", ".join(f"{n} {reason.replace('_', ' ')}" for reason, n in sorted(omitted["reasons"].items()))
        out.print(
            f"{d['tokens']}/{d['budget']} tokens; omitted {omitted['count']}{f' ({why})' if why else ''}", markup=False
        )

    emit(data, as_json, render)
