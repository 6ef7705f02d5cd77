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

import fnmatch
import itertools
import posixpath
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ._vocabulary import Vocabulary, stem_all

__all__ = [
    "CHANGE",
    "CHANGE_KINDS",
    "READ",
    "CommandReading",
    "authorised_in_clause",
    "command_paths",
    "command_targets",
    "excluded_in_clause",
    "matching_exclusion",
    "named_in",
    "normalise_path",
    "read_command",
    "same_file",
    "sweep_covers",
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


# "the migrations folder", "the docs directory", "the scripts dir": a name before one of these
# words is a folder, read as ``migrations/``.
_FOLDER_WORDS = frozenset({"folder", "folders", "directory", "directories", "dir", "dirs"})
_FOLDER_MENTION = re.compile(r"(?i)\b(?:folders?|director(?:y|ies)|dirs?)\b")
# Words before a folder word that are no folder's name ("this folder", "my home directory":
# the project sits in a home directory, so "home/" would protect every absolute path).
_NOT_FOLDER_NAMES = frozenset(
    {
        *("the", "a", "an", "this", "that", "these", "those", "my", "your", "our", "their", "its", "his", "her"),
        *("any", "every", "each", "some", "all", "no", "new", "same", "other", "another", "one", "whole"),
        *("entire", "home", "root", "working", "current", "parent", "project", "repo", "repository", "which"),
        *("given", "following", "above", "below", "right", "wrong", "correct", "empty", "base", "top", "main"),
        *("temp", "tmp", "temporary", "own", "source", "that's", "in", "of", "to", "from", "and", "or", "not"),
    }
)
_FOLDER_NAME = re.compile(r"[A-Za-z0-9_][\w.-]*$")


def _may_name_path(raw: str) -> bool:
    """Whether a clause can name a path at all: a slash, a dot, or a folder word."""
    return "/" in raw or "." in raw or bool(_FOLDER_MENTION.search(raw))


def _tokens(raw: str) -> list[tuple[str, str, int, int]]:
    """(kind, text, start, end) for every word and path of a clause, in order; ``kind`` is
    ``"path"`` or ``"word"`` (lower case). A name before a folder word ("the migrations
    folder") is the path of that folder ("migrations/")."""
    out = _plain_tokens(raw)
    for i in range(len(out) - 1):
        kind, text, _, end = out[i]
        if kind == "word" and out[i + 1][0] == "word" and out[i + 1][1] in _FOLDER_WORDS:
            if raw[end : out[i + 1][2]].strip():
                continue  # "scripts, folder": not one phrase
            name = _FOLDER_NAME.search(raw[:end])  # "e2e-tests folder": the whole name
            if name is not None and name.group(0).lower() not in _NOT_FOLDER_NAMES and not text.isdigit():
                out[i] = ("path", name.group(0) + "/", name.start(), end)
    return out


def _plain_tokens(raw: str) -> list[tuple[str, str, int, int]]:
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
    if not _may_name_path(raw):
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
    if not _may_name_path(raw) or raw.rstrip().endswith("?"):
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
    if any(c in p for c in "*?["):  # a glob the shell expands ("rm src/app/*.py"): what it may match
        for raw in excluded:
            e = normalise_path(raw)
            bare = "/" not in e and fnmatch.fnmatchcase(e, posixpath.basename(p))  # config.py: anywhere
            if e and (fnmatch.fnmatchcase(e, p) or bare or fnmatch.fnmatchcase(e, p + "/*")):
                return raw
        # and as written too: "app/[id]/page.tsx" is a file's real name as often as a pattern
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
# Of those, the ones that change a whole folder they are given, and so every path under it
# ("rm -rf src" removes src/app/config.py).
_CHANGES_TREE = frozenset({"rm", "rmdir", "shred", "mv", "chmod", "chown"})
# Programs that write their last operand (the destination).
_CHANGES_LAST = frozenset({"cp", "install", "ln", "rsync"})
# git subcommands that change the named files (a folder, "." included, with all under it).
_GIT_CHANGES = frozenset({"rm", "mv", "checkout", "restore", "reset", "stash"})
# git subcommands that change no file of the working tree they name.
_GIT_READS = frozenset(
    {"add", "blame", "branch", "commit", "diff", "fetch", "grep", "log", "ls-files", "show", "status", "tag"}
)
# Programs that only read the files they name (while no argument makes them write or run
# something else, ``core.shell.writes_or_runs``): a protected path they name is only read.
_READS = frozenset(
    {
        *("cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "wc", "diff", "cmp"),
        *("ls", "stat", "file", "nl", "du", "tree", "echo", "printf", "pwd", "cd", "test", "[", "true"),
        *("false", "which", "type", "basename", "dirname", "realpath", "readlink", "sort", "uniq", "cut"),
        *("tr", "column", "find", "xxd", "od", "md5sum", "sha256sum", "mypy", "flake8"),
    }
)
# xargs options that take a value.
_XARGS_VALUED = frozenset({"-n", "-I", "-L", "-P", "-d", "-a", "-s", "-E", "--max-args", "--max-procs"})
_OPERATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&"})
_REDIRECTS = re.compile(r"\d*(?:>|>>|>\||&>|&>>)")
# A perl flag cluster that edits in place (-i, -pi, -0pi, -i.bak; after the i, its backup suffix).
_PERL_IN_PLACE = re.compile(r"-[0-9a-hj-zA-HJ-Z]*i.*")
# A perl flag cluster whose next word is the program text (-e, -pe, -lne).
_PERL_SCRIPT = re.compile(r"-[0-9a-hj-zA-HJ-Z]*[eE]")


@dataclass
class CommandReading:
    """What a shell command changes, as far as its words (split with ``shlex``) show.

    ``targets``: the files it changes (``rm a.py``, ``> a.py``, ``sed -i ... a.py``);
    ``sweeps``: (folder, name pattern or ``None``) for what it changes under a folder
    (``rm -rf src``, ``find src -name config.py -delete``, ``git checkout .``, or every path
    an ``xargs rm`` is fed by a ``find`` or a literal ``echo`` before it); ``opaque``: the
    words of programs whose writes the gate cannot trace (``python fix.py a.py``,
    ``python -c "open('a.py', 'w')"``, ``make``, ``sh -c ...``): a protected path among them
    may be changed, so such a call waits for a person."""

    targets: list[str] = field(default_factory=list)
    sweeps: list[tuple[str, str | None]] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)

    def add(self, other: CommandReading) -> None:
        self.targets += other.targets
        self.sweeps += other.sweeps
        self.opaque += other.opaque


def command_targets(command: str) -> list[str] | None:
    """The paths a shell command would change, as far as its words show: the operands of
    ``rm``, ``mv``, ``truncate``, ``touch``, ``tee``, the destination of ``cp``, the files of
    ``sed -i``, ``perl -i``, ``awk -i inplace`` and ``patch``, ``of=`` of ``dd``, ``git
    rm``/``checkout``/``restore`` and every ``>``/``>>`` target. ``None`` when the command
    cannot be split into words (unbalanced quotes): the caller then treats every path it
    names as changed (fail closed). :func:`read_command` says more (folders, opaque programs)."""
    reading = read_command(command)
    return None if reading is None else reading.targets


def read_command(command: str) -> CommandReading | None:
    """:class:`CommandReading` of a shell command, or ``None`` when it does not split into words."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    out = CommandReading()
    segment: list[str] = []
    piped: list[list[str]] = []  # the earlier commands of this pipeline: what feeds an xargs
    given: list[str] = []  # files given on standard input ("< fix.patch")

    def done() -> None:
        read = _segment(segment, piped)
        if read.opaque:
            read.opaque += given
        out.add(read)

    i = 0
    while i < len(words):
        word = words[i]
        if word == "<":
            if i + 1 < len(words) and words[i + 1] not in _OPERATORS:
                given.append(words[i + 1])
            i += 2
            continue
        if _REDIRECTS.fullmatch(word):
            # punctuation_chars splits "2>" into "2", ">": a digit before it is a descriptor
            if segment and segment[-1].isdigit() and i > 0 and words[i - 1] == segment[-1]:
                segment.pop()
            if i + 1 < len(words) and not words[i + 1].startswith("&") and words[i + 1] not in _OPERATORS:
                out.targets.append(words[i + 1])
            i += 2
            continue
        if word in _OPERATORS:
            done()
            piped = [*piped, segment] if word in ("|", "|&") else []
            segment, given = [], []
        else:
            segment.append(word)
        i += 1
    done()
    return out


def _segment(words: list[str], piped: Sequence[list[str]] = ()) -> CommandReading:
    """What one simple command (no operators) changes; ``piped``: the commands feeding it."""
    from ..core.shell import writes_or_runs

    while words and (("=" in words[0] and not words[0].startswith("-")) or words[0] in ("sudo", "command", "env")):
        words = words[1:]  # FOO=1 cmd, sudo cmd
    if not words:
        return CommandReading()
    program = posixpath.basename(words[0])
    args = words[1:]
    operands = [a for a in args if not a.startswith("-")]
    if program in _CHANGES_ALL:
        tree = [(o, None) for o in operands if program in _CHANGES_TREE and (program != "mv" or o != operands[-1])]
        return CommandReading(targets=operands, sweeps=list(tree))
    if program in _CHANGES_LAST:
        return CommandReading(targets=operands[-1:])
    if program == "dd":
        return CommandReading(targets=[a[3:] for a in args if a.startswith("of=")])
    if program == "sed" and any(a.startswith(("-i", "--in-place")) for a in args):
        return CommandReading(targets=_edited_files(args, ("-e", "--expression", "-f", "--file")))
    if program == "perl" and any(_PERL_IN_PLACE.fullmatch(a) for a in args):
        return CommandReading(targets=_perl_files(args))
    if program in ("awk", "gawk") and _awk_in_place(args):
        return CommandReading(targets=_edited_files(args, ("-f", "--file", "-v", "-F", "-i", "--include")))
    if program == "patch":
        return _patch(args)
    if program == "git" and operands and operands[0] in _GIT_CHANGES:
        changed = operands[1:]
        return CommandReading(targets=changed, sweeps=[(o, None) for o in changed])
    if program == "git" and operands and operands[0] == "apply":
        return CommandReading(opaque=list(words))  # the patch says which files change
    if program == "git" and operands and operands[0] in _GIT_READS and not any(map(writes_or_runs, args)):
        return CommandReading()
    if program == "find":
        return _find(args)
    if program == "xargs":
        return _xargs(args, piped)
    if program in _READS and not any(map(writes_or_runs, args)):
        return CommandReading()
    return CommandReading(opaque=list(words))  # an interpreter, a build tool: what it writes cannot be read here


def _edited_files(args: Sequence[str], valued: Sequence[str]) -> list[str]:
    """The files a ``sed -i`` or ``awk -i inplace`` edits: its operands after the program text
    (the first operand, unless a ``valued`` option such as ``-e`` or ``-f`` gave it)."""
    files: list[str] = []
    scripted = skip = False
    for a in args:
        if skip:
            skip = False
        elif a in valued:
            skip = True
            scripted = scripted or a in ("-e", "--expression", "-f", "--file")
        elif not a.startswith("-"):
            files.append(a)
    return files if scripted else files[1:]


def _perl_files(args: Sequence[str]) -> list[str]:
    files: list[str] = []
    scripted = skip = False
    for a in args:
        if skip:
            skip = False
        elif a.startswith("-") and not a.startswith("--"):
            if _PERL_SCRIPT.fullmatch(a) or a in ("-e", "-E"):
                skip = scripted = True  # the program text follows
        elif not a.startswith("-"):
            files.append(a)
    return files if scripted else files[1:]


def _awk_in_place(args: Sequence[str]) -> bool:
    return any((a in ("-i", "--include") and b == "inplace") for a, b in itertools.pairwise(args)) or any(
        a in ("-iinplace", "--include=inplace") for a in args
    )


def _patch(args: Sequence[str]) -> CommandReading:
    """``patch [options] [file [patchfile]]``: the file it patches, and ``-o`` its output. With
    no file named the patch itself says which files change: that cannot be read here."""
    out = CommandReading()
    operands: list[str] = []
    skip = ""
    for a in args:
        if skip:
            if skip in ("-o", "--output"):
                out.targets.append(a)
            skip = ""
        elif a in ("-o", "--output", "-i", "--input", "-d", "--directory", "-r", "-B", "-p", "-F", "-D", "-z", "-V"):
            skip = a
        elif a.startswith(("--output=", "-o")) and len(a) > 2 and not a.startswith("--"):
            out.targets.append(a[2:])
        elif a.startswith("--output="):
            out.targets.append(a.split("=", 1)[1])
        elif not a.startswith("-"):
            operands.append(a)
    if operands:
        out.targets.append(operands[0])
    else:
        out.opaque = ["patch", *args]
    return out


def _find(args: Sequence[str]) -> CommandReading:
    """``find`` changes files only through an action: ``-delete``, or ``-exec``/``-execdir``/
    ``-ok`` of a program that changes what it is given. What it changes is every file under
    its starting folders (or only those matching its ``-name``). Any other action runs a
    program the gate cannot trace."""
    starts: list[str] = []
    pattern: str | None = None
    changes = False
    opaque: list[str] = []
    i = 0
    while i < len(args) and not args[i].startswith(("-", "(", "!")):
        starts.append(args[i])
        i += 1
    while i < len(args):
        a = args[i]
        if a in ("-name", "-iname", "-path", "-wholename") and i + 1 < len(args):
            pattern = args[i + 1] if a in ("-name", "-iname") else posixpath.basename(args[i + 1])
            i += 2
            continue
        if a == "-delete":
            changes = True
        elif a in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+", "\\;")), len(args))
            run = [w for w in args[i + 1 : end] if w != "{}"]
            inner = _segment(run) if run else CommandReading()
            if inner.targets or inner.sweeps or (run and posixpath.basename(run[0]) in _CHANGES_ALL):
                changes = True
            elif inner.opaque:
                opaque += [*starts, *([pattern] if pattern else []), *inner.opaque]
            i = end + 1
            continue
        elif a.startswith("-fprint") or a == "-fls":
            opaque += args[i : i + 2]
        i += 1
    sweeps = [(s, pattern) for s in starts or ["."]] if changes else []
    return CommandReading(sweeps=sweeps, opaque=opaque)


def _xargs(args: Sequence[str], piped: Sequence[list[str]]) -> CommandReading:
    """``... | xargs PROGRAM``: PROGRAM runs on the words fed to it. When it changes files, what
    it changes is what the commands before it list: a ``find``'s files, or the literal words of
    an ``echo``, ``ls`` or ``git ls-files`` (each, and what is under it for a folder)."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        i += 2 if args[i] in _XARGS_VALUED else 1
    run = list(args[i:]) or ["echo"]
    inner = _segment(run)
    fed: list[tuple[str, str | None]] = []
    for words in piped:
        program = posixpath.basename(words[0]) if words else ""
        if program == "find":
            found = _find([*words[1:], "-delete"])
            fed += found.sweeps
        else:
            fed += [(w, None) for w in words[1:] if not w.startswith("-") and w != "ls-files"]
    if inner.opaque:
        inner.opaque += [s for s, _ in fed] + [p for _, p in fed if p]
        return inner
    if inner.targets or inner.sweeps or posixpath.basename(run[0]) in _CHANGES_ALL:
        inner.sweeps += fed
    return inner


def sweep_covers(folder: str, pattern: str | None, excluded: str) -> bool:
    """Whether changing what lies under ``folder`` (named ``pattern``, when given) changes the
    protected path ``excluded``: it lies under the folder (``.`` is the whole project), or the
    folder lies under it; a bare protected name (``config.py``) only when ``pattern`` names it."""
    f, e = normalise_path(folder), normalise_path(excluded)
    if not e:
        return False
    if pattern is not None and not fnmatch.fnmatchcase(posixpath.basename(e), pattern):
        return not _FILE_NAME.fullmatch(posixpath.basename(e)) and _under(e, f)  # a protected folder inside
    if "/" not in e and pattern is not None:
        return True  # a file of that name, wherever it lies
    return _under(e, f) or (bool(f) and matching_exclusion(f, [excluded]) is not None)


def _under(e: str, f: str) -> bool:
    """Whether path ``e`` is ``f`` or lies under it (``f`` empty: the project, for a relative ``e``)."""
    if not f:
        return not e.startswith("/")
    if f.startswith("/") and not e.startswith("/"):
        # An absolute folder, a project-relative path: matched by its end, as for a file.
        steps = e.split("/")
        return any(f.endswith("/" + "/".join(steps[:k])) for k in range(1, len(steps) + 1))
    return e == f or e.startswith(f + "/")


def named_in(words: Sequence[str], excluded: Iterable[str]) -> list[str]:
    """The protected paths that ``words`` (an untraceable program's, its ``-c`` text included)
    name: a word, or a piece of one between quotes, parentheses and commas, that is the path or
    under it, or the protected file's bare name."""
    found: list[str] = []
    pieces = [p for w in words for p in re.split(r"[\s;&|()<>=\"'`,]+", w) if p]
    for raw in excluded:
        e = normalise_path(raw)
        name = posixpath.basename(e)
        for piece in pieces:
            if matching_exclusion(piece, [raw]) is not None or (e and normalise_path(piece) == name):
                found.append(raw)
                break
    return found


def command_paths(command: str) -> list[str]:
    """Every word of a command that could be a path: what an unsplittable command, or one
    read by a protected-from-reading rule, is checked by."""
    return [w for w in re.split(r"[\s;&|()<>=\"'`]+", command) if w]
