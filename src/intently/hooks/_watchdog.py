"""The one-shot hook process's deadline: a PreToolUse still undecided in time blocks, and a
UserPromptSubmit still working in time answers with what it has.

Claude Code kills a hook that outlives its timeout (30 s as installed) and then lets the tool
call run: a timeout is a non-blocking error. So the hook process arms a watchdog thread that,
at the deadline, writes the reason and ends the process with exit 2 (block) at once. It does
not raise into the work in progress: an exception raised at an arbitrary point (a signal
handler's) can leave a lock or a connection pool half made, and the process then hangs on
its way out, past the timeout: the fail-open it was meant to prevent. Ending the process is
safe for the data: an open SQLite transaction rolls back from its journal, and PostgreSQL
rolls back a connection that drops.

A prompt needs the same bound for another reason: a hook Claude Code waits on must not hang
it, and a pasted prompt of megabytes took minutes. There the watchdog does not block (exit 2
on UserPromptSubmit erases the prompt): it prints the answer the handler got ready so far (the
context block, once assembled) with a note of what was left undone, and exits 0.

Only the hook entry points ask for it (``handle_claude_event(..., deadline=...)``, armed once
the event is read and is a PreToolUse or a UserPromptSubmit); called in a caller's own process
(a harness, the hook server's threads, tests) it runs without one. The hook server, which must
not end its process, answers a prompt by the same deadline itself (``_serve``,
``LateAnswer.give_up``).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["DEADLINE_ENV", "PRE_TOOL_DEADLINE_S", "Expired", "blocked", "pre_tool_deadline", "watchdog"]

#: Seconds a PreToolUse may take before it blocks, and a UserPromptSubmit before it answers
#: with what it has; under Claude Code's hook timeout (30 s).
PRE_TOOL_DEADLINE_S = 20.0
#: Overrides :data:`PRE_TOOL_DEADLINE_S` (for a Claude Code configured with another timeout).
DEADLINE_ENV = "INTENTLY_HOOK_DEADLINE_S"


#: What the process prints and exits with when the deadline passes: stdout, stderr, exit code.
Expired = Callable[[float], tuple[str, str, int]]


def blocked(seconds: float) -> tuple[str, str, int]:
    """A PreToolUse past its deadline: blocked, with the reason."""
    return (
        "",
        f"intently: no decision within {seconds:g} s, blocked to fail closed (past Claude Code's hook "
        "timeout the call would run unchecked). After a very long prompt, start a new session (/clear) "
        "and give long text as a file\n",
        2,
    )


@contextmanager
def watchdog(seconds: float, expired: Expired = blocked) -> Iterator[None]:
    """End this process with ``expired``'s answer (by default exit 2 and the reason) if the
    block is still running after ``seconds``; leaving the block disarms it.

    One answer only: the watchdog and the block's end take the same lock, so a block that
    ends just as the deadline passes either disarms the watchdog or waits for the process to
    end, and its own answer is never printed after the watchdog's."""
    done = threading.Event()
    answering = threading.Lock()

    def expire() -> None:
        if done.wait(seconds):
            return
        with answering:
            if done.is_set():
                return
            stdout, stderr, code = expired(seconds)
            sys.stdout.write(stdout)
            sys.stderr.write(stderr)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)

    threading.Thread(target=expire, name="intently-hook-deadline", daemon=True).start()
    try:
        yield
    finally:
        with answering:
            done.set()


def pre_tool_deadline() -> float:
    """The deadline: :data:`DEADLINE_ENV` when it holds a positive number, else the default
    (a bad value must not switch the deadline off)."""
    try:
        value = float(os.environ.get(DEADLINE_ENV, ""))
    except ValueError:
        return PRE_TOOL_DEADLINE_S
    return value if 0 < value < 3600 else PRE_TOOL_DEADLINE_S
