"""The bridge to the gate engine, shared by the Claude Code hook, the HTTP API and MCP.

A Claude Code hook is a new process per event, so a gate session cannot stay in memory
between a prompt and the tool calls it leads to. The bridge rebuilds it: the session is
opened in the home's log once (when the prompt arrives), and each later check replays the
recorded tool outputs into a fresh in-memory ledger under the same session id (quietly:
they were logged when they arrived), then decides with the home's journal, so the
decision, and any approval bound to that session and exact action, live in the log.

Claude Code's own tools get the explicit contracts in ``claude_tools.yaml``; an MCP tool
``mcp__server__tool`` is checked under its own name ``tool``, with a contract inferred
from that name and its argument names, and open-world by the MCP default (Claude Code passes
no annotations; the gate would not trust them to loosen anything anyway).

Fail closed: a gate that is not built yet, an answer the bridge cannot read, or an outcome
it does not know all come back as ``block`` with the reason, never as ``allow``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._engines import engine_method
from ..core.errors import InvalidInput
from ._settings import hook_settings

if TYPE_CHECKING:
    from .._intently import Intently

__all__ = [
    "OUTCOMES",
    "GateAnswer",
    "Observation",
    "claude_tool_contracts",
    "gate_available",
    "gate_check",
    "gate_observe",
    "gate_open",
    "gate_record_approval",
    "project_of",
    "project_relative",
    "project_relative_output",
]

#: The gate's five outcomes. Anything else is read as ``block``.
OUTCOMES = ("allow", "warn", "confirm", "review", "block")

_UNAVAILABLE = (
    "intently's tool-call gate is not installed in this build, so no tool call can be verified; "
    "every call is blocked until it is (fail closed)"
)


@dataclass(frozen=True)
class Observation:
    """A tool output the agent saw: untrusted content, kept for provenance."""

    tool: str
    output: Any
    args: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "output": self.output, "args": dict(self.args or {})}


@dataclass(frozen=True)
class GateAnswer:
    """What the gate decided, in the surfaces' terms."""

    outcome: str
    reason: str
    decision_id: str | None = None
    rules: tuple[str, ...] = ()
    available: bool = True
    session_id: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "reason": self.reason,
            "decision_id": self.decision_id,
            "session_id": self.session_id,
            "rules": list(self.rules),
            "gate_available": self.available,
        }


def gate_available(ix: Intently) -> bool:
    return engine_method(ix, "gate", "gate") is not None


@lru_cache(maxsize=1)
def claude_tool_contracts() -> dict[str, dict[str, Any]]:
    """The explicit contracts of Claude Code's own tools (``claude_tools.yaml``)."""
    from ..core import yaml12

    text = resources.files("intently.hooks").joinpath("claude_tools.yaml").read_text(encoding="utf-8")
    data = yaml12.load(text)
    return {str(k): dict(v) for k, v in data["tools"].items()}


def project_relative(tool: str, args: Mapping[str, Any], root: Path | None, cwd: Path | None = None) -> dict[str, Any]:
    """Path arguments of Claude Code's tools made relative to the project, as the user says them.

    Claude Code sends absolute paths; the user writes ``tests/test_api.py``. Provenance
    compares values, so the gate sees the path the way the request could have named it.
    ``cwd`` is the folder Claude Code reports (its shell's, after a ``cd``): a relative path is
    read from there. Paths are named from ``root``, the project's top, wherever the shell is:
    named from ``src/app`` after ``cd src/app``, the protected ``src/app/config.py`` was
    ``config.py`` and matched no protection.
    """
    out = dict(args)
    spec = claude_tool_contracts().get(tool)
    if spec is None or root is None:
        return out
    for name, role in (spec.get("fields") or {}).items():
        value = out.get(name)
        if role != "path" or not isinstance(value, str) or not value:
            continue
        if cwd is not None and cwd != root and not Path(value).is_absolute():
            value = os.path.normpath(cwd / value)  # relative to the shell's folder
            out[name] = value
        if Path(value).is_absolute() and Path(value).is_relative_to(root):
            out[name] = Path(value).relative_to(root).as_posix()
        real = _through_links(spec, name, value, root)
        if real is not None:
            out[name] = real
    return out


