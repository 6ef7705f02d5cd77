"""``intently trigger add|list|show|update|snooze|cancel|confirm|tick|test|match``: standing intents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..core.clock import format_time
from ._common import JsonOpt, emit, err, escape, open_home, out, table

if TYPE_CHECKING:  # the engine loads when a command runs, not for `intently --help`
    from ..triggers import MatchResult, StandingIntent

trigger_app = typer.Typer(
    help='Standing intents: "when X comes up, remind me to Y" (events, not clock times).', no_args_is_help=True
)

WhenOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--when",
        help='One trigger entry: words that must all come up ("launch checklist"); quote a phrase to need it '
        "verbatim. Repeat for alternatives.",
    ),
]
ScopeOpt = Annotated[
    list[str] | None,
    typer.Option("--scope", help="channel:ID, conversation:ID or sender:ID (repeatable; update: - for anywhere)."),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option("--exclude", help="Do not fire when this word or phrase comes up (repeatable; update: - for none)."),
]
ChannelOpt = Annotated[str | None, typer.Option("--channel", help="The turn's channel id.")]
ConversationOpt = Annotated[str | None, typer.Option("--conversation", help="The turn's conversation id.")]
SenderOpt = Annotated[str | None, typer.Option("--sender", help="The turn's sender id.")]


def register(app: typer.Typer) -> None:
    app.add_typer(trigger_app, name="trigger")


def _entries(intent: StandingIntent) -> str:
    """The entries as a person types them back: terms of one entry by spaces, entries by " | "."""
    return " | ".join(" ".join(entry) for entry in intent.entries)


def _render_intent(intent: StandingIntent) -> None:
    """One field a line, in words: entries as `a b | c`, the scope described, empty fields left out
    (``--json`` has every key)."""
    data = intent.to_json()
    fires = data.pop("fires")
    data["when"] = _entries(intent)
    data["exclude"] = ", ".join(data.get("exclude") or [])
    data["scope"] = intent.scope.describe()
    data["cooldown"] = f"{data.pop('cooldown_seconds')} s"
    for key, value in data.items():
        if value is None or value == "":
            continue
        out.print(
            f"[bold]{escape(key)}[/bold]: {escape(str(value).lower() if isinstance(value, bool) else str(value))}"
        )
    if fires:
        table(
            "Fires",
            ["time", "entry", "terms", "channel", "conversation", "sender", "actor"],
            [
                [
                    f["fired_at"],
                    f["entry"] + 1,
                    ", ".join(f["terms"]),
                    f["channel"],
                    f["conversation"],
                    f["sender"],
                    f["actor"],
                ]
                for f in fires
            ],
        )


def _emit_intent(intent: StandingIntent, as_json: bool) -> None:
    emit(intent.to_json(), as_json, lambda _: _render_intent(intent))


def _render_match(result: MatchResult) -> None:
    if not result.hits:
        out.print("no standing intent matches")
    for hit in result.hits:
        mark = "[green]●[/green]" if hit.shown else "[dim]○[/dim]"
        out.print(f"{mark} {escape(hit.id)}  {escape(hit.reminder)}")
        out.print(f"    {escape(hit.why)}")
    if result.block:
        out.print(escape(result.block))
    for problem in result.problems:
        err.print(f"[yellow]warning:[/yellow] {escape(problem)}")


@trigger_app.command("add")
def add(
    ctx: typer.Context,
    reminder: Annotated[str, typer.Argument(help="What the agent is told when it fires (at most 500 characters).")],
    when: WhenOpt = None,
    event: Annotated[str, typer.Option("--event", help="What you care about, shown in lists.")] = "",
    scope: ScopeOpt = None,
    expires: Annotated[str | None, typer.Option("--expires", help="90d (default), 2w, or a date/time.")] = None,
    max_fires: Annotated[int, typer.Option("--max-fires", help="Fire budget.")] = 3,
    cooldown: Annotated[str, typer.Option("--cooldown", help="Quiet time after a fire (24h, 0 for none).")] = "24h",
    no_negation_guard: Annotated[
        bool, typer.Option("--no-negation-guard", help='Also fire on negated mentions ("no rollback").')
    ] = False,
    exclude: ExcludeOpt = None,
    propose: Annotated[bool, typer.Option("--propose", help="Create as pending, for a manager to confirm.")] = False,
    no_event_entries: Annotated[
        bool,
        typer.Option(
            "--no-event-entries",
            help='Do not add the topics of an --event like "When X or Y comes up" as entries.',
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Create a standing intent (armed for reminder managers, otherwise a pending proposal)."""
    with open_home(ctx) as ix:
        intent = ix.triggers.add(
            reminder,
            when=list(when or []),
            event=event,
            scope=list(scope or []),
            expires=expires,
            max_fires=max_fires,
            cooldown=cooldown,
            negation_guard=not no_negation_guard,
            exclude=list(exclude or []),
            propose=propose,
            event_entries=not no_event_entries,
        )
    if not as_json:
        err.print(f"standing intent {intent.id} is {intent.state.value} ({intent.scope.describe()})")
    _emit_intent(intent, as_json)


