"""What an agent's shell command would do to intently itself: run its person-only commands, or
write into the files that guard the agent.

The library refuses person-only acts (accepting a rule, confirming a review candidate,
endorsing a goal, changing a trigger, uninstalling the hook, key and checkpoint operations) to
an agent actor. But a coding agent's shell runs as the OS user: ``intently req accept --all``
typed into Claude Code's Bash tool is, to the library, the person's own act. A prompt-injected
agent could put a scanned rule in force in every later prompt, or confirm its own candidates.
So the hook's gate reads the command (with the gate's one shell reader,
:func:`intently.gate._paths.shell_words` and :func:`~intently.gate._paths.read_command`) and
refuses it; the person runs such a command in their own terminal.

Only the commands listed in :data:`READ_ONLY` stay allowed: they change nothing (listing,
showing, verifying, help). Any other intently command, one this module does not know
included, is refused (fail closed). A Python program whose text imports intently is refused
too: what it calls cannot be read from its words, and a read-only use has the CLI.
"""

from __future__ import annotations

import filecmp
import fnmatch
import functools
import os
import posixpath
import re
import shlex
import shutil
import sys
from collections.abc import Sequence

from ._contracts import breaks_constraint
from ._paths import (
    _KEYWORDS,
    _OPERATORS,
    normalise_path,
    read_command,
    reads_commands,
    shell_words,
    sweep_covers,
)
from ._words import literal, split, substitutions

__all__ = ["CLI_COMMANDS", "READ_ONLY", "guarded_writes", "intently_acts", "simple_commands"]

#: The CLI's commands: each group's subcommands, an empty set for a top-level command (checked
#: against the CLI's tree by tests/gate/test_selfguard.py). A program the guard cannot resolve
#: (``$I`` set in an earlier call, a copy of intently made in the same call) run with words that
#: start with one of these may be intently, and is held to :data:`READ_ONLY` like intently.
CLI_COMMANDS: dict[str, frozenset[str]] = {
    **dict.fromkeys(
        ("context", "demo", "gateway", "grant", "grants", "init", "join", "mcp", "revoke", "serve", "whoami"),
        frozenset[str](),
    ),
    "eval": frozenset({"agentdojo", "extraction", "requirements", "triggers"}),
    "gate": frozenset({"approve", "bundle", "check", "close", "contracts", "explain", "export", "resolve", "runs"})
    | {"verify-trace", "vocab"},
    "goal": frozenset({"add", "archive", "bundle", "cancel", "confirm", "depend", "dismiss", "done", "edit"})
    | {"endorse", "hold", "list", "organise", "organize", "promote", "queue", "reject", "reopen", "resume", "show"}
    | {"supersede", "undepend"},
    "hook": frozenset({"claude", "install", "scan-queue", "serve", "status"}),
    "log": frozenset({"checkpoint", "consistency", "proof", "quarantine", "repair", "replay", "rotate-key", "show"})
    | {"verify", "verify-checkpoint", "verify-proof"},
    "req": frozenset({"accept", "add", "disable", "dismiss", "domains", "edit", "enable", "list", "preview"})
    | {"scan", "show", "supersede", "validate"},
    "review": frozenset({"confirm", "dismiss", "edit", "observe"}),
    "store": frozenset({"copy", "status", "upgrade"}),
    "token": frozenset({"create", "list", "revoke"}),
    "trigger": frozenset({"add", "cancel", "confirm", "list", "match", "show", "snooze", "test", "tick", "update"}),
}

