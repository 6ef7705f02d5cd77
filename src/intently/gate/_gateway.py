"""``intently gateway -- <upstream MCP server command>``: an MCP stdio proxy with the gate on every call.

The gateway starts the upstream server, lists its tools, infers their contracts (annotations
are hints only) and serves the same tools to the client. Every call is checked by a gate
session: allowed calls are forwarded and their outputs observed as untrusted content.

A call that waits for a person (confirm/review) is asked about through MCP elicitation when
the connected client declared that capability (an ``elicitation/create`` request on
handshake-era connections, an ``InputRequiredResult`` the client answers and retries on
2026-07-28 ones): the user sees exactly what will run (tool, arguments, the gate's reason and
rule ids) and accepts or declines. Accept grants the ordinary single-use approval of that
decision (so it is logged and bound to the action's hash) and the call is checked again and
forwarded with the very arguments that were shown; the answer's content is ignored, so it
can never approve or substitute another action. Decline or cancel returns a tool error. A
client without elicitation (or one that fails to answer) gets an error result naming the
decision and ``intently gate approve ID``; the client retries after approval. The user's request comes from a trusted channel, never from
the agent: ``--request`` or ``--request-file`` (re-read when it changes, e.g. by a prompt hook).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import typer

from ..core.errors import IntentlyError, InvalidTransition
from ._contracts import SideEffect, open_world_by_default
from ._decision import Decision
from ._gate import Gate, Session

if TYPE_CHECKING:
    from .._intently import Intently

__all__ = ["CONFIRM_KEY", "CONFIRM_SCHEMA", "Answer", "Checked", "Gateway", "run_gateway"]

Answer = Literal["accept", "decline", "cancel"]

#: Seconds a call waits for an answer to ``elicitation/create`` before it is refused.
ASK_TIMEOUT = 600.0

#: The elicitation form: nothing to fill in, the answer is the action (accept/decline/cancel).
#: Any content a client sends back is ignored: it cannot change what runs.
CONFIRM_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

#: The key of the confirmation inside an ``InputRequiredResult`` (2026-07-28 era).
CONFIRM_KEY = "intently-gate-confirm"
_MAX_PENDING = 256


@dataclass(frozen=True)
class Checked:
    """One call as the gate saw it: the session that decided it and the decision."""

    session: Session
    decision: Decision

    @property
    def executes(self) -> bool:
        return self.decision.executes

    @property
    def needs_approval(self) -> bool:
        return self.decision.level.needs_approval


class Gateway:
    """The gate side of the proxy, independent of the transport (tested directly and over stdio)."""

    def __init__(
        self,
        gate: Gate,
        *,
        request: str = "",
        request_file: Path | None = None,
        ask_timeout: float = ASK_TIMEOUT,
        approvable: bool = True,
    ) -> None:
        self.gate = gate
        # Whether `intently gate approve` can reach this gate's decisions (a home's log); with
        # --no-home they live in memory, so only an answer through elicitation can approve one.
        self.approvable = approvable
        # How long a call waits for the user's answer to an elicitation; after it the call is
        # refused like one the client could not ask about (with the approval command).
        self.ask_timeout = ask_timeout
        self._request = request
        self._file = request_file
        self._session: Session | None = None
        self._seen: str | None = None
        self._pending: dict[str, Checked] = {}

    def session(self) -> Session:
        text = self._request
        if self._file is not None and self._file.exists():
            try:
                text = self._file.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                text = ""  # an unreadable request authorises nothing: fail closed, not open
        if self._session is None or text != self._seen:
            self._session = self.gate.session(user_request=text)
            self._seen = text
        return self._session

    def check(self, name: str, args: dict[str, Any]) -> Checked:
        """Decide one proxied call in the current session."""
        session = self.session()
        return Checked(session, session.check(name, args))

    def refusal(self, decision: Decision) -> str:
        """The error text for a call that does not run, with the approval command when one helps."""
        d = decision
        hint = ""
        if d.level.needs_approval:
            hint = (
                f" Approve with `intently gate approve {d.id}`, then retry."
                if self.approvable
                else " Without a home nothing outside this call can approve it: use a client that can answer"
                " the question (MCP elicitation), or run the gateway in a project with `intently init`."
            )
        return f"intently gate: {d.level} ({', '.join(d.rule_ids)}): {d.reason}. Decision {d.id}.{hint}"

    def question(self, decision: Decision) -> str:
        """What the user is asked: exactly the call that would run, and why the gate asks."""
        d = decision
        args = json.dumps(d.args, indent=2, sort_keys=True, ensure_ascii=False)
        return (
            f"The intently gate needs your decision ({d.level}) before this call runs.\n"
            f"Tool: {d.tool}\n"
            f"Arguments:\n{args}\n"
            f"Why: {d.reason}\n"
            f"Rules: {', '.join(d.rule_ids)}\n"
            f"Decision: {d.id}\n"
            "Accept runs exactly this call, once. Decline refuses it."
        )

    def answered(self, checked: Checked, answer: Answer) -> Checked | str:
        """Apply the user's answer to a confirm/review decision.

        Accept approves that decision through the session (single-use, bound to its action
        hash, logged) and checks the same action again: the result is what may be forwarded,
        with ``decision.args`` as the arguments. Anything else is the error text to return.
        """
        d = checked.decision
        if answer != "accept":
            verb = "declined" if answer == "decline" else "cancelled the confirmation of"
            if answer == "decline":  # a refusal is a decision too: logged, and never approvable after
                with contextlib.suppress(InvalidTransition):
                    checked.session.deny(d.id, "declined by the user when asked (elicitation)")
            return (
                f"intently gate: the user {verb} {d.tool} ({', '.join(d.rule_ids)}); it did not run. Decision {d.id}."
            )
        # Already approved (e.g. by `intently gate approve` meanwhile): the re-check uses that one.
        with contextlib.suppress(InvalidTransition):
            checked.session.approve(d.id, approver=f"{self.gate.actor} (elicitation)")
        again = checked.session.check(d.tool, d.args)
        if not again.executes or again.action_hash != d.action_hash:
            return self.refusal(again)
        return Checked(checked.session, again)

    def asking(self, checked: Checked) -> str:
        """Remember a question sent in an ``InputRequiredResult`` (2026-07-28 era); returns the
        opaque ``request_state`` the client echoes with its answer."""
        self._pending[checked.decision.id] = checked
        while len(self._pending) > _MAX_PENDING:  # unanswered questions do not pile up forever
            del self._pending[next(iter(self._pending))]
        return checked.decision.id

    def asked(self, checked: Checked, state: str | None) -> Checked | None:
        """The question a retried call answers, if ``state`` names one still pending for this
        very action (same session, tool and arguments). The client's state is not trusted: an
        unknown, used or mismatched state yields ``None`` and the user is asked anew."""
        pending = self._pending.pop(state, None) if state else None
        if pending is None or pending.decision.action_hash != checked.decision.action_hash:
            return None
        return pending

    def observe(self, session: Session, name: str, args: dict[str, Any], output: Any) -> None:
        """Record an output as untrusted content. The call's arguments count as seen only for a
        read: the arguments of a write the user approved must not vouch for its own repeat."""
        contract = self.gate.contract(name)
        reads = contract is not None and contract.side_effect is SideEffect.NONE
        session.observe(name, output, args=args if reads else None)


def _elicitation(ctx: Any) -> Literal["request", "input_required"] | None:
    """How this client can be asked: a server-to-client ``elicitation/create`` request
    (handshake-era protocols), an ``InputRequiredResult`` the client answers and retries with
    (2026-07-28 era, which forbids server-initiated requests), or not at all (it did not
    declare form elicitation)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    caps = ctx.session.client_capabilities
    el = caps.elicitation if caps is not None else None
    if el is None or (el.form is None and el.url is not None):
        return None
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return "input_required"
    return "request" if ctx.session.can_send_request else None


