"""``intently hook claude`` (answer one Claude Code hook event), ``hook install claude``, ``hook serve``,
``hook scan-queue``."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ._common import JsonOpt, emit, err, open_home, out, state

if TYPE_CHECKING:  # loaded by the commands that open a home, not by `intently --help`
    from .._intently import Intently

hook_app = typer.Typer(help="Put intently in front of coding agents (Claude Code hooks).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.add_typer(hook_app, name="hook")


@hook_app.command("claude")
def claude(ctx: typer.Context) -> None:
    """Read one Claude Code hook event (JSON) on stdin and answer on stdout; errors block (exit 2)."""
    from .._intently import Intently
    from ..hooks import handle_claude_event

    st = state(ctx)

    def opener(cwd: Path | None) -> Intently:
        return Intently.open(st.home, actor=st.actor, namespace=st.namespace, start=cwd)

    try:
        raw = sys.stdin.read()
    except Exception as exc:  # unreadable stdin must block, not fail open
        sys.stderr.write(f"intently: cannot read hook input: {exc}\n")
        sys.exit(2)
    from ..hooks._watchdog import pre_tool_deadline

    result = handle_claude_event(raw, opener, deadline=pre_tool_deadline())
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    sys.stdout.flush()
    # sys.exit, not typer.Exit: with standalone_mode=False click returns an Exit code instead of
    # exiting, and a lost exit 2 would let Claude Code proceed (fail open).
    sys.exit(result.exit_code)


def _default_command() -> str:
    """This interpreter running the hooks' own entry point: the same answers as
    ``intently hook claude`` without building the whole CLI on every tool call, quoted for
    this platform's hook shell."""
    from ..hooks._install import interpreter_command

    return interpreter_command(sys.executable, windows=os.name == "nt")