#: The intently commands that change nothing, by group ("" for top-level commands). Checked
#: against the CLI's command tree (tests/gate/test_selfguard.py): anything else is refused.
READ_ONLY: dict[str, frozenset[str]] = {
    "": frozenset({"whoami", "grants", "context"}),
    "goal": frozenset({"list", "queue", "show"}),
    "req": frozenset({"list", "show", "validate"}),
    "trigger": frozenset({"list", "show"}),
    "log": frozenset({"show", "verify", "proof", "consistency", "verify-proof", "verify-checkpoint", "quarantine"}),
    "store": frozenset({"status"}),
    "gate": frozenset({"contracts", "explain", "runs", "verify-trace"}),
    "hook": frozenset({"status"}),
    "token": frozenset({"list"}),
}
_GLOBAL_VALUED = frozenset({"--home", "--actor", "--namespace", "-n"})
_REDIRECT = re.compile(r"\d*(?:>|>>|>\||&>|&>>|<|<<|<<<)")
# Words that run the command after them: ``env X=1 intently``, ``sudo``, ``nohup``, ``time``.
_PREFIXES = frozenset({"sudo", "command", "env", "exec", "nohup", "time", "nice", "timeout", "stdbuf", "xargs"})
_PREFIX_VALUED = frozenset({"-n", "-I", "-L", "-P", "-d", "-a", "-s", "-E", "-u", "-C", "-S", "-k"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
# Launchers that run a named package's command: ``uvx intently``, ``uv run intently``, ``pipx run intently``.
_LAUNCHERS = {"uvx": 0, "uv": 1, "pipx": 1, "pip-run": 0}
_LAUNCHER_VALUED = frozenset({"--from", "--with", "--python", "-p", "--spec", "--directory"})
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)?)?")
_IMPORTS_INTENTLY = re.compile(r"\b(?:import|from)\s+intently\b|__import__\(\s*['\"]intently")
_NAMES_GUARD = re.compile(r"(?:^|[\s'\"/=(,])(?:\.intently|\.git|\.claude/settings(?:\.local)?\.json)(?:[/'\"\s)]|$)")
# Files each guarded place holds, standing for it when a command sweeps a folder (``rm -rf .``,
# ``git checkout .``) or the files of a name under it (``find . -name '*.md' -delete`` removes
# the rule files; ``-name '*.pyc'`` removes none of these).
_GUARD_SAMPLES = (
    ".intently/intently.toml",
    ".intently/requirements/rule.md",
    ".intently/state/intently.db",
    ".intently/state/log.jsonl",
    ".intently/keys/private/signing.pem",
    ".git/config",
    ".git/HEAD",
    ".git/index",
    ".git/hooks/pre-commit",
    ".git/hooks/pre-commit.sample",
    ".git/objects/pack/pack-0.pack",
    ".claude/settings.json",
    ".claude/settings.local.json",
)
_MAX_DEPTH = 4
# Shell builtins: a command word that is one runs no file, so it is never a copy of intently.
_BUILTINS = frozenset(
    {
        *(".", ":", "[", "alias", "bg", "break", "builtin", "case", "cd", "continue", "declare", "dirs"),
        *("disown", "echo", "enable", "esac", "exit", "export", "false", "fc", "fg", "for", "getopts", "hash"),
        *("help", "history", "in", "jobs", "kill", "let", "local", "logout", "mapfile", "popd", "printf"),
        *("pushd", "pwd", "read", "readarray", "readonly", "return", "select", "set", "shift", "shopt"),
        *("source", "test", "trap", "true", "type", "typeset", "ulimit", "umask", "unalias", "unset", "wait"),
    }
)
# The text of intently's console script (``from intently.cli import main``): a file holding it,
# under any name, is intently's CLI.
_LAUNCHER = re.compile(r"^\s*from\s+intently(?:\.cli|\.__main__)?\s+import\s+main\b", re.MULTILINE)
# How much of a program file is read to tell whether it is intently's console script (which
# is a few lines), and how much of a script run by name to apply the guard to its text.
_LAUNCHER_BYTES = 4096
_SCRIPT_BYTES = 256 * 1024


