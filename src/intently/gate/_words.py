"""A shell command line split into words and operators as a POSIX shell splits it.

``shlex`` (even with ``punctuation_chars``) reads a shell line differently from the shell in
ways that change which files the gate sees a command change, each one a way past a protection:

* it joins a run of operator characters into one token (``(cd x; rm a); rm b`` gives ``);``,
  which is no operator, so the ``cd`` inside the subshell leaked into ``rm b``);
* it starts a comment at a ``#`` inside a word (``ls x#y; rm config.py`` read as ``ls x``);
* a newline separates nothing (``echo hi`` newline ``rm config.py`` read as one ``echo``);
* it drops quotes, so a ``$NAME`` in single quotes, which the shell leaves as it is, could not
  be told from one the shell expands.

:func:`split` reads the line the shell's way: operators are taken longest first, a ``#`` starts
a comment only where a word starts, an unquoted newline ends a command (``;``), a here-document's
body is one word of its command, right after its delimiter (``<<``, ``EOF``, the body: what
``python - <<EOF`` runs is still read for the paths it names, and what ``bash <<EOF`` runs can be
read as commands; a body whose delimiter is quoted is not expanded, so its ``$`` is
:data:`DOLLAR`), and a ``$`` or backquote the shell leaves as written (quoted with ``'...'``, escaped with
``\\``) comes out as :data:`DOLLAR`/:data:`BACKQUOTE`, which no expansion matches;
:func:`literal` turns them back into the characters. Unbalanced quotes give ``None``.
"""

from __future__ import annotations

__all__ = ["BACKQUOTE", "DOLLAR", "literal", "split", "substitutions"]

#: A ``$`` the shell does not expand (private-use characters: never in a real command's meaning).
DOLLAR = "\ue000"
#: A backquote the shell does not expand.
BACKQUOTE = "\ue001"
# Operators, longest first so that "&&" is never read as two "&".
_OPS = (
    ";;&",
    "&>>",
    "<<-",
    "<<<",
    ";;",
    ";&",
    "&&",
    "||",
    "|&",
    ">>",
    ">|",
    ">&",
    "<&",
    "&>",
    "<<",
    "<>",
    ";",
    "&",
    "|",
    "(",
    ")",
    "<",
    ">",
)
_OP_CHARS = frozenset(";&|()<>")
# Inside double quotes a backslash escapes only these.
_DQ_ESCAPES = frozenset('$`"\\\n')


def literal(word: str) -> str:
    """``word`` with the unexpanded ``$`` and backquote markers of :func:`split` as the characters."""
    return word.replace(DOLLAR, "$").replace(BACKQUOTE, "`")


def substitutions(word: str) -> list[str]:
    """The command texts the shell runs inside a word of :func:`split`: each ``$(...)`` and
    backquoted part that it expands there (in double quotes, ``"$(intently req accept)"``, or in
    a here-document whose delimiter is not quoted). A ``$`` or backquote the shell leaves as
    written is a marker, never matched; ``$((...))`` is arithmetic. One left open runs to the end."""
    out: list[str] = []
    i = 0
    while i < len(word):
        if word.startswith("$(", i) and not word.startswith("$((", i):
            depth, j = 1, i + 2
            while j < len(word) and depth:
                depth += {"(": 1, ")": -1}.get(word[j], 0)
                j += 1
            out.append(word[i + 2 : j - 1] if depth == 0 else word[i + 2 :])
            i = j
        elif word[i] == "`":
            end = word.find("`", i + 1)
            out.append(word[i + 1 :] if end < 0 else word[i + 1 : end])
            i = len(word) if end < 0 else end + 1
        else:
            i += 1
    return [text for text in out if text.strip()]


def _quiet(c: str) -> str:
    return DOLLAR if c == "$" else BACKQUOTE if c == "`" else c