@hook_app.command("install")
def install(
    ctx: typer.Context,
    agent: Annotated[str, typer.Argument(help="The agent to install hooks for (claude).")],
    project: Annotated[Path, typer.Option(help="Project folder holding .claude/.")] = Path("."),
    command: Annotated[
        str | None, typer.Option(help="How hooks invoke intently (default: this installation's absolute path).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Merge intently's hook entries into .claude/settings.json (keeps other hooks; safe to re-run)."""
    from ..core.errors import InvalidInput
    from ..core.homedir import CONFIG_FILE, locate_home
    from ..hooks import install_claude

    if agent != "claude":
        raise InvalidInput(f"unknown agent {agent!r}; supported: claude", where="agent")
    folder = project.resolve()
    report = install_claude(folder, command or _default_command())
    # The hooks find their home the way every command does, from Claude Code's working folder
    # upward; with none there, each tool call is blocked (fail closed). Installed before
    # `intently init`, or in the wrong folder, that would first show as an agent that can do
    # nothing, so the install says it now (the hooks stay installed: `init` is the fix).
    found = locate_home(folder, state(ctx).home)
    home = str(found) if found is not None and (found / CONFIG_FILE).is_file() else None
    if home is None:
        err.print(
            f"warning: no intently home (.intently/) in {folder} or above: until you run `intently init` "
            "in the project, every tool call Claude Code makes here is blocked (the hooks fail closed)",
            markup=False,
        )
    emit(
        {**report.to_json(), "home": home},
        as_json,
        lambda d: out.print(
            f"{d['settings']}: added {', '.join(d['added']) or 'none'}; updated {', '.join(d['updated']) or 'none'}\n"
            + "".join(f"removed a malformed entry at {m}\n" for m in d["malformed"])
            + "".join(f"removed a second copy of intently's hook at {m}\n" for m in d["duplicates"])
            + (f"the previous file is kept as {d['backup']}\n" if d["backup"] else "")
            + "Bash runs only commands listed in [hooks] shell_allowlist of .intently/intently.toml "
            "(empty at first), each after you approve it; [hooks] shell_trusted lists harmless ones that run "
            "without intently's prompt; the gate refuses the rest and says how to list one.\n"
            "Optional: `intently hook serve` in the project answers each hook without starting intently anew.",
            markup=False,
        ),
    )


@hook_app.command("serve")
def serve(
    ctx: typer.Context,
    idle_timeout: Annotated[
        float, typer.Option(help="Stop after this many seconds without a hook event.", min=1.0)
    ] = 1800.0,
    as_json: JsonOpt = False,
) -> None:
    """Answer this home's Claude Code hook events from one long-lived process (about 6x faster).

    Optional: with no server, each hook answers in-process. Only hooks of the same install, home and INTENTLY_* environment are served.
    """
    from ..core.config import find_home
    from ..core.errors import InvalidInput
    from ..hooks._wire import SERVER_UNAVAILABLE, server_supported

    if not server_supported():  # before importing the server or touching signals
        raise InvalidInput(SERVER_UNAVAILABLE, where="hook serve")
    from ..hooks import serve_hooks

    st = state(ctx)

    if (st.actor or None) != (os.environ.get("INTENTLY_ACTOR") or None) or (st.namespace or None) != (
        os.environ.get("INTENTLY_NAMESPACE") or None
    ):
        raise InvalidInput(
            "hook serve answers as the hook does, with INTENTLY_ACTOR and INTENTLY_NAMESPACE from the "
            "environment; set them there (for the hooks too) instead of --actor/--namespace",
            where="hook serve",
        )
    home = find_home(None, st.home).path

    def ready(path: Path) -> None:
        if not as_json:
            out.print(
                f"Serving Claude Code hook events for {home} on {path} (pid {os.getpid()}; "
                f"stops after {idle_timeout:g} s idle; Ctrl-C or SIGTERM stops now)",
                markup=False,
            )
            sys.stdout.flush()  # whoever started it in the background may wait for this line

    def event(outcome: str, seconds: float) -> None:
        if not as_json:
            out.print(f"{outcome} ({seconds * 1000:.1f} ms)", markup=False)
            sys.stdout.flush()

    # Stop between events on Ctrl-C or SIGTERM, whatever the parent did with those signals (a
    # background job starts with SIGINT ignored), so the socket is always removed.
    signals: list[int] = []
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda got, _frame: signals.append(got))
    report = serve_hooks(
        home, idle_timeout=idle_timeout, on_ready=ready, on_event=event, should_stop=lambda: bool(signals)
    )
    emit(
        report.to_json(),
        as_json,
        lambda d: out.print(f"Stopped: {d['answered']} answered, {d['declined']} declined", markup=False),
    )


@hook_app.command("status")
def status(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Say whether an `intently hook serve` answers this home's hooks (pid, events answered).

    On a platform without the server (Windows) it says so: `supported` is false, `socket` null.
    """
    from ..core.config import find_home
    from ..hooks._wire import SERVER_UNAVAILABLE, ping, server_supported, socket_path

    home = find_home(None, state(ctx).home).path.resolve()
    supported = server_supported()
    alive = ping(home) if supported else None
    data: dict[str, Any] = {
        "home": str(home),
        "socket": str(socket_path(home)) if supported else None,
        "running": alive is not None,
        "supported": supported,
    }
    if alive is not None:
        data |= {k: alive.get(k) for k in ("pid", "version", "answered", "declined", "reasons")}
    if not supported:
        data["detail"] = SERVER_UNAVAILABLE

    def render(d: dict[str, Any]) -> None:
        if not d["supported"]:
            out.print(f"No hook server for {d['home']}: {d['detail']}.", markup=False)
        elif d["running"]:
            out.print(
                f"A hook server answers for {d['home']} (pid {d['pid']}): {d['answered']} answered, "
                f"{d['declined']} declined, on {d['socket']}",
                markup=False,
            )
        else:
            out.print(
                f"No hook server for {d['home']}: hooks answer in-process. Start one with `intently hook serve`, "
                "or set [hooks] server = true.",
                markup=False,
            )

    emit(data, as_json, render)


@hook_app.command("scan-queue")
def scan_queue(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Scan the queued transcripts for requirements (one scan per project at a time).

    Transcripts stay queued (exit 1, "unavailable") while the requirements engine's scan
    cannot be handed a list of transcripts.
    """
    import inspect

    from ..context import engine_method
    from ..hooks import ScanQueue

    with open_home(ctx) as ix:
        scan = engine_method(ix, "requirements", "scan")
        takes_paths = scan is not None and "transcripts" in inspect.signature(scan).parameters

        def run(paths: list[str]) -> Any:
            assert scan is not None
            return scan(transcripts=paths)

        # A scan that cannot be told which transcripts to read would empty the queue unread.
        report = ScanQueue(ix.home.state_dir).drain(run if takes_paths else None)
    emit(report.to_json(), as_json, lambda d: out.print(f"{d['status']}: {len(d['transcripts'])} transcript(s)"))
    if report.status in ("busy", "unavailable"):
        sys.exit(1)
