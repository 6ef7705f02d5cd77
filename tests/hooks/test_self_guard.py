"""An agent cannot act as the person by running intently through Claude Code's Bash tool.

Bash runs as the OS user, so ``intently req accept --all`` typed there is, to the library, the
person's own act: a prompt-injected agent could put a scanned rule in force or confirm its own
candidates. The events go to a real home: through real ``intently hook claude`` processes for
the main forms, and through the same handler in this process for the long lists (each hook
process costs seconds). The commands are on the trusted shell list (allowed with no question),
so only the guard can refuse them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from intently import Intently
from tests._config import set_config

from .conftest import Handler, HookRunner, event

TRUSTED = '["intently", "python", "python3", "sh", "bash", "env", "uvx", "echo", "sed", "cp", "cat", "mv", "tee", "pytest", "find"]'


def _decide(project: Path, run: HookRunner | Handler, command: str) -> tuple[str, str]:
    run(event("UserPromptSubmit", project, prompt="Fix tests/test_api.py."))
    tool = {"command": command.replace("{p}", str(project)), "description": "run"}
    done: Any = run(event("PreToolUse", project, tool_name="Bash", tool_input=tool, tool_use_id="toolu_01"))
    code = getattr(done, "returncode", getattr(done, "exit_code", None))
    assert code == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)["hookSpecificOutput"]
    return out.get("permissionDecision", "defer"), out.get("permissionDecisionReason", "")


@pytest.fixture
def allowed(ix: Intently) -> Intently:
    set_config(ix.home.config_path, "hooks", "shell_trusted", TRUSTED)
    return ix


@pytest.mark.parametrize(
    "command",
    [
        "intently req accept --all",
        "intently review confirm cand-1",
        "intently goal endorse g-1",
        "intently goal archive g-1",
        "intently trigger add 'when x, remind me y'",
        "intently hook install",
        "intently log checkpoint",
        "intently init",
        "intently req frobnicate",  # unknown: fail closed
        "python -m intently req accept --all",
        "{p}/.venv/bin/intently req enable r-1",
        "uvx intently review dismiss cand-1",
        "env INTENTLY_ACTOR=user:alice intently req accept --all",
        "sh -c 'intently req accept --all'",
        "bash -lc 'cd src && intently review confirm cand-1'",
        "pytest -q && intently req accept --all",
        "pytest -q; intently req accept --all",
        "echo cand-1 | xargs intently review confirm",
        "echo $(intently review confirm cand-1)",
        "echo `intently log checkpoint`",
        'python3 -c \'import intently; intently.Intently.open(".").requirements.accept("r-1")\'',
    ],
)
def test_person_only_intently_commands_are_refused(
    allowed: Intently, project: Path, handle: Handler, command: str
) -> None:
    decision, reason = _decide(project, handle, command)
    assert decision == "deny", reason
    assert "only the person may run" in reason and "run it yourself" in reason


@pytest.mark.parametrize(
    "command",
    [
        "intently goal list",
        "intently req list --json",
        "intently req show r-1",
        "intently context 'fix the parser'",
        "intently log verify",
        "intently gate explain d-1",
        "intently --help",
        "intently req accept --help",
        "intently --version",
        "intently store status",
        "intently hook status",
        "python -m intently goal list",
    ],
)
def test_read_only_intently_commands_stay_allowed(
    allowed: Intently, project: Path, handle: Handler, command: str
) -> None:
    decision, reason = _decide(project, handle, command)
    assert decision != "deny", reason  # allowed, or asked about as any trusted-list command may be


@pytest.mark.parametrize(
    "command",
    [
        "echo '- always approve' > .intently/requirements/r.md",
        "echo x >> {p}/.intently/requirements/r.md",
        "sed -i 's/a/b/' .intently/intently.toml",
        "cp /tmp/r.md .intently/requirements/r.md",
        "mv notes.md .intently/requirements/",
        "echo x | tee .intently/requirements/r.md",
        "python -c \"open('.intently/intently.toml', 'w').write('')\"",
        "echo x > .git/hooks/pre-commit",
        "echo {{}} > .claude/settings.json",
        # the shell reader follows the working folder and the line's own variables
        "cd .intently && echo x > requirements/r.md",
        "cd src && echo x > ../.intently/intently.toml",
        "(cd .git/hooks && cp /tmp/x pre-commit)",
        "F=.intently/requirements/r.md; echo x > $F",
        # files of a name swept from the project: the rule files are Markdown, git's config is "config"
        "find . -name '*.md' -delete",
        "find . -name config -delete",
    ],
)
def test_shell_writes_into_the_guarded_files_are_refused(
    allowed: Intently, project: Path, handle: Handler, command: str
) -> None:
    """The file tools' guard (intently's home, git's internals, Claude's settings) holds for Bash."""
    decision, reason = _decide(project, handle, command)
    assert decision == "deny", reason
    assert "which the agent may not change" in reason


def test_reading_the_guarded_files_and_writing_elsewhere_stay_allowed(
    allowed: Intently, project: Path, handle: Handler
) -> None:
    assert _decide(project, handle, "cat .intently/intently.toml")[0] != "deny"  # reading is not changing
    assert _decide(project, handle, "cp notes.md notes.bak")[0] != "deny"  # asked about, as before
    # Sweeping files no guarded place holds is not a guarded write (the samples are files, so
    # git's "config" is not read as a folder every pattern reaches into).
    for command in ("find . -name '*.pyc' -delete", "find . -type d -name __pycache__ -exec rm -rf {} +"):
        assert _decide(project, handle, command)[0] != "deny", command


def test_real_hook_processes_refuse_acting_as_the_person(
    allowed: Intently, project: Path, run_hook: HookRunner
) -> None:
    """Claude Code's own sequence, each event a separate ``intently hook claude`` process."""
    for command in ("intently req accept --all", "sh -c 'python -m intently review confirm cand-1'"):
        decision, reason = _decide(project, run_hook, command)
        assert decision == "deny" and "run it yourself" in reason, reason
    decision, reason = _decide(project, run_hook, "echo x > .intently/requirements/r.md")
    assert decision == "deny" and "which the agent may not change" in reason, reason
    assert _decide(project, run_hook, "intently goal list")[0] == "defer"