def simple_commands(command: str, depth: int = 0) -> list[list[str]] | None:
    """Every simple command a shell command runs, each as its words from the program on (prefixes
    such as ``env``, ``sudo``, ``xargs`` taken off; ``sh -c``/``bash -c``/``eval`` text read
    too; ``$(...)`` and backticks read as commands of their own, in double quotes and in a
    here-document too; a here-document or here-string fed to a shell, ``bash <<EOF``, read as
    commands). ``None`` when it does not split."""
    raw_words = split(command)
    if raw_words is None or depth > _MAX_DEPTH:
        return None
    words = [literal(w) for w in raw_words]
    out: list[list[str]] = []
    segment: list[str] = []
    fed: list[str] = []  # the here-documents and here-strings of the command being read
    aliases: dict[str, list[str]] = {}  # "alias x=intently; x req accept": x runs intently

    # The script file a shell may read its commands from on standard input ("bash < x.sh",
    # "cat x.sh | bash"): read as "bash x.sh" is, so its text is held to the guard too.
    given: list[str] = []  # this command's "< FILE"
    piped: list[str] = []  # the file a "cat FILE" before the "|" feeding this command prints
    catted: list[str] = []  # the file this command prints, when it is "cat FILE"

    def done() -> bool:
        run = _unwrap(segment)
        segment.clear()
        texts = fed[:] if reads_commands(run) else []
        script = [*given, *piped][:1]
        given.clear()
        piped.clear()
        catted[:] = run[1:] if len(run) == 2 and posixpath.basename(run[0]) == "cat" and run[1] != "-" else []
        if script and not texts and reads_commands(run):
            run = [run[0], *script]  # "bash < x.sh": its text runs as commands, as "bash x.sh"'s does
        fed.clear()
        for text in texts:  # "bash <<EOF", "sh <<< TEXT": what the shell reads runs as commands
            nested = simple_commands(text, depth + 1)
            if nested is None:
                return False
            out.extend(nested)
        if run and run[0] in aliases:
            run = _unwrap([*aliases[run[0]], *run[1:]])
        if not run:
            return True
        if run[0] == "alias":
            for definition in run[1:]:
                name, eq, value = definition.partition("=")
                if eq:
                    aliases[name] = shell_words(value) or value.split()
        program = posixpath.basename(run[0])
        inner = _inner_text(program, run[1:])
        if inner is not None:
            nested = simple_commands(inner, depth + 1)
            if nested is None:
                return False
            out.extend(nested)
        out.append(run)
        return True

    # A word the shell makes from what a command prints ("$(echo intently) req accept", a
    # backquote): the command inside is read on its own, and the word stays in the command
    # around it as an expansion no word resolves (as "$(which intently)" in double quotes is).
    outer: list[tuple[list[str], str]] = []  # the command around each open substitution, and the text before it
    # for each open "(": None, or for a "$(" substitution the "case" commands open when it opened
    # (a case pattern's ")" in it, "$(case x in a) ...", closes no substitution)
    parens: list[int | None] = []
    cases = 0
    quoted = False  # inside a backquote

    def resume(shown: str) -> None:
        around, before = outer.pop()
        segment[:] = [*around, before + shown]

    i = 0
    while i < len(words):
        raw = words[i]
        word = raw.strip("`")
        if raw.endswith("$") and words[i + 1 : i + 2] == ["("]:
            outer.append((segment[:], raw[:-1]))  # "x$(...)": one word
            segment.clear()
            parens.append(cases)
            i += 2
            continue
        if raw == ")" and parens and parens[-1] is not None and parens[-1] >= cases:
            parens.pop()
            if not done():
                return None
            resume("$(...)")
        elif raw in _OPERATORS or raw in ("$", "()"):  # "f() { intently "$@"; }": the body is a command
            if raw == "(":
                parens.append(None)
            elif raw == ")" and parens and parens[-1] is None:
                parens.pop()
            if not done():
                return None
            if raw in ("|", "|&"):
                piped[:] = catted
        elif raw in ("<<", "<<-", "<<<") and i + 1 + (raw != "<<<") < len(words) and words[i + 1] not in _OPERATORS:
            i += 1 if raw == "<<<" else 2  # "<<", the delimiter, the body (see _words.split)
            fed.append(words[i])
            for text in substitutions(raw_words[i]):  # cat <<EOF ... $(intently req accept) ... EOF
                nested = simple_commands(text, depth + 1)
                if nested is None:
                    return None
                out.extend(nested)
        elif _REDIRECT.fullmatch(raw):
            if raw in ("<", "0<") and i + 1 < len(words) and words[i + 1] not in _OPERATORS:
                given[:] = [words[i + 1]]
            i += 1  # the redirect's target is not a word of the command
        else:
            for text in substitutions(raw_words[i]):
                nested = simple_commands(text, depth + 1)  # "$(intently req accept)" in double quotes
                if nested is None:
                    return None
                out.extend(nested)
            # a backtick opens or closes a command of its own (`intently log checkpoint`)
            cases += (word == "case" and not segment) - (word == "esac" and not segment)
            opens = raw.startswith("`") and not quoted
            if opens:
                outer.append((segment[:], ""))
                segment.clear()
                quoted = True
            if word:
                segment.append(word)
            if raw.endswith("`") and quoted and (len(raw) > 1 or not opens):
                if not done():
                    return None
                resume("`...`")
                quoted = False
        i += 1
    while outer:  # a substitution left open: its command, then the one around it
        if not done():
            return None
        resume("$(...)")
    return out if done() else None


