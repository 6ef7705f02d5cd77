"""Claude Code session transcripts (JSONL) as requirement material.

Claude Code writes one JSON object per line: ``user`` and ``assistant`` messages (their
``message.content`` a string or a list of blocks: ``text``, ``tool_use``, ``tool_result``,
``thinking``, ``image``), plus bookkeeping lines (``summary``, ``system``,
``file-history-snapshot``, ...) whose set grows between versions. Rules agreed in a
conversation are said by the user ("from now on, always run the linter before
committing"), so only the user's own words are mined: tool calls and results, the
assistant's text, sub-agent side chains, compaction summaries and meta lines never are
(the assistant's text is kept in the parsed turns for callers that display context).

Tolerant by design: an unknown line type is skipped; a line that is not JSON (or not an
object) is reported as ``file:line`` and skipped, and the rest of the file still counts.
A last line without its newline is one Claude Code is still writing: it is left for the
next scan instead of being reported.

Incremental: :func:`read_transcript` takes a cursor (lines already read and the hash of
those lines); when the file still starts with exactly those bytes only the lines after it
are parsed, otherwise (rewritten or truncated) the whole file is read again. The file is
read whole each time (the prefix is only hashed, not parsed); there is no size cap.

Opt-out: a user message whose line reads ``intently: off`` opts the transcript out: nothing
read with it is mined, and the cursor remembers it, so later lines never are either. Rules
proposed from the session before that message stay proposed (for review, like any).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._extract import Candidate, extract_text

__all__ = [
    "Transcript",
    "TranscriptTurn",
    "parse_cursor",
    "read_plain_transcript",
    "read_transcript",
    "transcript_candidates",
]

_OPT_OUT = re.compile(r"^\s*intently:\s*off\b", re.IGNORECASE | re.MULTILINE)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
# Slash commands and their captured output are Claude Code's wrappers, not the user's words.
_WRAPPER = re.compile(r"^\s*<(command-name|command-message|command-args|local-command-stdout|bash-)", re.IGNORECASE)
_HEADING = re.compile(r"^(\s*)#{1,6}\s+", re.MULTILINE)
# Conversational lead-ins that carry no rule ("ok, and from now on, ..."): trimmed from a statement.
_LEAD_IN = re.compile(
    r"^(?:(?:ok(?:ay)?|yes|yeah|yep|sure|great|good|thanks|thank you|also|and|so|btw|by the way|"
    r"one more thing|from now on|going forward|in (?:the )?future|for future reference|"
    r"for the rest of (?:this|the) (?:project|session)|please note|note|remember|important)"
    r"\s*[,:;.!-]*\s+)+",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TranscriptTurn:
    """One message of the conversation: who said it, what, and on which line of the file."""

    line: int
    role: str  # "user" | "assistant"
    text: str
    uuid: str = ""
    timestamp: str = ""


@dataclass
class Transcript:
    """A parsed transcript: the new turns since the cursor, and what could not be read."""

    path: Path
    turns: list[TranscriptTurn] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lines: int = 0  # complete lines read (the new cursor)
    digest: str = ""  # sha256 of those lines
    opted_out: bool = False

    @property
    def cursor(self) -> str:
        """The scan-state value that lets the next scan start after these lines (and
        remembers an opt-out, so a session opted out once is never mined again)."""
        return ("off:" if self.opted_out else "") + f"L{self.lines}:{self.digest}"

    def user_turns(self) -> list[TranscriptTurn]:
        return [t for t in self.turns if t.role == "user"]


def parse_cursor(value: str | None) -> tuple[bool, int, str]:
    """``(opted out, lines, digest)`` of a stored cursor; nothing read for none or an unknown format."""
    m = re.fullmatch(r"(off:)?L(\d+):([0-9a-f]{64})", value or "")
    return (bool(m.group(1)), int(m.group(2)), m.group(3)) if m else (False, 0, "")


def _blocks_text(content: Any) -> str | None:
    """The text of a message's content; ``None`` when it holds only tool traffic."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [str(b.get("text") or "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return "\n\n".join(t for t in texts if t.strip()) if texts else None


def _turn(obj: dict[str, Any], line: int) -> TranscriptTurn | None:
    kind = obj.get("type")
    if kind not in ("user", "assistant"):
        return None  # summary, system, file-history-snapshot and whatever comes next
    if (
        obj.get("isSidechain")
        or obj.get("isMeta")
        or obj.get("isCompactSummary")
        or obj.get("isVisibleInTranscriptOnly")
    ):
        return None  # a sub-agent's exchange, Claude Code's own notes, a model-written summary
    message = obj.get("message")
    if not isinstance(message, dict):
        return None
    role = str(message.get("role") or kind)
    if role not in ("user", "assistant"):
        return None
    text = _blocks_text(message.get("content"))
    if text is None:
        return None
    text = _REMINDER.sub("", text).strip()
    if not text or _WRAPPER.match(text) or text.startswith("[Request interrupted"):
        return None
    return TranscriptTurn(line, role, text, str(obj.get("uuid") or ""), str(obj.get("timestamp") or ""))


