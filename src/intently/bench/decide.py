"""``python -m intently.bench decide [--events N] [--prompt-chars C] [--prompts N] [--prompt-words W] [--json]``:
what the decision on one tool call costs after a long prompt and late in a long session.

Claude Code starts ``python -m intently.hooks hook claude`` afresh before every tool call,
and that process decides the call on everything the session's user said so far. Two things
grow with the session: one prompt of megabytes (a pasted log; a script once measured a decided
call after a 1.8 MB prompt at about a second of CPU) and many prompts (each kept with its
reading in the session record, which every check loads and combines). The ``hook`` bench times
the second at its default size beside a re-read baseline; this one times the decided call
itself in each case beside the same call in a session of one short prompt, all on one real
home (git repository, SQLite file, signed log) in the same run, interleaved so that a busy
machine weighs on every figure alike:

- **short_prompt** (the baseline): a ``PreToolUse`` in a session of one short prompt;
- **long_prompt**: the same call in a session whose one prompt is that short prompt followed by
  a pasted log, ``--prompt-chars`` characters in all;
- **long_session**: the same call in a session of ``--prompts`` prompts of ``--prompt-words``
  words each;
- **interpreter_start**: ``python -c pass``, the floor no Python hook can go under.

The prompts are submitted (and read, as on arrival) in this process before the clock starts:
the figure is the tool call's, not the prompt's. Each timed call is a new process; its wall
time and its CPU time (user + system, POSIX only: ``null`` elsewhere) are reported. Every
answer must be ``allow`` (the gate decided and logged it), or the run fails rather than time a
refusal.
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

from .hook import _PROMPT, _decision, _project, _session_prompts, _submit, _tool_events

__all__ = ["main", "measure"]

_LOG_LINE = "2026-12-01T10:{m:02d}:{s:02d}Z INFO parser batch {n} took {ms} ms (queue {q})"


def _pasted_log(chars: int) -> str:
    """The short prompt, then a pasted log of plain lines, ``chars`` characters in all."""
    head = f"{_PROMPT}. Here is the log of the failing run:\n"
    lines: list[str] = []
    size = len(head)
    n = 0
    while size < chars:
        line = _LOG_LINE.format(m=n // 60 % 60, s=n % 60, n=n, ms=n * 37 % 500, q=n % 9)
        lines.append(line)
        size += len(line) + 1
        n += 1
    return (head + "\n".join(lines))[:chars]


def _timed(argv: list[str], payload: str, env: dict[str, str], cwd: Path) -> tuple[float, float | None, str]:
    """Wall seconds, CPU seconds (``None`` where the platform cannot say) and stdout of one process."""
    try:
        import resource
    except ImportError:  # not POSIX: wall time only
        resource = None  # type: ignore[assignment]
    before = resource.getrusage(resource.RUSAGE_CHILDREN) if resource else None
    start = time.perf_counter()
    done = subprocess.run(argv, input=payload, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    wall = time.perf_counter() - start
    cpu = None
    if resource is not None and before is not None:
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()}")
    return wall, cpu, done.stdout


def _summary(wall: list[float], cpu: list[float | None]) -> dict[str, float | None]:
    ms = sorted(s * 1000 for s in wall)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    cpus = [c * 1000 for c in cpu if c is not None]
    return {
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(p95, 1),
        "mean_ms": round(statistics.fmean(ms), 1),
        "cpu_p50_ms": round(statistics.median(cpus), 1) if cpus and len(cpus) == len(cpu) else None,
    }


def measure(events: int, root: Path, prompt_chars: int, prompts: int, prompt_words: int) -> dict[str, Any]:
    """Time ``events`` decided tool calls in each session, interleaved, in one run on one home."""
    project = _project(root)
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env.update({"INTENTLY_HOME": str(project / ".intently"), "INTENTLY_ACTOR": "user:bench"})
    sessions = {
        "short_prompt": [_PROMPT],
        "long_prompt": [_pasted_log(prompt_chars)],
        "long_session": _session_prompts(prompts, prompt_words),
    }
    for name, said in sessions.items():
        _submit(project, f"bench-{name}", said)
    fast = [sys.executable, "-m", "intently.hooks", "hook", "claude"]
    calls = _tool_events(project)
    wall: dict[str, list[float]] = {name: [] for name in (*sessions, "interpreter_start")}
    cpu: dict[str, list[float | None]] = {name: [] for name in wall}
    answers: set[str] = set()
    for i in range(events):
        for name in sessions:
            payload = json.dumps({**json.loads(calls[i % len(calls)]), "session_id": f"bench-{name}"})
            seconds, used, out = _timed(fast, payload, env, project)
            wall[name].append(seconds)
            cpu[name].append(used)
            answers.add(_decision(out))
        seconds, used, _ = _timed([sys.executable, "-c", "pass"], "", env, project)
        wall["interpreter_start"].append(seconds)
        cpu["interpreter_start"].append(used)
    if answers != {"allow"}:
        raise RuntimeError(f"the hook answered {sorted(answers)}, not only allow: this run would time refusals")
    return {
        "benchmark": "decide",
        "events": events,
        "prompt_chars": len(sessions["long_prompt"][0]),
        "prompts": prompts,
        "prompt_words": prompt_words,
        **{name: _summary(wall[name], cpu[name]) for name in wall},
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m intently.bench decide", description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=10, help="timed tool calls per session (default 10)")
    parser.add_argument(
        "--prompt-chars", type=int, default=1_800_000, help="characters of the long prompt (default 1,800,000)"
    )
    parser.add_argument("--prompts", type=int, default=100, help="prompts in the long session (default 100)")
    parser.add_argument("--prompt-words", type=int, default=200, help="words per prompt there (default 200)")
    parser.add_argument("--dir", type=Path, default=None, help="where the temporary project goes")
    parser.add_argument("--json", action="store_true", help="machine output")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.events < 1:
        parser.error("--events must be at least 1")
    if args.prompt_chars <= len(_PROMPT) + 40:
        parser.error(f"--prompt-chars must be more than {len(_PROMPT) + 40} (the question and one log line)")
    if args.prompts < 1 or args.prompt_words < 1:
        parser.error("--prompts and --prompt-words must be at least 1")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        result = measure(args.events, Path(tmp), args.prompt_chars, args.prompts, args.prompt_words)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"One decided PreToolUse, as a new process ({result['events']} events each; wall and CPU time):")
    for name, label in (
        ("short_prompt", "baseline: after one short prompt"),
        ("long_prompt", f"after one prompt of {result['prompt_chars']:,} characters"),
        ("long_session", f"after {result['prompts']} prompts of {result['prompt_words']} words"),
        ("interpreter_start", "python -c pass (the floor)"),
    ):
        row = result[name]
        cpu = "n/a" if row["cpu_p50_ms"] is None else f"{row['cpu_p50_ms']:>7.1f} ms"
        print(f"  {label:<44} p50 {row['p50_ms']:>7.1f} ms   p95 {row['p95_ms']:>7.1f} ms   CPU p50 {cpu}")
    return 0