def _unwrap(words: Sequence[str]) -> list[str]:
    """The words from the program on: ``FOO=1``, ``env -i``, ``sudo -u x``, ``timeout 5``,
    ``xargs -n 1`` and launchers (``uvx``, ``uv run``, ``pipx run``) taken off."""
    run = list(words)
    while run:
        head = posixpath.basename(run[0])
        if "=" in run[0] and not run[0].startswith("-"):
            run = run[1:]
        elif run[0] in _KEYWORDS:
            run = run[1:]  # "{ intently req accept; }", "if ...; then intently ...", "do", "!"
        elif run[0] == "function":
            run = run[2:]  # "function f { intently "$@"; }": the body follows the name
        elif head in _PREFIXES:
            run = run[1:]
            while run and (run[0].startswith("-") or (head == "timeout" and run[0][:1].isdigit())):
                run = run[2:] if run[0] in _PREFIX_VALUED and head != "timeout" else run[1:]
        elif head in _LAUNCHERS and len(run) > _LAUNCHERS[head] and (head != "uv" or run[1] in ("run", "tool")):
            run = run[1 + _LAUNCHERS[head] :]
            if head == "uv" and run[:1] == ["run"]:
                run = run[1:]  # uv tool run
            while run and run[0].startswith("-"):
                run = run[2:] if run[0] in _LAUNCHER_VALUED else run[1:]
        else:
            break
    return run


def _inner_text(program: str, args: Sequence[str]) -> str | None:
    """The command text a shell runs (``sh -c TEXT``, ``bash -lc TEXT``, ``eval TEXT...``)."""
    if program == "eval":
        return " ".join(args)
    if program in _SHELLS:
        for i, a in enumerate(args):
            if a.startswith("-") and not a.startswith("--") and "c" in a and i + 1 < len(args):
                return args[i + 1]
    return None


def _intently_args(words: Sequence[str], root: str | None = None) -> list[str] | None:
    """The arguments given to intently's CLI when ``words`` run it, else ``None``. A program the
    guard cannot resolve, or a copy or link of intently's console script under another name
    (``cp $(which intently) /tmp/i; /tmp/i goal done g-1``), counts as intently when its words
    are a command intently does not list as read-only (:func:`_may_be_intently`). ``-m intently``
    runs it whatever the interpreter is called (a link, a copy, ``python3.12``): unless the
    program is a file that is no Python (:func:`_is_python`), those words decide."""
    program = posixpath.basename(words[0])
    if program == "intently":
        return list(words[1:])
    args = list(words[1:])
    module = _module_run(args)
    if module is not None and module[0].split(".")[0] == "intently" and _is_python(words[0], root) is not False:
        return module[1]
    if not _PYTHON.fullmatch(program) and _may_be_intently(words[0], args, root):
        return args
    return None


# Python's options that take no value (a cluster such as ``-Im`` ends with the one that does).
_PY_FLAGS = frozenset("bBdEhiIOPqRsSuvVx")
# Python's options whose value is the next word (``-W ignore``, ``-X dev``).
_PY_VALUED = frozenset({"-W", "-X", "--check-hash-based-pycs"})


