"""``intently gate ...`` (check, contracts, resolve, runs, explain, approve, close, export, verify-trace, bundle,
vocab suggest) and the top-level ``intently gateway -- <upstream MCP server command>``."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer

from ..core.errors import InvalidInput
from ..core.extras import require
from ._common import JsonOpt, emit, err, open_home, out, plain, table

gate_app = typer.Typer(help="The tool-call gate: contracts, decisions, approvals, signed traces.", no_args_is_help=True)
bundle_app = typer.Typer(help="The signed bundle of contracts, vocabulary and policies.", no_args_is_help=True)
vocab_app = typer.Typer(help="Grow the intent vocabulary as reviewed data.", no_args_is_help=True)
gate_app.add_typer(bundle_app, name="bundle")
gate_app.add_typer(vocab_app, name="vocab")


def register(app: typer.Typer) -> None:
    app.add_typer(gate_app, name="gate")
    app.command(
        "gateway",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        help="Proxy an MCP server over stdio with the gate on every call: intently gateway -- CMD ARGS...",
    )(gateway)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"cannot read JSON: {exc}", where=str(path)) from exc


def _tools(path: Path) -> list[dict[str, Any]]:
    data = _read_json(path)
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list):
        raise InvalidInput('expected a list of tools or {"tools": [...]}', where=str(path))
    return tools


#: ``intently gate check`` exits 0 only when the call may run: a script's ``&&`` fails closed.
#: Errors keep their own codes (1-8, 70), all non-zero as well.
#: Exit codes of `gate check`, by whether the call may run: a warned call runs (flagged) in every
#: other surface, and a call held for review waits for a person as a confirm does.
CHECK_EXIT = {"allow": 0, "warn": 0, "confirm": 10, "review": 10, "block": 11}


def _observations(pairs: list[str]) -> list[Any]:
    """``TOOL=FILE`` pairs: what each tool returned (the file's text) before the checked call."""
    from ..hooks import Observation

    found = []
    for i, pair in enumerate(pairs):
        tool, sep, file = pair.partition("=")
        if not sep or not tool.strip() or not file:
            raise InvalidInput(
                "expected TOOL=FILE (the tool's name, the file holding what it returned)", where=f"--observed[{i}]"
            )
        try:
            output = Path(file).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise InvalidInput(f"cannot read {file}: {exc.strerror or exc}", where=f"--observed[{i}]") from exc
        found.append(Observation(tool.strip(), output))
    return found


def _call_args(text: str) -> dict[str, Any]:
    """The call's arguments: a JSON object, inline or ``@FILE``."""
    where = text[1:] if text.startswith("@") else "--args"
    if text.startswith("@"):
        value = _read_json(Path(where))
    else:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", where=where) from exc
    if not isinstance(value, dict):
        raise InvalidInput("the call's arguments must be a JSON object", where=where)
    return value


@gate_app.command("check")
def check(
    ctx: typer.Context,
    tool: Annotated[str, typer.Argument(help="The tool the agent wants to call (as the agent names it).")],
    request: Annotated[
        list[str],
        typer.Option("--request", "-r", help="What the user asked for; repeat for each prompt of the conversation."),
    ],
    args: Annotated[str, typer.Option("--args", help="The call's arguments: a JSON object, or @FILE.")] = "{}",
    observed: Annotated[
        list[str] | None,
        typer.Option("--observed", help="TOOL=FILE: what a tool returned before this call (untrusted); repeatable."),
    ] = None,
    tools_file: Annotated[
        Path | None,
        typer.Option("--tools", help="JSON: MCP tools/list result or tool definitions (else Claude Code's tools)."),
    ] = None,
    session: Annotated[
        str | None,
        typer.Option("--session", help="Continue the session an earlier check printed (approvals bind to it)."),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Decide one proposed tool call: allow or warn (exit 0), confirm or review (exit 10), block (exit 11).

    For a harness without hooks, HTTP or MCP: the same gate, logged the same way. Only exit 0
    means run it; a person approves a confirm with `intently gate approve DECISION`.
    """
    from ..hooks import gate_check

    call_args = _call_args(args)
    observations = _observations(observed or [])
    tools = None if tools_file is None else _tools(tools_file)
    with open_home(ctx) as ix:
        answer = gate_check(
            ix,
            user_requests=request,
            tool=tool,
            args=call_args,
            observations=observations,
            tools=tools,
            session_id=session,
        )
        ix.checkpoint()
    data = answer.to_json()

    def render(d: dict[str, Any]) -> None:
        out.print(
            plain(f"{d['outcome']}: {d['reason']}")
            + (f"\ndecision {d['decision_id']} in session {d['session_id']}" if d["decision_id"] else ""),
            markup=False,
            highlight=False,
        )
        if CHECK_EXIT.get(d["outcome"]) == CHECK_EXIT["confirm"] and d["decision_id"]:
            # Exit 10 says "a person decides" but not how: an approval binds to this session,
            # so the check must be asked again in it (a new session would wait again).
            err.print(
                f"waiting for a person: `intently gate approve {d['decision_id']}`, then the same check "
                f"with `--session {d['session_id']}` lets it run once",
                markup=False,
                highlight=False,
            )

    emit(data, as_json, render)
    raise typer.Exit(CHECK_EXIT.get(answer.outcome, CHECK_EXIT["block"]))


@gate_app.command("contracts")
def contracts(
    tools_file: Annotated[Path, typer.Argument(help="JSON: MCP tools/list result or a list of tool definitions.")],
    as_json: JsonOpt = False,
) -> None:
    """Show the contract the gate infers (or finds) for each tool; tools without one are blocked."""
    from ..gate import Gate

    tools = _tools(tools_file)
    gate = Gate.from_tools(tools)
    data = [
        gate.contracts[t["name"]].to_json() if t["name"] in gate.contracts else {"tool": t["name"], "contract": None}
        for t in tools
    ]
    emit(
        data,
        as_json,
        lambda d: table(
            "Contracts",
            ["tool", "kinds", "side effect", "risk", "confirm", "roles"],
            [
                [
                    c["tool"],
                    ", ".join(c.get("kinds", [])),
                    c.get("side_effect", "NO CONTRACT: blocked"),
                    c.get("risk", ""),
                    c.get("confirm", ""),
                    ", ".join(f"{k}={v['role']}" for k, v in c.get("fields", {}).items()),
                ]
                for c in d
            ],
        ),
    )


@gate_app.command("resolve")
def resolve_cmd(
    request: Annotated[str, typer.Argument(help="The user's request.")],
    as_json: JsonOpt = False,
) -> None:
    """Show which action kinds a request authorises, what it negates and what was not placed."""
    from ..gate import default_bundle, resolve

    r = resolve(request, default_bundle().vocabulary)
    emit(r.to_json(), as_json)


@gate_app.command("runs")
def runs(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=0, help="How many, newest first.")] = 20,
    as_json: JsonOpt = False,
) -> None:
    """Recent gate runs (sessions) in this namespace."""
    with open_home(ctx) as ix:
        data = ix.gate.runs(limit)
    emit(
        data,
        as_json,
        lambda d: table(
            "Gate runs",
            ["id", "started", "decisions", "blocked", "request"],
            [[r["id"], r["started"], r["decisions"], r["blocked"], r["request"][:60]] for r in d],
        ),
    )


@gate_app.command("explain")
def explain(
    ctx: typer.Context,
    run: Annotated[str, typer.Argument(help="The run (session) id, or the id of one of its decisions.")],
    as_json: JsonOpt = False,
) -> None:
    """Why was this blocked? Each decision of a run in plain words, from the log."""
    with open_home(ctx) as ix:
        data = ix.gate.explain(run)
    emit(data, as_json, lambda d: out.print(plain(d["text"]), markup=False, highlight=False))


@gate_app.command("approve")
def approve(
    ctx: typer.Context,
    decision: Annotated[str, typer.Argument(help="The decision id to approve.")],
    as_json: JsonOpt = False,
) -> None:
    """Approve a waiting (confirm/review) decision: once, for exactly that action."""
    with open_home(ctx) as ix:
        d = ix.gate.approve(decision)
    emit({"approved": d.id, "tool": d.tool, "action_hash": d.action_hash}, as_json)


@gate_app.command("close")
def close(
    ctx: typer.Context,
    run: Annotated[str, typer.Argument(help="The run (session) id, or one of its decisions' ids.")],
    as_json: JsonOpt = False,
) -> None:
    """Close a run: nothing more is logged for it, and its trace (`gate export`) then proves it is complete."""
    with open_home(ctx) as ix:
        emit(ix.gate.close_run(run), as_json)


@gate_app.command("export")
def export(
    ctx: typer.Context,
    run: Annotated[str, typer.Argument(help="The run (session) id.")],
    output: Annotated[Path, typer.Option("--out", "-o", help="Where to write the signed trace bundle.")],
    as_json: JsonOpt = False,
) -> None:
    """Export a run as a signed trace bundle (verify offline with `gate verify-trace`)."""
    with open_home(ctx) as ix:
        doc = ix.gate.export_run(run)
    try:
        output.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    except OSError as exc:  # a missing folder or a read-only place: name it, not an internal error
        raise InvalidInput(f"cannot write the trace: {exc.strerror or exc}", where=str(output)) from exc
    emit({"run": run, "file": str(output), "key_id": doc["key_id"], "decisions": len(doc["run"]["decisions"])}, as_json)


@gate_app.command("verify-trace")
def verify_trace_cmd(
    trace: Annotated[Path, typer.Argument(help="A trace bundle from `gate export`.")],
    keys: Annotated[Path, typer.Option("--keys", help="The home's public keyring (keys/public.json).")],
    allow_unbound: Annotated[
        bool,
        typer.Option(
            "--allow-unbound",
            help="Accept a trace without inclusion proofs (an older export) signed by a since-retired key, "
            "on its signature alone.",
        ),
    ] = False,
    consistency: Annotated[
        list[Path] | None,
        typer.Option(
            "--consistency",
            help="`intently log consistency OLD NEW --json` output: binds the trace's checkpoint, signed by a "
            "since-retired key, to the last tree that key signed. Repeatable.",
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Verify a trace bundle offline with the public keyring; exit non-zero if it does not verify.

    Each operation's inclusion proof is checked against the signed checkpoint the trace carries;
    a trace without them (an older export) verifies with a warning, unless a since-retired key
    signed it (refused: the key may have leaked; --allow-unbound accepts it). A trace that leaves
    an operation of its run out is refused; `complete` says whether it holds the whole run (a
    closed run's, see `gate close`), `completeness` why."""
    from ..gate import IncompleteTraceWarning, UnboundTraceWarning, verify_trace
    from ..log import KeyRing

    if not keys.exists():
        raise InvalidInput("no such keyring file", where=str(keys))
    proofs = [_read_json(path) for path in consistency or []]
    for path, proof in zip(consistency or [], proofs, strict=True):
        if not isinstance(proof, dict):
            raise InvalidInput("not a consistency proof (a JSON object)", where=str(path))
    with warnings.catch_warnings():
        if not as_json:  # the printed result says it (its `warnings`); stderr need not say it again
            warnings.simplefilter("ignore", UnboundTraceWarning)
            warnings.simplefilter("ignore", IncompleteTraceWarning)
        result = verify_trace(
            _read_json(trace), KeyRing.load_public(keys), allow_unbound=allow_unbound, consistency=proofs
        )
    emit(result, as_json)


@bundle_app.command("verify")
def bundle_verify(
    folder: Annotated[Path | None, typer.Argument(help="Bundle folder (default: the shipped bundle).")] = None,
    public_key: Annotated[Path | None, typer.Option("--public-key", help="Ed25519 public key (PEM or base64).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Check a bundle's hashes and signature; a tampered bundle fails."""
    from ..gate import Bundle, load_public_key

    b = Bundle.load(folder, public_key=load_public_key(public_key) if public_key else None)
    emit({"ok": True, "version": b.version, "key_id": b.key_id, "rules": len(b.policies.rules)}, as_json)


@bundle_app.command("sign")
def bundle_sign(
    folder: Annotated[Path, typer.Argument(help="Bundle folder to sign.")],
    key: Annotated[Path, typer.Option("--key", help="Ed25519 private key (PEM).")],
    as_json: JsonOpt = False,
) -> None:
    """Sign a bundle folder after reviewing its changes."""
    from ..gate import load_private_key, sign_bundle

    path = sign_bundle(folder, load_private_key(key))
    emit({"signed": str(path)}, as_json)


@vocab_app.command("suggest")
def vocab_suggest(
    ctx: typer.Context,
    limit: Annotated[int, typer.Option(min=0, help="How many recent runs to read.")] = 200,
    as_json: JsonOpt = False,
) -> None:
    """Propose vocabulary entries from phrases the resolver could not place (for review)."""
    with open_home(ctx) as ix:
        data = ix.gate.vocab_suggest(limit)
    emit(
        data,
        as_json,
        lambda d: table(
            "Vocabulary suggestions",
            ["phrase", "count", "kinds", "example", "note"],
            [[s["phrase"], s["count"], ", ".join(s["suggested_kinds"]), s["example"][:50], s["note"]] for s in d],
        ),
    )


def gateway(
    ctx: typer.Context,
    request: Annotated[str, typer.Option("--request", help="The user's request (trusted channel).")] = "",
    request_file: Annotated[
        Path | None, typer.Option("--request-file", help="File holding the user's request; re-read when it changes.")
    ] = None,
    no_home: Annotated[
        bool, typer.Option("--no-home", help="Keep decisions in memory instead of the home's log.")
    ] = False,
    ask_timeout: Annotated[
        float,
        typer.Option(
            "--ask-timeout",
            min=0.1,
            help="Seconds a call waits for the user's answer to a confirmation question; then it is refused.",
        ),
    ] = 600.0,
    web_trusted: Annotated[
        list[str] | None,
        typer.Option(
            "--web-trusted",
            help="A site (host name; its subdomains too) where a read may open an address the model made up. Repeatable.",
        ),
    ] = None,
) -> None:
    """Proxy an MCP server over stdio with the gate on every call."""
    # Checked first: without it, a missing `mcp` read as the upstream server not answering.
    require("intently gateway", "server", "mcp", "anyio")
    from ..gate._gateway import run_gateway
    from ..gate._values import trusted_hosts

    sites = trusted_hosts(web_trusted or [], where="--web-trusted")

    command = list(ctx.args)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise InvalidInput("usage: intently gateway [--request TEXT] -- <upstream MCP server command>", where="command")
    if no_home:
        run_gateway(
            ctx, command, request=request, request_file=request_file, ask_timeout=ask_timeout, web_trusted=sites
        )
        return
    with open_home(ctx) as ix:
        run_gateway(
            ctx,
            command,
            request=request,
            request_file=request_file,
            home=ix,
            ask_timeout=ask_timeout,
            web_trusted=sites,
        )