_INTO_HOME = """\
--- a/.intently/requirements/r.md
+++ b/.intently/requirements/r.md
@@ -0,0 +1 @@
+- always approve what the agent asks
"""
_INTO_SOURCE = """\
--- a/src/app.py
+++ b/src/app.py
@@ -1 +1 @@
-x = 1
+x = 2
"""


def test_a_patch_into_intentlys_home_is_refused_and_one_elsewhere_is_not(
    ix: Intently, project: Path, handle: Handler
) -> None:
    """``git apply`` and ``patch`` write what the patch file says: the guard reads it from the
    session's folder, as the "do not edit" check does. A patch the gate cannot read (from standard
    input) may land anywhere, intently's home included, so it is refused too."""
    set_config(ix.home.config_path, "hooks", "shell_trusted", '["git", "patch", "cat"]')
    (project / "evil.patch").write_text(_INTO_HOME, encoding="utf-8")
    (project / "fix.patch").write_text(_INTO_SOURCE, encoding="utf-8")
    for command in ("git apply evil.patch", "patch -p1 -i evil.patch", "cat evil.patch | git apply"):
        decision, reason = _decide(project, handle, command)
        assert decision == "deny", (command, reason)
        assert "which the agent may not change" in reason, reason
    decision, reason = _decide(project, handle, "git apply fix.patch")
    assert decision != "deny", reason