def _module_run(args: Sequence[str]) -> tuple[str, list[str]] | None:
    """(module, its arguments) when ``args``, read as a Python interpreter's, run a module
    (``-m intently goal done``, ``-I -W ignore -mintently``); ``None`` when they run a script,
    ``-c`` text or nothing."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in _PY_VALUED:
            i += 2
            continue
        if not a.startswith("-") or a in ("-", "--") or a.startswith("--"):
            return None if not a.startswith("--") or a == "--" else _module_run(args[i + 1 :])
        flags = a[1:]
        k = 0
        while k < len(flags) and flags[k] in _PY_FLAGS:
            k += 1
        if k == len(flags):
            i += 1
            continue
        if flags[k] == "m":
            name = flags[k + 1 :] or (args[i + 1] if i + 1 < len(args) else "")
            return (name, list(args[i + (1 if flags[k + 1 :] else 2) :])) if name else None
        if flags[k] in "WX":
            i += 1 if flags[k + 1 :] else 2
            continue
        return None  # -c TEXT, or an option this reading does not know
    return None


def _is_python(word: str, root: str | None) -> bool | None:
    """Whether the command word ``word`` runs a Python interpreter: by its name (``python3.12``),
    or by the file it is, links resolved (``ln -s .venv/bin/python /tmp/p``) or a copy of the
    interpreter this process runs (``cp`` of it under any name). ``None`` when no file says (an
    expansion, a copy made later on the same line): the caller decides by the words."""
    if _PYTHON.fullmatch(posixpath.basename(word)):
        return True
    if word in _BUILTINS:
        return False
    if "$" in word or "`" in word:
        return None
    path = _program_file(word, root)
    if path is None:
        return None
    real = os.path.realpath(path)
    if _PYTHON.fullmatch(posixpath.basename(real)):
        return True
    try:
        size = os.path.getsize(real)
        if any(
            os.path.samefile(real, known)
            or (size == os.path.getsize(known) and filecmp.cmp(real, known, shallow=False))
            for known in _interpreters()
        ):
            return True
        with open(real, "rb") as f:  # another interpreter's copy: CPython's entry point is in it
            return size <= _PROGRAM_BYTES and _PY_ENTRY in f.read(_PROGRAM_BYTES)
    except OSError:
        return None  # a file that cannot be read cannot be shown not to be Python


# The C function every CPython interpreter's program calls (in its text, dynamically linked or
# not), and how much of a program file is searched for it.
_PY_ENTRY = b"Py_BytesMain"
_PROGRAM_BYTES = 64 * 1024 * 1024


@functools.cache
def _interpreters() -> tuple[str, ...]:
    """The Python interpreters this process can see (resolved): its own, and ``python3`` on ``PATH``."""
    found = [sys.executable, getattr(sys, "_base_executable", None), shutil.which("python3"), shutil.which("python")]
    return tuple(dict.fromkeys(os.path.realpath(p) for p in found if p and os.path.isfile(p)))


def _may_be_intently(word: str, args: Sequence[str], root: str | None) -> bool:
    """Whether the command word ``word``, given ``args``, may run intently's CLI as a command
    other than a read-only one: its words are such a command (``goal done g-1``), and the word
    is not a program the guard can resolve to something else. It cannot when the word holds an
    expansion (``$I``, set in an earlier call), names no file (a copy made in this very call, a
    function or alias defined elsewhere); it can and it is intently when the file is, or holds
    the text of, intently's console script (a copy, a link, a hard link under another name).
    Only such words are looked up, so other programs cost nothing."""
    if word in _BUILTINS or not _names_command(args, whole=False) or _read_only(args):
        return False
    if "$" in word or "`" in word:
        return True
    path = _program_file(word, root)
    if path is None:
        # No file: a copy made later on this line (a path), or a function or alias from an
        # earlier call (a name). A bare name may also be a program on the agent's PATH the hook
        # does not see (``npm init``): it counts only for a command of a group (``x goal done``).
        return "/" in word or _names_command(args, whole=True)
    return _is_console_script(path)


def _names_command(args: Sequence[str], whole: bool) -> bool:
    """Whether ``args``, read as intently's, start with one of its commands (:data:`CLI_COMMANDS`);
    ``whole``: a group's subcommand after it (``goal done``), not a top-level command alone."""
    words: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a in _GLOBAL_VALUED:
            skip = True
        elif not a.startswith("-"):
            words.append(a)
            if len(words) == 2:
                break
    if not words or words[0] not in CLI_COMMANDS:
        return False
    subs = CLI_COMMANDS[words[0]]
    return not whole or (bool(subs) and len(words) == 2 and words[1] in subs)


