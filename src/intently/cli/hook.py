"""``intently hook claude`` (answer one Claude Code hook event), ``hook install claude``, ``hook scan-queue``."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from .._intently import Intently
from ._common import JsonOpt, emit, open_home, out, state

hook_app = typer.Typer(help="Put intently in front of coding agents (Claude Code hooks).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.add_typer(hook_app, name="hook")


@hook_app.command("claude")
def claude(ctx: typer.Context) -> None:
    """Read one Claude Code hook event (JSON) on stdin and answer on stdout; errors block (exit 2)."""
    from ..hooks import handle_claude_event

    st = state(ctx)

    def opener(cwd: Path | None) -> Intently:
        return Intently.open(st.home, actor=st.actor, namespace=st.namespace, start=cwd)

    try:
        raw = sys.stdin.read()
    except Exception as exc:  # unreadable stdin must block, not fail open
        sys.stderr.write(f"intently: cannot read hook input: {exc}\n")
        sys.exit(2)
    result = handle_claude_event(raw, opener)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    sys.stdout.flush()
    # sys.exit, not typer.Exit: with standalone_mode=False click returns an Exit code instead of
    # exiting, and a lost exit 2 would let Claude Code proceed (fail open).
    sys.exit(result.exit_code)


def _default_command() -> str:
    """This interpreter running the hooks' own entry point: the same answers as
    ``intently hook claude`` without building the whole CLI on every tool call."""
    return f"{shlex.quote(sys.executable)} -m intently.hooks"


@hook_app.command("install")
def install(
    agent: Annotated[str, typer.Argument(help="The agent to install hooks for (claude).")],
    project: Annotated[Path, typer.Option(help="Project folder holding .claude/.")] = Path("."),
    command: Annotated[
        str | None, typer.Option(help="How hooks invoke intently (default: this installation's absolute path).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Merge intently's hook entries into .claude/settings.json (keeps other hooks; safe to re-run)."""
    from ..core.errors import InvalidInput
    from ..hooks import install_claude

    if agent != "claude":
        raise InvalidInput(f"unknown agent {agent!r}; supported: claude", where="agent")
    report = install_claude(project.resolve(), command or _default_command())
    emit(
        report.to_json(),
        as_json,
        lambda d: out.print(
            f"{d['settings']}: added {', '.join(d['added']) or 'none'}; updated {', '.join(d['updated']) or 'none'}\n"
            "Bash runs only commands listed in [hooks] shell_allowlist of .intently/intently.toml "
            "(empty at first), each after you approve it; [hooks] shell_trusted lists harmless ones that run "
            "without intently's prompt; the gate refuses the rest and says how to list one.",
            markup=False,
        ),
    )


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