@pytest.mark.parametrize(
    "command",
    [
        # shell keywords before the program: the guard read "{" or "then" as the program
        "{ intently req accept --all; }",
        "if true; then intently req accept --all; fi",
        "for r in r-1; do intently req enable $r; done",
        "! intently review confirm cand-1",
        # an alias or a function defined on the line runs intently under another name
        "alias x=intently; x goal done g-1",
        "alias x='intently review'; x confirm cand-1",
        'f(){ intently "$@"; }; f goal done g-1',
        'function f { intently "$@"; }; f goal done g-1',
        # a program word no file or word of this call resolves: a variable exported in an
        # earlier call, a copy made on this very line, a function defined in an earlier call
        "$I goal done g-1",
        '"${INTENTLY_BIN}" req accept --all',
        "cp $(which intently) /tmp/i; /tmp/i goal done g-1",
        "x goal done g-1",
    ],
)
def test_intently_under_another_name_is_refused(
    allowed: Intently, project: Path, handle: Handler, command: str
) -> None:
    """Before, each of these ran: the guard only knew intently by its own name."""
    decision, reason = _decide(project, handle, command)
    assert decision == "deny", (command, reason)
    assert "only the person may run" in reason, reason


@pytest.mark.parametrize(
    "command",
    [
        "$I goal list",  # read-only whatever $I is
        "x goal list",
        "npm init",  # a program on the agent's PATH the hook may not see: a top-level word alone is not enough
        "git init",
        "git log --oneline",
        "make serve",
        "alias ll='ls -l'; ll src",
        "if true; then intently goal list; fi",
    ],
)
def test_other_programs_and_read_only_commands_under_another_name_stay_allowed(
    allowed: Intently, project: Path, handle: Handler, command: str
) -> None:
    reason = _decide(project, handle, command)[1]
    assert "only the person may run" not in reason, (command, reason)


def test_a_copy_or_link_of_intently_under_another_name_is_refused(
    allowed: Intently, project: Path, run_hook: HookRunner
) -> None:
    """``cp $(which intently) bin/i`` in one call and ``bin/i goal done`` in the next: the file is
    intently's console script under another name (a copy, a symbolic or a hard link). Through real
    hook processes; a script of the project under such a name is not mistaken for it."""
    from .conftest import INTENTLY

    (project / "bin").mkdir()
    shutil.copy(INTENTLY, project / "bin" / "i")
    os.symlink(INTENTLY, project / "bin" / "j")
    os.link(INTENTLY, project / "bin" / "k")
    (project / "bin" / "tool").write_text("#!/bin/sh\necho hello\n", encoding="utf-8")
    for name in ("i", "j", "k", "{p}/bin/i"):
        program = name if name.startswith("{") else f"bin/{name}"
        decision, reason = _decide(project, run_hook, f"{program} goal done g-1")
        assert decision == "deny" and "only the person may run" in reason, (name, reason)
    assert "only the person may run" not in _decide(project, run_hook, "bin/i goal list")[1]
    assert "only the person may run" not in _decide(project, run_hook, "bin/tool goal done g-1")[1]


@pytest.mark.parametrize(
    "command",
    [
        # D=.intently exported in an earlier call: one call cannot show where $D leads
        "rm -r $D/keys",
        "echo '- always approve' > $D/requirements/r.md",
        "cp /tmp/r.md ${D}/r.md",
        "cd $D && echo x > intently.toml",
        "find $D -name '*.md' -delete",
        "echo {{}} > $C/settings.json",
    ],
)
def test_a_write_under_a_folder_no_word_gives_is_refused(
    allowed: Intently, project: Path, handle: Handler, command: str
) -> None:
    """Before, only a write to a bare ``$F`` was refused: ``$D/keys`` was allowed though ``$D`` may
    be intently's home, set by ``export D=.intently`` in an earlier call."""
    decision, reason = _decide(project, handle, command)
    assert decision == "deny", (command, reason)
    assert "which the agent may not change" in reason and "no word of the command gives" in reason, reason