def _returned_answer(params: Any) -> Answer | None:
    """The user's answer carried by a retried call (2026-07-28 era), if any."""
    from mcp_types import ElicitResult
    from pydantic import ValidationError

    response = (params.input_responses or {}).get(CONFIRM_KEY)
    if isinstance(response, dict):
        try:
            response = ElicitResult.model_validate(response)
        except ValidationError:
            return None
    if not isinstance(response, ElicitResult):
        return None
    action: Answer = response.action
    return action


async def _ask(ctx: Any, gateway: Gateway, checked: Checked) -> Answer | None:
    """Ask the user through elicitation; ``None`` when the client could not answer, or did not
    within ``gateway.ask_timeout`` (a call must not wait for ever on a client that never replies)."""
    import anyio
    from mcp.shared.exceptions import MCPError
    from pydantic import ValidationError

    result = None
    try:
        with anyio.move_on_after(gateway.ask_timeout):
            result = await ctx.session.elicit_form(
                gateway.question(checked.decision), CONFIRM_SCHEMA, related_request_id=ctx.request_id
            )
    except (MCPError, ValidationError):
        return None
    if result is None:
        return None
    action: Answer = result.action
    return action


async def _confirm(ctx: Any, params: Any, gateway: Gateway, checked: Checked) -> Checked | Any:
    """Ask the user about a confirm/review call when the client can be asked. Returns the
    re-checked call to forward (accept), the unchanged call (no way to ask: it is refused with
    the approval command), or a result to send back as is: the question itself on 2026-07-28
    connections, or the tool error of a decline/cancel."""
    import mcp_types as types

    mode = _elicitation(ctx)
    if mode is None:
        return checked
    if mode == "input_required":
        asked = gateway.asked(checked, params.request_state)
        if asked is None:
            question = types.ElicitRequestFormParams(
                message=gateway.question(checked.decision), requested_schema=CONFIRM_SCHEMA
            )
            return types.InputRequiredResult(
                input_requests={CONFIRM_KEY: types.ElicitRequest(params=question)},
                request_state=gateway.asking(checked),
            )
        checked = asked  # the answer is about the decision the user was shown
        answer = _returned_answer(params)
    else:
        answer = await _ask(ctx, gateway, checked)
    if answer is None:
        return checked
    outcome = gateway.answered(checked, answer)
    if isinstance(outcome, str):
        return types.CallToolResult(content=[types.TextContent(type="text", text=outcome)], is_error=True)
    return outcome


