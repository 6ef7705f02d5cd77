"""``intently review``: confirm, dismiss or edit what extraction proposed; feed turns from the shell.

``intently review`` alone walks the queue interactively (confirm / dismiss / edit / skip / quit);
``--json`` lists it for tools. ``review confirm ID``, ``review dismiss ID`` and
``review observe "text"`` are the non-interactive forms.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.prompt import Prompt

from ..core.clock import parse_time
from ..core.errors import ConflictError, InvalidInput, InvalidTransition, NotFound
from ._common import JsonOpt, emit, err, escape, open_home, out, table

if TYPE_CHECKING:  # the engines load when a command runs, not for `intently --help`
    from ..goals import Goals, Intent

review_app = typer.Typer(
    help="Review what extraction proposed: confirm (ASSERTED), dismiss, edit, or feed a turn.",
    invoke_without_command=True,
)

IdArg = Annotated[str, typer.Argument(help="Intent id (or a unique 6+ character prefix/suffix).")]

_CHOICES = {"c": "confirm", "d": "dismiss", "e": "edit", "s": "skip", "q": "quit"}


def register(app: typer.Typer) -> None:
    app.add_typer(review_app, name="review")


def _row(intent: Intent) -> list[Any]:
    return [
        intent.id[-8:],
        intent.intent_type.value,
        intent.owner or "",
        (intent.target_completion or "")[:10],
        ", ".join(intent.evidence_ids)[-12:],
        intent.value,
    ]


def _render_queue(data: Any) -> None:
    if not data:
        out.print("Nothing waiting for review.")
        return
    table(
        "Waiting for review",
        ["id", "type", "owner", "due", "evidence", "text"],
        [[d["id"][-8:], d["intent_type"], d["owner"] or "", (d["target_completion"] or "")[:10],
          ", ".join(d["evidence_ids"])[-12:], d["value"]] for d in data],
    )  # fmt: skip
    for d in data:  # what the reviewer needs that no column holds: a stated due date, an answer given later
        if d.get("context_note"):
            out.print(f"{escape(d['id'][-8:])} note: {escape(d['context_note'])}")


@review_app.callback()
def review(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Walk the review queue (or list it with --json)."""
    if ctx.invoked_subcommand is not None:
        return
    with open_home(ctx) as ix:
        goals = ix.goals
        queue = goals.review_queue()
        if as_json or not queue:
            emit([i.to_json() for i in queue], as_json, _render_queue)
            return
        counts = {"confirmed": 0, "dismissed": 0, "edited": 0, "skipped": 0}
        elsewhere = 0
        for done, intent in enumerate(queue):
            try:
                outcome = _review_one(goals, intent, counts)
            except EOFError:  # piped answers ran out, or no terminal at all: stop, and say what is left
                err.print(
                    f"\ninput ended; {len(queue) - done} left in the queue. Without a terminal use "
                    "`intently review confirm|dismiss|edit ID` (`intently review --json` lists them)."
                )
                break
            if outcome is None:
                break
            elsewhere += not outcome
    summary = ", ".join(f"{v} {k}" for k, v in counts.items())
    out.print(summary + (f", {elsewhere} decided by another reviewer" if elsewhere else ""))


def _still_waiting(goals: Goals, intent_id: str) -> Intent | None:
    """The candidate as it is now, or None (and a line saying so) when another reviewer decided it
    since the queue was read: the walk moves on instead of failing on their decision."""
    from ..goals import EpistemicType

    try:
        now = goals.get(intent_id)
    except NotFound:
        now = None
    if now is not None and now.epistemic_type is EpistemicType.INFERRED and not now.state.final:
        return now
    if now is None:
        what = "removed"
    elif now.epistemic_type is EpistemicType.INFERRED:
        what = now.state.value.lower()  # closed while still a candidate (cancelled, say)
    else:
        what = "confirmed" if now.epistemic_type is EpistemicType.ASSERTED else "dismissed"
    err.print(f"{escape(intent_id[-8:])} was {what} by another reviewer meanwhile; moving on")
    return None


