"""Where agents live: Claude Code hooks (and the gate bridge the other surfaces share)."""

from __future__ import annotations

from ._claude import MAX_CONTEXT_CHARS, HookResult, context_within_cap, handle_claude_event
from ._gate import OUTCOMES, GateAnswer, Observation, gate_available, gate_check
from ._install import CLAUDE_EVENTS, InstallReport, install_claude
from ._queue import DrainReport, ScanQueue
from ._record import SessionRecord, session_record

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
    "SessionRecord",
    "context_within_cap",
    "gate_available",
    "gate_check",
    "handle_claude_event",
    "install_claude",
    "session_record",
]