def project_of(ix: Intently, cwd: str | None) -> tuple[Path, Path]:
    """The project's top and the folder Claude Code reports (``cwd``): paths are named from the
    first and a command's relative paths read from the second. A ``cwd`` outside the project (or
    none) is taken as the top, as before."""
    project = ix.home.project_root
    here = Path(cwd) if cwd else project
    try:
        inside = os.path.realpath(here) == os.path.realpath(project) or Path(os.path.realpath(here)).is_relative_to(
            os.path.realpath(project)
        )
    except (OSError, ValueError):
        inside = False
    return (project, here) if inside else (here, here)


def _through_links(spec: Mapping[str, Any], name: str, value: str, root: Path) -> str | None:
    """Where a path really leads, when a symbolic link or its spelling makes the difference: the link
    ``src/conf.toml -> ../.intently/intently.toml`` edits intently's config, and a link out of
    the project writes outside it. The gate then judges the real file (its guard refuses the
    first; the second is a path nobody gave). ``None`` when the path is what it says."""
    written = Path(value) if Path(value).is_absolute() else root / value
    try:
        real = Path(os.path.realpath(written))
        base = Path(os.path.realpath(root))
    except (OSError, ValueError):
        return None
    inside = real.is_relative_to(base)
    shown = real.relative_to(base).as_posix() if inside else real.as_posix()
    literal = Path(value).relative_to(root).as_posix() if Path(value).is_relative_to(root) else value
    if shown == literal:
        return None

    from ..gate._contracts import breaks_constraint

    def guarded(path: str) -> bool:
        return any(breaks_constraint(c, path) for c in spec.get("constraints") or [] if str(c.get("arg")) == name)

    # A link, or only a spelling (".claude/./settings.json", "src//../.git/x"), that hides a
    # guarded file or leads out of the project: the gate judges where the write really lands.
    left = not inside and real != Path(os.path.normpath(written))
    return shown if (guarded(shown) and not guarded(literal)) or left else None