def _review_one(goals: Goals, intent: Intent, counts: dict[str, int]) -> bool | None:
    """Ask about one candidate until it is decided or skipped: ``True`` when this reviewer
    decided or skipped it, ``False`` when another reviewer had, ``None`` to quit.

    Every write carries the version the reviewer was shown: if someone edits the candidate
    meanwhile, confirming must not assert words this reviewer never saw; it is shown again as it
    is now. An answer the engine refuses (an unknown type, a due date that is no date or has
    passed) is said and asked again, instead of ending the walk with decisions half made."""
    current = _still_waiting(goals, intent.id)
    if current is None:
        return False
    while True:
        table("Candidate", ["id", "type", "owner", "due", "evidence", "text"], [_row(current)])
        if current.context_note:  # "answered by carol in message m-2 ...": shown before the decision
            out.print(f"note: {escape(current.context_note)}")
        choice = Prompt.ask(
            escape("[c]onfirm / [d]ismiss / [e]dit / [s]kip / [q]uit"), choices=list(_CHOICES), default="s", console=out
        )
        action = _CHOICES[choice]
        if action == "quit":
            return None
        if action == "skip":
            counts["skipped"] += 1
            return True
        try:
            if action == "confirm":
                goals.promote(current.id, expected_version=current.version)
                counts["confirmed"] += 1
                return True
            if action == "dismiss":
                reason = Prompt.ask("Reason (optional)", default="", console=out)
                goals.dismiss(current.id, reason=reason or None, expected_version=current.version)
                counts["dismissed"] += 1
                return True
            edited = _edit(goals, current)
            if edited is not current:
                counts["edited"] += 1
            current = edited
        except InvalidInput as exc:
            err.print(f"not changed: {escape(str(exc))}")
        except (ConflictError, InvalidTransition, NotFound):
            fresh = _still_waiting(goals, current.id)
            if fresh is None:
                return False
            err.print("it was edited by another reviewer meanwhile; here it is as it is now")
            current = fresh


def _edit(goals: Goals, intent: Intent) -> Intent:
    from ..goals import CLEAR

    text = Prompt.ask("Text", default=intent.value, console=out)
    kind = Prompt.ask("Type", default=intent.intent_type.value, console=out).strip().upper()
    # Enter keeps what is shown; "-" removes it (an empty answer cannot: the prompt gives back the default).
    owner = Prompt.ask("Owner (- for none)", default=intent.owner or "-", console=out).strip()
    due = Prompt.ask("Due (RFC 3339 date, - for none)", default=intent.target_completion or "-", console=out).strip()
    changes: dict[str, Any] = {}
    if text != intent.value:
        changes["text"] = text
    if kind != intent.intent_type.value:
        changes["type"] = kind
    if owner != (intent.owner or "-"):
        changes["owner"] = CLEAR if owner in ("", "-") else owner
    if due != (intent.target_completion or "-"):
        changes["due"] = CLEAR if due in ("", "-") else due
    if not changes:
        return intent
    # awaiting_review: a candidate another reviewer confirmed meanwhile is not rewritten from here.
    edited = goals.edit(intent.id, **changes, expected_version=intent.version, awaiting_review=True)
    out.print(f"edited {escape(edited.id[-8:])}")
    return edited


@review_app.command("confirm")
def confirm(ctx: typer.Context, intent_id: IdArg, as_json: JsonOpt = False) -> None:
    """Confirm a candidate: INFERRED -> ASSERTED (an EPISTEMIC_TRANSITION in the log)."""
    with open_home(ctx) as ix:
        goals = ix.goals
        intent = goals.promote(goals.resolve(intent_id))
    emit(intent.to_json(), as_json, lambda d: out.print(f"confirmed {escape(d['id'])}: {escape(d['value'])}"))


