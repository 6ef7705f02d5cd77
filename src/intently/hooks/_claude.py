"""``intently hook claude``: one Claude Code hook event in on stdin, one answer out.

The protocol (code.claude.com/docs/en/hooks): exit 0 with JSON on stdout is an answer;
exit 2 blocks (the reason goes on stderr); **any other exit code lets the action proceed**.
So this module never lets an exception escape as exit 1: unparsable input, an unknown
event and any failure in PreToolUse become exit 2 with a one-line reason on stderr. A failure
in any other event (a bad config, no home) is reported as a system message and does not block:
blocking Stop keeps the agent running and blocking a prompt erases it, while every tool call
still meets PreToolUse, which fails closed on the same problem.

- SessionStart, UserPromptSubmit: the context block as ``additionalContext`` (at most
  :data:`MAX_CONTEXT_CHARS`). UserPromptSubmit also records the prompt as the user's
  request for the gate and hands it to extraction when that engine is present. The block
  and extraction read at most :data:`MAX_PROMPT_READ_CHARS` of it (head and tail), and a
  hook answers by its deadline with what it has (:class:`LateAnswer`).
- PreToolUse: the gate decides (allow; warn -> allow with the reason; confirm or review
  -> ask; block -> deny with the reason shown to the model). No gate: deny.
- PostToolUse: the tool output is recorded as untrusted content for provenance; when the
  gate had answered ``ask`` for this ``tool_use_id``, the call running proves the user
  approved it, and that approval is recorded in the gate session. With
  ``[hooks] extract_tool_output = true`` the output also goes through extraction, whose
  findings only wait in review.
- Stop, SessionEnd: the transcript is queued for an incremental requirements scan; SessionEnd
  also closes the session's gate runs, so their traces prove they are complete.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import threading
import warnings
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._engines import engine_method
from .._intently import Intently
from ..core.clock import format_time
from ..core.errors import IntentlyError
from ..core.shell import SHELL_OPERATOR
from ._extract import MAX_EXTRACT_CHARS, extract_tool_output, tool_output_extraction
from ._gate import (
    Observation,
    gate_available,
    gate_check,
    gate_observe,
    gate_open,
    gate_record_approval,
    project_of,
    project_relative,
    project_relative_output,
)
from ._record import PendingAsk, clip, read_session_record, session_record
from ._settings import hook_settings
from ._watchdog import blocked, watchdog

if TYPE_CHECKING:  # a tool call, the event on every call, needs neither the context assembler nor the others below
    from ..context import ContextResult

__all__ = ["MAX_CONTEXT_CHARS", "HookResult", "context_within_cap", "handle_claude_event"]

#: The channel of a prompt typed in Claude Code, for extraction and for standing intents' scope.
CLAUDE_CHANNEL = "claude-code"

#: Claude Code caps hook output strings at 10,000 characters; stay under it.
MAX_CONTEXT_CHARS = 9_500

#: How much of one prompt the context block and extraction read: a prompt longer than this is
#: read as its head and its tail, half each (where a pasted log's question usually stands),
#: and the hook says how much it skipped. Their reading grows with the text, and a pasted
#: prompt of megabytes took minutes, past Claude Code's hook timeout. The prompt itself is
#: recorded whole, and the gate still reads all of it (under the hook's deadline). The same
#: bound as an HTTP context query's and as extraction's read of one tool output.
MAX_PROMPT_READ_CHARS = MAX_EXTRACT_CHARS

Opener = Callable[[Path | None], Intently]


def open_from_environment(start: Path | None, *, cwd: Path | None = None) -> Intently:
    """The home a hook process opens: ``INTENTLY_HOME`` or the nearest one above ``start`` (the
    event's working directory), as ``INTENTLY_ACTOR`` in ``INTENTLY_NAMESPACE``. The one-shot
    hook and the hook server both open through this, so they answer alike. ``cwd`` is the
    hook's own working directory when it is not this process's (the server answers hooks run
    elsewhere, side by side, so it cannot change directory for each): a relative
    ``INTENTLY_HOME``, and an event without ``cwd``, are taken from there."""
    home = os.environ.get("INTENTLY_HOME") or None
    if cwd is not None:
        if home and not Path(home).expanduser().is_absolute():
            home = str(cwd / home)
        start = start or cwd
    return Intently.open(
        home,
        actor=os.environ.get("INTENTLY_ACTOR") or None,
        namespace=os.environ.get("INTENTLY_NAMESPACE") or None,
        start=start,
    )


# What an event field's value must be: text, text or null, a JSON object, anything.
_TEXT, _TEXT_OR_NULL, _OBJECT, _ANY = ({"kind": k} for k in ("text", "text?", "object", "any"))


_PROBLEM = {
    "text": "Input should be a valid string",
    "text?": "Input should be a valid string",
    "object": "Input should be a valid dictionary",
}


def _fits(kind: str, value: object) -> bool:
    if kind == "text":
        return isinstance(value, str)
    if kind == "text?":
        return value is None or isinstance(value, str)
    if kind == "object":
        return isinstance(value, dict)
    return True


class _BadEvent(ValueError):
    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field, self.message = field_name, message


# Plain dataclasses with a check of their own rather than pydantic models: every tool call starts
# a hook process that reads one of these, and building pydantic's validators cost it more than
# reading the event. Unknown keys are allowed (Claude Code adds fields over time).
@dataclass(frozen=True, kw_only=True)
class _Event:
    session_id: str = field(metadata=_TEXT)
    hook_event_name: str = field(metadata=_TEXT)
    cwd: str | None = field(metadata=_TEXT_OR_NULL, default=None)
    transcript_path: str | None = field(metadata=_TEXT_OR_NULL, default=None)

    @classmethod
    def parse(cls, data: dict[str, Any]) -> _Event:
        """The event in ``data``; the first problem (in field order) raises :class:`_BadEvent`."""
        values: dict[str, Any] = {}
        for f in fields(cls):
            kind = f.metadata["kind"]
            if f.name not in data:
                if f.default is MISSING:
                    raise _BadEvent(f.name, "Field required")
                continue
            if not _fits(kind, data[f.name]):
                raise _BadEvent(f.name, _PROBLEM[kind])
            values[f.name] = data[f.name]
        return cls(**values)


@dataclass(frozen=True, kw_only=True)
class _Prompt(_Event):
    prompt: str = field(metadata=_TEXT)


@dataclass(frozen=True, kw_only=True)
class _ToolCall(_Event):
    tool_name: str = field(metadata=_TEXT)
    tool_input: dict[str, Any] = field(metadata=_OBJECT)
    tool_use_id: str | None = field(metadata=_TEXT_OR_NULL, default=None)


@dataclass(frozen=True, kw_only=True)
class _ToolResult(_ToolCall):
    tool_response: Any = field(metadata=_ANY, default=None)


@dataclass(frozen=True)
class HookResult:
    exit_code: int
    stdout: str = ""
    stderr: str = ""


def _deny_exit(reason: str) -> HookResult:
    return HookResult(2, "", f"intently: {reason}\n")


def _answer(payload: dict[str, Any], note: str = "") -> HookResult:
    return HookResult(0, json.dumps(payload, ensure_ascii=False) + "\n", note)


def handle_claude_event(
    raw: str,
    open_home: Opener,
    *,
    warned: list[warnings.WarningMessage] | None = None,
    deadline: float | None = None,
    late: LateAnswer | None = None,
) -> HookResult:
    """Answer one hook event. Never raises: a failure is exit 2 with a reason (PreToolUse, bad
    input) or a system message that lets the event proceed (every other event). Warnings met
    on the way (a requirement file skipped) are one ``intently: warning:`` line each on stderr,
    not Python's source-line dump. They are caught here, unless the caller collects them into
    ``warned`` itself (the hook server's threads: ``catch_warnings`` changes the whole process).

    ``deadline`` is for a one-shot hook process only: a PreToolUse still undecided after that
    many seconds ends the process with exit 2, and a UserPromptSubmit still working ends it
    with exit 0 and the answer made so far, the context block once it is assembled
    (:mod:`._watchdog`). The hook server, which must not end its process, passes ``late``
    instead and answers from it itself if its deadline passes (:meth:`LateAnswer.give_up`)."""
    if warned is not None:
        result = _handle(raw, open_home, deadline, late)
        caught = warned
    else:
        with warnings.catch_warnings(record=True) as recorded:
            warnings.simplefilter("always", UserWarning)
            result = _handle(raw, open_home, deadline, late)
        caught = recorded
    seen = dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, UserWarning))
    if not seen:
        return result
    return replace(result, stderr=result.stderr + "".join(f"intently: warning: {m}\n" for m in seen))


def _handle(raw: str, open_home: Opener, deadline: float | None, late: LateAnswer | None) -> HookResult:
    try:
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            return _deny_exit(f"hook input is not JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}")
        if not isinstance(data, dict):
            return _deny_exit("hook input must be a JSON object")
        event = data.get("hook_event_name")
        handler = _HANDLERS.get(str(event))
        if handler is None:
            return _deny_exit(f"unsupported hook event {event!r}; intently handles {', '.join(_HANDLERS)}")
        model, fn = handler
        try:
            parsed = model.parse(data)
        except _BadEvent as exc:
            return _deny_exit(f"{event} input invalid at {exc.field}: {exc.message}")
        limit: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
        if deadline is not None and event == "PreToolUse":
            limit = watchdog(deadline)
        elif late is not None and event == "UserPromptSubmit":
            fn = functools.partial(_user_prompt, late=late)
        elif late is not None and event == "PreToolUse":
            fn = functools.partial(_pre_tool, late=late)
        elif deadline is not None and event == "UserPromptSubmit":
            late = LateAnswer(ends_process=True)
            fn = functools.partial(_user_prompt, late=late)
            limit = watchdog(deadline, late.expired)
        try:
            with limit:
                return _open_and_answer(open_home, parsed, fn)
        except Exception as exc:
            if event == "PreToolUse":
                raise
            return _carry_on(str(event), exc)
    except Exception as exc:  # fail closed: anything unexpected blocks, with its reason
        return _deny_exit(f"{_failure(exc)}, blocked to fail closed")


def _open_and_answer(open_home: Opener, parsed: _Event, fn: Callable[[Intently, Any], HookResult]) -> HookResult:
    """Open the home for the event and answer it."""
    ix = open_home(Path(parsed.cwd) if parsed.cwd else None)
    # Every event appends (a decision, an observation) and is signed into the database, but
    # the tracked witness file is left to the user's own commands: rewritten at each tool
    # call, it kept the project's git tree dirty all session long.
    ix.log.witness_on_checkpoint = False
    try:
        return fn(ix, parsed)
    finally:
        ix.close()


def _failure(exc: Exception) -> str:
    """A setup problem (a bad config key, no home) says so; anything else is an internal error."""
    if isinstance(exc, IntentlyError):
        return f"cannot work here: {exc}"
    return f"internal error: {type(exc).__name__}: {exc}"


def _carry_on(event: str, exc: Exception) -> HookResult:
    """A failure outside PreToolUse does not block. Exit 2 there would not protect anything:
    on Stop it keeps the agent going, on UserPromptSubmit it erases the user's prompt. Every
    tool call still goes through PreToolUse, which fails closed on the same problem, so the
    user is told (a system message) and the session goes on without intently's help."""
    reason = f"{_failure(exc)} ({event} skipped; tool calls stay blocked until this is fixed)"
    return _answer({"systemMessage": f"intently: {reason}"}, f"intently: {reason}\n")


def context_within_cap(ix: Intently, query: str, *, session: str | None) -> ContextResult:
    """The context block under Claude Code's character cap.

    The assembler decides the block from previews (which record nothing), shrinking the
    token budget while the block is over :data:`MAX_CONTEXT_CHARS`, then records only the
    block delivered: the standing intents it shows are charged and the HIGH risks it shows
    are marked as surfaced to ``session``. (A preview that marked them would keep them out of
    the real block for the rest of the session.) One round of previews serves both the
    sizing and the block: a separate sizing preview before a full ``assemble`` asked every
    engine twice per prompt. The budget never goes below the smallest one the assembler
    accepts.
    """
    from ..context import assemble, min_budget

    budget = max(int(ix.config.context.budget), min_budget(ix.namespace))
    # The prompt is the acting user's, typed in Claude Code: the turn says so (as extraction
    # reads it, on channel ``claude-code``), or a standing intent scoped to that user
    # (``sender:user:alice``, how a shared home keeps a reminder to one person) or to the
    # channel could never fire here, where an unknown sender or channel matches no scope.
    # The conversation is the Claude Code session (``session_id`` of every hook event), so a
    # reminder scoped ``conversation:<session id>`` fires in that session and no other.
    return assemble(
        ix,
        query,
        session=session,
        channel=CLAUDE_CHANNEL,
        conversation=session,
        sender=str(ix.actor),
        budget=budget,
        max_chars=MAX_CONTEXT_CHARS,
    )


def _context_answer(event: str, result: ContextResult, note: str = "") -> HookResult:
    return _answer({"hookSpecificOutput": {"hookEventName": event, "additionalContext": result.text}}, note)


def _session_start(ix: Intently, ev: _Event) -> HookResult:
    return _context_answer("SessionStart", context_within_cap(ix, "", session=ev.session_id))


class LateAnswer:
    """What a UserPromptSubmit answers if its deadline passes: the answer made so far, which
    :func:`_user_prompt` keeps up to date, with a note of what was left undone. A hook that
    Claude Code waits on must answer, and the context block, once assembled, is worth giving
    even when the gate has not finished reading the prompt.

    A one-shot hook prints it from its watchdog and ends the process (:mod:`._watchdog`). The
    hook server cannot end its process, so the work goes on in its thread after the answer:
    :meth:`give_up` marks it ``abandoned`` (under ``lock``, so the work either finished first
    and its own answer is given, or never records a result after the late answer went out),
    and :func:`_user_prompt` then skips its remaining steps: the session record stays as the
    late answer describes it (the prompt recorded, no gate session), as after a one-shot
    hook's deadline.

    ``ends_process`` says the one-shot hook's watchdog ends the whole process at the deadline:
    the gate's reading then keeps each part of a long prompt in the session record as it goes
    (every :data:`intently.gate._intent.SAVE_EVERY_S` seconds), or the next process would start
    over. The hook server's process lives on and keeps every finished part in its own cache, so
    there the record is written once, as the late answer describes it."""

    def __init__(self, *, ends_process: bool = False) -> None:
        self.ends_process = ends_process
        self.answer: dict[str, Any] = {}
        self.notes: list[str] = []
        self.undone = "reading the prompt"
        self.lock = threading.Lock()
        self.finished = False
        self.abandoned = False

    def finish(self) -> bool:
        """The work is done: ``True`` if its own answer is the one to give (not given up on)."""
        with self.lock:
            self.finished = not self.abandoned
            return self.finished

    def give_up(self, seconds: float) -> tuple[str, str, int] | None:
        """The deadline passed: the late answer (stdout, stderr, exit code), and the work is
        abandoned; ``None`` if the work finished first (its answer stands)."""
        with self.lock:
            if self.finished:
                return None
            self.abandoned = True
            return self.expired(seconds)

    def claim(self) -> bool:
        """The work is about to log what it did (a gate session, a decision): ``True`` if it may,
        and from now on a deadline passing waits for this work's own answer; ``False`` if the
        answer was already given without it (nothing may be logged then)."""
        with self.lock:
            if self.abandoned:
                return False
            self.finished = True
            return True

    def expired(self, seconds: float) -> tuple[str, str, int]:
        note = (
            f"{self.undone} did not finish within {seconds:g} s (a very long prompt?), skipped so that Claude Code "
            "is not kept waiting; the tool calls go on with the gate's reading where it stopped, and each is blocked "
            "until it is done: should that last, start a new session (/clear) and give long text as a file"
        )
        notes = [*self.notes, note]
        answer = {**self.answer, "systemMessage": "intently: " + "; ".join(notes)}
        return json.dumps(answer, ensure_ascii=False) + "\n", "".join(f"intently: {n}\n" for n in notes), 0


class LateDecision(LateAnswer):
    """What a PreToolUse answers if the hook server's deadline passes: blocked, with the reason,
    as the one-shot hook's watchdog answers (:func:`._watchdog.blocked`). The work given up on
    stops reading the prompt at its next clause and logs no gate session and no decision:
    :func:`_pre_tool` claims the answer (:meth:`LateAnswer.claim`) before it logs anything."""

    def expired(self, seconds: float) -> tuple[str, str, int]:
        return blocked(seconds)


def _read_bound(prompt: str) -> tuple[str, int]:
    """The part of ``prompt`` the context block and extraction read, and how many characters
    they skip: all of it up to :data:`MAX_PROMPT_READ_CHARS`, else its head and its tail."""
    if len(prompt) <= MAX_PROMPT_READ_CHARS:
        return prompt, 0
    half = MAX_PROMPT_READ_CHARS // 2
    return f"{prompt[:half]}\n\n[…]\n\n{prompt[-half:]}", len(prompt) - 2 * half


def _user_prompt(ix: Intently, ev: _Event, late: LateAnswer | None = None) -> HookResult:
    """Record the prompt, hand it to extraction, answer with the context block, then open the
    gate session for it. The gate reads the whole prompt, which for megabytes of pasted text
    takes long; it comes last, so that a deadline reached there still answers with the block
    (the prompt is already recorded; each tool call then reads it for the gate itself)."""
    assert isinstance(ev, _Prompt)
    late = late or LateAnswer()
    notes = late.notes
    text, skipped = _read_bound(ev.prompt)
    if skipped:
        notes.append(
            f"a prompt of {len(ev.prompt):,} characters: the context block and extraction read its first and last "
            f"{MAX_PROMPT_READ_CHARS // 2:,} characters, {skipped:,} in between were skipped (the gate reads it all)"
        )
    from ._assent import is_bare_assent, last_agent_message

    proposal = None
    if ev.transcript_path and is_bare_assent(ev.prompt):
        proposal = last_agent_message(Path(ev.transcript_path))
    with session_record(ix.home.state_dir, ev.session_id) as record:
        record.requests.append(ev.prompt)
        if proposal:
            record.agreed.append(proposal)
        # The session opened for the earlier prompts does not hold this one: until the gate has
        # read it (below), a tool call opens its own logged session, as after a failed open.
        record.gate_session = None
        requests, kept = list(record.requests), dict(record.readings)
    late.undone = "extraction of the prompt"
    observe = engine_method(ix, "extraction", "observe")
    if observe is not None and ev.prompt.strip() and not late.abandoned:
        turn = {
            "speaker": str(ix.actor),
            "text": text,
            # In this machine's zone, as `review observe` does: "tomorrow" or "EOD" typed in the
            # evening west of UTC is the user's day, not UTC's next one.
            "time": ix.runtime.clock.now().astimezone().isoformat(),
            "channel": CLAUDE_CHANNEL,
            "message_id": getattr(ev, "prompt_id", None),
        }
        try:
            observe(turn)
        except Exception as exc:  # the prompt still goes through; the user is told why nothing was proposed
            notes.append(f"extraction failed on this prompt: {type(exc).__name__}: {exc}")
    late.undone = "assembling the context block"
    if late.abandoned:  # answered without it (the hook server's deadline): nothing left to give it to
        return _answer({})
    result = context_within_cap(ix, text, session=ev.session_id)
    answer: dict[str, Any] = {
        "hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": result.text}
    }
    late.answer, late.undone = dict(answer), "the gate's reading of the prompt"
    try:
        # Each prompt is read here, once; the reading stays in the record for the checks. It is
        # read before the session is opened, so that a hook server that gave up on it meanwhile
        # does not log a session the answer said was skipped.
        readings: dict[str, Any] = {}
        if gate_available(ix):
            readings = _current_readings(requests, kept)
            save = _saver(ix, ev.session_id, requests, readings) if late.ends_process else None
            _read_ahead_unless(late, requests, readings, save)
        opened = None if late.abandoned else gate_open(
            ix,
            user_request="\n\n".join(requests),
            session_id=f"claude-{ev.session_id}-{len(requests)}",
            user_requests=requests,
            readings=readings,
        )  # fmt: skip
    except Exception as exc:  # later checks open their own logged session; the user is told
        notes.append(f"could not open a gate session: {type(exc).__name__}: {exc}")
    else:
        with late.lock:  # given up on now or before: the record stays as the late answer said
            if not late.abandoned:
                with session_record(ix.home.state_dir, ev.session_id) as record:
                    if record.requests == requests:  # no later prompt has taken the session over meanwhile
                        record.gate_session, record.readings = opened, readings
                late.finished = True  # recorded: a deadline passing now waits for this answer, not the late one
    if notes:
        answer["systemMessage"] = "intently: " + "; ".join(notes)
    return _answer(answer, "".join(f"intently: {n}\n" for n in notes))


def _read_ahead(requests: list[str], readings: dict[str, Any], save: Callable[[], None] | None = None) -> None:
    """Read the prompts not read yet into ``readings`` (and the gate's process cache), as the
    gate session's opening would: the slow step for a very long prompt, done before anything
    is logged. ``save`` keeps what was read so far, every few seconds of reading (a prompt of
    megabytes is read chunk by chunk: :func:`intently.gate._intent.read_parts`)."""
    from ..gate import default_bundle
    from ..gate._intent import read_parts

    read_parts(requests, default_bundle().vocabulary, readings, save)


def _read_ahead_unless(
    late: LateAnswer, requests: list[str], readings: dict[str, Any], save: Callable[[], None] | None = None
) -> None:
    """:func:`_read_ahead`, stopped as soon as the hook server gave up on this prompt (its
    thread would otherwise read on at full CPU, holding one of the server's slots)."""
    from ..gate._intent import abandon_reading_when

    with abandon_reading_when(lambda: late.abandoned):
        _read_ahead(requests, readings, save)


def _saver(ix: Intently, session_id: str, requests: list[str], readings: dict[str, Any]) -> Callable[[], None]:
    """What keeps the readings made so far in the session record, for a one-shot hook process
    that its deadline may end in the middle of a long prompt."""
    return lambda: _keep_readings(ix, session_id, requests, readings)


def _current_readings(requests: list[str], readings: dict[str, Any]) -> dict[str, Any]:
    """The stored readings of the session's prompts, of each chunk of a long one (under the
    current vocabulary), and the facts of the request they make, without those of an older
    vocabulary, format or request, so the record does not keep growing with them."""
    from ..gate import default_bundle
    from ..gate._intent import reading_keys
    from ..gate._request_facts import facts_key

    keys = reading_keys(requests, default_bundle().vocabulary) | {facts_key("\n\n".join(requests))}
    return {k: v for k, v in readings.items() if k in keys}


def _pre_tool(ix: Intently, ev: _Event, late: LateAnswer | None = None) -> HookResult:
    """Decide a tool call. The prompts not read yet (their reading did not finish on arrival)
    are read first and kept in the session record at once, before the decision: should the
    deadline then pass, the next call finds them read instead of starting over. Under the hook
    server (``late``) the reading stops once the server has answered without it, and nothing
    is logged after that answer (:class:`LateDecision`)."""
    assert isinstance(ev, _ToolCall)
    record = read_session_record(ix.home.state_dir, ev.session_id)  # read only: nothing here changes it
    requests, seen, opened = record.requests, record.observations, record.gate_session
    agreed, readings = record.agreed, record.readings
    project, here = project_of(ix, ev.cwd)
    args = project_relative(ev.tool_name, ev.tool_input, project, here)
    if requests and gate_available(ix):
        known = len(readings)
        if late is not None:
            _read_ahead_unless(late, requests, readings)
            if len(readings) > known:
                _keep_readings(ix, ev.session_id, requests, readings)
        else:  # a one-shot process, which its deadline ends: keep each chunk's reading as it goes (and at the end)
            _read_ahead(requests, readings, _saver(ix, ev.session_id, requests, readings))
    if late is not None and not late.claim():
        return _deny_exit("the hook server answered this call at its deadline (blocked); nothing more was done")
    known = len(readings)
    answer = gate_check(
        ix,
        user_requests=requests,
        tool=ev.tool_name,
        args=args,
        observations=seen,
        session_id=opened,
        agreed=agreed,
        readings=readings,
        cwd=str(here),
        project=str(project),
    )
    if len(readings) > known:  # prompts not read on arrival (no gate then): keep what this check read
        _keep_readings(ix, ev.session_id, requests, readings)
    if opened is None and answer.session_id is not None:
        _adopt_session(ix, ev.session_id, answer.session_id, requests, seen)
    mapping = {"allow": "allow", "warn": "allow", "confirm": "ask", "review": "ask", "block": "deny"}
    decision = mapping[answer.outcome]
    if decision == "ask" and ev.tool_use_id and answer.decision_id and answer.session_id:
        pending = PendingAsk(
            answer.decision_id,
            answer.session_id,
            ev.tool_name,
            args,
            "\n\n".join(requests),
            len(seen),
            tuple(agreed),
            len(requests),
            (str(here), str(project)),
        )
        with session_record(ix.home.state_dir, ev.session_id) as record:
            record.asks[ev.tool_use_id] = pending
    reason = f"intently gate: {answer.outcome}: {answer.reason}"
    if answer.decision_id:
        reason += f" (decision {answer.decision_id})"
    if "command-not-allowlisted" in answer.rules:
        reason += _allowlist_hint(ix, ev.tool_input.get("command"))
    if ev.tool_name == "WebFetch" and decision != "allow" and re.search(r"made (?:it )?up", answer.reason):
        reason += (
            ". If it is documentation on a site you trust, add the site's host to [hooks] web_trusted in "
            f"{ix.home.config_path}; addresses an instruction gave stay refused"
        )
    if decision == "allow" and not hook_settings(ix).skip_prompt_when_allowed:
        # The gate found nothing wrong: Claude Code's own permission settings decide, as they
        # would without intently. A guard that answered "allow" would switch off prompts the
        # user set up; the decision is in the log either way.
        return _answer({"hookSpecificOutput": {"hookEventName": "PreToolUse"}})
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": decision,
            "permissionDecisionReason": reason,
        }
    }
    return _answer(out)


