"""``intently review``: confirm, dismiss or edit what extraction proposed; feed turns from the shell.

``intently review`` alone walks the queue interactively (confirm / dismiss / edit / skip / quit);
``--json`` lists it for tools. ``review confirm ID``, ``review dismiss ID`` and
``review observe "text"`` are the non-interactive forms.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.prompt import Prompt

from ..core.clock import parse_time
from ..extract import Turn
from ..goals import CLEAR, Goals, Intent
from ._common import JsonOpt, emit, err, open_home, out, table

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
        for done, intent in enumerate(queue):
            try:
                if not _review_one(goals, intent, counts):
                    break
            except EOFError:  # piped answers ran out, or no terminal at all: stop, and say what is left
                err.print(
                    f"\ninput ended; {len(queue) - done} left in the queue. Without a terminal use "
                    "`intently review confirm|dismiss|edit ID` (`intently review --json` lists them)."
                )
                break
    out.print(", ".join(f"{v} {k}" for k, v in counts.items()))


def _review_one(goals: Goals, intent: Intent, counts: dict[str, int]) -> bool:
    """Ask about one candidate until it is decided or skipped; ``False`` means quit."""
    current = intent
    while True:
        table("Candidate", ["id", "type", "owner", "due", "evidence", "text"], [_row(current)])
        choice = Prompt.ask(
            escape("[c]onfirm / [d]ismiss / [e]dit / [s]kip / [q]uit"), choices=list(_CHOICES), default="s", console=out
        )
        action = _CHOICES[choice]
        if action == "quit":
            return False
        if action == "skip":
            counts["skipped"] += 1
            return True
        if action == "confirm":
            goals.promote(current.id)
            counts["confirmed"] += 1
            return True
        if action == "dismiss":
            reason = Prompt.ask("Reason (optional)", default="", console=out)
            goals.dismiss(current.id, reason=reason or None)
            counts["dismissed"] += 1
            return True
        current = _edit(goals, current)
        counts["edited"] += 1


def _edit(goals: Goals, intent: Intent) -> Intent:
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
    edited = goals.edit(intent.id, **changes)
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
    if not data["proposals"]:
        out.print("no candidates")
        return
    table(
        "Candidates",
        ["status", "id", "type", "owner", "due", "span"],
        [[p["status"], (p["id"] or "")[-8:], p["candidate"]["type"], p["candidate"]["owner"] or "",
          p["candidate"]["due_text"] or "", p["candidate"]["span"]] for p in data["proposals"]],
    )  # fmt: skip


@review_app.command("observe")
def observe(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="What was said.")],
    speaker: Annotated[str | None, typer.Option(help="Who said it (owner of first-person candidates).")] = None,
    time: Annotated[str | None, typer.Option(help="When it was said (RFC 3339; default now).")] = None,
    channel: Annotated[str, typer.Option(help="Where it was said (chat, minutes, a thread id).")] = "cli",
    message_id: Annotated[str | None, typer.Option("--message-id", help="The source's message id.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Feed one turn: record it as evidence and propose what it contains for review."""
    with open_home(ctx) as ix:
        when = parse_time(time, where="--time") if time else ix.runtime.clock.now()
        turn = Turn(speaker=speaker, text=text, time=when, channel=channel, message_id=message_id)
        result = ix.extraction.observe(turn)
    emit(result.to_json(), as_json, _render_observed)
