"""MCP server exposing intently to agents. (Being built.)"""