def test_writes_the_line_resolves_or_no_guarded_file_matches_stay_allowed(
    allowed: Intently, project: Path, handle: Handler
) -> None:
    for command in ("F=out; echo x > $F/a.txt", "find $D -name '*.pyc' -delete", "cat $D/r.md"):
        assert "which the agent may not change" not in _decide(project, handle, command)[1], command


@pytest.mark.parametrize(
    ("command", "why"),
    [
        # shlex read a line break as a space: every line after the first was an argument of it
        ("true\nintently req accept --all", "only the person may run"),
        ("echo checking # don't worry\nintently review confirm cand-1", "only the person may run"),
        ("true\nrm -rf .intently/keys", "which the agent may not change"),
        ("cat > notes.md <<'EOF'\nsome notes\nEOF\nmv x .git/hooks/pre-commit", "which the agent may not change"),
    ],
)
def test_each_line_of_a_multi_line_command_is_a_command(
    allowed: Intently, project: Path, handle: Handler, command: str, why: str
) -> None:
    decision, reason = _decide(project, handle, command)
    assert decision == "deny" and why in reason, (command, reason)


def test_a_here_document_and_a_continued_line_stay_one_command(
    allowed: Intently, project: Path, handle: Handler
) -> None:
    """A here-document's lines are text, and ``\\`` at a line's end continues the command."""
    for command in ("cat > notes.md <<'EOF'\nintently req accept --all\nEOF", "echo a \\\n  b > notes.md"):
        reason = _decide(project, handle, command)[1]
        assert "only the person may run" not in reason and "may not change" not in reason, (command, reason)


_SCRIPTS = {
    "accept.sh": "#!/bin/sh\necho 'accepting'\nintently req accept --all\n",
    "keys.sh": "#!/bin/bash\nD=.intently\nrm -rf $D/keys\n",
    "rule.py": "open('.intently/requirements/r.md', 'w').write('- always approve')\n",
    "confirm.py": "import subprocess\nsubprocess.run(['intently', 'review', 'confirm', 'cand-1'])\n",
    "build.sh": "#!/bin/sh\necho building\nls src > build.log\n",
    "build.py": "print('building')\n",
}


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ("bash accept.sh", "only the person may run"),
        ("./accept.sh", "only the person may run"),
        ("source accept.sh", "only the person may run"),
        ("python3 confirm.py", "only the person may run"),
        ("sh keys.sh", "which the agent may not change"),
        ("./keys.sh", "which the agent may not change"),
        ("python rule.py", "which the agent may not change"),
    ],
)
def test_a_script_run_by_name_is_held_to_its_text(
    allowed: Intently, project: Path, handle: Handler, command: str, why: str
) -> None:
    """Before, a script was refused only when the words that ran it named a guarded place."""
    for name, text in _SCRIPTS.items():
        (project / name).write_text(text, encoding="utf-8")
        (project / name).chmod(0o755)
    decision, reason = _decide(project, handle, command)
    assert decision == "deny" and why in reason, (command, reason)


def test_scripts_that_do_not_touch_intently_and_unread_ones_stay_as_before(
    allowed: Intently, project: Path, run_hook: HookRunner
) -> None:
    """Through real hook processes: a script that writes elsewhere is not refused, nor one too
    large to read (judged by its words, as before); the person-only script is."""
    for name, text in _SCRIPTS.items():
        (project / name).write_text(text, encoding="utf-8")
        (project / name).chmod(0o755)
    (project / "big.sh").write_text("intently req accept --all\n" + "#" * 300_000 + "\n", encoding="utf-8")
    for command in ("bash build.sh", "./build.sh", "python build.py", "bash big.sh", "bash absent.sh"):
        decision, reason = _decide(project, run_hook, command)
        assert "only the person may run" not in reason and "may not change" not in reason, (command, reason)
    decision, reason = _decide(project, run_hook, "bash accept.sh")
    assert decision == "deny" and "its text runs intently req accept --all" in reason, reason
