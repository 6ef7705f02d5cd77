"""intently as an MCP server (``intently mcp``). Named ``mcp_server`` so it never shadows the SDK."""

from __future__ import annotations

from ._server import RESOURCES, TOOLS, build_server

__all__ = ["RESOURCES", "TOOLS", "build_server"]