def _adopt_session(
    ix: Intently, session_id: str, gate_session: str, requests: list[str], seen: list[Observation]
) -> None:
    """Keep the gate session a check opened (the prompt's reading did not finish on arrival, so
    no session was opened then) as the session's own. Before, every later check opened and
    logged one more, each with the whole request in its ``GATE_SESSION_OPENED``: megabytes
    logged again at every tool call after a pasted log. Now the request is logged once and the
    later checks and outputs go to that session, as after a prompt read on arrival. Only while
    the record is as the check saw it: a new prompt, or an output that arrived meanwhile (it
    was logged in no session), leaves the next check to open its own."""
    with session_record(ix.home.state_dir, session_id) as record:
        if record.gate_session is None and record.requests == requests and record.observations == seen:
            record.gate_session = gate_session


def _keep_readings(ix: Intently, session_id: str, requests: list[str], readings: dict[str, Any]) -> None:
    """Add the readings of this session's prompts to its record (those of an older vocabulary
    or format left out), so the next tool call does not read those prompts again."""
    current = _current_readings(requests, readings)
    with session_record(ix.home.state_dir, session_id) as record:
        record.readings = {**current, **record.readings}


def _allowlist_hint(ix: Intently, command: Any) -> str:
    """How the user lets a blocked command run. The reason reaches the model, which relays it;
    without this the user learns only that Bash is refused, not which setting decides."""
    text = str(command or "").strip()
    if SHELL_OPERATOR.search(text):
        return (
            ". A command with a shell operator (| ; & > < $ ` or a backslash) never runs, allow-listed or not: "
            "run its parts as separate commands"
        )
    return (
        f'. To let it run with your approval each time, add "{_suggested_prefix(text)}" (or a longer prefix) '
        f"to [hooks] shell_allowlist in {ix.home.config_path}"
    )


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
_SUBCOMMAND = re.compile(r"[a-z][a-z0-9-]*")