@review_app.command("edit")
def edit(
    ctx: typer.Context,
    intent_id: IdArg,
    text: Annotated[str | None, typer.Option("--text", help="The corrected wording.")] = None,
    kind: Annotated[
        str | None, typer.Option("--type", help="GOAL, COMMITMENT, OPEN_QUESTION, DECISION_IN_PROGRESS, RISK...")
    ] = None,
    owner: Annotated[
        str | None, typer.Option("--owner", help="Who is responsible (name or kind:name); - for nobody.")
    ] = None,
    due: Annotated[str | None, typer.Option("--due", help="Due date (RFC 3339); - for none.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Correct a candidate before confirming it; it stays in the queue (the interactive walk's \\[e]dit)."""
    if text is None and kind is None and owner is None and due is None:
        raise typer.BadParameter("give at least one of --text, --type, --owner, --due")
    from ..goals import CLEAR

    with open_home(ctx) as ix:
        goals = ix.goals
        ref = goals.resolve(intent_id)
        intent = goals.edit(
            ref,
            text=text,
            type=kind,
            owner=CLEAR if owner == "-" else owner,
            due=CLEAR if due == "-" else due,
            awaiting_review=True,
        )
    emit(intent.to_json(), as_json, lambda d: out.print(f"edited {escape(d['id'])}: {escape(d['value'])}"))


@review_app.command("dismiss")
def dismiss(
    ctx: typer.Context,
    intent_id: IdArg,
    reason: Annotated[str | None, typer.Option("--reason", help="Why (recorded in the log).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Dismiss a candidate; it is never proposed again from the same evidence."""
    with open_home(ctx) as ix:
        goals = ix.goals
        intent = goals.dismiss(goals.resolve(intent_id), reason=reason)
    emit(intent.to_json(), as_json, lambda d: out.print(f"dismissed {escape(d['id'])}: {escape(d['value'])}"))


def _render_observed(data: Any) -> None:
    out.print(f"turn recorded as evidence {escape(data['evidence_id'])} ({escape(data['extractor'])})")
    if data["rejected"]:
        out.print(f"extractor answer rejected: {escape(data['rejected'])}")
    if data.get("unread"):
        out.print(f"{escape(data['unread'])} (the llm extractor reads other languages: docs/extraction.md)")
    for a in data.get("answered", []):
        decision = f", decision {escape(a['decision_id'])}" if a["decision_id"] else ""
        out.print(
            f"answers question {escape(a['intent_id'][-8:])} (from {escape(a['question_evidence_id'])}, "
            f"{escape(a['signal'])}{decision}): {escape(a['span'])}; noted on it, still yours to review"
        )
    if not data["proposals"]:
        out.print("no candidates")
        return
    table(
        "Candidates",
        ["status", "id", "type", "owner", "due", "span"],
        [[p["status"], (p["id"] or "")[-8:], p["candidate"]["type"], p["candidate"]["owner"] or "",
          p["candidate"]["due_text"] or "", p["candidate"]["span"]] for p in data["proposals"]],
    )  # fmt: skip


def _turn_time(text: str) -> datetime:
    """``--time`` with its UTC offset kept: due dates resolve in the speaker's zone ("tomorrow"
    said at 23:30 in California is California's tomorrow), and ``parse_time`` normalises to UTC,
    which moved every relative date of a late-evening turn a day on. Validated by ``parse_time``
    so a bad value is refused naming ``--time``."""
    parse_time(text, where="--time")
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


@review_app.command("observe")
def observe(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="What was said.")],
    speaker: Annotated[str | None, typer.Option(help="Who said it (owner of first-person candidates).")] = None,
    time: Annotated[
        str | None,
        typer.Option(help="When it was said (RFC 3339, its offset kept; default now, in this machine's zone)."),
    ] = None,
    channel: Annotated[str, typer.Option(help="Where it was said (chat, minutes, a thread id).")] = "cli",
    message_id: Annotated[str | None, typer.Option("--message-id", help="The source's message id.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Feed one turn: record it as evidence and propose what it contains for review."""
    from ..extract import Turn

    with open_home(ctx) as ix:
        # Said now, at this terminal: in this machine's zone, so "tomorrow" and "EOD" typed in the
        # evening in California are California's, not UTC's (which is already the next day there).
        when = _turn_time(time) if time else ix.runtime.clock.now().astimezone()
        turn = Turn(speaker=speaker, text=text, time=when, channel=channel, message_id=message_id)
        result = ix.extraction.observe(turn)
    emit(result.to_json(), as_json, _render_observed)
