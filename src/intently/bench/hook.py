"""``python -m intently.bench hook [--events N] [--prompts N] [--prompt-words W] [--json]``: what a hook event costs.

Claude Code starts a new process for every hook event, before every tool call, so the
figure a user feels is the wall time of that whole process: interpreter start, imports,
opening the home, replaying the session into the gate, deciding and logging. Measured on a
real home (a git repository, SQLite file, signed log) with an open session, per event:

- **fast_hook**: ``python -m intently.hooks hook claude``, what ``intently hook install``
  writes into ``.claude/settings.json``;
- **cli_hook**: ``intently hook claude`` through the full command-line application;
- **served_hook**: the same installed command while ``intently hook serve`` runs for the home
  (the event is handed to the server, which keeps the imports loaded);
- **interpreter_start**: ``python -c pass``, the floor no Python hook can go under;
- **served_prompt**: a ``UserPromptSubmit`` (recorded for the gate, context block assembled
  over a few goals and a standing intent) through the installed command with the server
  running, so the figure is the handler's work rather than interpreter start.
- **oneshot_prompt**: the same ``UserPromptSubmit`` through the installed command with no
  server, a new process per prompt (what every prompt costs when ``intently hook serve`` is
  not running): beside ``served_prompt``, the difference is the process's start-up (imports,
  the extraction lexicon, opening the home) that the server pays once.

- **long_session**: a ``PreToolUse`` through the installed command in a session that already
  holds ``--prompts`` prompts of ``--prompt-words`` words each (``pre_tool_use``), beside the
  same event with the prompts' stored readings removed from the session record first
  (``reread_baseline``: the check reads every prompt again, as every check did before the
  readings were kept). Both are a new process per event, on the same home in the same run.

Each event is one ``PreToolUse`` (a Read, then an Edit of the file the prompt names, in
turn); every answer must be ``allow``, or the run fails rather than time a refusal.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["main"]

_PROMPT = "Fix the failing assertion in tests/test_api.py"


def _event(project: Path, name: str, **extra: Any) -> str:
    return json.dumps(
        {
            "session_id": "bench-session",
            "transcript_path": str(project / "transcript.jsonl"),
            "cwd": str(project),
            "permission_mode": "default",
            "hook_event_name": name,
            **extra,
        }
    )


def _tool_events(project: Path) -> list[str]:
    target = str(project / "tests" / "test_api.py")
    return [
        _event(project, "PreToolUse", tool_name="Read", tool_input={"file_path": target}),
        _event(
            project,
            "PreToolUse",
            tool_name="Edit",
            tool_input={"file_path": target, "old_string": "== 2", "new_string": "== 3"},
        ),
    ]


def _run(argv: list[str], payload: str, env: dict[str, str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, input=payload, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return elapsed, done.stdout


def _decision(stdout: str) -> str:
    """The hook's answer; an answer with no decision is the gate's allow, deferring to
    Claude Code's own permission settings."""
    if not stdout.strip():
        return ""
    answer = json.loads(stdout).get("hookSpecificOutput", {})
    if answer.get("hookEventName") == "PreToolUse" and "permissionDecision" not in answer:
        return "allow"
    return str(answer.get("permissionDecision", ""))