def project_relative_output(value: Any, root: Path | None) -> Any:
    """A tool output with the project's absolute prefix taken off every path in it.

    The gate sees path arguments relative to the project (:func:`project_relative`); the
    outputs that vouch for them (a Grep's file list, a Glob, a stack trace) must say them the
    same way, or ``src/parser.py`` found by a search would look like a path nobody named."""
    if root is None:
        return value
    prefix = root.as_posix().rstrip("/") + "/"
    if isinstance(value, str):
        return value.replace(prefix, "")
    if isinstance(value, Mapping):
        return {k: project_relative_output(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [project_relative_output(v, root) for v in value]
    return value


def _gate_name(tool: str) -> str:
    """``mcp__github__create_issue`` -> ``create_issue``; built-in names stay as they are."""
    if tool.startswith("mcp__"):
        parts = tool.split("__", 2)
        if len(parts) == 3 and parts[2]:
            return parts[2]
    return tool


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def _definition(tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """A definition for a tool Claude Code names but does not describe (an MCP server's).
    Claude Code passes no annotations, so the MCP specification's defaults stand
    (:func:`intently.gate._contracts.open_world_by_default`)."""
    from ..gate._contracts import open_world_by_default

    props = {k: {"type": _json_type(v)} for k, v in args.items()}
    return open_world_by_default({"name": tool, "inputSchema": {"type": "object", "properties": props}})


def _build(
    ix: Intently,
    tool: str,
    args: Mapping[str, Any],
    observations: Sequence[Observation],
    tools: Sequence[Mapping[str, Any]] | None,
) -> Any:
    """A gate knowing ``tool`` and every tool whose output was observed."""
    names = {tool, *(o.tool for o in observations)}
    if tools is not None:
        defs = list(tools)
        overrides: dict[str, dict[str, Any]] | None = None
    else:
        builtin = claude_tool_contracts()
        known: dict[str, Mapping[str, Any]] = {tool: args, **{o.tool: o.args or {} for o in observations}}
        defs = [_definition(n, known.get(n, {})) for n in sorted(names) if n not in builtin]
        overrides = {n: builtin[n] for n in sorted(names) if n in builtin} or None
    options: dict[str, Any] = {"overrides": overrides} if overrides else {}
    if tools is None:
        # Claude Code works in a repository: every prompt is about it, so the agent's reads of
        # the project are reads the request called for, named or not.
        options["context_objects"] = ("repository",)
    settings = hook_settings(ix)
    if settings.shell_allowlist:
        options["shell_allowlist"] = settings.shell_allowlist
    if settings.shell_trusted:
        options["shell_trusted"] = settings.shell_trusted
    if settings.web_trusted:
        options["web_trusted"] = settings.web_trusted
    return ix.gate.gate(defs, namespace=ix.namespace, **options)


def gate_open(
    ix: Intently,
    *,
    user_request: str,
    session_id: str,
    user_requests: Sequence[str] | None = None,
    readings: MutableMapping[str, Any] | None = None,
) -> str | None:
    """Open (and log) the gate session for a user's request; ``None`` while there is no gate.

    ``user_requests`` (the prompts ``user_request`` joins) and ``readings`` (where the caller
    keeps what was read in each) let each prompt be read once for the session's life; see
    :meth:`intently.gate.Gate.session`."""
    if not gate_available(ix):
        return None
    gate = ix.gate.gate([], namespace=ix.namespace)
    session = gate.session(
        user_request=user_request,
        namespace=ix.namespace,
        session_id=session_id,
        request_parts=user_requests,
        readings=readings,
    )
    return str(session.id)


def _rebuild(
    ix: Intently,
    *,
    user_request: str,
    tool: str,
    args: Mapping[str, Any],
    observations: Sequence[Observation],
    session_id: str | None,
    tools: Sequence[Mapping[str, Any]] | None,
    user_requests: Sequence[str] | None = None,
    readings: MutableMapping[str, Any] | None = None,
) -> Any:
    from ..gate import MemoryJournal

    gate = _build(ix, _gate_name(tool), args, [_renamed(o) for o in observations], tools)
    logged = gate.journal
    if session_id is not None:
        gate.journal = MemoryJournal()  # already logged when they happened
    session = gate.session(
        user_request=user_request,
        namespace=ix.namespace,
        session_id=session_id,
        request_parts=user_requests,
        readings=readings,
    )
    for seen in observations:
        session.observe(_gate_name(seen.tool), seen.output, seen.args)
    gate.journal = logged
    return session


def _renamed(o: Observation) -> Observation:
    return Observation(_gate_name(o.tool), o.output, o.args)


def gate_observe(
    ix: Intently,
    *,
    user_request: str,
    session_id: str,
    before: Sequence[Observation],
    new: Observation,
    user_requests: Sequence[str] | None = None,
    readings: MutableMapping[str, Any] | None = None,
) -> str | None:
    """Log one tool output into an open session (after replaying the earlier ones quietly).
    ``user_requests`` and ``readings`` as for :func:`gate_open`."""
    if not gate_available(ix):
        return None
    session = _rebuild(
        ix,
        user_request=user_request,
        tool=new.tool,
        args=new.args or {},
        observations=before,
        session_id=session_id,
        tools=None,
        user_requests=user_requests,
        readings=readings,
    )
    return str(session.observe(_gate_name(new.tool), new.output, new.args))


def gate_check(
    ix: Intently,
    *,
    user_requests: Sequence[str],
    tool: str,
    args: Mapping[str, Any],
    observations: Sequence[Observation] = (),
    session_id: str | None = None,
    tools: Sequence[Mapping[str, Any]] | None = None,
    agreed: Sequence[str] = (),
    readings: MutableMapping[str, Any] | None = None,
    cwd: str | None = None,
    project: str | None = None,
) -> GateAnswer:
    """Check one proposed call.

    ``session_id`` names a session opened by :func:`gate_open` (the observations were logged
    as they came); without it a new session is opened and everything is logged now. ``tools``
    gives MCP-style definitions; without it Claude Code's contracts and inference apply.
    ``agreed`` holds agent proposals the user answered with a bare assent
    (:meth:`intently.gate.Session.agree_to`: their kinds of action, never their values).
    ``readings`` keeps what was read in each of ``user_requests`` (see :func:`gate_open`): the
    request is their blank-line join, read one prompt at a time, so a long conversation does not
    make each check slower. ``cwd`` is the folder the agent's commands start in (where a patch
    a command applies is read; see :attr:`intently.gate.Session.workdir`); ``project`` the
    folder the user's paths are named from, when ``cwd`` lies inside it
    (:attr:`intently.gate.Session.project_root`). Raises only on errors a caller must turn into a denial itself (a hook: exit 2).
    """
    if not gate_available(ix):
        return GateAnswer("block", _UNAVAILABLE, available=False)
    session = _rebuild(
        ix,
        user_request="\n\n".join(user_requests),
        tool=tool,
        args=args,
        observations=observations,
        session_id=session_id,
        tools=tools,
        user_requests=user_requests,
        readings=readings,
    )
    for proposal in agreed:
        session.agree_to(proposal)
    session.workdir = cwd
    session.project_root = project
    answer = _read_decision(session.check(_gate_name(tool), dict(args)))
    return GateAnswer(answer.outcome, answer.reason, answer.decision_id, answer.rules, True, str(session.id))


def _text(value: Any) -> str:
    raw = getattr(value, "value", value)
    return "" if raw is None else str(raw)


def _read_decision(decision: Any) -> GateAnswer:
    def get(key: str) -> Any:
        if isinstance(decision, Mapping):
            return decision.get(key)
        return getattr(decision, key, None)

    outcome = ""
    for key in ("level", "outcome", "decision"):
        value = get(key)
        if value is not None:
            outcome = _text(value).lower()
            break
    reason = _text(get("reason")) or "no reason given"
    rules_value = get("rule_ids") or get("rules") or ()
    rules = tuple(str(r) for r in rules_value) if isinstance(rules_value, Sequence) else (str(rules_value),)
    ident = get("id")
    if outcome not in OUTCOMES:
        return GateAnswer("block", f"the gate gave an outcome the bridge does not know ({outcome!r}); blocked")
    return GateAnswer(outcome, reason, None if ident is None else str(ident), rules)


def gate_record_approval(
    ix: Intently,
    *,
    user_request: str,
    session_id: str,
    decision_id: str,
    tool: str,
    args: Mapping[str, Any],
    observations: Sequence[Observation],
    approver: str,
    agreed: Sequence[str] = (),
    user_requests: Sequence[str] | None = None,
    readings: MutableMapping[str, Any] | None = None,
    cwd: str | None = None,
    project: str | None = None,
) -> GateAnswer:
    """Record that the user approved an ``ask`` (confirm/review) decision and the call ran.

    The session is rebuilt exactly as it stood when the gate asked (same request, same
    outputs seen), the decision is approved once for that exact action, and the same call
    is checked again, which uses the approval up: the log then holds the approval and an
    ``allow`` decision that names it, so no approval is left open for a later call.
    ``user_requests`` and ``readings`` as for :func:`gate_open`.
    """
    if not gate_available(ix):
        return GateAnswer("block", _UNAVAILABLE, available=False)
    session = _rebuild(
        ix,
        user_request=user_request,
        tool=tool,
        args=args,
        observations=observations,
        session_id=session_id,
        tools=None,
        user_requests=user_requests,
        readings=readings,
    )
    for proposal in agreed:
        session.agree_to(proposal)
    session.workdir, session.project_root = cwd, project
    session.approve(decision_id, approver=approver)
    decision = session.check(_gate_name(tool), dict(args))
    answer = _read_decision(decision)
    if getattr(decision, "approval_used", None) != decision_id:
        raise InvalidInput(
            f"the approval of {decision_id} was not used by the re-check ({answer.outcome}: {answer.reason})",
            where=f"gate session {session_id}",
        )
    return GateAnswer(answer.outcome, answer.reason, answer.decision_id, answer.rules, True, str(session.id))