def _program_file(word: str, root: str | None) -> str | None:
    """The file a command word runs: a path (from ``root``, where the command starts), or a
    name found on ``PATH``; ``None`` when there is none."""
    if "/" not in word:
        return shutil.which(word)
    path = os.path.expanduser(word)
    path = os.path.join(root or os.getcwd(), path)
    return path if os.path.isfile(path) else None


def _is_console_script(path: str) -> bool:
    """Whether ``path`` is intently's console script: the same file as the one this Python
    installed (a link or a hard link), or a small file holding its text (a copy)."""
    for entry in _entry_points():
        try:
            if os.path.samefile(path, entry):
                return True
        except OSError:
            continue
    try:
        with open(path, "rb") as f:
            head = f.read(_LAUNCHER_BYTES + 1)
    except OSError:
        return True  # a file that cannot be read cannot be shown not to be intently (fail closed)
    return len(head) <= _LAUNCHER_BYTES and _LAUNCHER.search(head.decode("utf-8", "replace")) is not None


@functools.cache
def _entry_points() -> tuple[str, ...]:
    """intently's console scripts this process can see: on ``PATH``, and beside its Python."""
    found = [shutil.which("intently"), os.path.join(os.path.dirname(sys.executable), "intently")]
    return tuple(p for p in dict.fromkeys(found) if p and os.path.isfile(p))


def _read_only(args: Sequence[str]) -> bool:
    """Whether intently's CLI, given ``args``, only reads (see :data:`READ_ONLY`)."""
    shown = list(args[: args.index("--")] if "--" in args else args)
    if "--help" in shown or "--version" in shown:
        return True  # eager options: help or the version is printed and nothing else runs
    rest: list[str] = []
    skip = False
    for a in shown:
        if skip:
            skip = False
        elif a in _GLOBAL_VALUED and not rest:
            skip = True
        elif not (a.startswith("--") and "=" in a and not rest):
            rest.append(a)
    if not rest:
        return True  # no command: the CLI prints its help
    group, sub = rest[0], rest[1] if len(rest) > 1 else ""
    if group in READ_ONLY[""]:
        return True
    return group in READ_ONLY and group != "" and (sub in READ_ONLY[group] or sub == "")


def intently_acts(command: str, root: str | None = None, depth: int = 0) -> list[str]:
    """The commands in ``command`` that run intently other than read-only (``intently req accept
    --all``, ``sh -c 'python -m intently review confirm X'``, ``python -c 'import intently; ...'``).
    A command that does not split but names intently counts whole (fail closed). ``root``: the
    folder the command starts in, where a program named by a relative path is looked for and a
    script run by name is read (``bash x.sh``, ``./x.sh``, ``python x.py``): a shell script's
    text is read as commands of its own, a Python one's is refused when it imports intently or
    names it as a program to run (:func:`_scripts`)."""
    runs = simple_commands(command)
    if runs is None:
        return [command] if re.search(r"\bintently\b", command) else []
    out: list[str] = []
    for words in runs:
        args = _intently_args(words, root)
        if args is not None and not _read_only(args):
            out.append(" ".join(words))
        elif args is None and _IMPORTS_INTENTLY.search(command) and _runs_python(words, root):
            out.append(" ".join(words))  # a program that imports intently: what it calls cannot be read
    for shown, kind, text, place in _scripts(runs, root, depth):
        here = os.path.join(root or os.getcwd(), place) if place else root
        if kind == "sh" and (inner := intently_acts(text, here, depth + 1)):
            out.append(f"{shown} (its text runs {inner[0]})")
        elif kind != "sh" and (_IMPORTS_INTENTLY.search(text) or _NAMES_INTENTLY.search(text)):
            out.append(f"{shown} (its text imports or runs intently)")
    return list(dict.fromkeys(out))


def _runs_python(words: Sequence[str], root: str | None) -> bool:
    """Whether the simple command ``words`` runs a Python interpreter (:func:`_is_python`); a
    program no file says anything about counts when it is given ``-c`` program text."""
    python = _is_python(words[0], root)
    return python is True or (python is None and any(re.fullmatch(r"-[A-Za-z]*c", a) for a in words[1:]))


