"""``intently context`` (the block an agent is given) and ``intently serve`` (the HTTP API)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ._common import JsonOpt, emit, err, open_home, out, table


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("context")(context)
    app.command("serve")(serve)


def context(
    ctx: typer.Context,
    task: Annotated[str, typer.Argument(help="The task or prompt the agent is about to work on.")],
    paths: Annotated[
        list[str] | None, typer.Option("--paths", "-p", help="A file the task touches (repeatable).")
    ] = None,
    session: Annotated[str | None, typer.Option(help="Session id (HIGH risks surface once per session).")] = None,
    channel: Annotated[str | None, typer.Option(help="Channel of the turn (standing intents' scope).")] = None,
    sender: Annotated[str | None, typer.Option(help="Sender of the turn (standing intents' scope).")] = None,
    budget: Annotated[int | None, typer.Option(help="Total token budget (default: [context] budget).")] = None,
    fire: Annotated[bool, typer.Option(help="Charge a fire to standing intents shown (--no-fire previews).")] = True,
    as_json: JsonOpt = False,
) -> None:
    """Print the context block for TASK: requirements, goals and standing intents under one budget."""
    from ..context import assemble

    with open_home(ctx) as ix:
        result = assemble(
            ix,
            task,
            session=session,
            channel=channel,
            sender=sender,
            paths=tuple(paths or ()),
            budget=budget,
            fire=fire,
        )

    def render(_: Any) -> None:
        out.print(result.text, markup=False, highlight=False)
        table(
            f"Sections ({result.tokens} of {result.budget} tokens, counted by {result.counter})",
            ["section", "status", "tokens", "budget", "included", "left out", "detail"],
            [
                [
                    s.name,
                    s.status.value,
                    s.tokens,
                    s.budget,
                    len(s.included),
                    len(s.omitted) + s.engine_omitted,
                    s.detail,
                ]
                for s in result.sections
            ],
        )

    emit(result.to_json(), as_json, render)


def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Interface to bind (loopback by default).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8765,
    max_body: Annotated[int, typer.Option(help="Largest request body accepted, in bytes.")] = 1_000_000,
) -> None:
    """Serve the HTTP API (FastAPI on uvicorn). Every request needs a bearer token (`intently token create`)."""
    import uvicorn

    from ..server import create_app  # also registers the token table before the home opens

    with open_home(ctx) as ix:
        app = create_app(ix, max_body=max_body)
        if host not in ("127.0.0.1", "localhost", "::1"):
            err.print(f"warning: serving on {host}; put TLS in front of it, tokens travel in headers")
        uvicorn.run(app, host=host, port=port, log_level="warning")
