"""``intently hook install claude`` merges into .claude/settings.json and is idempotent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from intently.hooks import CLAUDE_EVENTS

from .conftest import INTENTLY


def _install(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [INTENTLY, "hook", "install", "claude", "--project", str(project), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_install_keeps_existing_hooks_and_settings(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {"type": "command", "command": "./scripts/lint.sh"}
    settings.write_text(
        json.dumps(
            {
                "permissions": {"allow": ["Bash(npm test)"]},
                "hooks": {"PreToolUse": [{"matcher": "Write|Edit", "hooks": [theirs]}]},
            }
        )
    )
    done = _install(tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(report["added"]) == sorted(CLAUDE_EVENTS)
    data = json.loads(settings.read_text())
    assert data["permissions"] == {"allow": ["Bash(npm test)"]}
    pre = data["hooks"]["PreToolUse"]
    assert pre[0] == {"matcher": "Write|Edit", "hooks": [theirs]}
    ours = pre[1]["hooks"][0]
    assert ours["type"] == "command" and ours["command"].endswith("hook claude")
    assert "matcher" not in data["hooks"]["UserPromptSubmit"][0]


def test_install_twice_changes_nothing(tmp_path: Path) -> None:
    assert _install(tmp_path).returncode == 0
    before = (tmp_path / ".claude" / "settings.json").read_text()
    again = _install(tmp_path)
    assert again.returncode == 0
    assert json.loads(again.stdout)["added"] == []
    assert sorted(json.loads(again.stdout)["unchanged"]) == sorted(CLAUDE_EVENTS)
    assert (tmp_path / ".claude" / "settings.json").read_text() == before


def test_install_refuses_broken_settings_and_leaves_them(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {,}')
    done = _install(tmp_path)
    assert done.returncode == 2
    assert "settings.json" in done.stderr and "not valid JSON" in done.stderr
    assert settings.read_text() == '{"hooks": {,}'


def test_install_tells_the_user_which_setting_lets_bash_run(tmp_path: Path) -> None:
    done = subprocess.run(
        [INTENTLY, "hook", "install", "claude", "--project", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "added SessionStart" in done.stdout
    assert "[hooks] shell_allowlist" in " ".join(done.stdout.split())
