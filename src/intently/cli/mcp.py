"""``intently mcp``: serve intently over MCP (stdio; streamable HTTP with ``--http``)."""

from __future__ import annotations

from typing import Annotated

import typer

from ..core.extras import require
from ._common import err, open_home


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("mcp")(mcp)


def mcp(
    ctx: typer.Context,
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP instead of stdio.")] = False,
    host: Annotated[str, typer.Option(help="With --http: interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="With --http: TCP port.")] = 8766,
    agent: Annotated[
        str,
        typer.Option(help="The agent the server acts as, on behalf of --actor (logged as agent:NAME for user:...)."),
    ] = "mcp",  # mcp_server.DEFAULT_AGENT; not imported here, so other commands skip the SDK
) -> None:
    """Run the MCP server for this home, as an agent acting for --actor (tools: goals, standing intents, rules, gate).

    The client is a model, so its acts are logged as ``agent:mcp for user:<you>``: your permissions
    except administering, and no confirming of review candidates (you do that with ``intently review``).
    An --actor that is an agent (agent:ci) acts as itself.
    """
    require("intently mcp", "server", "mcp")
    from ..mcp_server import build_server

    with open_home(ctx) as ix:
        server = build_server(ix, agent=agent)
        if http:
            err.print(f"intently MCP on http://{host}:{port}/mcp (no authentication: keep it on loopback)")
            server.run("streamable-http", host=host, port=port)
        else:
            server.run("stdio")