async def _serve(command: list[str], make_gateway: Any) -> None:
    import mcp_types as types
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    def error(text: str) -> Any:
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)

    import anyio
    from mcp.shared.exceptions import MCPError

    params = StdioServerParameters(command=command[0], args=command[1:])
    async with stdio_client(params) as (up_read, up_write), ClientSession(up_read, up_write) as upstream:
        with anyio.fail_after(_UPSTREAM_START_S):  # an upstream that never answers the handshake
            await upstream.initialize()
        listed = await upstream.list_tools()
        definitions = [
            open_world_by_default(t.model_dump(by_alias=True, exclude_none=True, mode="json")) for t in listed.tools
        ]
        gateway: Gateway = make_gateway(definitions)

        async def on_list_tools(ctx: Any, params: Any) -> Any:
            return types.ListToolsResult(tools=listed.tools)

        async def on_call_tool(ctx: Any, params: Any) -> Any:
            checked = gateway.check(params.name, dict(params.arguments or {}))
            if checked.needs_approval:
                settled = await _confirm(ctx, params, gateway, checked)
                if not isinstance(settled, Checked):
                    return settled  # the question (2026-07-28 era) or the user's refusal
                checked = settled
            if not checked.executes:
                return error(gateway.refusal(checked.decision))
            args = checked.decision.args  # exactly what was hashed (and shown, when asked)
            try:
                result = await upstream.call_tool(params.name, args)
            except MCPError as exc:  # the upstream died or broke the protocol mid-session
                return error(
                    f"intently gateway: the upstream MCP server ({' '.join(command)}) did not answer {params.name}: "
                    f"{exc}. Restart the gateway."
                )
            texts = [c.text for c in result.content if isinstance(c, types.TextContent)]
            output: Any = _maybe_json(texts) if texts else result.structured_content
            gateway.observe(checked.session, params.name, args, output)
            return result

        server = Server("intently-gateway", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())


# Seconds an upstream has to answer the MCP handshake before the gateway gives up on it.
_UPSTREAM_START_S = 30.0


def _maybe_json(texts: list[str]) -> Any:
    if len(texts) == 1:
        try:
            return json.loads(texts[0])
        except json.JSONDecodeError:
            return texts[0]
    return texts


def run_gateway(
    ctx: typer.Context,
    command: list[str],
    *,
    request: str = "",
    request_file: Path | None = None,
    home: Intently | None = None,
    ask_timeout: float = ASK_TIMEOUT,
    web_trusted: Sequence[str] = (),
) -> None:
    """Serve until the client disconnects; decisions go to ``home``'s log when given."""
    import anyio

    def make(definitions: list[dict[str, Any]]) -> Gateway:
        sites = tuple(web_trusted)
        gate = (
            home.gate.gate(definitions, web_trusted=sites)
            if home is not None
            else Gate.from_tools(definitions, web_trusted=sites)
        )
        return Gateway(
            gate, request=request, request_file=request_file, ask_timeout=ask_timeout, approvable=home is not None
        )

    del ctx
    try:
        anyio.run(_serve, command, make)
    except Exception as exc:  # the upstream failed to start, died or broke the protocol: say which, in one line
        raise UpstreamFailed(command, exc) from exc


class UpstreamFailed(IntentlyError):
    """The upstream MCP server behind the gateway stopped or never answered."""

    exit_code = 1

    def __init__(self, command: list[str], exc: BaseException) -> None:
        leaf = exc
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:  # anyio's task groups wrap the cause
            leaf = leaf.exceptions[0]
        detail = f"{type(leaf).__name__}: {leaf}" if str(leaf) else type(leaf).__name__
        super().__init__(
            f"the upstream MCP server ({' '.join(command)}) stopped or did not answer: {detail}; "
            "check that the command runs an MCP server on stdio"
        )
