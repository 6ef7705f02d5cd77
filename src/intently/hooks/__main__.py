"""``python -m intently.hooks hook claude``: the hook answer without the whole CLI.

Claude Code starts one process per hook event, before every tool call, so start-up cost is
paid on each one. ``intently hook claude`` builds the full command-line application first
(every command group and the engines behind them); this entry point reads the same event,
opens the same home and answers with the same handler (:func:`handle_claude_event`), so
behaviour is identical, minus that start-up. The words ``hook claude`` are kept so the
command line ends like the CLI's (``intently hook install`` recognises its entries by it).

When ``intently hook serve`` runs for the event's home, the event is handed to it (see
``_wire``): the same handler answers, without this process importing it. Otherwise the event
is answered here.

Home, actor and namespace come from ``INTENTLY_HOME``, ``INTENTLY_ACTOR`` and
``INTENTLY_NAMESPACE``, as for the CLI. Fail closed: anything that goes wrong, including
a wrong command line, exits 2 with the reason on stderr (any other failure code would let
Claude Code proceed).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..core.homedir import locate_home
from ._wire import Answer, forward, start_wanted


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"]:
        args = args[1:]
    if args != ["claude"]:
        sys.stderr.write(f"intently: usage: python -m intently.hooks hook claude (got {' '.join(args)!r})\n")
        return 2
    try:
        raw = sys.stdin.read()
        served = _served(raw)
        if served is not None:
            sys.stdout.write(served.stdout)
            sys.stderr.write(served.stderr)
            sys.stdout.flush()
            return served.exit_code
        from ._claude import handle_claude_event, open_from_environment
        from ._watchdog import pre_tool_deadline
    except BaseException as exc:  # unreadable input or a broken install must block, not fail open
        sys.stderr.write(f"intently: cannot start the hook, blocked to fail closed: {type(exc).__name__}: {exc}\n")
        return 2

    result = handle_claude_event(raw, open_from_environment, deadline=pre_tool_deadline())
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    sys.stdout.flush()
    return result.exit_code


def _served(raw: str) -> Answer | None:
    """The answer of a running ``intently hook serve`` for this event's home, if one takes it."""
    cwd: Path | None = None
    event: str | None = None
    try:
        data = json.loads(raw)
        if isinstance(data, dict) and isinstance(data.get("cwd"), str) and data["cwd"]:
            cwd = Path(data["cwd"])
        if isinstance(data, dict) and isinstance(data.get("hook_event_name"), str):
            event = data["hook_event_name"]
    except ValueError:
        return None  # not JSON: the in-process handler says so
    home = locate_home(cwd)
    answer = forward(raw, home, event)
    if answer is None and home is not None:
        start_wanted(home)  # [hooks] server = true: the next events go to a server
    return answer


if __name__ == "__main__":
    sys.exit(main())
