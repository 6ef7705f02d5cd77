"""Paths the user said not to change ("do not edit src/app/config.py") and the paths a call changes.

Negation in a request is read per kind of action (``negated``), and a kind another clause
asks for outranks it: "Fix tests/test_api.py. Do not edit src/app/config.py." authorises
``update`` and so, by kinds alone, an edit of the very file the user protected. A coding
agent's user relies on exactly that sentence, so a negated change (or read) whose clause
names paths binds the negation to those paths, as ``excluded_values`` binds "don't send
anything to Bob" to Bob. The gate then refuses any call that would change such a path, or
under it for a directory, whatever else the request authorises (rule ``excluded-path``).

Only the user's request is read here: a tool output saying "do not edit X" excludes nothing.
Reading the file stays allowed ("do not edit" is not "do not read") unless the negated verb is
itself a read ("don't open X").
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable, Sequence

from ._vocabulary import Vocabulary, stem_all

__all__ = [
    "CHANGE",
    "CHANGE_KINDS",
    "READ",
    "authorised_in_clause",
    "command_paths",
    "command_targets",
    "excluded_in_clause",
    "matching_exclusion",
    "normalise_path",
    "same_file",
]

CHANGE = "change"  # the path may not be changed (written, edited, deleted, moved)
READ = "read"  # the path may not even be read

# The kinds of action that change a file: a negated phrase of one of them protects the paths
# its clause names, and a call of one of them is checked against the protected paths.
CHANGE_KINDS = frozenset({"create", "update", "delete"})
# Verbs that say "leave it as it is" without being an action anyone asks for: "don't touch X",
# "don't alter X". As positive requests they authorise nothing (the signed vocabulary does not
# list them), so they are read only here, as the verb of a negation (stems).
_LEAVE_ALONE = frozenset(stem_all(["touch", "alter", "overwrite", "clobber", "mess", "modify", "change"]))
# Verbs of a negation that protects a path from being read too ("don't open .env").
_READ_VERBS = frozenset(stem_all(["read", "open", "view", "look", "cat", "inspect", "peek", "print", "show"]))
# How many words after a negator its verb may come ("don't ever edit", "do not under any circumstances change").
_VERB_REACH = 4
# After a comma, these words start a new instruction: the scope of the negation ends there.
_TURNS = frozenset(stem_all(["but", "instead", "just", "only", "rather"]))

# A piece of text between white space and punctuation that cannot be inside a path.
_CHUNK = re.compile(r"[^\s`\"(),;!?<>\[\]{}*]+")
# A file name with a lower-case extension ("config.py", "app.test.ts", "README.md"; not code
# such as "Level.BLOCK") or a dotfile (".env").
_FILE_NAME = re.compile(r"[\w+-]+(?:\.[\w+-]+)*\.[a-z][a-z0-9_]{0,9}|\.[A-Za-z][\w.+-]*")
_QUOTES = "'’‘"
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")
_SCOPE_END = re.compile(r"[.;:!?()]")
_VERB_STOP = re.compile(r"[.;:!?(),]")


def normalise_path(path: str) -> str:
    """A path as the gate compares it: forward slashes, no ``./`` or ``a/..`` steps, no trailing slash."""
    text = path.strip().strip("`'\"").replace("\\", "/")
    if not text:
        return ""
    norm = posixpath.normpath(text)
    return "" if norm == "." else norm


def _as_path(chunk: str) -> str | None:
    """The path a chunk of the request names, or ``None``: it has a slash (``src/lib/``) or is a
    file name with an extension (``config.py``); a link, an address or a number is no path."""
    text = chunk.rstrip(".:")
    if not text or "@" in text or "://" in text or text.startswith(("http", "www.")):
        return None
    if "/" in text:
        return text if any(c.isalpha() for c in text) else None
    return text if _FILE_NAME.fullmatch(text) else None


def _tokens(raw: str) -> list[tuple[str, str, int, int]]:
    """(kind, text, start, end) for every word and path of a clause, in order; ``kind`` is
    ``"path"`` or ``"word"`` (lower case)."""
    out: list[tuple[str, str, int, int]] = []
    for m in _CHUNK.finditer(raw):
        chunk = m.group(0)
        inner = chunk.lstrip(_QUOTES)
        path = _as_path(inner.rstrip(_QUOTES + ".:"))
        if path is not None:  # 'config.py' in quotes: the path inside them
            at = m.start() + len(chunk) - len(inner)
            out.append(("path", path, at, at + len(path)))
            continue
        for w in _WORD.finditer(m.group(0).lower()):
            out.append(("word", w.group(0), m.start() + w.start(), m.start() + w.end()))
    return out


def excluded_in_clause(raw: str, vocab: Vocabulary) -> set[tuple[str, str]]:
    """The (mode, path) pairs one clause of the request rules out: the paths after a negated
    change ("do not edit X", "without touching X") or read ("don't open X"), or right after a
    negator in a clause ("edit a.py, not b.py"). A cancelled negation ("don't forget to update
    X") rules nothing out; an exception ("don't edit anything except X") ends the scope."""
    if "/" not in raw and "." not in raw:
        return set()  # no path can be named here (most clauses of prose)
    tokens = _tokens(raw)
    if not any(kind == "path" for kind, *_ in tokens):
        return set()
    stems = stem_all(["\0" if kind == "path" else text for kind, text, *_ in tokens])
    negators, _ = vocab._negators_by_head
    if negators.keys().isdisjoint(stems):
        return set()  # nothing is negated here
    openers = negators.keys() | {p[0] for p in vocab.exclusions if p}
    found: set[tuple[str, str]] = set()
    mode: str | None = None
    i = 0
    while i < len(tokens):
        kind, text, _, _ = tokens[i]
        if mode is not None and i > 0 and _ends(raw, tokens, i, stems, vocab):
            mode = None
        if kind == "path":
            if mode is not None:
                found.add((mode, text))
            i += 1
            continue
        if stems[i] not in openers:
            i += 1
            continue
        if any(tuple(stems[i : i + len(p)]) == p for p in vocab.exclusions if p):
            mode = None  # "except X": what follows is what the user allows
            i += 1
            continue
        neg = _negator(stems, i, vocab)
        if not neg:
            i += 1
            continue
        after = i + neg
        if after < len(stems) and stems[after] in vocab.cancellers:
            i = after + 1
            continue
        if after < len(tokens) and tokens[after][0] == "path":
            mode = CHANGE  # "not src/old.py"
            i = after
            continue
        opened = _verb(stems, tokens, raw, after, vocab)
        if opened is not None:
            mode, i = opened
        else:
            i = after
    return found


def authorised_in_clause(raw: str, vocab: Vocabulary) -> set[tuple[str, str]]:
    """The (mode, path) pairs one clause of a prompt positively allows: the paths it names when
    it has an un-negated change verb (``change``: "OK, now you may edit src/app/config.py too",
    "go ahead and update config.py", "don't forget to edit config.py") or, failing one, a read
    verb (``read``: "you can open .env now"), named after that verb. A later prompt's allowance lifts an earlier
    prompt's protection of the same path (see ``_intent.fold_paths``), so this reads narrowly
    and, where unsure, allows nothing: a question ("did you edit config.py?"), a verb in the
    past ("you edited config.py"), a path before the verb ("config.py: edit it") or a verb within a negation's reach allow nothing, and a path
    the same clause rules out ("edit main.py, not config.py") is not allowed."""
    if ("/" not in raw and "." not in raw) or raw.rstrip().endswith("?"):
        return set()
    tokens = _tokens(raw)
    if not any(kind == "path" for kind, *_ in tokens):
        return set()
    stems = stem_all(["\0" if kind == "path" else text for kind, text, *_ in tokens])
    found: dict[str, str] = {}
    mode: str | None = None
    negated_until = -1
    i = 0
    while i < len(tokens):
        kind, text, _, _ = tokens[i]
        if kind == "path":
            if mode is not None and found.get(text) != CHANGE:
                found[text] = mode  # after the verb: what it allows
            i += 1
            continue
        neg = _negator(stems, i, vocab)
        if neg:
            after = i + neg
            if after < len(stems) and stems[after] in vocab.cancellers:
                i = after + 1  # "don't forget to edit X" asks for the edit
                continue
            negated_until = after + _VERB_REACH
            i = after
            continue
        if i < negated_until or (text.endswith("ed") and stems[i] != text):
            i += 1  # a negated verb, a verb in the past
            continue
        hits = [n for k, n in vocab.kinds_at(stems, i) if k in CHANGE_KINDS and not vocab.is_noun_use(stems, i, n)]
        if hits or stems[i] in _LEAVE_ALONE:
            mode = CHANGE
        elif stems[i] in _READ_VERBS and mode is None:
            mode = READ
        i += max(hits, default=1)
    if not found:
        return set()
    ruled_out = {p for _, p in excluded_in_clause(raw, vocab)}
    return {(m, p) for p, m in found.items() if p not in ruled_out}


def same_file(allowed: str, excluded: str) -> bool:
    """Whether an allowance names the path a protection named: the same path (normalised; an
    absolute one matched by its end), or the bare file name of it ("config.py" for
    src/app/config.py). A path under a protected folder does not lift the folder's protection,
    and a longer path does not lift a bare name's (which covers a file of that name anywhere)."""
    a, e = normalise_path(allowed), normalise_path(excluded)
    if not a or not e:
        return False
    if a == e or ("/" not in a and posixpath.basename(e) == a):
        return True
    return (e.startswith("/") and e.endswith("/" + a)) or (a.startswith("/") and "/" in e and a.endswith("/" + e))


def _negator(stems: Sequence[str], i: int, vocab: Vocabulary) -> int:
    for p in vocab.negators_from(stems[i]):
        if p and tuple(stems[i : i + len(p)]) == p:
            return len(p)
    return 0


def _verb(
    stems: Sequence[str], tokens: Sequence[tuple[str, str, int, int]], raw: str, after: int, vocab: Vocabulary
) -> tuple[str, int] | None:
    """(mode, index after the verb) for the verb a negator at ``after`` negates, if it is one
    that protects a path; ``None`` otherwise ("I don't know where config.py is")."""
    for j in range(after, min(after + _VERB_REACH, len(stems))):
        if tokens[j][0] == "path" or (j > after and _VERB_STOP.search(raw, tokens[j - 1][3], tokens[j][2])):
            return None  # "without breaking anything, refactor x.py": the negation stopped at the comma
        if stems[j] in _READ_VERBS:
            return READ, j + 1
        if stems[j] in _LEAVE_ALONE:
            return CHANGE, j + 1
        hits = [n for k, n in vocab.kinds_at(stems, j) if k in CHANGE_KINDS and not vocab.is_noun_use(stems, j, n)]
        if hits:
            return CHANGE, j + max(hits)
        if vocab.kinds_at(stems, j):
            return None  # another action is negated ("don't email config.py to Bob")
    return None


def _ends(
    raw: str, tokens: Sequence[tuple[str, str, int, int]], i: int, stems: Sequence[str], vocab: Vocabulary
) -> bool:
    """Whether the scope of a negation ends before token ``i``: at a sentence or clause mark, or
    at a comma before a new instruction ("don't edit a.py, edit b.py", ", but ...")."""
    between = raw[tokens[i - 1][3] : tokens[i][2]]
    if _SCOPE_END.search(between):
        return True
    if "," not in between or tokens[i][0] == "path":
        return False
    return stems[i] in _TURNS or stems[i] in _READ_VERBS or bool(vocab.kinds_at(stems, i))


def matching_exclusion(path: str, excluded: Iterable[str]) -> str | None:
    """The excluded path that covers ``path`` (the same file, or a folder it lies under), or
    ``None``. A bare name (``config.py``) covers a file of that name in any folder; an absolute
    path in a call is matched by its end, since the user names paths relative to the project."""
    p = normalise_path(path)
    if not p:
        return None
    for raw in excluded:
        e = normalise_path(raw)
        if not e:
            continue
        if p == e or p.startswith(e + "/"):
            return raw
        if e.startswith("/"):
            if "/" in p and not p.startswith("/") and e.endswith("/" + p):
                return raw  # the user wrote the absolute path, the call a project-relative one
            continue
        if f"/{e}/" in f"/{p}/":
            return raw  # the same steps anywhere in the call's path: an absolute one, or a bare name
    return None


# Programs whose every operand is a file they change (or remove).
_CHANGES_ALL = frozenset({"rm", "unlink", "shred", "truncate", "touch", "rmdir", "mv", "tee", "chmod", "chown"})
# Programs that write their last operand (the destination).
_CHANGES_LAST = frozenset({"cp", "install", "ln", "rsync"})
# git subcommands that change the named files.
_GIT_CHANGES = frozenset({"rm", "mv", "checkout", "restore", "reset", "apply", "stash"})
_OPERATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&"})
_REDIRECTS = re.compile(r"\d*(?:>|>>|>\||&>|&>>)")


def command_targets(command: str) -> list[str] | None:
    """The paths a shell command would change, as far as its words show: the operands of
    ``rm``, ``mv``, ``truncate``, ``touch``, ``tee``, the destination of ``cp``, the files of
    ``sed -i``, ``of=`` of ``dd``, ``git rm``/``checkout``/``restore`` and every ``>``/``>>``
    target. ``None`` when the command cannot be split into words (unbalanced quotes): the
    caller then treats every path it names as changed (fail closed)."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    targets: list[str] = []
    segment: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if _REDIRECTS.fullmatch(word):
            # punctuation_chars splits "2>" into "2", ">": a digit before it is a descriptor
            if segment and segment[-1].isdigit() and i > 0 and words[i - 1] == segment[-1]:
                segment.pop()
            if i + 1 < len(words) and not words[i + 1].startswith("&") and words[i + 1] not in _OPERATORS:
                targets.append(words[i + 1])
            i += 2
            continue
        if word in _OPERATORS:
            targets += _segment_targets(segment)
            segment = []
        elif word != "<":
            segment.append(word)
        i += 1
    targets += _segment_targets(segment)
    return targets


def _segment_targets(words: list[str]) -> list[str]:
    """The files one simple command (no operators) changes."""
    while words and (("=" in words[0] and not words[0].startswith("-")) or words[0] in ("sudo", "command", "env")):
        words = words[1:]  # FOO=1 cmd, sudo cmd
    if not words:
        return []
    program = posixpath.basename(words[0])
    args = words[1:]
    operands = [a for a in args if not a.startswith("-")]
    if program in _CHANGES_ALL:
        return operands
    if program in _CHANGES_LAST:
        return operands[-1:]
    if program == "dd":
        return [a[3:] for a in args if a.startswith("of=")]
    if program in ("sed", "perl") and any(a.startswith(("-i", "--in-place")) or a == "-pi" for a in args):
        files: list[str] = []
        scripted = skip = False
        for a in args:  # the script is the first operand, or the value of -e / -f
            if skip:
                skip = False
            elif a in ("-e", "--expression", "-f", "--file"):
                skip = scripted = True
            elif not a.startswith("-"):
                files.append(a)
        return files if scripted else files[1:]
    if program == "git" and operands and operands[0] in _GIT_CHANGES:
        return operands[1:]
    return []


def command_paths(command: str) -> list[str]:
    """Every word of a command that could be a path: what an unsplittable command, or one
    read by a protected-from-reading rule, is checked by."""
    return [w for w in re.split(r"[\s;&|()<>=\"'`]+", command) if w]