# A script that names intently as a program to run (``subprocess.run(["intently", ...])``).
_NAMES_INTENTLY = re.compile(r"""(?:^|[\s'"`(\[,;])intently(?:['"`]|\s+[a-z])""", re.MULTILINE)
# Programs that run the script file named after their options.
_SOURCES = frozenset({"source", "."})
# How many folders a line's ``cd`` words may lead a script to be looked for in.
_MAX_PLACES = 8


def _scripts(runs: Sequence[Sequence[str]], root: str | None, depth: int) -> list[tuple[str, str, str, str]]:
    """(what runs it, ``sh``/``py``/``other``, text, the folder it runs in) of each script file the simple commands
    ``runs`` run by name: ``bash x.sh``, ``source x.sh``, ``python x.py``, ``./x.sh`` (its kind
    from its ``#!`` line), read from ``root``. After a ``cd`` on the line (``cd scripts && bash
    x.sh``) the script is read from each folder the line may stand in by then (:func:`_places`:
    a subshell's or a pipeline's ``cd`` may not have moved it, so the folder it started in too).
    A file that is absent, unreadable or larger than :data:`_SCRIPT_BYTES`, one found in no
    folder a word gives (after ``cd $D``), and one read at depth 2 are left out: the command is
    then judged by its words alone, as before."""
    if depth >= 2:
        return []
    out: list[tuple[str, str, str, str]] = []
    for words, places in zip(runs, _places(runs), strict=True):
        named = _script_named(words)
        if named is None or _intently_args(words, root) is not None:
            continue
        word, kind = named
        for place in places:
            text = _script_text(os.path.join(root or os.getcwd(), place, os.path.expanduser(word)))
            if text is None:
                continue
            shown = " ".join(words) if not place else f"{' '.join(words)} (in {place})"
            out.append((shown, kind or _kind(text), text, place))
    return out


def _places(runs: Sequence[Sequence[str]]) -> list[list[str]]:
    """For each simple command of ``runs``, the folders (relative to where the line starts, ``""``
    for there) it may run in: each ``cd``/``pushd`` to a folder its word gives adds where it
    leads from every folder so far. A ``cd`` to a folder no word gives (``cd $D``, ``cd -``)
    adds none: a script found nowhere else is judged by its words."""
    places = [""]
    out: list[list[str]] = []
    for words in runs:
        out.append(list(places))
        if not words or posixpath.basename(words[0]) not in ("cd", "pushd", "chdir"):
            continue
        operands = [a for a in words[1:] if a == "-" or not a.startswith("-")]
        where = operands[0] if operands else ""
        if where and where != "-" and not where.startswith(("~", "+")) and "$" not in where and "`" not in where:
            moved = [normalise_path(posixpath.join(p, where)) for p in places]
            places = list(dict.fromkeys([*places, *moved]))[:_MAX_PLACES]
    return out


def _script_text(path: str) -> str | None:
    """The text of the script file at ``path``, or ``None`` when it is absent, unreadable, larger
    than :data:`_SCRIPT_BYTES`, or intently's own console script (judged by its arguments)."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > _SCRIPT_BYTES or _is_console_script(path):
            return None
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(_SCRIPT_BYTES)
    except OSError:
        return None


def _kind(text: str) -> str:
    """A script's kind from its ``#!`` line: ``py``, ``sh`` (no such line too) or ``other``."""
    first = text.split("\n", 1)[0] if text.startswith("#!") else ""
    if "python" in first:
        return "py"
    return "sh" if not first or re.search(r"\b(?:ba|z|da|k)?sh\b", first) else "other"


def _script_named(words: Sequence[str]) -> tuple[str, str | None] | None:
    """The script file a simple command runs by name, and its kind when the program says it
    (``None``: from the file's ``#!`` line); ``None`` when it runs none (``sh -c TEXT``, ``python -m X``)."""
    program = posixpath.basename(words[0])
    if program in _SHELLS or program in _SOURCES or _PYTHON.fullmatch(program):
        for a in words[1:]:
            if a == "-" or a.startswith("-m") or (a.startswith("-") and not a.startswith("--") and "c" in a):
                return None  # the program text follows (-c, standard input), or a module runs
            if not a.startswith("-"):
                return a, "py" if _PYTHON.fullmatch(program) else "sh"
        return None
    return (words[0], None) if "/" in words[0] else None


