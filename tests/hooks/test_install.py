"""``intently hook install claude`` merges into .claude/settings.json and is idempotent."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from intently import Intently, InvalidInput
from intently.hooks import CLAUDE_EVENTS
from intently.hooks._install import interpreter_command

from .conftest import INTENTLY, run_command
from .conftest import event as hook_event


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


def test_install_removes_malformed_entries_and_names_them_keeping_a_backup(tmp_path: Path) -> None:
    """A hand-edited settings file with broken hook entries: they used to be kept as they were
    (Claude Code then rejects or skips them without a word to the user); now each is removed
    and named by its key path, other tools' valid hooks stay, and the user's bytes are kept."""
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {"type": "command", "command": "./scripts/lint.sh"}
    original = json.dumps(
        {
            "hooks": {
                "PreToolUse": [
                    "not a group",
                    {"matcher": "Write|Edit", "hooks": [theirs, {"type": "command"}, 7]},
                    {"matcher": "Bash", "hooks": {"type": "command", "command": "x"}},
                ],
                "Notification": [{"hooks": [{"command": "notify-send hi"}]}],
            },
        },
        indent=4,
    )
    settings.write_text(original)
    done = _install(tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["malformed"] == [
        "hooks.PreToolUse[0]: a matcher group must be an object",
        "hooks.PreToolUse[1].hooks[1]: a command hook needs a non-empty 'command'",
        "hooks.PreToolUse[1].hooks[2]: a hook must be an object",
        "hooks.PreToolUse[2]: a matcher group needs a 'hooks' list",
        "hooks.Notification[0].hooks[0]: a hook needs a 'type' (e.g. \"command\")",
    ]
    data = json.loads(settings.read_text())
    pre = data["hooks"]["PreToolUse"]
    assert pre[0] == {"matcher": "Write|Edit", "hooks": [theirs]}
    assert pre[1]["hooks"][0]["command"].endswith("hook claude") and len(pre) == 2
    assert data["hooks"]["Notification"] == []
    assert report["backup"] == str(settings) + ".bak"
    assert Path(report["backup"]).read_text() == original
    # Said in plain words too, with the path of each entry removed.
    again = subprocess.run(
        [INTENTLY, "hook", "install", "claude", "--project", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 0 and "removed a malformed entry" not in again.stdout


def test_install_keeps_our_hook_once_per_event(tmp_path: Path) -> None:
    """Two copies of intently's hook in one event (a hand-merged file, an install under another
    matcher) made Claude Code run the hook twice per tool call; re-installing kept both."""
    assert _install(tmp_path).returncode == 0
    settings = tmp_path / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    ours = data["hooks"]["PreToolUse"][0]["hooks"][0]
    data["hooks"]["PreToolUse"].append({"matcher": "Bash", "hooks": [{"type": "command", "command": "b"}, ours]})
    data["hooks"]["Stop"][0]["hooks"].append(dict(ours))
    settings.write_text(json.dumps(data))
    done = _install(tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["duplicates"] == ["hooks.PreToolUse[1].hooks[1]", "hooks.Stop[0].hooks[1]"]
    after = json.loads(settings.read_text())["hooks"]
    for event in CLAUDE_EVENTS:
        commands = [h["command"] for g in after[event] for h in g["hooks"]]
        assert sum(c.endswith("hook claude") for c in commands) == 1, event
    assert after["PreToolUse"][1] == {"matcher": "Bash", "hooks": [{"type": "command", "command": "b"}]}
    # And the file is stable from there on.
    assert json.loads(_install(tmp_path).stdout)["duplicates"] == []


def test_install_refuses_a_hooks_table_of_the_wrong_shape_untouched(tmp_path: Path) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {"Stop": {"hooks": []}}}')
    done = _install(tmp_path)
    assert done.returncode == 2
    assert "hooks.Stop" in done.stderr
    assert settings.read_text() == '{"hooks": {"Stop": {"hooks": []}}}'
    assert not (settings.parent / "settings.json.bak").exists()


def _bash_words(command: str) -> list[str]:
    """The words a real Bash (what Claude Code runs hook commands with on Windows when it finds
    Git Bash, as on Linux and macOS) reads ``command`` as."""
    shown = subprocess.run(["bash", "-c", f"printf '%s\\n' {command}"], capture_output=True, text=True, check=True)
    return shown.stdout.splitlines()


@pytest.mark.parametrize(
    "python",
    [
        r"C:\Users\Jane Doe\AppData\Local\Programs\Python\Python312\python.exe",
        r"C:\Python312\python.exe",  # no space: subprocess.list2cmdline leaves it bare, and Bash eats "\"
        r"D:\proj\.venv\Scripts\python.exe",
    ],
)
def test_the_windows_hook_command_reads_the_same_in_bash_and_cmd(python: str) -> None:
    """The default hook command on Windows was quoted the POSIX way ('C:\\...\\python.exe'),
    which cmd.exe does not read as quoting at all. It is now the path in double quotes with
    forward slashes: one word to Git Bash (checked here with a real bash) and to cmd.exe."""
    command = interpreter_command(python, windows=True)
    forward = python.replace("\\", "/")
    assert command == f'"{forward}" -m intently.hooks'
    assert _bash_words(command) == [forward, "-m", "intently.hooks"]


@pytest.mark.parametrize("python", [r"C:\Users\100%\python.exe", r"C:\Users\$env\python.exe", "C:\\a`b\\python.exe"])
def test_a_windows_python_path_a_shell_would_expand_is_refused_not_installed(python: str) -> None:
    """A hook command that fails to start lets every tool call through: such a path is refused,
    naming --command, instead of being installed."""
    with pytest.raises(InvalidInput) as caught:
        interpreter_command(python, windows=True)
    assert caught.value.where == "--command"


def test_the_posix_hook_command_is_one_word_to_sh(tmp_path: Path) -> None:
    python = str(tmp_path / "it's a venv" / "bin" / "python")
    command = interpreter_command(python, windows=False)
    assert _bash_words(command) == [python, "-m", "intently.hooks"]


def test_install_before_init_warns_that_every_tool_call_will_be_blocked(tmp_path: Path) -> None:
    """Hooks installed where no home is found block each tool call (fail closed); a new user who
    ran `hook install` before `intently init` was told nothing and met an agent that could do nothing."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    argv = [INTENTLY, "hook", "install", "claude", "--project", str(tmp_path), "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr  # the hooks are installed all the same: `init` is the fix
    assert json.loads(done.stdout)["home"] is None
    (warning,) = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert str(tmp_path) in warning and "`intently init`" in warning and "blocked" in warning
    read = hook_event("PreToolUse", tmp_path, tool_name="Read", tool_input={"file_path": str(tmp_path / "a.py")})
    assert run_command([INTENTLY, "hook", "claude"], read, cwd=tmp_path).returncode == 2  # what it warned of

    Intently.init(tmp_path, actor="user:alice").close()
    again = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["home"] == str(tmp_path / ".intently")
    assert "warning" not in again.stderr
