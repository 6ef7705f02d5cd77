"""Which shell commands an allow-list admits.

One definition for the gate, which decides, and for the Claude Code hook, which tells the
user how to change the decision: if they read the list differently, the hint would promise
a command that the gate still refuses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["SHELL_OPERATOR", "allowlisted", "harmless", "writes_or_runs"]

#: A pipe, a sequence, a redirection, a substitution or an escape. An allow-listed prefix
#: says which program runs; any of these would let the rest of the line run something else.
SHELL_OPERATOR = re.compile(r"[;&|`$<>\n\\]|\$\(")


def allowlisted(command: str, prefixes: Iterable[str]) -> bool:
    """True when ``command`` is an entry, or an entry followed by a space and arguments, and
    holds no shell operator."""
    if SHELL_OPERATOR.search(command):
        return False
    cmd = command.strip()
    return any(cmd == e or cmd.startswith(e + " ") for e in prefixes)


#: Arguments that make a reading program write a file or run another one: ``git diff
#: --output=F``, ``git -c core.pager=sh``, ``--ext-diff``, ``find -exec``, ``sort -o F``.
_WRITES_OR_RUNS = re.compile(
    r"-o|-O|-c|--out(?:put)?(?:-file|-directory)?(?:=.*)?|--ext-diff|--exec(?:=.*)?|-exec(?:dir)?|-ok(?:dir)?"
    r"|-fprint.*|--upload-pack(?:=.*)?|--receive-pack(?:=.*)?|--config(?:=.*)?|--textconv|--pager(?:=.*)?"
    r"|--open-files-in-pager(?:=.*)?|-delete|--delete"
)
#: Quotes, braces, globs and a tilde: the shell rewrites such words before the program sees
#: them (``"--output=x"`` arrives as ``--output=x``), so a list of words cannot be judged.
_SHELL_REWRITES = re.compile(r"[\"'{}*?\[\]~]")
#: intently's home, git's internals and Claude Code's settings, named anywhere in the arguments.
_GUARDED = re.compile(r"(?:^|[\s=/'\"])\.(?:intently|git|claude)(?:/|\s|$)")


def harmless(command: str, prefixes: Iterable[str]) -> bool:
    """``[hooks] shell_trusted``: allow-listed, and with no argument that writes a file, runs
    another program or names the folders that guard the agent. "git diff" is harmless;
    "git diff --output=.claude/settings.json" overwrites the hook's own settings, so it is
    asked about like any allow-listed command."""
    if not allowlisted(command, prefixes) or _SHELL_REWRITES.search(command):
        return False
    return not any(_WRITES_OR_RUNS.fullmatch(word) for word in command.split()) and not _GUARDED.search(command)


def writes_or_runs(word: str) -> bool:
    """Whether one argument makes a reading program write a file or run another one
    (``--output=F``, ``-exec``, ``-delete``, ``-c``): the gate's reading of which files a
    command changes treats such a program as one it cannot trace."""
    return bool(_WRITES_OR_RUNS.fullmatch(word))