def guarded_writes(command: str, pattern: str, root: str | None = None, depth: int = 0) -> list[str]:
    """The places ``command`` may write that the path ``pattern`` (a ``must_match`` of the file
    tools' guard) refuses: a redirect's, ``cp``'s, ``tee``'s, ``sed -i``'s... target, a file a
    patch it applies changes (read from ``root``, the folder it runs in), a folder it sweeps that
    holds one, and a guarded path among the words of a program whose writes cannot be traced
    (``python -c "open('.intently/x', 'w')"``). Unsplittable text naming one counts, and so does
    a write that may land anywhere (a patch the gate cannot read, ``cd $DIR && rm -rf .``): its
    words cannot show that it spares intently's home. A script run by name (``bash x.sh``,
    ``./x.sh``, ``python x.py``) is read from ``root``: a shell script's commands are held to
    the same check, and any other script whose text names a guarded place counts."""
    rule = {"must_match": pattern}
    reading = read_command(command, root)
    if reading is None:
        return [command] if _NAMES_GUARD.search(command) else []
    out = _script_writes(command, pattern, root, depth)
    out += [t for t in reading.targets if breaks_constraint(rule, normalise_path(t))]
    for folder, name in reading.sweeps:
        # A sample stands for a file, whatever its name looks like (``.git/config`` has no suffix).
        swept = [s for s in _GUARD_SAMPLES if name is None or fnmatch.fnmatchcase(posixpath.basename(s), name)]
        if any(sweep_covers(normalise_path(folder) or ".", None, s) for s in swept):
            out.append(f"{folder}/{name}" if name else folder)
    for word in reading.opaque:
        if _NAMES_GUARD.search(word):
            out.append(word)
    out += [f"{why}: it may write there" for glob, why in reading.unsure if _may_reach(glob, rule)]
    return list(dict.fromkeys(out))


def _script_writes(command: str, pattern: str, root: str | None, depth: int) -> list[str]:
    """What the scripts ``command`` runs by name (:func:`_scripts`) may write into guarded places."""
    out: list[str] = []
    for shown, kind, text, place in _scripts(simple_commands(command) or [], root, depth):
        if kind == "sh":
            # it runs where the line stands: its paths lead from there ("cd" first, read as the shell does)
            text = f"cd {shlex.quote(place)}\n{text}" if place else text
            out += [f"{shown} (its text writes {w})" for w in guarded_writes(text, pattern, root, depth + 1)]
        elif (m := _NAMES_GUARD.search(text)) is not None:
            place = m.group(0).strip(" '\"/=(,)\n\t")
            out.append(f"{shown} (its text names {place})")
    return out


# Guarded folders an unknown folder (``$D`` set in an earlier call, ``cd $D``) may stand for:
# intently's home and the folders in it, git's internals, Claude Code's settings folder.
_GUARD_FOLDERS = tuple(dict.fromkeys(posixpath.dirname(s) for s in _GUARD_SAMPLES))


def _may_reach(glob: str, rule: dict[str, str]) -> bool:
    """Whether a write the shell reader is unsure of (``glob``: its path with ``*`` for what no word
    gives) may land in a place ``rule`` guards. ``*`` is anywhere. ``*/keys`` (``rm -r $D/keys``)
    is a path under an unknown folder, which may be a guarded one (``export D=.intently`` in an
    earlier call, which one command cannot show): guarded when the path under a guarded folder is.
    A glob with a name pattern (``find $D -name '*.pyc' -delete``) is guarded when a file the
    guarded places hold matches it."""
    if glob == "*":
        return True
    tail = glob[2:] if glob.startswith("*/") else None
    if tail and not any(c in tail for c in "*?["):
        return any(breaks_constraint(rule, f"{folder}/{tail}") for folder in _GUARD_FOLDERS)
    return any(
        fnmatch.fnmatchcase(s.casefold(), glob.casefold()) and breaks_constraint(rule, s) for s in _GUARD_SAMPLES
    )
