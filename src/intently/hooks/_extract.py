"""Extraction on tool output (PostToolUse), when ``[hooks] extract_tool_output = true``.

Off by default: a tool's output is untrusted content (a web page, an issue comment, a file
someone else wrote), so nothing in it may become a fact. What extraction finds there may
only *wait in review*: goals, commitments, risks and questions are proposed through the
goals engine's review queue (INFERRED, never active). Decisions are different: the
extraction engine records them directly, so an untrusted output must not produce one. The
engine is asked with ``trusted=False`` when it offers that switch (decisions then wait in
review too); otherwise an output in which the extractor finds a decision is not observed
at all, and the hook says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._engines import engine_method
from ..core.clock import format_time
from ._settings import hook_settings

if TYPE_CHECKING:
    from .._intently import Intently

__all__ = ["MAX_EXTRACT_CHARS", "extract_tool_output", "tool_output_extraction"]

#: Extraction reads at most this much of one output (its head, where the content starts).
MAX_EXTRACT_CHARS = 20_000


def tool_output_extraction(ix: Intently) -> bool:
    """``[hooks] extract_tool_output`` of ``intently.toml`` (default ``false``)."""
    return hook_settings(ix).extract_tool_output


def _text(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, Mapping):  # Claude Code's tool_response: the readable part, when there is one
        for key in ("stdout", "content", "result", "output", "text"):
            value = output.get(key)
            if isinstance(value, str) and value.strip():
                return value
    return json.dumps(output, ensure_ascii=False, default=str)


def extract_tool_output(ix: Intently, *, tool: str, tool_use_id: str | None, output: Any) -> str:
    """Run extraction on one tool output; returns a one-line note for the hook's stderr."""
    observe = engine_method(ix, "extraction", "observe")
    if observe is None:
        return "extraction is not installed in this build; the output was only recorded"
    text = _text(output)[:MAX_EXTRACT_CHARS]
    if not text.strip():
        return ""
    turn: dict[str, Any] = {
        "speaker": None,  # nobody in the conversation said it: first person owns nothing
        "text": text,
        "time": format_time(ix.runtime.clock.now()),
        "channel": f"claude-code:tool:{tool}",
        "message_id": f"claude-tool-output:{tool_use_id}" if tool_use_id else None,
    }
    # Untrusted: a decision the output states is held, never recorded as the user's.
    result = observe(turn, trusted=False)
    waiting = [p for p in result.proposals if p.status in ("created", "attached")]
    return f"{len(waiting)} item(s) from the tool output wait in review" if waiting else ""
