"""What a Claude Code session told us so far: the user's prompts and the tool outputs seen.

Each hook event is its own process, so the record lives in a small JSON file per session
under ``.intently/state/hooks/claude/`` (runtime state, ignored by git), written
atomically and guarded by an exclusive lock so parallel tool calls never lose an entry.
"""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core import locks
from ..core.errors import InvalidInput
from ..core.files import atomic_write
from ._gate import Observation

__all__ = ["MAX_OUTPUT_CHARS", "PendingAsk", "SessionRecord", "read_session_record", "session_record"]

#: A tool output longer than this is kept truncated (its head is what provenance matches).
MAX_OUTPUT_CHARS = 100_000
_MAX_OBSERVATIONS = 500
_MAX_ASKS = 200


@dataclass
class SessionRecord:
    session_id: str
    requests: list[str] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    gate_session: str | None = None
    #: ``ask`` answers waiting for their call to run, by ``tool_use_id`` (see :class:`PendingAsk`).
    asks: dict[str, PendingAsk] = field(default_factory=dict)
    #: The agent's proposals the user answered with a bare "yes, go ahead" (see ``_assent.py``).
    agreed: list[str] = field(default_factory=list)
    #: What the gate read in each prompt, by content hash (``intently.gate._intent.reading_key``):
    #: read once when the prompt arrives, so a tool call late in a long session does not read
    #: every prompt again.
    readings: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "requests": self.requests,
            "observations": [o.to_json() for o in self.observations],
            "gate_session": self.gate_session,
            "asks": {k: v.to_json() for k, v in self.asks.items()},
            "agreed": self.agreed,
            "readings": self.readings,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SessionRecord:
        return cls(
            session_id=str(data["session_id"]),
            requests=[str(r) for r in data.get("requests", [])],
            observations=[
                Observation(str(o["tool"]), o["output"], dict(o.get("args") or {}))
                for o in data.get("observations", [])
            ],
            gate_session=data.get("gate_session"),
            asks={str(k): PendingAsk.from_json(v) for k, v in (data.get("asks") or {}).items()},
            agreed=[str(a) for a in data.get("agreed", [])],
            readings=dict(data.get("readings") or {}),
        )


@dataclass(frozen=True)
class PendingAsk:
    """A PreToolUse the gate answered with ``ask``: what a later PostToolUse of the same
    ``tool_use_id`` needs to record the user's approval against that exact decision."""

    decision_id: str
    gate_session: str
    tool: str
    args: dict[str, Any]
    request: str
    observations: int  # how many outputs the session had seen when the gate asked
    agreed: tuple[str, ...] = ()  # the proposals agreed to by then (they decide the same call)
    prompts: int = 0  # how many of the session's prompts ``request`` joins (0: not known)
    #: The shell's folder and the project's top the call was read in (``None``: not kept, an
    #: older record): the re-check reads it there, whatever folder the command left the shell in.
    folders: tuple[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "decision_id": self.decision_id,
            "gate_session": self.gate_session,
            "tool": self.tool,
            "args": self.args,
            "request": self.request,
            "observations": self.observations,
            "agreed": list(self.agreed),
            "prompts": self.prompts,
            **({"folders": list(self.folders)} if self.folders else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PendingAsk:
        return cls(
            str(data["decision_id"]),
            str(data["gate_session"]),
            str(data["tool"]),
            dict(data["args"]),
            str(data["request"]),
            int(data["observations"]),
            tuple(str(a) for a in data.get("agreed", [])),
            int(data.get("prompts", 0)),
            _folders(data.get("folders")),
        )


def _folders(value: Any) -> tuple[str, str] | None:
    """A pending ask's kept folders, or ``None`` when there are none (or they are not two strings)."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
        return (value[0], value[1])
    return None


def _file_for(state_dir: Path, session_id: str) -> Path:
    digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]
    return state_dir / "hooks" / "claude" / f"{digest}.json"


@contextmanager
def session_record(state_dir: Path, session_id: str) -> Iterator[SessionRecord]:
    """Load (or start) a session's record under an exclusive lock; saved when the block exits cleanly."""
    path = _file_for(state_dir, session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "a+") as lock:
        locks.lock(lock)
        try:
            record = _load(path, session_id)
            yield record
            record.observations = record.observations[-_MAX_OBSERVATIONS:]
            record.asks = dict(list(record.asks.items())[-_MAX_ASKS:])
            atomic_write(path, json.dumps(record.to_json(), ensure_ascii=False), durable=False)  # per hook call
        finally:
            locks.unlock(lock)


def read_session_record(state_dir: Path, session_id: str) -> SessionRecord:
    """A session's record as it stands (an empty one when there is none yet), read under the
    same lock and never written back: what a tool call's check reads before it decides. After a
    pasted log the record holds megabytes (the prompt and its readings), and writing it back
    unchanged cost every tool call's process another JSON encoding and file of that size."""
    path = _file_for(state_dir, session_id)
    if not path.parent.is_dir():
        return SessionRecord(session_id)
    with open(path.with_suffix(".lock"), "a+") as lock:
        locks.lock(lock)
        try:
            return _load(path, session_id)
        finally:
            locks.unlock(lock)


@contextmanager
def _no_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector: parsing a record after a pasted log makes hundreds of
    thousands of lists and strings, none of them in a cycle, and the collections their count
    set off (each scanning everything made so far) doubled the parse, about 50 ms of every tool
    call's process after 1.8 MB. It is switched back on after, as it was found."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _load(path: Path, session_id: str) -> SessionRecord:
    if not path.exists():
        return SessionRecord(session_id)
    try:
        text = path.read_text(encoding="utf-8")
        with _no_collection():
            data = json.loads(text)
        return SessionRecord.from_json(data)
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        # Every later tool call of the session blocks on this, so say how to get out:
        # without the record the gate knows none of the session's prompts, which only
        # makes its checks stricter.
        raise InvalidInput(
            f"session record unreadable ({type(exc).__name__}: {exc}); remove the file to start "
            "this session's record over",
            where=str(path),
        ) from exc


def clip(output: Any) -> Any:
    """Keep an output JSON-sized: long text is cut to :data:`MAX_OUTPUT_CHARS`."""
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
    if len(text) <= MAX_OUTPUT_CHARS:
        return output
    return text[:MAX_OUTPUT_CHARS]
