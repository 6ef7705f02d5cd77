"""Exclusive locks on an open file, the same on POSIX and on Windows.

intently keeps one scan of a home at a time, one writer of a hook session's record, one
drain of the scan queue and one claim of a console scan job across processes. Each is an
exclusive lock held on an open file object: ``flock`` where ``fcntl`` exists (every POSIX
system: the lock files and their behaviour are what they always were, so an older process
and a newer one still exclude each other), ``msvcrt.locking`` on Windows, which has no
``fcntl``. Both are held per open file (two opens in one process exclude each other too)
and dropped by the operating system when the file is closed or its process dies, so a
killed holder never blocks the next one. Windows' lock is on a byte range and blocks other
handles' reads and writes of it: the lock files are never read or written, only locked.

The mechanism is chosen by which module imports, not by ``sys.platform``: a Python without
``fcntl`` takes the Windows path, which is how the tests run that path on Linux. Without
either, taking a lock raises :class:`LockUnavailable` (fail closed: never run unguarded).

Not the ``filelock`` package: the call sites lock a file they already hold open (the queue
keeps it open across a scan) and need a non-blocking attempt that answers "held" at once;
the core install stays without another dependency for a few dozen lines.
"""

from __future__ import annotations

import errno
import importlib
import time
from types import ModuleType
from typing import IO, Any

__all__ = ["LockUnavailable", "lock", "mechanism", "try_lock", "unlock"]

#: How often a waiting lock tries again on Windows, whose own ``LK_LOCK`` gives up after 10 s.
RETRY_S = 0.02


def _optional(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


_fcntl: Any = _optional("fcntl")  # POSIX
_msvcrt: Any = None if _fcntl is not None else _optional("msvcrt")  # Windows


class LockUnavailable(OSError):
    """This Python has neither ``fcntl.flock`` nor ``msvcrt.locking``: intently cannot keep
    two processes apart here, and says so rather than running unguarded."""


def mechanism() -> str:
    """The lock this process uses: ``flock``, ``msvcrt`` or ``none``."""
    if _fcntl is not None:
        return "flock"
    return "msvcrt" if _msvcrt is not None else "none"


def try_lock(fh: IO[Any]) -> bool:
    """Take an exclusive lock on ``fh`` if nobody holds one; ``False`` at once when held."""
    if _fcntl is not None:
        try:
            _fcntl.flock(fh.fileno(), _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    if _msvcrt is not None:
        fh.seek(0)  # msvcrt locks from the current position: always byte 0
        try:
            _msvcrt.locking(fh.fileno(), _msvcrt.LK_NBLCK, 1)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EDEADLK):  # another handle holds it
                return False
            raise
        return True
    raise _unavailable(fh)


def lock(fh: IO[Any]) -> None:
    """Take an exclusive lock on ``fh``, waiting for as long as another holder keeps it."""
    if _fcntl is not None:
        _fcntl.flock(fh.fileno(), _fcntl.LOCK_EX)
        return
    while not try_lock(fh):
        time.sleep(RETRY_S)


def unlock(fh: IO[Any]) -> None:
    """Release the lock taken on ``fh`` (closing the file, or the process ending, releases it too)."""
    if _fcntl is not None:
        _fcntl.flock(fh.fileno(), _fcntl.LOCK_UN)
    elif _msvcrt is not None:
        fh.seek(0)
        _msvcrt.locking(fh.fileno(), _msvcrt.LK_UNLCK, 1)
    else:
        raise _unavailable(fh)


def _unavailable(fh: IO[Any]) -> LockUnavailable:
    return LockUnavailable(
        errno.ENOLCK, "no file locks on this platform (neither fcntl nor msvcrt)", str(getattr(fh, "name", "?"))
    )
