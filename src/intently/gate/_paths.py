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
import os
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ._case import folds_case
from ._vocabulary import Vocabulary, stem_all
from ._words import literal, split, substitutions

__all__ = [
    "CHANGE",
    "CHANGE_KINDS",
    "READ",
    "CommandReading",
    "authorised_in_clause",
    "command_paths",
    "command_targets",
    "excluded_in_clause",
    "inside_folder",
    "matching_exclusion",
    "named_in",
    "normalise_path",
    "protected_key",
    "read_command",
    "same_file",
    "shell_words",
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
    starts = _clause_starts(raw, tokens)
    found: dict[str, str] = {}
    mode: str | None = None
    negated_until = -1
    last_instructed = False  # whether the clause's last verb was an instruction
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
        if i < negated_until:
            i += 1  # a negated verb
            continue
        kinds = vocab.kinds_at(stems, i)
        hits = [n for k, n in kinds if k in CHANGE_KINDS and not vocab.is_noun_use(stems, i, n)]
        verb = CHANGE if hits or stems[i] in _LEAVE_ALONE else READ if stems[i] in _READ_VERBS else None
        if verb is None and not kinds:
            i += 1  # no verb of any kind: nothing below reads this word
            continue
        before = _words_before(tokens, starts[i], i)
        if verb is not None and text != stems[i] and text.endswith(("ed", "en")) and _permits_passive(before):
            for k in range(i):  # "config.py can be edited now": the paths before the verb
                if (
                    tokens[k][0] == "path"
                    and found.get(tokens[k][1]) != CHANGE
                    and _SCOPE_END.search(raw, tokens[k][3], tokens[i][2]) is None
                ):
                    found[tokens[k][1]] = verb
            i += max(hits, default=1)
            continue
        if text.endswith("ed") and stems[i] != text:
            i += 1  # a verb in the past
            continue
        instructed = _instructs(before) or (last_instructed and _continues(before))
        last_instructed = instructed  # "fix the parser and edit config.py": both instructions
        if verb is not None and not instructed:
            mode = None  # "I modify config.py in the next PR", "the script edits config.py": no allowance
        elif verb is CHANGE:
            mode = CHANGE
        elif verb is READ and mode is None:
            mode = READ
        i += max(hits, default=1)
    if not found:
        return set()
    ruled_out = {p for _, p in excluded_in_clause(raw, vocab)}
    return {(m, p) for p, m in found.items() if p not in ruled_out}


# Words before a verb that leave it an instruction ("OK, now edit config.py", "go ahead and
# update it", "please also change it"): a clause made only of them and the verb is imperative.
_LEAD_INS = frozenset(
    {
        *("ok", "okay", "now", "please", "also", "and", "then", "so", "yes", "yeah", "yep", "alright", "sure"),
        *("fine", "actually", "instead", "just", "right", "well", "oh", "great", "thanks", "good", "but", "go"),
        *("ahead", "too", "again", "finally", "first", "next", "still", "no", "wait", "hey", "cool", "perfect"),
    }
)
# What may stand right before a verb for it to be a permission or a request, not a statement:
# "you may edit", "feel free to touch", "I want you to change", "don't forget to update".
_PERMISSIONS = tuple(
    tuple(p.split())
    for p in (
        *("you may", "you can", "you could", "you should", "you must", "you might", "you need to", "you have to"),
        *("you are allowed to", "you're allowed to", "you are free to", "you're free to", "you are welcome to"),
        *("you're welcome to", "you will", "you'll", "you will need to", "you'll need to", "want you to"),
        *("like you to", "need you to", "go ahead and", "feel free to", "forget to", "remember to", "sure to"),
        *("ok to", "okay to", "fine to", "allowed to", "let's", "lets", "permission to", "go ahead to", "please"),
        *("it's time to", "time to", "can you", "could you", "would you", "will you", "we can", "we may"),
        *("we should", "we could", "we need to", "we have to", "we must"),
    )
)
# What may stand before a past participle for it to permit ("config.py can be edited now").
_PASSIVE_PERMISSIONS = tuple(
    tuple(p.split())
    for p in ("can be", "may be", "could be", "should be", "must be", "can now be", "may now be", "is ok to be")
)
# Words between a permission and its verb that change nothing ("you may now also edit").
_ADVERBS = frozenset({"now", "also", "just", "then", "still", "safely", "freely", "too", "finally", "please"})


def _clause_starts(raw: str, tokens: Sequence[tuple[str, str, int, int]]) -> list[int]:
    """For each token, the index of the first token of its part of the clause: the token after
    the last mark or comma before it. One pass, so a long prompt with no commas costs linear
    time, where walking back from every verb cost the square of its length."""
    starts: list[int] = []
    for i in range(len(tokens)):
        cut = i == 0 or _MARK.search(raw, tokens[i - 1][3], tokens[i][2]) is not None
        starts.append(i if cut else starts[i - 1])
    return starts


_MARK = re.compile(r"[.;:!?,]")


def _words_before(tokens: Sequence[tuple[str, str, int, int]], start: int, i: int) -> list[str]:
    """The words of the clause from token ``start`` (see ``_clause_starts``) to before token
    ``i`` ("OK, now you may edit": ``now you may``), adverbs right before the verb left out."""
    words = [text for kind, text, _, _ in tokens[start:i] if kind == "word"]
    while words and words[-1] in _ADVERBS:
        words.pop()
    return words


def _instructs(before: Sequence[str]) -> bool:
    """Whether a verb after these words is an instruction or a permission, not a statement: the
    clause starts with it (lead-ins aside: "go ahead and edit"), or a permission stands right
    before it ("you may edit", "feel free to touch"). "I modify config.py in the next PR" and
    "the script edits config.py" say what happens, and allow nothing."""
    if all(w in _LEAD_INS for w in before):
        return True
    return any(tuple(before[-len(p) :]) == p for p in _PERMISSIONS)


def _continues(before: Sequence[str]) -> bool:
    """Whether a verb after these words joins the one before it ("fix the parser and edit"):
    only lead-ins follow the last ``and``/``then``/``or`` before it."""
    cut = max((k for k, w in enumerate(before) if w in _JOINS), default=-1)
    return cut >= 0 and all(w in _LEAD_INS for w in before[cut + 1 :])


_JOINS = frozenset({"and", "then", "or", "plus", "also"})


def _permits_passive(before: Sequence[str]) -> bool:
    return any(tuple(before[-len(p) :]) == p for p in _PASSIVE_PERMISSIONS)


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


def inside_folder(path: str, folder: str) -> bool:
    """Whether ``path`` lies strictly inside the protected ``folder`` as written (both relative,
    or both absolute; case folded as :func:`protected_key`): "src/lib/a.py" inside "src/lib/".
    A bare name ("config.py", a file of that name anywhere) is no folder."""
    p, f = protected_key(path), protected_key(folder)
    if not p or not f or "/" not in p or p.startswith("/") != f.startswith("/"):
        return False
    return p.startswith(f.rstrip("/") + "/")


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


def protected_key(path: str, fold: bool = True) -> str:
    """A path as it is compared with a protected one: :func:`normalise_path`, and case folded
    (unless ``fold`` is false: the protected path's file system was seen to tell case apart).

    On Windows and macOS the usual file systems ignore case, so ``src/app/config.py`` is the
    file the user protected as ``src/App/Config.py``; so are a Linux checkout on a Windows drive
    (WSL's ``/mnt/c``), a FAT or exFAT stick and an ext4 folder with casefolding on. Which one a
    project is on cannot be told from a path, and this comparison decides what is refused, so it
    fails closed: case never tells two paths apart here, on any platform (the self-guard's
    patterns ignore case too). The cost, on a case-sensitive file system, is a refusal of a path
    differing only in case from a protected one; the user lifts it by naming the path as they
    protected it ("now you may edit src/App/Config.py"): lifting compares paths exactly
    (:func:`same_file`), so folding never frees more than was said. Where the folder the agent
    works in is known (``root`` of the functions below, a hook's project), the gate looks at the
    protected path's folder instead (:func:`intently.gate._case.folds_case`) and folds only where
    its file system folds, or where the look cannot tell."""
    norm = normalise_path(path)
    return norm.casefold() if fold else norm


def matching_exclusion(path: str, excluded: Iterable[str], root: str | None = None) -> str | None:
    """The excluded path that covers ``path`` (the same file, or a folder it lies under), or
    ``None``. A bare name (``config.py``) covers a file of that name in any folder; an absolute
    path in a call is matched by its end, since the user names paths relative to the project.
    Case does not tell them apart (:func:`protected_key`), unless ``root`` (the folder the agent
    works in) is given and the protected path's file system there tells case apart."""
    if not (key := protected_key(path)):
        return None
    if any(c in key for c in "*?["):  # a glob the shell expands ("rm src/app/*.py"): what it may match
        for raw in excluded:
            fold = folds_case(root, raw)
            p, e = protected_key(path, fold), protected_key(raw, fold)
            bare = "/" not in e and fnmatch.fnmatchcase(e, posixpath.basename(p))  # config.py: anywhere
            if e and (fnmatch.fnmatchcase(e, p) or bare or fnmatch.fnmatchcase(e, p + "/*")):
                return raw
        # and as written too: "app/[id]/page.tsx" is a file's real name as often as a pattern
    for raw in excluded:
        fold = folds_case(root, raw)
        p, e = protected_key(path, fold), protected_key(raw, fold)
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
        # shell builtins that change where the line stands or what it knows, never a file
        *("pushd", "popd", "chdir", "export", "unset", "declare", "local", "readonly", "typeset", "fi", "done"),
    }
)
# xargs options that take a value.
_XARGS_VALUED = frozenset({"-n", "-I", "-L", "-P", "-d", "-a", "-s", "-E", "--max-args", "--max-procs"})
_OPERATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", ";&", ";;&", "|&"})
# What ends a branch of a ``case``: a pattern (up to its ")") comes next, or "esac".
_CASE_ENDS = frozenset({";;", ";&", ";;&"})
_REDIRECTS = re.compile(r"\d*(?:>|>>|>\||&>|&>>|>&|<>)")
# What ">&" duplicates when it names no file: a descriptor ("2>&1") or "-" (close).
_FD = re.compile(r"\d+-?|-")
# A perl flag cluster that edits in place (-i, -pi, -0pi, -i.bak; after the i, its backup suffix).
_PERL_IN_PLACE = re.compile(r"-[0-9a-hj-zA-HJ-Z]*i.*")
# A perl flag cluster whose next word is the program text (-e, -pe, -lne).
_PERL_SCRIPT = re.compile(r"-[0-9a-hj-zA-HJ-Z]*[eE]")


