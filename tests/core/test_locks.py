"""The file-lock contract the scan, the scan queue, the hook session records and the console's
scan claims rely on, between real processes: exclusive; a non-blocking attempt answers
"held" at once while another process holds it; a waiting one gets it when the holder lets
go; and the lock goes when the holder unlocks, closes the file, or is killed.

Each case runs on POSIX ``flock`` and on the Windows path (``msvcrt.locking``), the latter
through ``tests/_nonposix.py``: a Python without ``fcntl`` whose ``msvcrt`` stand-in behaves
as Windows documents it. Windows itself is not run here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from intently.core import locks

NONPOSIX = Path(__file__).resolve().parents[1] / "_nonposix.py"

# A holder: lock argv[1], say so, then obey stdin: "unlock", "close" (without unlocking), "exit".
_HOLDER = """
import sys
from intently.core import locks
fh = open(sys.argv[1], "a+")
locks.lock(fh)
print("held", locks.mechanism(), flush=True)
for line in sys.stdin:
    if line.strip() == "unlock":
        locks.unlock(fh)
    elif line.strip() == "close":
        fh.close()
    else:
        break
    print("done", flush=True)
"""

# One attempt: "try" prints whether a non-blocking lock was had; "wait" waits for it.
_PROBE = """
import sys
from intently.core import locks
fh = open(sys.argv[2], "a+")
if sys.argv[1] == "try":
    print(locks.try_lock(fh), locks.mechanism(), flush=True)
else:
    print("waiting", flush=True)
    locks.lock(fh)
    print("got", flush=True)
"""


def _argv(mechanism: str, code: str, *args: str) -> list[str]:
    wrapper = [str(NONPOSIX)] if mechanism == "msvcrt" else []
    return [sys.executable, *wrapper, "-c", code, *args]


def _env(mechanism: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NONPOSIX_")}
    return env | {"NONPOSIX_MSVCRT": "1"} if mechanism == "msvcrt" else env


class Holder:
    def __init__(self, mechanism: str, path: Path) -> None:
        self.process = subprocess.Popen(
            _argv(mechanism, _HOLDER, str(path)),
            env=_env(mechanism),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.read() == f"held {mechanism}"

    def read(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().strip()

    def say(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        assert self.read() == "done"

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def _try(mechanism: str, path: Path) -> bool:
    proc = subprocess.run(
        _argv(mechanism, _PROBE, "try", str(path)), env=_env(mechanism), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    had, used = proc.stdout.split()
    assert used == mechanism
    return had == "True"


MECHANISMS = pytest.mark.parametrize("mechanism", ["flock", "msvcrt"])


@MECHANISMS
def test_held_lock_refuses_another_process_until_unlocked(tmp_path: Path, mechanism: str) -> None:
    path = tmp_path / "scan.lock"
    holder = Holder(mechanism, path)
    try:
        assert _try(mechanism, path) is False
        assert _try(mechanism, path) is False  # still held: an attempt that failed changed nothing
        holder.say("unlock")
        assert _try(mechanism, path) is True
    finally:
        holder.stop()


@MECHANISMS
def test_closing_the_file_releases_the_lock(tmp_path: Path, mechanism: str) -> None:
    path = tmp_path / "scan.lock"
    holder = Holder(mechanism, path)
    try:
        assert _try(mechanism, path) is False
        holder.say("close")
        assert _try(mechanism, path) is True
    finally:
        holder.stop()


@MECHANISMS
def test_a_killed_holder_never_blocks_the_next(tmp_path: Path, mechanism: str) -> None:
    path = tmp_path / "scan.lock"
    holder = Holder(mechanism, path)
    assert _try(mechanism, path) is False
    os.kill(holder.process.pid, signal.SIGKILL)  # no unlock, no close, no cleanup
    holder.process.wait()
    assert _try(mechanism, path) is True


@MECHANISMS
def test_a_waiting_lock_gets_it_when_the_holder_lets_go(tmp_path: Path, mechanism: str) -> None:
    path = tmp_path / "scan.lock"
    holder = Holder(mechanism, path)
    try:
        waiter = subprocess.Popen(
            _argv(mechanism, _PROBE, "wait", str(path)), env=_env(mechanism), stdout=subprocess.PIPE, text=True
        )
        assert waiter.stdout is not None and waiter.stdout.readline().strip() == "waiting"
        time.sleep(1.0)
        assert waiter.poll() is None  # still waiting while the lock is held
        holder.say("unlock")
        out, _ = waiter.communicate(timeout=60)
        assert out.strip() == "got"
    finally:
        holder.stop()


def test_two_opens_in_one_process_exclude_each_other(tmp_path: Path) -> None:
    """Per open file, not per process (so a scan and a queue drain in one server process stay
    apart): the same on Windows, whose locks belong to a handle."""
    path = tmp_path / "scan.lock"
    with open(path, "a+") as first, open(path, "a+") as second:
        assert locks.try_lock(first) is True
        assert locks.try_lock(second) is False
        locks.unlock(first)
        assert locks.try_lock(second) is True
        locks.unlock(second)
