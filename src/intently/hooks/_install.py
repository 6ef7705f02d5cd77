"""``intently hook install claude``: merge our hook entries into ``.claude/settings.json``.

Other hooks and settings are kept as they are, in their order; running it again changes
nothing. An existing file that is not valid JSON is refused, untouched, with its path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import InvalidInput
from ..core.files import atomic_write

__all__ = ["CLAUDE_EVENTS", "InstallReport", "install_claude"]

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


@dataclass(frozen=True)
class InstallReport:
    settings: str
    added: tuple[str, ...]
    updated: tuple[str, ...]
    unchanged: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "added": list(self.added),
            "updated": list(self.updated),
            "unchanged": list(self.unchanged),
        }


def _ours(hook: Any) -> bool:
    return isinstance(hook, dict) and str(hook.get("command", "")).rstrip().endswith(_MARKER)


def install_claude(project: Path, command: str) -> InstallReport:
    """Write or refresh intently's entries for every event in :data:`CLAUDE_EVENTS`."""
    settings_path = project / ".claude" / "settings.json"
    data: dict[str, Any] = {}
    if settings_path.exists():
        try:
            loaded = json.loads(settings_path.read_text(encoding="utf-8") or "{}")
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"not valid JSON (line {exc.lineno}): {exc.msg}", where=str(settings_path)) from exc
        if not isinstance(loaded, dict):
            raise InvalidInput("the settings file must hold a JSON object", where=str(settings_path))
        data = loaded
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput("'hooks' must be an object", where=f"{settings_path}: hooks")
    wanted = {"type": "command", "command": f"{command} {_MARKER}", "timeout": _TIMEOUT_S}
    added: list[str] = []
    updated: list[str] = []
    unchanged: list[str] = []
    for event, matcher in CLAUDE_EVENTS.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidInput("must be a list of matcher groups", where=f"{settings_path}: hooks.{event}")
        found = None
        for group in groups:
            for index, hook in enumerate(group.get("hooks", []) if isinstance(group, dict) else []):
                if _ours(hook):
                    found = (group, index)
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
    if added or updated:
        atomic_write(settings_path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return InstallReport(str(settings_path), tuple(added), tuple(updated), tuple(unchanged))
