"""``intently hook install claude``: merge our hook entries into ``.claude/settings.json``.

Other tools' valid hooks and every other setting are kept as they are, in their order;
running it again changes nothing. Our entry appears once per event: copies of it (a
hand-merged file, an older install under another matcher) are removed, since Claude Code
would run each copy and the gate would then decide every tool call twice.

A hook entry Claude Code cannot use (a group that is not an object, ``hooks`` that is not a
list, a hook without a ``type`` or a command hook without a ``command``) is removed and named
by its key path, so the user learns what was wrong instead of Claude Code rejecting the
file, or skipping the entry, without a word. Whenever the file changes, the previous bytes
are kept beside it as ``settings.json.bak`` and the new file replaces the old in one rename.
An existing file that is not valid JSON, or whose ``hooks`` are not shaped as Claude Code
reads them at all, is refused untouched, with its path.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import InvalidInput
from ..core.files import atomic_write

__all__ = ["CLAUDE_EVENTS", "InstallReport", "install_claude", "interpreter_command"]

#: Event -> matcher (None: the event takes no matcher).
CLAUDE_EVENTS: dict[str, str | None] = {
    "SessionStart": "startup|resume|clear|compact",
    "UserPromptSubmit": None,
    "PreToolUse": "*",
    "PostToolUse": "*",
    "Stop": None,
    "SessionEnd": None,
}
_MARKER = "hook claude"
_TIMEOUT_S = 30


# What a Windows hook command cannot hold inside double quotes and mean the same to both shells
# Claude Code may run it with (Git Bash: "$", "`" and "!" expand; cmd.exe: "%" expands; a quote
# ends the quoting in both).
_WINDOWS_UNSAFE = frozenset('"$`%!')


def interpreter_command(executable: str, *, windows: bool) -> str:
    """``executable`` running the hooks' entry point (``-m intently.hooks``), quoted for the shell
    Claude Code runs hook commands with.

    POSIX: ``sh -c`` reads it, so :func:`shlex.quote`. Windows: Claude Code runs hooks through
    Git Bash when it finds it and through ``cmd.exe`` otherwise, and the two quote differently:
    ``shlex.quote``'s single quotes mean nothing to ``cmd.exe``, and
    :func:`subprocess.list2cmdline` leaves a path without spaces unquoted, whose backslashes
    Bash then eats (``C:\\Python\\python.exe`` runs ``C:Pythonpython.exe``). The path in
    double quotes with forward slashes (which Windows accepts) reads the same to both. A path
    holding a character either shell would still expand is refused, naming ``--command``,
    rather than installed: a hook command that fails to start lets every tool call through.
    ``windows`` is a parameter, not ``os.name``, so the Windows branch is tested on Linux."""
    if not windows:
        return f"{shlex.quote(executable)} -m intently.hooks"
    unsafe = sorted(set(executable) & _WINDOWS_UNSAFE)
    if unsafe:
        raise InvalidInput(
            f"the Python path {executable!r} holds {' '.join(unsafe)}, which Git Bash or cmd.exe would "
            "expand in a hook command; pass --command with the command quoted for your shell",
            where="--command",
        )
    forward = executable.replace("\\", "/")
    return f'"{forward}" -m intently.hooks'


@dataclass(frozen=True)
class InstallReport:
    """What the install did; ``malformed`` and ``duplicates`` name key paths in the file."""

    settings: str
    added: tuple[str, ...]
    updated: tuple[str, ...]
    unchanged: tuple[str, ...]
    malformed: tuple[str, ...] = ()
    duplicates: tuple[str, ...] = ()
    backup: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "added": list(self.added),
            "updated": list(self.updated),
            "unchanged": list(self.unchanged),
            "malformed": list(self.malformed),
            "duplicates": list(self.duplicates),
            "backup": self.backup,
        }


def _ours(hook: Any) -> bool:
    return isinstance(hook, dict) and str(hook.get("command", "")).rstrip().endswith(_MARKER)


def _hook_problem(hook: Any) -> str | None:
    """Why Claude Code cannot use this hook entry (None: it can, or it is not ours to judge)."""
    if not isinstance(hook, dict):
        return "a hook must be an object"
    kind = hook.get("type")
    if not isinstance(kind, str) or not kind.strip():
        return "a hook needs a 'type' (e.g. \"command\")"
    if kind == "command" and not (isinstance(hook.get("command"), str) and hook["command"].strip()):
        return "a command hook needs a non-empty 'command'"
    timeout = hook.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0):
        return "'timeout' must be a positive number of seconds"
    return None


def _group_problem(group: Any) -> str | None:
    """Why a matcher group is unusable as a whole (None: it is an object with a hook list)."""
    if not isinstance(group, dict):
        return "a matcher group must be an object"
    if "matcher" in group and not isinstance(group["matcher"], str):
        return "'matcher' must be a string"
    if not isinstance(group.get("hooks"), list):
        return "a matcher group needs a 'hooks' list"
    return None


def _clean(event: str, groups: list[Any], malformed: list[str], duplicates: list[str]) -> list[Any]:
    """``groups`` without unusable entries and with our entry once (the first); each removal
    is named by its key path. A group emptied by these removals goes too; one the user left
    empty stays."""
    kept: list[Any] = []
    seen_ours = False
    for g, group in enumerate(groups):
        where = f"hooks.{event}[{g}]"
        problem = _group_problem(group)
        if problem is not None:
            malformed.append(f"{where}: {problem}")
            continue
        hooks: list[Any] = []
        for h, hook in enumerate(group["hooks"]):
            problem = _hook_problem(hook)
            if problem is not None:
                malformed.append(f"{where}.hooks[{h}]: {problem}")
            elif _ours(hook) and seen_ours:
                duplicates.append(f"{where}.hooks[{h}]")
            else:
                seen_ours = seen_ours or _ours(hook)
                hooks.append(hook)
        if hooks or not group["hooks"]:
            kept.append(group if len(hooks) == len(group["hooks"]) else {**group, "hooks": hooks})
    return kept


def _load(settings_path: Path) -> tuple[bytes | None, dict[str, Any]]:
    """The file's bytes (None when there is none) and its JSON object."""
    if not settings_path.exists():
        return None, {}
    raw = settings_path.read_bytes()
    try:
        loaded = json.loads(raw.decode("utf-8") or "{}")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"not UTF-8 text (byte {exc.start})", where=str(settings_path)) from exc
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not valid JSON (line {exc.lineno}): {exc.msg}", where=str(settings_path)) from exc
    if not isinstance(loaded, dict):
        raise InvalidInput("the settings file must hold a JSON object", where=str(settings_path))
    return raw, loaded