def _state(intent: StandingIntent, now: str) -> str:
    """The state as a person needs it: a snoozed intent is "armed" too, and listed as just that
    it looked as if it would fire on the next mention; a fired one says until when it is quiet."""
    from ..triggers import IntentState

    text = intent.state.value
    if intent.state is IntentState.FIRED and intent.rearm_at:
        text += f", quiet until {intent.rearm_at[:16].replace('T', ' ')}"
    if intent.state in (IntentState.ARMED, IntentState.FIRED) and intent.snoozed_until and intent.snoozed_until > now:
        text += f", snoozed until {intent.snoozed_until[:16].replace('T', ' ')}"
    return text


@trigger_app.command("list")
def list_(
    ctx: typer.Context,
    state: Annotated[str | None, typer.Option("--state", help="Only this state.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Include done, cancelled and expired intents.")] = False,
    channel: ChannelOpt = None,
    conversation: ConversationOpt = None,
    sender: SenderOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the standing intents you may see (runs expiry and re-arming first)."""
    with open_home(ctx) as ix:
        intents = ix.triggers.list(
            state=state, include_closed=all_, channel=channel, conversation=conversation, sender=sender
        )
        now = format_time(ix.runtime.clock.now())
    emit(
        [i.to_json() for i in intents],
        as_json,
        lambda _: table(
            "Standing intents",
            ["id", "state", "reminder", "when", "scope", "fires", "expires"],
            [
                [
                    i.id[-8:],
                    _state(i, now),
                    i.reminder[:60],
                    _entries(i),
                    i.scope.describe(),
                    f"{i.fire_count}/{i.max_fires}",
                    i.expires_at[:10],
                ]
                for i in intents
            ],
        ),
    )


@trigger_app.command("show")
def show(
    ctx: typer.Context,
    intent_id: Annotated[
        str, typer.Argument(help="Intent id (or a unique 6+ character prefix/suffix, as `trigger list` shows).")
    ],
    as_json: JsonOpt = False,
) -> None:
    """Show one intent with its fire history."""
    with open_home(ctx) as ix:
        intent = ix.triggers.show(intent_id)
    _emit_intent(intent, as_json)


@trigger_app.command("update")
def update(
    ctx: typer.Context,
    intent_id: Annotated[
        str, typer.Argument(help="Intent id (or a unique 6+ character prefix/suffix, as `trigger list` shows).")
    ],
    reminder: Annotated[
        str | None, typer.Option("--reminder", help="New text the agent is told when it fires.")
    ] = None,
    event: Annotated[
        str | None, typer.Option("--event", help="New event text (its topics are not re-read as entries; use --when).")
    ] = None,
    when: WhenOpt = None,
    exclude: ExcludeOpt = None,
    scope: ScopeOpt = None,
    expires: Annotated[
        str | None, typer.Option("--expires", help="New expiry: a duration from now (90d, 2w) or a date/time.")
    ] = None,
    max_fires: Annotated[int | None, typer.Option("--max-fires", help="New fire budget (at least 1).")] = None,
    cooldown: Annotated[
        str | None, typer.Option("--cooldown", help="New quiet time after a fire (24h, 0 for none).")
    ] = None,
    negation_guard: Annotated[
        bool | None, typer.Option("--negation-guard/--no-negation-guard", help="Switch the negation guard.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Change fields of a live intent (given --when/--exclude/--scope lists replace the old ones;
    ``--scope -`` makes it fire anywhere again, ``--exclude -`` drops every exclusion)."""
    with open_home(ctx) as ix:
        intent = ix.triggers.update(
            intent_id,
            reminder=reminder,
            event=event,
            when=when,
            exclude=_emptied(exclude),
            scope=_emptied(scope),
            expires=expires,
            max_fires=max_fires,
            cooldown=cooldown,
            negation_guard=negation_guard,
        )
    _emit_intent(intent, as_json)


def _emptied(items: list[str] | None) -> list[str] | None:
    """``-`` alone asks for an empty list (no scope, no exclusions), as ``-`` empties a field in
    ``goal edit``: a scope or an exclusion could be replaced but never removed, short of
    cancelling the intent and losing its fire history."""
    return [] if items == ["-"] else items


@trigger_app.command("snooze")
def snooze(
    ctx: typer.Context,
    intent_id: Annotated[
        str, typer.Argument(help="Intent id (or a unique 6+ character prefix/suffix, as `trigger list` shows).")
    ],
    until: Annotated[str, typer.Argument(help="A duration (2d) or a date/time; 'off' lifts the snooze.")],
    as_json: JsonOpt = False,
) -> None:
    """Silence an intent for a while without spending its fire budget."""
    with open_home(ctx) as ix:
        intent = ix.triggers.snooze(intent_id, None if until.strip().lower() == "off" else until)
    _emit_intent(intent, as_json)


@trigger_app.command("cancel")
def cancel(
    ctx: typer.Context,
    intent_id: Annotated[
        str, typer.Argument(help="Intent id (or a unique 6+ character prefix/suffix, as `trigger list` shows).")
    ],
    as_json: JsonOpt = False,
) -> None:
    """Cancel an intent: it can no longer fire."""
    with open_home(ctx) as ix:
        intent = ix.triggers.cancel(intent_id)
    _emit_intent(intent, as_json)


@trigger_app.command("confirm")
def confirm(
    ctx: typer.Context,
    intent_id: Annotated[
        str, typer.Argument(help="Intent id (or a unique 6+ character prefix/suffix, as `trigger list` shows).")
    ],
    as_json: JsonOpt = False,
) -> None:
    """Arm a pending proposal (needs the manage-reminders permission)."""
    with open_home(ctx) as ix:
        intent = ix.triggers.confirm(intent_id)
    _emit_intent(intent, as_json)


@trigger_app.command("tick")
def tick(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Expire intents past their expiry and re-arm those whose cooldown has passed."""
    with open_home(ctx) as ix:
        counts = ix.triggers.tick()
    emit(counts, as_json)


def _match(ctx: typer.Context, text: str, fire: bool, where: dict[str, Any], as_json: bool) -> None:
    with open_home(ctx) as ix:
        result = ix.triggers.match(text, fire=True, **where) if fire else ix.triggers.test(text, **where)
    emit(result.to_json(), as_json, lambda _: _render_match(result))


@trigger_app.command("test")
def test(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="A turn to try.")],
    channel: ChannelOpt = None,
    conversation: ConversationOpt = None,
    sender: SenderOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show which intents and entries would fire on TEXT, and why, without firing."""
    _match(ctx, text, False, {"channel": channel, "conversation": conversation, "sender": sender}, as_json)


@trigger_app.command("match")
def match(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="The user's turn.")],
    channel: ChannelOpt = None,
    conversation: ConversationOpt = None,
    sender: SenderOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Match a real turn and fire: prints the standing_intents block (what an agent hook injects)."""
    _match(ctx, text, True, {"channel": channel, "conversation": conversation, "sender": sender}, as_json)