@dataclass
class CommandReading:
    """What a shell command changes, as far as its words (split by :func:`._words.split`, as the shell splits them) show.

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
    # (glob, why) for what it may change where its words cannot say exactly: a path after a
    # ``cd`` to a folder no word gives (``cd $DIR``, ``cd -``), a ``$VAR`` set nowhere in the
    # command, a patch file that cannot be read. A protected path one matches waits for a person.
    unsure: list[tuple[str, str]] = field(default_factory=list)
    # (patch file or ``-`` for standard input, strip level or ``None`` for patch's own guess,
    # folder prefix, ``None`` for ``patch`` or git's ``--directory``): the patches it applies,
    # read by :func:`read_command` once it knows the folder. ``patch`` applies its paths in the
    # folder prefix; git in the top of the repository the prefix (where git runs) lies in.
    patches: list[tuple[str, int | None, str, str | None]] = field(default_factory=list)

    def add(self, other: CommandReading) -> None:
        self.targets += other.targets
        self.sweeps += other.sweeps
        self.opaque += other.opaque
        self.unsure += other.unsure
        self.patches += other.patches


def command_targets(command: str) -> list[str] | None:
    """The paths a shell command would change, as far as its words show: the operands of
    ``rm``, ``mv``, ``truncate``, ``touch``, ``tee``, the destination of ``cp``, the files of
    ``sed -i``, ``perl -i``, ``awk -i inplace`` and ``patch``, ``of=`` of ``dd``, ``git
    rm``/``checkout``/``restore`` and every ``>``/``>>`` target. ``None`` when the command
    cannot be split into words (unbalanced quotes): the caller then treats every path it
    names as changed (fail closed). :func:`read_command` says more (folders, opaque programs)."""
    reading = read_command(command)
    return None if reading is None else reading.targets


def shell_words(command: str) -> list[str] | None:
    """A shell command's words and operators (``;``, ``&&``, ``|``, ``(``, ``>``, ...) as the gate
    reads every command (:func:`._words.split`: a ``#`` comment dropped, a newline read as ``;``),
    or ``None`` when it does not split (unbalanced quotes)."""
    words = split(command)
    return None if words is None else [literal(w) for w in words]


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
# A shell's options that take the next word as their value ("bash -o pipefail", "--rcfile x").
_SHELL_VALUED = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})


def reads_commands(words: Sequence[str]) -> bool:
    """Whether the simple command ``words`` (from the program on) is a shell that reads its
    commands from standard input: ``bash``, ``sh -s x``, ``bash -`` read what a here-document or a
    here-string gives them (``bash <<EOF``, ``bash <<< "intently ..."``) as commands; ``bash -c
    TEXT`` and ``bash x.sh`` read them from elsewhere, and give standard input to what they run."""
    if not words or posixpath.basename(words[0]) not in _SHELLS:
        return False
    args = iter(words[1:])
    for a in args:
        if a == "-" or (a.startswith("-") and not a.startswith("--") and "s" in a[1:]):
            return True
        if a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
            return False
        if a in _SHELL_VALUED:
            next(args, None)
        elif a == "--":
            return next(args, None) is None
        elif not a.startswith(("-", "+")):
            return False  # a script file: what it reads from standard input is data
    return True


def read_command(command: str, root: str | None = None) -> CommandReading | None:
    """:class:`CommandReading` of a shell command, or ``None`` when it does not split into words.

    A here-document or here-string fed to a shell (``bash <<EOF``, ``sh -s <<< TEXT``) is read as
    commands that run where the shell stands; fed to any other program it is a word of it.
    The command line is read as the shell runs it, in order: a ``cd``/``pushd``/``popd`` moves
    where later relative paths lead (``cd src/app && rm config.py`` removes
    ``src/app/config.py``; a subshell's ``cd`` ends with it), and ``NAME=value`` or ``export
    NAME=value`` earlier on the line gives ``$NAME``/``${NAME}`` its value (``F=a.py; rm $F``;
    in single quotes, ``'$F'``, it stays as written, as the shell leaves it). A command of a
    pipeline, or one sent to the background with ``&``, runs in a process of its own: its ``cd``
    or assignment does not reach the commands after it (``cd docs | true; rm config.py`` removes
    ``config.py``); a pipeline's last command runs in the line's own shell in zsh but not in bash,
    so what it changes there leaves the folder (or variable) unknown.
    What cannot be known from the words (``cd $DIR``, ``cd -``, ``cd "$(...)"``, a variable set
    nowhere on the line) is not guessed: a path it decides goes to ``unsure``, never to nothing.
    A patch a command applies (``git apply``, ``git am``, ``patch``) is read from ``root`` (the
    folder the command runs in): its ``---``/``+++`` headers name the files it changes; without
    ``root``, or with a patch file that cannot be read, what it changes is unsure."""
    words = split(command)
    if words is None:
        return None
    out = CommandReading()
    segment: list[str] = []
    piped: list[list[str]] = []  # the earlier commands of this pipeline: what feeds an xargs
    given: list[str] = []  # files given on standard input ("< fix.patch")
    shell = _Shell(root=root)
    saved: list[_Shell] = []  # the shell outside each open subshell
    # the shell before each open compound command ("{ ...; }", "while ...; done", "if ...; fi"),
    # and whether a pipe feeds it (then it is the last command of a pipeline)
    groups: list[tuple[_Shell, bool, str]] = []
    # the shell after the first command of an and-or list ("false && cd ..; rm -rf keys"): a
    # command after "&&" or "||" may not run, so where the list leaves the shell is unsure
    listed: list[_Shell] = []

    fed: list[str] = []  # the here-documents and here-strings of this command

    def done(ending: str) -> None:
        nonlocal shell
        run(ending)
        if ending in ("&&", "||") and not listed:
            listed.append(shell.copy())
        elif ending not in ("&&", "||", "|", "|&", "(") and listed:
            shell = listed.pop().unsure_after(shell)

    def run(ending: str) -> None:
        nonlocal shell
        if fed and reads_commands(_command_words(segment)):
            for text in fed:  # "bash <<EOF": its lines are commands, run where the shell stands
                commands(text)
        else:
            segment.extend(literal(t) for t in fed)  # a word of its command: "python - <<EOF" names paths
        fed.clear()
        read = _segment(segment, piped, given)
        if read.opaque:
            read.opaque += given
        for cwd in shell.folders():  # each folder the line may stand in by now
            here = _rebased(read, cwd)
            _read_patches(here, root)
            out.add(here)
        lead = itertools.takewhile(lambda w: w in _KEYWORDS or w in _OPENS or w in _CLOSES, segment)
        closed: tuple[_Shell, bool, str] | None = None
        for w in lead:  # "do if x", "{ while ...": each opens one; "} }": each closes one
            if w in _OPENS:
                groups.append((shell.copy(), bool(piped), w))
            elif w in _CLOSES and groups:
                closed = groups.pop()
        if closed is not None:  # the outermost one closed here decides
            groups.append(closed)
        closes = closed is not None
        if ending in ("|", "|&", "&"):
            # its own process: a pipeline's command, a background job (a compound command's too:
            # "while ...; do cd x; done | cat" leaves the line's folder where it was)
            if closes:
                shell = groups.pop()[0]
            return
        if closes:
            before, fed_by_pipe, kind = groups.pop()
            if fed_by_pipe or kind != "{":
                # "... | { cd x; }": last in a pipeline, its own process in bash, not in zsh;
                # "if false; then cd x; fi", a loop, a case: its body may not run at all
                shell = before.unsure_after(shell)
                return
        if piped:  # the last command of a pipeline: run in the line's shell by zsh, not by bash
            after = shell.copy()
            after.run(segment)
            shell = shell.unsure_after(after)
            return
        shell.run(segment)

    def substituted(word: str) -> None:
        """What the ``$(...)`` in a word run (``echo "$(rm -rf x)"``), read where the line stands."""
        for text in substitutions(word):
            commands(text)

    def commands(text: str) -> None:
        """What the command text ``text`` changes, run where the line stands (each folder it may)."""
        for cwd in shell.folders():
            here = None if root is None or _UNKNOWN in cwd else os.path.join(root, cwd)
            inner = read_command(literal(text), here)
            out.add(_rebased(inner, cwd) if inner is not None else CommandReading(opaque=[text]))

    pattern = False  # a case's pattern comes next
    i = 0
    while i < len(words):
        word = words[i]
        if word in ("<", ">") and words[i + 1 : i + 2] == ["("]:
            i += 1  # "<(ls)", ">(tee x)": a process substitution, read as a subshell of its own
            continue
        if word in ("<<", "<<-", "<<<") and i + 1 + (word != "<<<") < len(words) and words[i + 1] not in _OPERATORS:
            i += 1 if word == "<<<" else 2  # "<<", the delimiter, the body (see _words.split)
            fed.append(shell.expand(words[i]) if word == "<<<" else words[i])
            substituted(words[i])
            i += 1
            continue
        if word == "<":
            if i + 1 < len(words) and words[i + 1] not in _OPERATORS:
                given.append(literal(shell.expand(words[i + 1])))  # from the folder it runs in: rebased with it
            i += 2
            continue
        if _REDIRECTS.fullmatch(word):
            # the split gives "2>" as "2", ">": a digit before it is a descriptor
            if segment and segment[-1].isdigit() and i > 0 and words[i - 1] == segment[-1]:
                segment.pop()
            to = words[i + 1] if i + 1 < len(words) else ""
            if to in ("<", ">") and words[i + 2 : i + 3] == ["("]:
                i += 1  # "> >(tee log)": into a process substitution, read next
                continue
            if to and not to.startswith("&") and to not in _OPERATORS and not (word == ">&" and _FD.fullmatch(to)):
                out.targets += [_within(cwd, literal(shell.expand(to))) for cwd in shell.folders()]
            i += 2
            continue
        header = segment[:1] == ["case"] and segment[2:3] == ["in"]
        if word in _OPERATORS and (header or pattern) and segment[:1] != ["esac"] and word not in ("&&", "||", "&"):
            # a case's pattern ("case x in a|b)", ";; (c)"): its "(", "|" and ")" are no subshell
            # or pipe, and its words no command; the branch's commands come after the ")"
            pattern = word != ")"
            if word == ")" or (header and word in (";", ";;")):
                segment[:] = segment[:1] if header else []  # "case" opens the compound command
                done(word)
                segment, given, piped = [], [], []
            i += 1
            continue
        if word in _OPERATORS:
            pattern = word in _CASE_ENDS
            done(word)
            piped = [*piped, segment] if word in ("|", "|&") else []
            segment, given = [], []
            if word == "(":
                saved.append(shell.copy())
            elif word == ")" and saved:
                shell = saved.pop()
        else:
            substituted(word)
            segment.append(literal(shell.expand(word)))
        i += 1
    done("")
    _settle(out)
    return out


# An expansion in a word: ``$NAME`` and ``${NAME}`` (known when set earlier on the line); any
# other (``$1``, ``${F:-x}``, ``$(...)``, a backquote, a ``$`` ending the word) is unknown.
_EXPANSION = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*)|\{[^}]*\}?|[0-9@*#?$!(-]|$)|`")
_ASSIGNMENT = re.compile(r"([A-Za-z_]\w*)=(.*)", re.DOTALL)
_DECLARES = frozenset({"export", "declare", "local", "readonly", "typeset"})
# In a path: a part no word of the command gives (an unknown folder or variable).
_UNKNOWN = "\0"
# Shell words that start a command without being one ("{ rm a; }", "if ...; then rm a; fi").
_KEYWORDS = frozenset({"{", "}", "!", "then", "do", "else", "elif", "if", "while", "until", "time"})
# The words that open a compound command and those that close one: a compound command in a
# pipeline (or sent to the background) runs in a process of its own, as a simple command does.
_OPENS = frozenset({"{", "if", "while", "until", "for", "case", "select"})
_CLOSES = frozenset({"}", "fi", "done", "esac"})
# How many known folders a line may stand in before the folder counts as unknown.
_MAX_FOLDERS = 4


@dataclass
class _Shell:
    """Where a command line stands as it runs: its folder (``""``: where it started; a path
    with ``_UNKNOWN`` in it when no word says), ``pushd``'s stack and the variables set so far."""

    cwd: str = ""
    dirs: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    # the other folders it may stand in, each known: "npm ci && cd web; rm -rf dist" removes
    # dist or web/dist, as "cd web" ran or not (at most _MAX_FOLDERS in all, else unknown)
    also: list[str] = field(default_factory=list)
    # where the line starts on disk (None: not known), and the folders it makes ("mkdir -p
    # build && cd build"): a "cd" to a folder that is in neither may fail and leave it where it was
    root: str | None = None
    made: list[str] = field(default_factory=list)

    def copy(self) -> _Shell:
        return _Shell(self.cwd, list(self.dirs), dict(self.env), list(self.also), self.root, list(self.made))

    def folders(self) -> list[str]:
        """Every folder the shell may stand in: a path the line changes is read from each."""
        return [self.cwd, *self.also]

    def _stand(self, folders: Sequence[str]) -> None:
        """Stand in one of ``folders``: one folder no word gives, or more than :data:`_MAX_FOLDERS`,
        make the folder wholly unknown (fail closed: ``?/keys`` may be ``.intently/keys``)."""
        folders = list(dict.fromkeys(folders))
        if len(folders) > 1 and (len(folders) > _MAX_FOLDERS or any(_UNKNOWN in f for f in folders)):
            folders = [_UNKNOWN]
        self.cwd, self.also = folders[0], folders[1:]

    def expand(self, word: str) -> str:
        def value(m: re.Match[str]) -> str:
            name = m.group(1) or m.group(2)
            return self.env[name] if name and name in self.env else _UNKNOWN

        return _EXPANSION.sub(value, word) if "$" in word or "`" in word else word

    def unsure_after(self, other: _Shell) -> _Shell:
        """This shell, where a command that may or may not have run in it left ``other``: a
        variable that differs between the two is unknown; the folder is either one (:meth:`_stand`)."""
        env = dict(self.env)
        for name in self.env.keys() | other.env.keys():
            if self.env.get(name) != other.env.get(name):
                env[name] = _UNKNOWN
        dirs = self.dirs if other.dirs == self.dirs else [_UNKNOWN] * max(len(self.dirs), len(other.dirs))
        after = _Shell(self.cwd, list(dirs), env, root=self.root, made=list(dict.fromkeys(self.made + other.made)))
        after._stand([*self.folders(), *other.folders()])  # either: both folders stay possible
        return after

    def run(self, words: Sequence[str]) -> None:
        """What a finished simple command (its words expanded) does to the shell itself."""
        if words and all(_ASSIGNMENT.fullmatch(w) for w in words):
            self._assign(words)  # F=src/app/config.py
            return
        command = _command_words(words)
        if not command:
            return
        program, args = command[0], command[1:]
        if program in _DECLARES:
            self._assign([a for a in args if _ASSIGNMENT.fullmatch(a)])
        elif program == "unset":
            for a in args:
                self.env.pop(a, None)
        elif program in ("cd", "pushd", "chdir"):
            operands = [a for a in args if a == "-" or not a.startswith("-")]
            if program == "pushd":
                self.dirs.append(_UNKNOWN if self.also else self.cwd)
            where = operands[0] if operands else ""
            if not where or where == "-" or where.startswith(("~", "+")):
                self._stand([_UNKNOWN])  # home, the last folder, a stack entry: no word says which
            else:
                # "cd .intently; cd /nonexistent; rm -rf keys": a cd that fails leaves the shell where it was
                moved = [_within(cwd, where) for cwd in self.folders()]
                self._stand(moved + [cwd for cwd, to in zip(self.folders(), moved, strict=True) if self._may_fail(to)])
        elif program == "mkdir":
            self.made += [_within(cwd, a) for cwd in self.folders() for a in args if not a.startswith("-")]
        elif program == "popd":
            self._stand([self.dirs.pop() if self.dirs else _UNKNOWN])

    def _may_fail(self, folder: str) -> bool:
        """Whether a ``cd`` to ``folder`` (known, from where the line starts) may fail: the folder
        is not on disk and no ``mkdir`` before it on the line makes it (or one under it)."""
        if self.root is None or _UNKNOWN in folder:
            return False
        if any(m == folder or m.startswith(folder.rstrip("/") + "/") for m in map(posixpath.normpath, self.made)):
            return False
        return not os.path.isdir(os.path.join(self.root, folder))

    def _assign(self, words: Iterable[str]) -> None:
        for w in words:
            m = _ASSIGNMENT.fullmatch(w)
            if m is not None:
                self.env[m.group(1)] = m.group(2)


def _within(cwd: str, path: str) -> str:
    """``path`` as the command's words give it when the shell stands in ``cwd``: relative to where
    the command started (an unknown folder stays marked ``_UNKNOWN``)."""
    if not cwd or not path or path.startswith(("/", "~")):
        return path
    if _UNKNOWN in cwd:
        norm = posixpath.normpath(path)
        return _UNKNOWN if norm in (".", "..") or norm.startswith("../") else f"{_UNKNOWN}/{norm}"
    return posixpath.normpath(posixpath.join(cwd, path))


def _unknown_globs(path: str) -> list[str]:
    """The globs a path with unknown parts may match: the unknown folder empty, or any."""
    return list(
        dict.fromkeys([path.replace(_UNKNOWN + "/", "").replace(_UNKNOWN, "*") or "*", path.replace(_UNKNOWN, "*")])
    )


def _rebased(read: CommandReading, cwd: str) -> CommandReading:
    """A simple command's reading, its relative paths taken from ``cwd`` (``cd``, ``-C``)."""
    if not cwd:  # a copy: each folder's reading is changed on its own (_read_patches)
        return CommandReading(
            list(read.targets), list(read.sweeps), list(read.opaque), list(read.unsure), list(read.patches)
        )
    opaque = list(read.opaque)
    if _UNKNOWN not in cwd:  # "cd src && python fix.py app/config.py" names src/app/config.py
        opaque += [_within(cwd, w) for w in read.opaque[1:] if not w.startswith(("-", "/")) and _UNKNOWN not in w]
    return CommandReading(
        targets=[_within(cwd, t) for t in read.targets],
        sweeps=[(_within(cwd, f), p) for f, p in read.sweeps],
        opaque=opaque,
        unsure=list(read.unsure),
        patches=[(f if f == "-" else _within(cwd, f), n, _within(cwd, d or "."), g) for f, n, d, g in read.patches],
    )


def _settle(out: CommandReading) -> None:
    """Move what an unknown folder or variable decides from ``targets`` and ``sweeps`` to ``unsure``."""
    why = ", where ? is a folder or variable no word of the command gives"
    for t in [t for t in out.targets if _UNKNOWN in t]:
        out.targets.remove(t)
        out.unsure += [(g, f"it changes {t.replace(_UNKNOWN, '?')}{why}") for g in _unknown_globs(t)]
    for f, pattern in [s for s in out.sweeps if _UNKNOWN in s[0]]:
        out.sweeps.remove((f, pattern))
        what = f.replace(_UNKNOWN, "?") + (f" (files named {pattern})" if pattern else "")
        for g in _unknown_globs(f):
            globs = [f"{g}/*{pattern}"] if pattern else [g, f"{g}/*"]  # the folder, and all under it
            out.unsure += [(glob, f"it changes what is under {what}{why}") for glob in globs]
    out.unsure = list(dict.fromkeys(out.unsure))


def _read_patches(read: CommandReading, root: str | None) -> None:
    """The files the patches a command applies change, from their headers, into ``targets``; a
    patch that cannot be read (no ``root``, an unknown folder, absent, unreadable) into ``unsure``.
    git's patch paths lead from the top of the repository, wherever in it git runs ("cd sub &&
    git apply x.patch" with ``+++ b/src/app/config.py`` changes ``src/app/config.py``, not
    ``sub/src/app/config.py``), then ``--directory``."""
    for name, strip, folder, directory in read.patches:
        prefix = folder
        if directory is not None and root is not None:
            prefix = posixpath.normpath(posixpath.join(_git_top(root, folder), directory))
        text: str | None = None
        if root is not None and name != "-" and _UNKNOWN not in name:
            try:
                with open(posixpath.join(root, name), encoding="utf-8", errors="replace") as f:
                    text = f.read(4_000_000)
            except OSError:
                text = None
        if text is None:
            what = "standard input" if name == "-" else name
            read.unsure.append(("*", f"it applies a patch from {what}, which the gate cannot read"))
            continue
        for path in _patch_paths(text, strip):
            if prefix in ("", ".") or path.startswith("/"):
                read.targets.append(path)
                continue
            joined = posixpath.normpath(posixpath.join(prefix, path))
            if root is not None and joined.startswith("../") and _UNKNOWN not in joined:
                # a repository's top above the project: "../pkg/src/a.py" is the project's src/a.py
                joined = os.path.relpath(os.path.join(root, joined), root).replace(os.sep, "/")
            read.targets.append(joined)
    read.patches = []


def _git_top(root: str, folder: str) -> str:
    """The top of the git work tree that ``folder`` (relative to ``root``, where the command
    starts) lies in, relative to ``root`` (``..`` when above it: a project in a monorepo's
    folder); ``folder`` itself outside any repository, where ``git apply`` works as ``patch``."""
    if _UNKNOWN in folder:
        return folder
    here = start = os.path.normpath(os.path.join(root, folder))
    while not os.path.exists(os.path.join(here, ".git")):
        if os.path.dirname(here) == here:
            return folder
        here = os.path.dirname(here)
    if here == start:
        return folder
    return posixpath.normpath(posixpath.join(folder, os.path.relpath(here, start).replace(os.sep, "/")))


def _patch_paths(text: str, strip: int | None) -> list[str]:
    """The paths a unified or git diff changes: its ``---``/``+++`` pair and ``diff --git`` names,
    less ``strip`` leading folders (``None``: patch's default, any of them: every suffix), and
    git's ``rename``/``copy`` names as written."""
    names: list[str] = []
    kept: list[str] = []
    lines = text.splitlines()
    for line, after in itertools.pairwise([*lines, ""]):
        if line.startswith("--- ") and after.startswith("+++ "):
            names += [line[4:].split("\t")[0].strip(), after[4:].split("\t")[0].strip()]
        elif line.startswith("diff --git "):
            names += line[11:].split()
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            kept.append(line.split(" ", 2)[2].strip())
    out: list[str] = []
    for raw in names:
        name = raw.strip('"')
        if name == "/dev/null" or not name:
            continue
        steps = [s for s in name.split("/") if s]
        if strip is None:
            out += ["/".join(steps[k:]) for k in range(len(steps))]
        elif len(steps) > strip:
            out.append("/".join(steps[strip:]))
    return list(dict.fromkeys(out + kept))


def _command_words(words: Sequence[str]) -> list[str]:
    """A simple command's program and arguments: without ``FOO=1``, ``sudo``, ``env`` and shell keywords before it."""
    out = list(words)
    while out and (
        ("=" in out[0] and not out[0].startswith("-")) or out[0] in ("sudo", "command", "env") or out[0] in _KEYWORDS
    ):
        out = out[1:]  # FOO=1 cmd, sudo cmd
    return out


def _segment(words: list[str], piped: Sequence[list[str]] = (), given: Sequence[str] = ()) -> CommandReading:
    """What one simple command (no operators) changes; ``piped``: the commands feeding it;
    ``given``: the files on its standard input."""
    from ..core.shell import writes_or_runs

    words = _command_words(words)
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
        return _patch(args, given)
    if _runs_in_folder(program, args):
        return _in_folder(program, args, piped, given)  # git -C src/app checkout config.py
    if program == "git" and operands and operands[0] in _GIT_CHANGES:
        changed = operands[1:]
        return CommandReading(targets=changed, sweeps=[(o, None) for o in changed])
    if program == "git" and operands and operands[0] in ("apply", "am"):
        return _git_apply(args[args.index(operands[0]) + 1 :], given, operands[0])
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


def _patch(args: Sequence[str], given: Sequence[str] = ()) -> CommandReading:
    """``patch [options] [file [patchfile]]``: the file it patches, and ``-o`` its output. With
    no file named, the files the patch itself names (``-i``, the second operand, or standard
    input), less ``-p`` leading folders, under ``-d``."""
    out = CommandReading()
    operands: list[str] = []
    skip = ""
    strip: int | None = None
    folder, source = "", ""
    for a in args:
        if skip:
            if skip in ("-o", "--output"):
                out.targets.append(a)
            elif skip == "-p" and a.isdigit():
                strip = int(a)
            elif skip in ("-d", "--directory"):
                folder = a
            elif skip in ("-i", "--input"):
                source = a
            skip = ""
        elif a in ("-o", "--output", "-i", "--input", "-d", "--directory", "-r", "-B", "-p", "-F", "-D", "-z", "-V"):
            skip = a
        elif a.startswith(("-p", "--strip=")) and a.split("=", 1)[-1].lstrip("-p").isdigit():
            strip = int(a.split("=", 1)[-1].lstrip("-p"))
        elif a.startswith("--directory=") or (a.startswith("-d") and len(a) > 2):
            folder = a.split("=", 1)[1] if a.startswith("--") else a[2:]
        elif a.startswith("--input=") or (a.startswith("-i") and len(a) > 2):
            source = a.split("=", 1)[1] if a.startswith("--") else a[2:]
        elif a.startswith(("--output=", "-o")) and len(a) > 2 and not a.startswith("--"):
            out.targets.append(a[2:])
        elif a.startswith("--output="):
            out.targets.append(a.split("=", 1)[1])
        elif not a.startswith("-"):
            operands.append(a)
    if "--dry-run" in args:
        return CommandReading()
    if operands:
        out.targets.append(posixpath.join(folder, operands[0]) if folder else operands[0])
    else:
        # -d moves patch into the folder before it opens -i's file; "<" is opened by the shell, here
        source = (
            posixpath.normpath(posixpath.join(folder, source))
            if source and folder
            else source or (given[0] if given else "-")
        )
        out.patches.append((source, strip, folder, None))
    return out


def _git_apply(args: Sequence[str], given: Sequence[str], sub: str) -> CommandReading:
    """``git apply``/``git am`` [options] [patch...]: the files its patches name, less ``-p``
    (1 unless given) leading folders, under ``--directory``. Only reporting (``--check``,
    ``--stat``) changes nothing; ``git am --continue``/``--abort`` applies what no word names."""
    reports = {"--check", "--stat", "--numstat", "--summary"}
    if sub == "apply" and reports & set(args) and "--apply" not in args:
        return CommandReading()
    if sub == "am" and {"--quit", "--show-current-patch"} & set(args):
        return CommandReading()
    strip, folder = 1, ""
    files: list[str] = []
    skip = ""
    for a in args:
        if skip:
            if skip == "-p" and a.isdigit():
                strip = int(a)
            elif skip == "--directory":
                folder = a
            skip = ""
        elif a in ("-p", "--directory", "--exclude", "--include", "-C", "--whitespace", "--build-fake-ancestor"):
            skip = a
        elif a.startswith("-p") and a[2:].isdigit():
            strip = int(a[2:])
        elif a.startswith("--directory="):
            folder = a.split("=", 1)[1]
        elif not a.startswith("-"):
            files.append(a)
    if not files:
        files = [given[0] if given else "-"]
    return CommandReading(patches=[(f, strip, "", folder) for f in files])


def _runs_in_folder(program: str, args: Sequence[str]) -> bool:
    """Whether ``git -C DIR`` (before its subcommand: ``git commit -C HEAD`` reuses a message) or
    ``make -C DIR``/``--directory=DIR`` runs in another folder."""
    if program in ("make", "gmake"):
        return any(a == "-C" or a.startswith("--directory=") for a in args)
    if program != "git":
        return False
    for a, b in itertools.pairwise([*args, ""]):
        if a == "-C":
            return bool(b)
        if not a.startswith("-"):
            return False
    return False


def _in_folder(program: str, args: Sequence[str], piped: Sequence[list[str]], given: Sequence[str]) -> CommandReading:
    """``git -C DIR ...``, ``make -C DIR ...``: the command run in DIR (several ``-C`` add up)."""
    where = ""
    rest: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-C" and i + 1 < len(args):
            where = _within(where, args[i + 1]) if where else args[i + 1]
            i += 2
            continue
        if a.startswith("--directory=") and program != "git":
            where = _within(where, a.split("=", 1)[1]) if where else a.split("=", 1)[1]
        else:
            rest.append(a)
        i += 1
    return _rebased(_segment([program, *rest], piped, given), where)


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


def sweep_covers(folder: str, pattern: str | None, excluded: str, root: str | None = None) -> bool:
    """Whether changing what lies under ``folder`` (named ``pattern``, when given) changes the
    protected path ``excluded``: it lies under the folder (``.`` is the whole project), or the
    folder lies under it; a bare protected name (``config.py``) only when ``pattern`` names it.
    Case does not tell them apart (:func:`protected_key`; ``root`` as for :func:`matching_exclusion`)."""
    fold = folds_case(root, excluded)
    f, e = protected_key(folder, fold), protected_key(excluded, fold)
    if not e:
        return False
    if pattern is not None and not fnmatch.fnmatchcase(posixpath.basename(e), pattern.casefold() if fold else pattern):
        name = posixpath.basename(normalise_path(excluded))  # as written: a file has a lower-case extension
        return not _FILE_NAME.fullmatch(name) and _under(e, f)  # a protected folder inside
    if "/" not in e and pattern is not None:
        return True  # a file of that name, wherever it lies
    return _under(e, f) or (bool(f) and matching_exclusion(f, [excluded], root) is not None)


def _under(e: str, f: str) -> bool:
    """Whether path ``e`` is ``f`` or lies under it (``f`` empty: the project, for a relative ``e``)."""
    if not f:
        return not e.startswith("/")
    if f.startswith("/") and not e.startswith("/"):
        # An absolute folder, a project-relative path: matched by its end, as for a file.
        steps = e.split("/")
        return any(f.endswith("/" + "/".join(steps[:k])) for k in range(1, len(steps) + 1))
    return e == f or e.startswith(f + "/")


def named_in(words: Sequence[str], excluded: Iterable[str], root: str | None = None) -> list[str]:
    """The protected paths that ``words`` (an untraceable program's, its ``-c`` text included)
    name: a word, or a piece of one between quotes, parentheses and commas, that is the path or
    under it, or the protected file's bare name."""
    found: list[str] = []
    pieces = [p for w in words for p in re.split(r"[\s;&|()<>=\"'`,]+", w) if p]
    for raw in excluded:
        fold = folds_case(root, raw)
        e = protected_key(raw, fold)
        name = posixpath.basename(e)
        for piece in pieces:
            if matching_exclusion(piece, [raw], root) is not None or (e and protected_key(piece, fold) == name):
                found.append(raw)
                break
    return found


def command_paths(command: str) -> list[str]:
    """Every word of a command that could be a path: what an unsplittable command, or one
    read by a protected-from-reading rule, is checked by."""
    return [w for w in re.split(r"[\s;&|()<>=\"'`]+", command) if w]
