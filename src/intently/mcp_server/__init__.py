"""intently as an MCP server (``intently mcp``). Named ``mcp_server`` so it never shadows the SDK."""

from __future__ import annotations

from ._server import DEFAULT_AGENT, RESOURCES, TOOLS, acting_view, build_server

__all__ = ["DEFAULT_AGENT", "RESOURCES", "TOOLS", "acting_view", "build_server"]