def install_claude(project: Path, command: str) -> InstallReport:
    """Write or refresh intently's entries for every event in :data:`CLAUDE_EVENTS`."""
    settings_path = project / ".claude" / "settings.json"
    original, data = _load(settings_path)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput("'hooks' must be an object", where=f"{settings_path}: hooks")
    for event, groups in hooks.items():  # checked before anything changes: a refusal leaves the file whole
        if not isinstance(groups, list):
            raise InvalidInput("must be a list of matcher groups", where=f"{settings_path}: hooks.{event}")
    malformed: list[str] = []
    duplicates: list[str] = []
    for event in list(hooks):
        hooks[event] = _clean(event, hooks[event], malformed, duplicates)
    wanted = {"type": "command", "command": f"{command} {_MARKER}", "timeout": _TIMEOUT_S}
    added: list[str] = []
    updated: list[str] = []
    unchanged: list[str] = []
    for event, matcher in CLAUDE_EVENTS.items():
        groups = hooks.setdefault(event, [])
        found = next(
            ((group, index) for group in groups for index, hook in enumerate(group["hooks"]) if _ours(hook)), None
        )
        if found is None:
            group_new: dict[str, Any] = {"hooks": [wanted]}
            if matcher is not None:
                group_new = {"matcher": matcher, **group_new}
            groups.append(group_new)
            added.append(event)
        elif found[0]["hooks"][found[1]] != wanted:
            found[0]["hooks"][found[1]] = wanted
            updated.append(event)
        else:
            unchanged.append(event)
    backup: str | None = None
    if added or updated or malformed or duplicates:
        if original is not None:  # the user's own bytes, kept before the only write that replaces them
            backup_path = settings_path.with_name(settings_path.name + ".bak")
            atomic_write(backup_path, original)
            backup = str(backup_path)
        atomic_write(settings_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return InstallReport(
        str(settings_path),
        tuple(added),
        tuple(updated),
        tuple(unchanged),
        tuple(malformed),
        tuple(duplicates),
        backup,
    )
