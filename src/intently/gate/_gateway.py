"""``intently gateway -- <upstream MCP server command>``: an MCP stdio proxy with the gate on every call.

The gateway starts the upstream server, lists its tools, infers their contracts (annotations
are hints only) and serves the same tools to the client. Every call is checked by a gate
session: allowed calls are forwarded and their outputs observed as untrusted content;
anything else returns an error result that names the decision, the reason and, for
confirm/review, the approval command (``intently gate approve ID``); the client retries
after approval. The user's request comes from a trusted channel, never from the agent:
``--request`` or ``--request-file`` (re-read when it changes, e.g. by a prompt hook).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ._gate import Gate, Session

if TYPE_CHECKING:
    from .._intently import Intently

__all__ = ["Gateway", "run_gateway"]


class Gateway:
    """The gate side of the proxy, independent of the transport (tested directly and over stdio)."""

    def __init__(self, gate: Gate, *, request: str = "", request_file: Path | None = None) -> None:
        self.gate = gate
        self._request = request
        self._file = request_file
        self._session: Session | None = None
        self._seen: str | None = None

    def session(self) -> Session:
        text = self._request
        if self._file is not None and self._file.exists():
            text = self._file.read_text(encoding="utf-8").strip()
        if self._session is None or text != self._seen:
            self._session = self.gate.session(user_request=text)
            self._seen = text
        return self._session

    def check(self, name: str, args: dict[str, Any]) -> tuple[bool, str]:
        d = self.session().check(name, args)
        if d.executes:
            return True, d.id
        hint = f" Approve with `intently gate approve {d.id}`, then retry." if d.level.needs_approval else ""
        return False, f"intently gate: {d.level} ({', '.join(d.rule_ids)}): {d.reason}. Decision {d.id}.{hint}"

    def observe(self, name: str, args: dict[str, Any], output: Any) -> None:
        self.session().observe(name, output, args=args)


async def _serve(command: list[str], make_gateway: Any) -> None:
    import mcp_types as types
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (up_read, up_write), ClientSession(up_read, up_write) as upstream:
        await upstream.initialize()
        listed = await upstream.list_tools()
        definitions = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
        gateway: Gateway = make_gateway(definitions)

        async def on_list_tools(ctx: Any, params: Any) -> Any:
            return types.ListToolsResult(tools=listed.tools)

        async def on_call_tool(ctx: Any, params: Any) -> Any:
            args = dict(params.arguments or {})
            ok, note = gateway.check(params.name, args)
            if not ok:
                return types.CallToolResult(content=[types.TextContent(type="text", text=note)], is_error=True)
            result = await upstream.call_tool(params.name, args)
            texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
            output: Any = _maybe_json(texts) if texts else result.structured_content
            gateway.observe(params.name, args, output)
            return result

        server = Server("intently-gateway", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


def _maybe_json(texts: list[str]) -> Any:
    if len(texts) == 1:
        try:
            return json.loads(texts[0])
        except json.JSONDecodeError:
            return texts[0]
    return texts


def run_gateway(
    ctx: typer.Context,
    command: list[str],
    *,
    request: str = "",
    request_file: Path | None = None,
    home: Intently | None = None,
) -> None:
    """Serve until the client disconnects; decisions go to ``home``'s log when given."""
    import anyio

    def make(definitions: list[dict[str, Any]]) -> Gateway:
        gate = home.gate.gate(definitions) if home is not None else Gate.from_tools(definitions)
        return Gateway(gate, request=request, request_file=request_file)

    del ctx
    anyio.run(_serve, command, make)