def read_transcript(
    path: Path, *, cursor: str | None = None, display: str | None = None, data: bytes | None = None
) -> Transcript:
    """Parse ``path`` from ``cursor`` on (from the start without one) and return the new turns.

    Only lines after the cursor are parsed (the prefix is only hashed). ``data`` is the
    file's bytes when the caller has already read them (to hash them): the file is then not
    read a second time, and what is parsed is exactly what was hashed.
    Raises :class:`OSError` only when the file cannot be read at all; everything wrong
    inside it becomes a ``file:line`` entry of :attr:`Transcript.problems`.
    """
    name = display or str(path)
    if data is None:
        data = path.read_bytes()
    raw_lines = data.splitlines(keepends=True)
    if raw_lines and not raw_lines[-1].endswith(b"\n"):
        raw_lines.pop()  # still being written: the next scan reads it whole
    was_off, done, digest = parse_cursor(cursor)
    start = 0
    if 0 < done <= len(raw_lines) and hashlib.sha256(b"".join(raw_lines[:done])).hexdigest() == digest:
        start = done
    end = len(raw_lines)
    result = Transcript(path, lines=end, digest=hashlib.sha256(b"".join(raw_lines[:end])).hexdigest())
    result.opted_out = was_off
    for index in range(start, end):
        lineno = index + 1
        try:
            text = raw_lines[index].decode("utf-8")
        except UnicodeDecodeError as exc:
            result.problems.append(f"{name}:{lineno}: not UTF-8 ({exc.reason}); line skipped")
            continue
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            result.problems.append(f"{name}:{lineno}: not JSON ({exc.msg}, column {exc.colno}); line skipped")
            continue
        if not isinstance(obj, dict):
            result.problems.append(f"{name}:{lineno}: a JSON {type(obj).__name__}, not an object; line skipped")
            continue
        turn = _turn(obj, lineno)
        if turn is None:
            continue
        if turn.role == "user" and _OPT_OUT.search(turn.text):
            result.opted_out = True
        result.turns.append(turn)
    if result.opted_out:
        result.turns.clear()
    return result


# "user:", "**Assistant:**", "### Human:", "> Claude:" opening a line: who speaks from here on.
_SPEAKER = re.compile(
    r"^[ \t>#*_]*(user|human|me|you|assistant|ai|claude|model|bot|agent|system)[*_]*[ \t]*:[*_]*[ \t]*",
    re.IGNORECASE,
)
_USER_SPEAKERS = frozenset({"user", "human", "me"})


def read_plain_transcript(path: Path, text: str) -> Transcript:
    """A conversation saved as plain text or Markdown, split into turns at speaker labels.

    The labels are removed, so they never end up in a statement, and only the user's turns
    are offered for mining (:meth:`Transcript.user_turns`): the assistant's replies are not
    the user's rules. Text before any label, or a file without labels, is the user's own
    notes. A user turn reading ``intently: off`` opts the file out, as in a JSONL transcript.
    """
    result = Transcript(path, lines=text.count("\n"), digest=hashlib.sha256(text.encode("utf-8")).hexdigest())
    role, start = "user", 1
    buf: list[str] = []

    def flush() -> None:
        body = "\n".join(buf).strip()
        if body:
            result.turns.append(TranscriptTurn(start, role, body))

    for lineno, line in enumerate(text.splitlines(), 1):
        m = _SPEAKER.match(line)
        if m:
            flush()
            role = "user" if m.group(1).lower() in _USER_SPEAKERS else "assistant"
            start, buf = lineno, [line[m.end() :]]
        else:
            buf.append(line)
    flush()
    if any(_OPT_OUT.search(t.text) for t in result.user_turns()):
        result.opted_out = True
        result.turns.clear()
    return result


def _statement(text: str) -> str:
    trimmed = _LEAD_IN.sub("", text).strip()
    if not trimmed or len(trimmed.split()) < 3:
        return text
    return trimmed[0].upper() + trimmed[1:]


def transcript_candidates(ref: str, transcript: Transcript) -> list[Candidate]:
    """Rules the user stated in the new turns, each anchored at ``ref#L<line>``.

    Only explicit rules count (``strict``: "always", "never", "from now on", "must", ...):
    a request for this one task ("run the tests") is not a standing rule. Markdown
    headings in a prompt are flattened, so a chat never founds a domain.
    """
    found: list[Candidate] = []
    seen: set[str] = set()
    for turn in transcript.user_turns():
        body = _HEADING.sub(r"\1", turn.text)
        for cand in extract_text(f"{ref}#L{turn.line}", body, strict=True):
            statement = _statement(cand.statement)
            key = " ".join(statement.lower().split())
            if key in seen:
                continue
            seen.add(key)
            found.append(Candidate(statement, cand.rationale, f"{ref}#L{turn.line}", "", cand.source_text, top=True))
    return found
