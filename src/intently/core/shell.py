"""Which shell commands an allow-list admits.

One definition for the gate, which decides, and for the Claude Code hook, which tells the
user how to change the decision: if they read the list differently, the hint would promise
a command that the gate still refuses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["SHELL_OPERATOR", "allowlisted"]

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