def _suggested_prefix(command: str) -> str:
    """The narrowest entry that lets ``command`` run: leading variable assignments belong to it
    (``FOO=1 pytest``), and a subcommand word stays with its program (``git status``, not
    ``git``, which would let every git command through); options and paths are left off."""
    words = command.split()
    start = 0
    while start < len(words) and _ASSIGNMENT.fullmatch(words[start]):
        start += 1
    if start == len(words):
        return command or "the program"
    end = start + 1
    if end < len(words) and _SUBCOMMAND.fullmatch(words[end]):
        end += 1
    return " ".join(words[:end])


def _post_tool(ix: Intently, ev: _Event) -> HookResult:
    assert isinstance(ev, _ToolResult)
    project, here = project_of(ix, ev.cwd)
    new = Observation(
        ev.tool_name,
        clip(project_relative_output(ev.tool_response, project)),
        project_relative(ev.tool_name, ev.tool_input, project, here),
    )
    with session_record(ix.home.state_dir, ev.session_id) as record:
        before = list(record.observations)
        record.observations.append(new)
        opened, request = record.gate_session, "\n\n".join(record.requests)
        requests, readings = list(record.requests), dict(record.readings)
        asked = record.asks.pop(ev.tool_use_id, None) if ev.tool_use_id else None
    notes: list[str] = []
    if not gate_available(ix):
        notes.append("output recorded; the gate is not installed in this build")
    else:
        if asked is not None:
            try:
                folders = asked.folders or (str(here), str(project))
                notes.append(_record_approval(ix, asked, before, requests, readings, folders))
            except IntentlyError as exc:  # the output is still observed below; the user is told
                notes.append(f"approval of {asked.decision_id} not recorded: {exc}")
        if opened is not None:
            gate_observe(
                ix,
                user_request=request,
                session_id=opened,
                before=before,
                new=new,
                user_requests=requests,
                readings=readings,
            )
    if tool_output_extraction(ix):
        notes.append(extract_tool_output(ix, tool=ev.tool_name, tool_use_id=ev.tool_use_id, output=ev.tool_response))
    return HookResult(0, "", "".join(f"intently: {n}\n" for n in notes if n))