def _summary(seconds: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return {
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(p95, 1),
        "mean_ms": round(statistics.fmean(ms), 1),
    }


def _project(root: Path) -> Path:
    from .._intently import Intently

    project = root / "proj"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_api.py").write_text("def test_api():\n    assert 1 + 1 == 2\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    with Intently.init(project, actor="user:bench", name="bench") as ix:
        for n in range(8):  # something for the prompts' context block to assemble
            ix.goals.add(f"Keep test_api {n} green while the parser is reworked", priority="HIGH")
        ix.triggers.add("The parser freeze ends Friday", when=["parser"])
    return project


def measure(events: int, root: Path, prompts: int = 100, prompt_words: int = 200) -> dict[str, Any]:
    """Time ``events`` PreToolUse events through each command, in one run on one home; the
    long-session figure after ``prompts`` prompts of ``prompt_words`` words."""
    project = _project(root)
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env.update({"INTENTLY_HOME": str(project / ".intently"), "INTENTLY_ACTOR": "user:bench"})
    fast = [sys.executable, "-m", "intently.hooks", "hook", "claude"]
    cli = [sys.executable, "-c", "import sys; from intently.cli import main; sys.exit(main())", "hook", "claude"]
    _run(fast, _event(project, "UserPromptSubmit", prompt=_PROMPT), env, project)  # opens the session
    calls = _tool_events(project)
    timings: dict[str, list[float]] = {"fast_hook": [], "cli_hook": [], "interpreter_start": []}
    answers: set[str] = set()
    for i in range(events):
        payload = calls[i % len(calls)]
        for name, argv in (("fast_hook", fast), ("cli_hook", cli)):
            elapsed, out = _run(argv, payload, env, project)
            timings[name].append(elapsed)
            answers.add(_decision(out))
        timings["interpreter_start"].append(_run([sys.executable, "-c", "pass"], "", env, project)[0])
    timings["oneshot_prompt"] = _prompts(fast, events, env, project)
    timings["served_hook"], timings["served_prompt"] = _served(fast, calls, events, env, project, answers)
    long_session = _long_session(fast, events, env, project, answers, prompts, prompt_words)
    if answers != {"allow"}:
        raise RuntimeError(f"the hook answered {sorted(answers)}, not only allow: this run would time refusals")
    return {
        "benchmark": "hook",
        "events": events,
        **{k: _summary(v) for k, v in timings.items()},
        "long_session": long_session,
    }


_SESSION_TEXT = (
    "please look at the parser in src/parser.py and the failing assertion in tests/test_api.py then explain "
    "why the config loader keeps the trailing comma and do not touch the release notes or the changelog but "
    "check every caller of load_config and tell me which ones rely on the old behaviour before we change it"
)


def _session_prompts(prompts: int, words: int) -> list[str]:
    """``prompts`` prompts of ``words`` words, the first naming the file the timed calls touch."""
    vocabulary = _SESSION_TEXT.split()
    out = []
    for n in range(prompts):
        text = " ".join(vocabulary[(n + k) % len(vocabulary)] for k in range(words))
        opening = f"{_PROMPT}. " if n == 0 else ""  # what the timed Read and Edit are for
        out.append(f"{opening}Step {n}: {text}.")
    return out


def _submit(project: Path, session: str, prompts: Sequence[str]) -> None:
    """Submit ``prompts`` to ``session`` in this process, each read on arrival as a hook's would be."""
    from .._intently import Intently
    from ..hooks import handle_claude_event

    def opener(cwd: Path | None) -> Intently:
        return Intently.open(project, actor="user:bench")

    for prompt in prompts:
        event = {**json.loads(_event(project, "UserPromptSubmit", prompt=prompt)), "session_id": session}
        done = handle_claude_event(json.dumps(event), opener)
        if done.exit_code != 0 or "could not open a gate session" in done.stderr:
            raise RuntimeError(f"a prompt of session {session} failed: {done.stderr}")


def _long_session(
    fast: list[str],
    events: int,
    env: dict[str, str],
    project: Path,
    answers: set[str],
    prompts: int,
    prompt_words: int,
) -> dict[str, Any]:
    """PreToolUse late in a long session, with and without the prompts' stored readings."""
    from ..hooks._record import _file_for

    session = "bench-long-session"
    _submit(project, session, _session_prompts(prompts, prompt_words))  # the set-up, not the figure
    record = _file_for(project / ".intently" / "state", session)
    calls = [json.dumps({**json.loads(c), "session_id": session}) for c in _tool_events(project)]
    kept: list[float] = []
    reread: list[float] = []
    for i in range(events):
        elapsed, out = _run(fast, calls[i % len(calls)], env, project)
        kept.append(elapsed)
        answers.add(_decision(out))
        data = json.loads(record.read_text(encoding="utf-8"))
        data.pop("readings", None)  # the old path: nothing read before, every prompt read now
        record.write_text(json.dumps(data), encoding="utf-8")
        elapsed, out = _run(fast, calls[i % len(calls)], env, project)
        reread.append(elapsed)
        answers.add(_decision(out))
    return {
        "prompts": prompts,
        "prompt_words": prompt_words,
        "pre_tool_use": _summary(kept),
        "reread_baseline": _summary(reread),
    }


def _prompts(
    fast: list[str], events: int, env: dict[str, str], project: Path, session: str = "bench-oneshot"
) -> list[float]:
    """``events`` prompts through the installed command, each answered with a context block (a
    new process, or the hook server when one runs), in ``session`` (a session of their own, so
    the tool calls' session stays as it was)."""
    timings = []
    for i in range(events):
        prompt = {"session_id": session, "prompt": f"{_PROMPT} (parser step {i})"}
        elapsed, out = _run(fast, _event(project, "UserPromptSubmit", **prompt), env, project)
        if "additionalContext" not in out:
            raise RuntimeError(f"the prompt got no context block: {out}")
        timings.append(elapsed)
    return timings


def _served(
    fast: list[str], calls: list[str], events: int, env: dict[str, str], project: Path, answers: set[str]
) -> tuple[list[float], list[float]]:
    """The installed command again, with a hook server running for the home: the tool calls,
    then as many prompts (in a session of their own, so the calls' session stays as it was)."""
    server = subprocess.Popen(
        [sys.executable, "-c", "import sys; from intently.cli import main; sys.exit(main())", "hook", "serve"],
        env=env,
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None
        ready = server.stdout.readline()  # printed once hooks can connect
        if not ready.startswith("Serving"):
            raise RuntimeError(f"intently hook serve did not start: {ready}{server.stdout.read()}")
        _run(fast, calls[0], env, project)  # the server's first event pays its lazy set-up once
        timings = []
        for i in range(events):
            elapsed, out = _run(fast, calls[i % len(calls)], env, project)
            timings.append(elapsed)
            answers.add(_decision(out))
        prompts = _prompts(fast, events, env, project, session="bench-prompts")
    finally:
        server.terminate()
        log, _ = server.communicate(timeout=30)
    served = log.count("answered PreToolUse")
    if served != events + 1 or log.count("answered UserPromptSubmit") != events:
        # a declined event is answered in-process: it would time the wrong thing
        raise RuntimeError(f"the server answered {served} of {events + 1} tool calls:\n{log}")
    return timings, prompts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m intently.bench hook", description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=40, help="PreToolUse events per command (default 40)")
    parser.add_argument("--prompts", type=int, default=100, help="prompts in the long session (default 100)")
    parser.add_argument("--prompt-words", type=int, default=200, help="words per prompt there (default 200)")
    parser.add_argument("--dir", type=Path, default=None, help="where the temporary project goes")
    parser.add_argument("--json", action="store_true", help="machine output")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.events < 1:
        parser.error("--events must be at least 1")
    if args.prompts < 1 or args.prompt_words < 1:
        parser.error("--prompts and --prompt-words must be at least 1")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        result = measure(args.events, Path(tmp), args.prompts, args.prompt_words)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"One Claude Code PreToolUse event, as a new process ({result['events']} events each, wall time):")
    for name, label in (
        ("fast_hook", "python -m intently.hooks hook claude (installed)"),
        ("cli_hook", "intently hook claude (full CLI)"),
        ("served_hook", "the installed command, intently hook serve running"),
        ("interpreter_start", "python -c pass (baseline: interpreter start)"),
        ("served_prompt", "a UserPromptSubmit, intently hook serve running"),
        ("oneshot_prompt", "a UserPromptSubmit, a new process (no server)"),
    ):
        row = result[name]
        print(f"  {label:<50} p50 {row['p50_ms']:>7.1f} ms   p95 {row['p95_ms']:>7.1f} ms")
    long = result["long_session"]
    print(f"PreToolUse after {long['prompts']} prompts of {long['prompt_words']} words (installed command):")
    for name, label in (
        ("pre_tool_use", "prompts read once, on arrival"),
        ("reread_baseline", "baseline: every prompt read again at the check"),
    ):
        row = long[name]
        print(f"  {label:<50} p50 {row['p50_ms']:>7.1f} ms   p95 {row['p95_ms']:>7.1f} ms")
    return 0
