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

import fnmatch
import posixpath
import re
from collections.abc import Sequence

from ._contracts import breaks_constraint
from ._paths import _OPERATORS, normalise_path, read_command, shell_words, sweep_covers

__all__ = ["READ_ONLY", "guarded_writes", "intently_acts", "simple_commands"]

#: The intently commands that change nothing, by group ("" for top-level commands). Checked
#: against the CLI's command tree (tests/gate/test_selfguard.py): anything else is refused.
READ_ONLY: dict[str, frozenset[str]] = {
    "": frozenset({"whoami", "grants", "context"}),
    "goal": frozenset({"list", "queue", "show"}),
    "req": frozenset({"list", "show", "validate"}),
    "trigger": frozenset({"list", "show"}),
    "log": frozenset({"show", "verify", "proof", "consistency", "verify-proof", "verify-checkpoint"}),
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


def simple_commands(command: str, depth: int = 0) -> list[list[str]] | None:
    """Every simple command a shell command runs, each as its words from the program on (prefixes
    such as ``env``, ``sudo``, ``xargs`` taken off; ``sh -c``/``bash -c``/``eval`` text read
    too; ``$(...)`` and backticks read as commands of their own). ``None`` when it does not split."""
    words = shell_words(command)
    if words is None or depth > _MAX_DEPTH:
        return None
    out: list[list[str]] = []
    segment: list[str] = []

    def done() -> bool:
        run = _unwrap(segment)
        segment.clear()
        if not run:
            return True
        program = posixpath.basename(run[0])
        inner = _inner_text(program, run[1:])
        if inner is not None:
            nested = simple_commands(inner, depth + 1)
            if nested is None:
                return False
            out.extend(nested)
        out.append(run)
        return True

    i = 0
    while i < len(words):
        raw = words[i]
        word = raw.strip("`")
        if raw in _OPERATORS or raw == "$":
            if not done():
                return None
        elif _REDIRECT.fullmatch(raw):
            i += 1  # the redirect's target is not a word of the command
        else:
            # a backtick opens or closes a command of its own (`intently log checkpoint`)
            if raw.startswith("`") and not done():
                return None
            if word:
                segment.append(word)
            if raw.endswith("`") and (len(raw) > 1 or not word) and not done():
                return None
        i += 1
    return out if done() else None


def _unwrap(words: Sequence[str]) -> list[str]:
    """The words from the program on: ``FOO=1``, ``env -i``, ``sudo -u x``, ``timeout 5``,
    ``xargs -n 1`` and launchers (``uvx``, ``uv run``, ``pipx run``) taken off."""
    run = list(words)
    while run:
        head = posixpath.basename(run[0])
        if "=" in run[0] and not run[0].startswith("-"):
            run = run[1:]
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


def _intently_args(words: Sequence[str]) -> list[str] | None:
    """The arguments given to intently's CLI when ``words`` run it, else ``None``."""
    program = posixpath.basename(words[0])
    if program == "intently":
        return list(words[1:])
    if _PYTHON.fullmatch(program):
        for i, a in enumerate(words[1:], start=1):
            if a == "-m" and i + 1 < len(words):
                return list(words[i + 2 :]) if words[i + 1].split(".")[0] == "intently" else None
            if a.startswith("-m") and len(a) > 2:
                return list(words[i + 1 :]) if a[2:].split(".")[0] == "intently" else None
            if not a.startswith("-"):
                return None
    return None


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


def intently_acts(command: str) -> list[str]:
    """The commands in ``command`` that run intently other than read-only (``intently req accept
    --all``, ``sh -c 'python -m intently review confirm X'``, ``python -c 'import intently; ...'``).
    A command that does not split but names intently counts whole (fail closed)."""
    runs = simple_commands(command)
    if runs is None:
        return [command] if re.search(r"\bintently\b", command) else []
    out: list[str] = []
    for words in runs:
        args = _intently_args(words)
        if args is not None and not _read_only(args):
            out.append(" ".join(words))
        elif args is None and _PYTHON.fullmatch(posixpath.basename(words[0])) and _IMPORTS_INTENTLY.search(command):
            out.append(" ".join(words))  # a program that imports intently: what it calls cannot be read
    return list(dict.fromkeys(out))


def guarded_writes(command: str, pattern: str, root: str | None = None) -> list[str]:
    """The places ``command`` may write that the path ``pattern`` (a ``must_match`` of the file
    tools' guard) refuses: a redirect's, ``cp``'s, ``tee``'s, ``sed -i``'s... target, a file a
    patch it applies changes (read from ``root``, the folder it runs in), a folder it sweeps that
    holds one, and a guarded path among the words of a program whose writes cannot be traced
    (``python -c "open('.intently/x', 'w')"``). Unsplittable text naming one counts, and so does
    a write that may land anywhere (a patch the gate cannot read, ``cd $DIR && rm -rf .``): its
    words cannot show that it spares intently's home."""
    rule = {"must_match": pattern}
    reading = read_command(command, root)
    if reading is None:
        return [command] if _NAMES_GUARD.search(command) else []
    out = [t for t in reading.targets if breaks_constraint(rule, normalise_path(t))]
    for folder, name in reading.sweeps:
        # A sample stands for a file, whatever its name looks like (``.git/config`` has no suffix).
        swept = [s for s in _GUARD_SAMPLES if name is None or fnmatch.fnmatchcase(posixpath.basename(s), name)]
        if any(sweep_covers(normalise_path(folder) or ".", None, s) for s in swept):
            out.append(f"{folder}/{name}" if name else folder)
    for word in reading.opaque:
        if _NAMES_GUARD.search(word):
            out.append(word)
    out += [f"{why}: it may write there" for glob, why in reading.unsure if glob == "*"]
    return list(dict.fromkeys(out))
