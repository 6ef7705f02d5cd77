"""``intently context`` (the block an agent is given) and ``intently serve`` (the HTTP API)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..core.extras import require
from ._common import JsonOpt, emit, err, open_home, out, plain, table

if TYPE_CHECKING:
    from fastapi import FastAPI

    from .._intently import Intently


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
    conversation: Annotated[
        str | None,
        typer.Option(help="Conversation of the turn (standing intents' scope; Claude Code: the session id)."),
    ] = None,
    budget: Annotated[
        int | None, typer.Option(min=50, max=200_000, help="Total token budget (default: \\[context] budget).")
    ] = None,
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
            conversation=conversation,
            sender=sender,
            paths=tuple(paths or ()),
            budget=budget,
            fire=fire,
        )

    def render(_: Any) -> None:
        out.print(plain(result.text), markup=False, highlight=False)
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
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            max=64,
            help="Worker processes behind the port, each with its own connections to the home's database "
            "(PostgreSQL is the engine for shared deployments; SQLite works for a few on one machine).",
        ),
    ] = 1,
    witness_interval: Annotated[
        float,
        typer.Option(
            min=0,
            help="Seconds between updates of the tracked witness file (.intently/checkpoints.json) while "
            "serving; it is also updated at shutdown. Every write is signed into the database at once "
            "either way. 0 updates it at every write.",
        ),
    ] = 60.0,
) -> None:
    """Serve the HTTP API (FastAPI on uvicorn). Every request needs a bearer token (`intently token create`)."""
    require("intently serve", "server", "fastapi", "uvicorn", "jinja2")
    import uvicorn

    from ..server import create_app  # also registers the token table before the home opens

    if host not in ("127.0.0.1", "localhost", "::1"):
        err.print(f"warning: serving on {host}; put TLS in front of it, tokens travel in headers")
    if workers == 1:
        with open_home(ctx) as ix:
            app = create_app(ix, max_body=max_body, witness_interval=witness_interval)
            uvicorn.run(app, host=host, port=port, log_level="warning")
        return
    # Open once here so a wrong home, URL or schema fails now with one clear line, and the
    # schema is upgraded before any worker starts (they would race to do it otherwise).
    with open_home(ctx) as ix:
        os.environ.update(_worker_env(ix, max_body, witness_interval))
        if ix.store.dialect != "postgresql":
            err.print(
                f"note: {workers} workers on SQLite share one file on this machine; "
                "use PostgreSQL (INTENTLY_DATABASE_URL) for workers on several machines"
            )
    uvicorn.run(f"{__name__}:app_from_env", factory=True, host=host, port=port, workers=workers, log_level="warning")


_ENV_HOME = "INTENTLY_SERVE_HOME"
_ENV_ACTOR = "INTENTLY_SERVE_ACTOR"
_ENV_NAMESPACE = "INTENTLY_SERVE_NAMESPACE"
_ENV_MAX_BODY = "INTENTLY_SERVE_MAX_BODY"
_ENV_WITNESS = "INTENTLY_SERVE_WITNESS_INTERVAL"


def _worker_env(ix: Intently, max_body: int, witness_interval: float) -> dict[str, str]:
    """What a worker process needs to open the same home as the same actor (it inherits the
    environment, so ``INTENTLY_DATABASE_URL`` and the rest carry over as they are)."""
    return {
        _ENV_HOME: str(ix.home.path),
        _ENV_ACTOR: str(ix.actor),
        _ENV_NAMESPACE: ix.namespace,
        _ENV_MAX_BODY: str(max_body),
        _ENV_WITNESS: str(witness_interval),
    }


def app_from_env() -> FastAPI:
    """The app factory each ``--workers`` process calls (uvicorn imports it by name).

    Every worker opens its own handle on the home (its own connection pool: nothing is shared
    across ``fork``), and closes it when uvicorn shuts the worker down.
    """
    from .._intently import Intently
    from ..server import create_app
    from ..server._witness import DEFAULT_WITNESS_INTERVAL

    ix = Intently.open(
        os.environ[_ENV_HOME],
        actor=os.environ.get(_ENV_ACTOR) or None,
        namespace=os.environ.get(_ENV_NAMESPACE) or None,
    )
    witness = os.environ.get(_ENV_WITNESS)
    app = create_app(
        ix,
        max_body=int(os.environ.get(_ENV_MAX_BODY) or 1_000_000),
        witness_interval=float(witness) if witness else DEFAULT_WITNESS_INTERVAL,
    )
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(application: Any) -> AsyncIterator[Any]:
        try:
            async with inner(application) as value:
                yield value
        finally:
            ix.close()

    app.router.lifespan_context = lifespan
    return app
