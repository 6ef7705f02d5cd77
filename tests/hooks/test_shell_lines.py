"""The Bash line as the shell splits it, through Claude Code's hook, for the user's protection
("Do not edit src/app/config.py") and the hook's own guard (intently's home, git's internals).

The gate split a line with ``shlex``, which differs from the shell where it matters: a ``#``
inside a word started a comment (``rm -f x#y src/app/config.py`` was read as ``rm -f x``), a
newline joined two commands, ``);`` was one word, a pipeline's ``cd`` was carried on to the
commands after it and ``$F`` in single quotes was expanded. A trusted ``rm`` then removed the
protected file with no one asked. And ``git apply`` read its patch's paths from the shell's
folder, where git reads them from the repository's top.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from intently import Intently
from tests._config import set_config
from tests._git import git

from .conftest import Handler, HookRunner, event
from .test_excluded_paths import PROMPT, _answer, _files


def _bash(project: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=project, check=True, capture_output=True)


def _bash_call(project: Path, command: str) -> dict[str, Any]:
    tool = {"command": command, "description": "run"}
    return event("PreToolUse", project, tool_name="Bash", tool_input=tool, tool_use_id="toolu_01")


@pytest.mark.parametrize(
    "command",
    [
        "rm -f x#y src/app/config.py",
        "sed -i s/False/True/ notes#1.md src/app/config.py",
        "cp new#config.py src/app/config.py",
    ],
)
def test_a_hash_inside_a_word_hides_nothing_from_the_protection(
    ix: Intently, project: Path, handle: Handler, command: str
) -> None:
    """No operator: on the trusted list, these ran with no one asked and changed the protected file."""
    _files(project)
    set_config(ix.home.config_path, "hooks", "shell_trusted", '["rm", "sed", "cp"]')
    handle(event("UserPromptSubmit", project, prompt=PROMPT))
    decision, reason = _answer(handle(_bash_call(project, command)))
    assert decision == "deny", reason
    assert "the request says not to change src/app/config.py" in reason
    for name in ("new#config.py", "notes#1.md"):
        (project / name).write_text("DEBUG = True\n")
    _bash(project, command)  # what bash does with it: the protected file is changed or gone
    assert not (project / "src/app/config.py").exists() or "True" in (project / "src/app/config.py").read_text()


def test_a_hash_inside_a_word_hides_nothing_from_the_guard(ix: Intently, project: Path, handle: Handler) -> None:
    set_config(ix.home.config_path, "hooks", "shell_trusted", '["cp", "rm"]')
    handle(event("UserPromptSubmit", project, prompt="Fix tests/test_api.py."))
    for command in ("cp x#y .intently/intently.toml", "rm -f a#b .git/config"):
        decision, reason = _answer(handle(_bash_call(project, command)))
        assert decision == "deny" and "which the agent may not change" in reason, (command, reason)


# Lines with shell operators are refused anyway (no allow-list admits them); the reason must
# still say what the line does to the user's file, and did not: the rm was hidden.
HIDDEN_BY_THE_SPLIT = [
    "echo checking\nrm src/app/config.py",
    "cat README.md  # read it first\nrm -f src/app/config.py",
    "(cd tests; ls); rm src/app/config.py",
    "true;(cd tests; ls)&&rm src/app/config.py",
]


@pytest.mark.parametrize("command", HIDDEN_BY_THE_SPLIT)
def test_a_writer_the_split_hid_is_named(ix: Intently, project: Path, handle: Handler, command: str) -> None:
    _files(project)
    handle(event("UserPromptSubmit", project, prompt=PROMPT))
    decision, reason = _answer(handle(_bash_call(project, command)))
    assert decision == "deny", reason
    assert "the request says not to change src/app/config.py" in reason


@pytest.mark.parametrize(
    "command",
    [
        "cd src/app | true; rm -f config.py",  # a pipeline's cd: its own process
        "cd src/app & wait; rm -f config.py",  # a background job's too
        "F=src/app/config.py; rm -f '$F'",  # single quotes: no expansion
        "F=src/app/config.py; rm -f \\$F",
    ],
)
def test_a_line_that_leaves_the_protected_file_is_not_said_to_change_it(
    ix: Intently, project: Path, handle: Handler, command: str
) -> None:
    """The gate carried a pipeline's ``cd`` on and expanded ``$F`` in single quotes: lines bash
    runs without touching src/app/config.py were refused as changing it."""
    _files(project)
    handle(event("UserPromptSubmit", project, prompt=PROMPT))
    _, reason = _answer(handle(_bash_call(project, command)))
    assert "not to change" not in reason and "may change" not in reason, reason
    _bash(project, command)
    assert (project / "src" / "app" / "config.py").read_text() == "DEBUG = False\n"


def test_a_pipeline_cd_does_not_move_the_rm_after_it(ix: Intently, project: Path, run_hook: HookRunner) -> None:
    """Protected by its absolute path, the file was removed by a line whose pipeline ``cd /``
    the gate carried on: it read ``/src/app/config.py``, no path the user named."""
    _files(project)
    config = project / "src" / "app" / "config.py"
    prompt = f"Fix tests/test_api.py. Do not edit {config}."
    assert run_hook(event("UserPromptSubmit", project, prompt=prompt)).returncode == 0
    for command in ("cd / | true; rm src/app/config.py", "cd / & rm src/app/config.py"):
        decision, reason = _answer(run_hook(_bash_call(project, command)))
        assert decision == "deny" and f"not to change {config}" in reason, (command, reason)


def test_git_apply_in_a_folder_reads_the_patch_from_the_top(ix: Intently, project: Path, run_hook: HookRunner) -> None:
    """``git -C sub apply notes.patch`` (trusted git, no operator) changes ``sub/notes.txt``: git
    reads the patch's paths from the repository's top. The gate read ``sub/sub/notes.txt`` and
    let it run with no one asked, though the user protected the file by its absolute path."""
    (project / "sub").mkdir()
    notes = project / "sub" / "notes.txt"
    notes.write_text("a\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "files")
    notes.write_text("a\nb\n")
    (project / "sub" / "notes.patch").write_text(git(project, "diff"))
    git(project, "checkout", "--", ".")
    set_config(ix.home.config_path, "hooks", "shell_trusted", '["git"]')
    assert run_hook(event("UserPromptSubmit", project, prompt=f"Tidy the docs. Do not edit {notes}.")).returncode == 0
    decision, reason = _answer(run_hook(_bash_call(project, "git -C sub apply notes.patch")))
    assert decision == "deny" and f"not to change {notes}" in reason, reason
    git(project / "sub", "apply", "notes.patch")  # what git does: the protected file changes
    assert notes.read_text() == "a\nb\n"


@pytest.mark.parametrize(
    "command",
    ["true\nintently req accept --all", "ls x#y; intently req accept --all", "true;(intently req accept --all)"],
)
def test_the_guard_sees_a_person_only_command_the_split_hid(
    ix: Intently, project: Path, handle: Handler, command: str
) -> None:
    """Refused anyway for its operators, but as a plain shell line: the reason did not say that the
    line runs a command only the person may run (the guard's reading saw no ``intently`` there)."""
    set_config(ix.home.config_path, "hooks", "shell_trusted", '["intently", "true", "ls"]')
    handle(event("UserPromptSubmit", project, prompt="Fix tests/test_api.py."))
    decision, reason = _answer(handle(_bash_call(project, command)))
    assert decision == "deny" and "only the person may run" in reason, reason
