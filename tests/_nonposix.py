"""Run Python as on a platform without POSIX-only modules (how the tests stand in for Windows).

``python tests/_nonposix.py ARGS`` runs the ``intently`` CLI, ``-m MODULE ARGS`` a module and
``-c CODE ARGS`` a snippet, after making ``fcntl``, ``pwd``, ``grp``, ``termios`` and
``resource`` unimportable (``sys.modules[name] = None``) and removing what Windows' Python
lacks from ``os`` (``fchmod`` before 3.13, user and process-group ids, ``fork``) and
``socket.AF_UNIX``. ``NONPOSIX_MSVCRT=1`` adds a ``msvcrt`` whose ``locking`` behaves as
Windows documents it (``LK_NBLCK`` raises ``EACCES`` while another handle holds the lock,
which is held per handle and dropped when the process dies), done with the real ``flock``
kept aside here: the Windows path of :mod:`intently.core.locks` then runs across processes.

What this cannot show: Windows' own filesystem, paths and console. Third-party packages
that pick their POSIX branch by ``sys.platform`` (``mcp``'s stdio server, uvicorn's loop)
are imported first when named in ``NONPOSIX_PREIMPORT`` (comma-separated), and
``NONPOSIX_KEEP_AF_UNIX=1`` keeps ``AF_UNIX``, which Linux's ``socket.socketpair`` (asyncio's
self-pipe) needs where Windows' Python emulates it over TCP.
"""

import errno
import fcntl as _real_fcntl
import importlib
import os
import runpy
import socket
import subprocess  # noqa: F401  (it tells Windows by importing msvcrt: imported before the stand-in exists)
import sys
import types

for _name in filter(None, os.environ.get("NONPOSIX_PREIMPORT", "").split(",")):
    importlib.import_module(_name)
for _name in ("fcntl", "pwd", "grp", "termios", "resource"):
    sys.modules[_name] = None  # type: ignore[assignment]
for _attr in ("fchmod", "getuid", "geteuid", "getgid", "getegid", "fork", "killpg", "getpgid", "setsid"):
    if hasattr(os, _attr):
        delattr(os, _attr)
if hasattr(socket, "AF_UNIX") and not os.environ.get("NONPOSIX_KEEP_AF_UNIX"):
    del socket.AF_UNIX

if os.environ.get("NONPOSIX_MSVCRT"):
    _msvcrt = types.ModuleType("msvcrt")
    _msvcrt.LK_UNLCK, _msvcrt.LK_LOCK, _msvcrt.LK_NBLCK = 0, 1, 2  # type: ignore[attr-defined]

    def _locking(fd: int, mode: int, nbytes: int) -> None:
        if mode == 0:
            _real_fcntl.flock(fd, _real_fcntl.LOCK_UN)
            return
        if mode != 2:
            raise ValueError("the stand-in implements only LK_NBLCK and LK_UNLCK")
        try:
            _real_fcntl.flock(fd, _real_fcntl.LOCK_EX | _real_fcntl.LOCK_NB)
        except BlockingIOError:
            raise OSError(errno.EACCES, "Permission denied") from None

    _msvcrt.locking = _locking  # type: ignore[attr-defined]
    sys.modules["msvcrt"] = _msvcrt

if sys.argv[1:2] == ["-m"]:
    sys.argv = sys.argv[2:]
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
elif sys.argv[1:2] == ["-c"]:
    _code = sys.argv[2]
    sys.argv = ["-c", *sys.argv[3:]]
    exec(compile(_code, "<nonposix -c>", "exec"), {"__name__": "__main__"})
else:
    from intently.cli import main

    sys.argv[0] = "intently"
    sys.exit(main())