def _record_approval(
    ix: Intently,
    asked: PendingAsk,
    before: list[Observation],
    requests: list[str],
    readings: dict[str, Any],
    folders: tuple[str, str],
) -> str:
    """The call the gate asked about ran, so the user approved it in Claude Code: log that.
    The request is rebuilt from the prompts' kept readings (the gate uses them only when those
    prompts join to exactly the request the gate asked under); ``folders`` (the shell's and the
    project's) are where the call was read, as when it was asked about."""
    if asked.observations > len(before):
        return f"approval of {asked.decision_id} not recorded: the session's earlier outputs were trimmed"
    answer = gate_record_approval(
        ix,
        user_request=asked.request,
        session_id=asked.gate_session,
        decision_id=asked.decision_id,
        tool=asked.tool,
        args=asked.args,
        observations=before[: asked.observations],
        approver=str(ix.actor),
        agreed=asked.agreed,
        user_requests=requests[: asked.prompts] if asked.prompts else None,
        readings=readings,
        cwd=folders[0],
        project=folders[1],
    )
    return f"approval of {asked.decision_id} by the user recorded (decision {answer.decision_id})"


def _session_done(ix: Intently, ev: _Event) -> HookResult:
    from ._queue import ScanQueue

    if not ev.transcript_path:
        return HookResult(0, "", f"intently: {ev.hook_event_name} without transcript_path; nothing queued\n")
    added = ScanQueue(ix.home.state_dir).enqueue(
        session_id=ev.session_id,
        transcript_path=ev.transcript_path,
        event=ev.hook_event_name,
        queued_at=format_time(ix.runtime.clock.now()),
    )
    return HookResult(0, "", "" if added else "intently: transcript already queued\n")