def split(command: str) -> list[str] | None:
    """The words and operators of ``command`` (see the module's docstring), or ``None``."""
    out: list[str] = []
    word: list[str] = []
    started = False  # a word is open (an empty '' counts)
    # (delimiter, strip tabs, quoted, where its body goes in ``out``) waiting for the end of the line
    heredocs: list[tuple[str, bool, bool, int]] = []
    n = len(command)
    i = 0

    def close() -> None:
        nonlocal started
        if started:
            out.append("".join(word))
        word.clear()
        started = False

    while i < n:
        c = command[i]
        if c == "\n":
            close()
            if heredocs:
                i = _heredoc_bodies(command, i + 1, heredocs, out)
                heredocs = []
            else:
                i += 1
            if out and out[-1] not in (";", "&&", "||", "|", "&", "(", "|&"):
                out.append(";")
            continue
        if c in " \t":
            close()
            i += 1
            continue
        if c == "#" and not started:
            while i < n and command[i] != "\n":
                i += 1
            continue
        if c in _OP_CHARS:
            close()
            op = next(o for o in _OPS if command.startswith(o, i))
            out.append(op)
            i += len(op)
            if op in ("<<", "<<-"):
                found = _delimiter(command, i)
                if found is not None:  # its word comes next (at len(out)), its body after it
                    heredocs.append((found[0], op == "<<-", found[1], len(out) + 1))
            continue
        if c == "\\" and command.startswith("\n", i + 1):
            i += 2  # a line continued
            continue
        started = True
        if c == "\\":
            if i + 1 < n:
                word.append(_quiet(command[i + 1]))
            i += 2
            continue
        if c == "'":
            end = command.find("'", i + 1)
            if end < 0:
                return None
            word.extend(_quiet(ch) for ch in command[i + 1 : end])
            i = end + 1
            continue
        if c == "$" and i + 1 < n and command[i + 1] == "'":
            end = _ansi_end(command, i + 2)
            if end < 0:
                return None
            body = command[i + 2 : end]
            # $'..\x2e..': escapes the gate does not decode; an unknown part, not a guess
            word.append("${}" if "\\" in body else "".join(_quiet(ch) for ch in body))
            i = end + 1
            continue
        if c == '"' or (c == "$" and i + 1 < n and command[i + 1] == '"'):
            j = i + (2 if c == "$" else 1)
            while j < n and command[j] != '"':
                if command[j] == "\\" and j + 1 < n and command[j + 1] in _DQ_ESCAPES:
                    if command[j + 1] != "\n":
                        word.append(_quiet(command[j + 1]))
                    j += 2
                    continue
                word.append(command[j])
                j += 1
            if j >= n:
                return None
            i = j + 1
            continue
        word.append(c)
        i += 1
    close()
    if heredocs:  # no line after the one that opened them: empty bodies
        _heredoc_bodies(command, n, heredocs, out)
    while out and out[-1] == ";":
        out.pop()
    return out


def _ansi_end(command: str, i: int) -> int:
    """Where a ``$'...'`` string that starts at ``i`` ends (its closing quote), or -1."""
    while i < len(command):
        if command[i] == "\\":
            i += 2
            continue
        if command[i] == "'":
            return i
        i += 1
    return -1


def _delimiter(command: str, i: int) -> tuple[str, bool] | None:
    """The word after ``<<`` at ``i``, its quotes taken off: the line that ends the here-document,
    and whether it was quoted (then the body is not expanded). ``None`` when no word follows."""
    rest = command[i:].lstrip(" \t")
    end = 0
    while end < len(rest) and rest[end] not in " \t\n;&|()<>":
        end += 1
    if not end or rest.startswith("#"):
        return None  # "<<" at the end of the line or before a comment: no here-document
    raw = rest[:end]
    return raw.replace("'", "").replace('"', "").replace("\\", ""), any(q in raw for q in "'\"\\")


def _heredoc_bodies(command: str, i: int, heredocs: list[tuple[str, bool, bool, int]], out: list[str]) -> int:
    """Read the bodies of the here-documents opened on the line just ended (from ``i``), each as
    one word put right after its delimiter's word in ``out``; the index after the last one. A
    body with no end line runs to the end of the text; a quoted delimiter's body is not expanded."""
    bodies: list[tuple[int, str]] = []
    for delimiter, tabs, quoted, where in heredocs:
        lines: list[str] = []
        while i < len(command):
            end = command.find("\n", i)
            line = command[i:] if end < 0 else command[i:end]
            i = len(command) if end < 0 else end + 1
            if (line.lstrip("\t") if tabs else line) == delimiter:
                break
            lines.append(line.lstrip("\t") if tabs else line)
        body = "\n".join(lines)
        bodies.append((where, "".join(map(_quiet, body)) if quoted else body))
    for where, body in reversed(bodies):  # from the last, so that each place stays where it was
        out.insert(min(where, len(out)), body)
    return i
