"""Where agents live: Claude Code hooks (and the gate bridge the other surfaces share).

The names below are loaded on first use (PEP 562): ``python -m intently.hooks`` imports this
package before its entry point runs, and the entry point first tries to hand the event to a
running hook server (:mod:`._wire`), which needs none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from ._claude import MAX_CONTEXT_CHARS, HookResult, context_within_cap, handle_claude_event
    from ._gate import OUTCOMES, GateAnswer, Observation, gate_available, gate_check
    from ._install import CLAUDE_EVENTS, InstallReport, install_claude
    from ._queue import DrainReport, ScanQueue
    from ._record import SessionRecord, session_record
    from ._serve import ServeReport, serve_hooks

_WHERE: dict[str, str] = {
    **dict.fromkeys(("MAX_CONTEXT_CHARS", "HookResult", "context_within_cap", "handle_claude_event"), "._claude"),
    **dict.fromkeys(("OUTCOMES", "GateAnswer", "Observation", "gate_available", "gate_check"), "._gate"),
    **dict.fromkeys(("CLAUDE_EVENTS", "InstallReport", "install_claude"), "._install"),
    **dict.fromkeys(("DrainReport", "ScanQueue"), "._queue"),
    **dict.fromkeys(("SessionRecord", "session_record"), "._record"),
    **dict.fromkeys(("ServeReport", "serve_hooks"), "._serve"),
}

__all__ = [
    "CLAUDE_EVENTS",
    "MAX_CONTEXT_CHARS",
    "OUTCOMES",
    "DrainReport",
    "GateAnswer",
    "HookResult",
    "InstallReport",
    "Observation",
    "ScanQueue",
    "ServeReport",
    "SessionRecord",
    "context_within_cap",
    "gate_available",
    "gate_check",
    "handle_claude_event",
    "install_claude",
    "serve_hooks",
    "session_record",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, globals(), __all__)