def _session_end(ix: Intently, ev: _Event) -> HookResult:
    """The session is over: queue its transcript (as on Stop) and close the gate runs its record
    names. A closed run's trace proves it holds every operation of the run (``gate export``,
    ``gate verify-trace``: ``complete``); an open one's says only "complete up to operation N".
    Nothing of the session can be decided after its end, so closing refuses nothing the agent
    could still do: a call still waiting for the person (an ``ask``) is refused for good, which
    is what the end of the session already meant. A run already closed, or one that was never
    opened (a prompt's run is opened when it is read), is passed over; any other failure is
    told, and the transcript is queued whatever happened."""
    queued = _session_done(ix, ev)
    record = read_session_record(ix.home.state_dir, ev.session_id)
    runs = dict.fromkeys(
        [f"claude-{ev.session_id}-{n}" for n in range(1, len(record.requests) + 1)]
        + ([record.gate_session] if record.gate_session else [])
        + [ask.gate_session for ask in record.asks.values()]
    )
    if not runs or not gate_available(ix):
        return queued
    closed = ix.gate.close_runs(list(runs))
    failed = [f"{run}: {why}" for run, why in closed.get("failed", {}).items()]
    if not failed:
        return queued
    note = f"intently: could not close gate run(s) {'; '.join(failed)}\n"
    return HookResult(queued.exit_code, queued.stdout, queued.stderr + note)


_HANDLERS: dict[str, tuple[type[_Event], Callable[[Intently, Any], HookResult]]] = {
    "SessionStart": (_Event, _session_start),
    "UserPromptSubmit": (_Prompt, _user_prompt),
    "PreToolUse": (_ToolCall, _pre_tool),
    "PostToolUse": (_ToolResult, _post_tool),
    "Stop": (_Event, _session_done),
    "SessionEnd": (_Event, _session_end),
}
