"""Run a real process with one of its outputs on a pseudo-terminal: what a person sees."""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal


def run_on_pty(
    argv: Sequence[str], *, cwd: Path, env: dict[str, str], on_pty: Literal["stdout", "stderr"]
) -> tuple[int, bytes, str]:
    """Run ``argv`` with ``on_pty`` on a pseudo-terminal and the other output on a pipe.

    Returns (exit code, the bytes the terminal received, the other output decoded). The
    terminal is read as the process writes, so a process filling it never blocks."""
    primary, secondary = os.openpty()
    pty_side = {"stdout": secondary, "stderr": subprocess.PIPE} if on_pty == "stdout" else {
        "stdout": subprocess.PIPE, "stderr": secondary
    }  # fmt: skip
    proc = subprocess.Popen([*argv], cwd=cwd, env=env, stdin=subprocess.DEVNULL, **pty_side)
    os.close(secondary)
    shown = bytearray()
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([primary], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(primary, 65536)
                except OSError:  # the process closed its end
                    break
                if not chunk:
                    break
                shown += chunk
            elif proc.poll() is not None:
                break
        piped = proc.stderr if on_pty == "stdout" else proc.stdout
        assert piped is not None
        other = piped.read().decode()
        code = proc.wait(timeout=30)
    finally:
        os.close(primary)
        if proc.poll() is None:
            proc.kill()
    return code, bytes(shown), other
