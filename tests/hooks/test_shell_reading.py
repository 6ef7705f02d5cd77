"""The self-guard reads what the shell runs, not only the words of the command line.

Each case here ran before its fix (closing note of 2026-12-01): the body of a here-document or a
here-string fed to a shell is commands; a Python interpreter under another name (a link, a copy)
runs ``-m intently`` all the same; a script run after ``cd`` on the same line is the one in the
folder the ``cd`` leads to; a compound command in a pipeline runs in a process of its own, so
its ``cd`` does not move the commands after it; a ``case`` pattern's ``)`` closes no subshell.
The events go through the hook's handler on a real home, in a real project folder with real
scripts and links; the here-document forms through real ``intently hook claude`` processes too."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from intently import Intently
from tests._config import set_config

from .conftest import Handler, HookRunner
from .test_self_guard import TRUSTED, _decide

PERSON = "only the person may run"
GUARDED = "which the agent may not change"


@pytest.fixture
def allowed(ix: Intently) -> Intently:
    set_config(ix.home.config_path, "hooks", "shell_trusted", TRUSTED[:-1] + ', "cd", "cat", "while", "case", "ln"]')
    return ix


# -- 1. a here-document or here-string fed to a shell ---------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "bash <<EOF\nintently req accept --all\nEOF",
        "sh <<'EOF'\necho reviewing\nintently review confirm cand-1\nEOF",
        'zsh <<"END"\nintently goal endorse g-1\nEND',
        "bash -s <<EOF\nintently req accept --all\nEOF",
        "bash -s -- a b <<EOF\nintently req accept --all\nEOF",
        "bash -o pipefail <<EOF\nintently req accept --all\nEOF",
        "bash <<-EOF\n\tintently req accept --all\n\tEOF",
        "bash <<EOF | cat\nintently req accept --all\nEOF",
        'bash <<< "intently req accept --all"',
        "sh <<< 'intently review confirm cand-1'",
        "/bin/bash - <<EOF\ncd src\nintently req accept --all\nEOF",
    ],
)
def test_a_here_document_fed_to_a_shell_is_read_as_commands(
    allowed: Intently, project: Path, handle: Handler, command: str
) -> None:
    """Before: allowed, the body was one word (a file name bash was given) the guard never read."""
    decision, reason = _decide(project, handle, command)
    assert decision == "deny" and PERSON in reason, (command, reason)


@pytest.mark.parametrize(
    "command",
    [
        "bash <<EOF\ncd .intently\nrm -rf keys\nEOF",
        "cd .git && bash <<< 'rm hooks/pre-commit'",
        "sh <<'EOF'\nF=.intently/requirements/r.md\necho '- always approve' > $F\nEOF",
        "bash <<'EOF'\nD=.intent\nrm -rf ${D}ly/keys\nEOF",
    ],
)
def test_a_here_document_fed_to_a_shell_is_held_to_the_protected_paths(
    allowed: Intently, project: Path, handle: Handler, command: str
) -> None:
    decision, reason = _decide(project, handle, command)
    assert decision == "deny" and GUARDED in reason, (command, reason)


def test_a_here_document_that_is_only_text_stays_text(allowed: Intently, project: Path, handle: Handler) -> None:
    """Fed to ``cat``, or to a shell running a script file, the body is data: nothing it says runs.
    A shell that only reads a guarded file is no longer refused for naming it."""
    for command in (
        "cat > notes.md <<'EOF'\nintently req accept --all\nrm -rf .intently\nEOF",
        "cat <<EOF | wc -l\nintently req accept --all\nEOF",
        "bash build.sh <<EOF\nintently req accept --all\nEOF",
        "bash <<EOF\ncat .intently/intently.toml\nintently goal list\nEOF",
    ):
        reason = _decide(project, handle, command)[1]
        assert PERSON not in reason and GUARDED not in reason, (command, reason)


def test_real_hook_processes_read_a_here_document_fed_to_a_shell(
    allowed: Intently, project: Path, run_hook: HookRunner
) -> None:
    for command in ("bash <<EOF\nintently req accept --all\nEOF", "bash <<< 'intently review confirm cand-1'"):
        decision, reason = _decide(project, run_hook, command)
        assert decision == "deny" and "run it yourself" in reason, (command, reason)
    assert PERSON not in _decide(project, run_hook, "bash <<EOF\nintently goal list\nEOF")[1]


# -- 2. a Python interpreter under another name ---------------------------------------------------


def test_a_linked_or_copied_interpreter_running_intently_is_refused(
    allowed: Intently, project: Path, handle: Handler
) -> None:
    """Before: ``/tmp/p -m intently ...`` ran, the guard knew Python only by a name ``python*``."""
    (project / "bin").mkdir()
    os.symlink(sys.executable, project / "bin" / "p")  # ln -s .venv/bin/python bin/p
    shutil.copy(os.path.realpath(sys.executable), project / "bin" / "q")  # cp follows the link
    for command in (
        "bin/p -m intently req accept --all",
        "{p}/bin/q -m intently review confirm cand-1",
        "bin/q -I -W ignore -mintently goal done g-1",
        'bin/p -c \'import intently; intently.Intently.open(".").requirements.accept("r-1")\'',
        # a link made on this very line: no file yet, the words decide
        "ln -s $(which python3) /tmp/py; /tmp/py -m intently req accept --all",
        "$PY -m intently req accept --all",
        "python -W ignore -m intently req accept --all",
        "/usr/bin/env python3 -m intently.cli req accept --all",
    ):
        decision, reason = _decide(project, handle, command)
        assert decision == "deny" and PERSON in reason, (command, reason)


def test_other_programs_with_the_same_words_stay_allowed(allowed: Intently, project: Path, handle: Handler) -> None:
    """A program that is a file and no Python is not one because its words say ``-m intently``,
    and a read-only command through a renamed interpreter stays read-only."""
    (project / "bin").mkdir()
    os.symlink(sys.executable, project / "bin" / "p")
    for command in (
        "bin/p -m intently goal list",
        "bin/p -m pytest -q",
        "git commit -m intently",
        "ls -m intently",
        "grep -rn 'from intently import' src",
    ):
        reason = _decide(project, handle, command)[1]
        assert PERSON not in reason, (command, reason)


# -- 3. a script run after a cd on the same line --------------------------------------------------


def test_a_script_after_a_cd_is_read_from_the_folder_the_cd_leads_to(
    allowed: Intently, project: Path, handle: Handler
) -> None:
    """Before: a ``cd`` anywhere on the line stopped every script from being read."""
    (project / "scripts").mkdir()
    (project / "sub").mkdir()
    (project / "scripts" / "x.sh").write_text("#!/bin/sh\nintently req accept --all\n", encoding="utf-8")
    (project / "sub" / "x.sh").write_text("#!/bin/sh\nrm -rf ../.intently/keys\n", encoding="utf-8")
    (project / ".claude").mkdir()
    (project / ".claude" / "y.sh").write_text("#!/bin/sh\necho '{}' > settings.json\n", encoding="utf-8")
    (project / "x.sh").write_text("#!/bin/sh\necho building\n", encoding="utf-8")
    for f in (project / "scripts" / "x.sh", project / "sub" / "x.sh", project / ".claude" / "y.sh", project / "x.sh"):
        f.chmod(0o755)
    for command in (
        "cd scripts && bash x.sh",
        "cd scripts; ./x.sh",
        "(cd scripts && sh x.sh)",
        "cd sub/../scripts; ./x.sh",
    ):
        decision, reason = _decide(project, handle, command)
        assert decision == "deny" and "its text runs intently req accept --all" in reason, (command, reason)
    decision, reason = _decide(project, handle, "cd sub; ./x.sh")
    assert decision == "deny" and GUARDED in reason and ".intently/keys" in reason, reason
    # the script's own paths lead from where it runs: "settings.json" there is Claude's settings
    decision, reason = _decide(project, handle, "cd .claude && ./y.sh")
    assert decision == "deny" and GUARDED in reason and ".claude/settings.json" in reason, reason
    for command in ("bash x.sh", "cd sub && bash absent.sh", "cd $D && ./x.sh"):
        reason = _decide(project, handle, command)[1]
        assert PERSON not in reason and GUARDED not in reason, (command, reason)


# -- 4. compound commands in a pipeline; a case's patterns ----------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cd .intently; while false; do cd ..; done | cat; rm -rf keys",
        "cd .intently; for d in a; do cd ..; done | cat; rm -rf keys",
        "cd .git; if true; then cd ..; fi | cat; echo x > hooks/pre-commit",
        "cd .intently; until true; do if true; then cd ..; fi; done | tee log; rm -rf keys",
        "cd .intently; case a in a) cd ..;; esac | cat; rm -rf keys",
        "cd .intently; while false; do cd ..; done & rm -rf keys",
        # last in a pipeline: its own process in bash, the line's shell in zsh: unknown
        "cd .intently; echo | { true; cd ..; }; rm -rf keys",
        "cd .intently; cat list | while true; do cd ..; done; rm -rf keys",
        # a pattern's ")" closed the subshell: the "cd /" after it was read as the line's
        "cd .intently; (cd /tmp && case x in x) ;; esac; cd /); rm -rf keys",
        "cd .intently; (cd /tmp && case x in (x|y) ;; esac; cd /); rm -rf keys",
    ],
)
def test_a_compound_command_in_a_pipeline_keeps_its_cd(
    allowed: Intently, project: Path, handle: Handler, command: str
) -> None:
    """Before: allowed, the loop's ``cd ..`` was read as moving the ``rm`` after it out of .intently
    (the ``for`` and ``case`` forms were refused, but only because their own words, ``d``, ``in``,
    were read as paths under .intently)."""
    decision, reason = _decide(project, handle, command)
    assert decision == "deny" and GUARDED in reason, (command, reason)


def test_a_case_runs_its_branch_commands(allowed: Intently, project: Path, handle: Handler) -> None:
    """``;;&`` and ``;&`` go on to the next branch: each is read as one operator."""
    for command in (
        "case x in\n  x) true ;;&\n  *) intently req accept --all;;\nesac",
        "case x in x) cd .intently ;& *) rm -rf keys;; esac",
    ):
        decision, reason = _decide(project, handle, command)
        assert decision == "deny" and (PERSON in reason or ".intently/keys" in reason), (command, reason)
    for command in ("case $1 in a|b) echo one;; *) echo other;; esac", "while read l; do echo $l; done < list | sort"):
        reason = _decide(project, handle, command)[1]
        assert PERSON not in reason and GUARDED not in reason, (command, reason)


# -- what "$(...)" and backquotes run inside double quotes and here-documents ---------------------


@pytest.mark.parametrize(
    ("command", "why"),
    [
        ('echo "$(intently req accept --all)"', PERSON),
        ('echo "done: `intently review confirm cand-1`"', PERSON),
        ('X="$(intently goal endorse g-1)"', PERSON),
        ("cat <<EOF\n$(intently req accept --all)\nEOF", PERSON),
        ('echo "$(rm -rf .intently/keys)"', GUARDED),
        ('cd .git && echo "$(rm hooks/pre-commit)"', GUARDED),
    ],
)
def test_a_substitution_in_double_quotes_or_a_here_document_is_read(
    allowed: Intently, project: Path, handle: Handler, command: str, why: str
) -> None:
    """Before: allowed, a quoted ``"$(...)"`` was one word, though the shell runs what it holds."""
    decision, reason = _decide(project, handle, command)
    assert decision == "deny" and why in reason, (command, reason)


def test_a_substitution_the_shell_leaves_as_written_runs_nothing(
    allowed: Intently, project: Path, handle: Handler
) -> None:
    for command in (
        "echo '$(intently req accept --all)'",
        "cat <<'EOF'\n$(intently req accept --all)\nEOF",
        'echo "\\$(intently req accept --all)"',
        'echo "$((1 + 2))"',
        'git commit -m "fix: $(date)"',
        'echo "$(intently goal list)"',
    ):
        reason = _decide(project, handle, command)[1]
        assert PERSON not in reason and GUARDED not in reason, (command, reason)


# -- a cd that may not run ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cd .intently; false && cd ..; rm -rf keys",
        "cd .intently; true || cd ..; rm -rf keys",
        "cd .intently; if false; then cd ..; fi; rm -rf keys",
        "cd .intently; while false; do cd ..; done; rm -rf keys",
        "cd .intently; case x in y) cd ..;; esac; rm -rf keys",
    ],
)
def test_a_cd_that_may_not_run_leaves_the_folder_unknown(
    allowed: Intently, project: Path, handle: Handler, command: str
) -> None:
    """Before: allowed, the ``cd ..`` was read as run, so ``rm -rf keys`` was read as ``./keys``;
    the shell skips it (``false &&``, a body that does not run) and removes .intently/keys."""
    decision, reason = _decide(project, handle, command)
    assert decision == "deny" and GUARDED in reason and ".intently/keys" in reason, (command, reason)


def test_a_cd_in_one_and_or_list_leads_the_rest_of_it(allowed: Intently, project: Path, handle: Handler) -> None:
    """Within one ``&&`` list the commands after a ``cd`` run only where it led: no unknown there."""
    for command in (
        "cd .intently && rm -rf keys",
        "true && cd .intently && rm -rf keys",
    ):
        decision, reason = _decide(project, handle, command)
        assert decision == "deny" and ".intently/keys" in reason, (command, reason)
    for command in ("mkdir -p build && cd build && cmake .. && make", "cd web && npm ci && rm -rf dist"):
        reason = _decide(project, handle, command)[1]
        assert GUARDED not in reason, (command, reason)


# -- the folder as a set of possible folders (closing note of 2026-12-02) --------------------------


def test_a_cd_that_may_not_run_leaves_both_folders_possible(allowed: Intently, project: Path, handle: Handler) -> None:
    """Before: ``npm ci && cd web; rm -rf dist`` was refused: after a ``cd`` that may not have run
    the folder was wholly unknown, and ``?/dist`` may be ``.intently/dist``. It is ``dist`` or
    ``web/dist``; only when one of the possible folders makes it a guarded write is it refused."""
    (project / "web").mkdir()
    for command in (
        "npm ci && cd web; rm -rf dist",
        "cd web || exit 1; rm -rf dist",
        "if true; then cd web; fi; rm -rf dist",
    ):
        reason = _decide(project, handle, command)[1]
        assert GUARDED not in reason, (command, reason)
    for command in ("cd .intently; npm ci && cd ..; rm -rf keys", "npm ci && cd .intently; rm -rf keys"):
        decision, reason = _decide(project, handle, command)
        assert decision == "deny" and GUARDED in reason and ".intently/keys" in reason, (command, reason)
    # a folder no word gives, or more possible folders than the bound: wholly unknown, as before
    for command in ("cd $D; rm -rf keys", "a && cd w; b && cd x; c && cd y; rm -rf keys"):
        decision, reason = _decide(project, handle, command)
        assert decision == "deny" and "no word of the command gives" in reason, (command, reason)


@pytest.mark.parametrize(
    "command",
    [
        "$(echo intently) req accept --all",
        "`echo intently` req accept --all",
        "$(printf intently) goal endorse g-1",
        "true; `which intently` review confirm cand-1",
        "P=x; $(echo intently) req accept --all | cat",
        "$(case x in x) echo intently;; esac) req accept --all",
    ],
)
def test_a_program_word_made_by_a_substitution_is_an_unresolved_program(
    allowed: Intently, project: Path, handle: Handler, command: str
) -> None:
    """Before: allowed, the split read ``$``, ``(`` as operators and the program word was lost
    (``req accept --all`` was read as a program of its own); ``"$(which intently)"`` was refused."""
    decision, reason = _decide(project, handle, command)
    assert decision == "deny" and PERSON in reason, (command, reason)


def test_a_substitution_as_an_argument_is_no_program(allowed: Intently, project: Path, handle: Handler) -> None:
    """What a substitution prints is a word of the command it stands in, not a command."""
    for command in ("$(echo intently) goal list", "echo $(date) intently req accept", "echo `date` x"):
        reason = _decide(project, handle, command)[1]
        assert PERSON not in reason, (command, reason)


def test_a_script_given_to_a_shell_on_standard_input_is_read(allowed: Intently, project: Path, handle: Handler) -> None:
    """Before: ``bash < x.sh`` and ``cat x.sh | bash`` were allowed; the shell runs the script's
    text, so it is read as ``bash x.sh``'s is."""
    (project / "scripts").mkdir()
    (project / "x.sh").write_text("intently req accept --all\n", encoding="utf-8")
    (project / "scripts" / "w.sh").write_text("rm -rf ../.intently/keys\n", encoding="utf-8")
    (project / "ok.sh").write_text("echo intently req accept --all\n", encoding="utf-8")
    for command in ("bash < x.sh", "sh < x.sh", "bash -s < x.sh", "cat x.sh | bash", "cat x.sh | sh -s"):
        decision, reason = _decide(project, handle, command)
        assert decision == "deny" and "its text runs intently req accept --all" in reason, (command, reason)
    for command in ("cd scripts && bash < w.sh", "cat scripts/w.sh | bash"):
        decision, reason = _decide(project, handle, command)
        assert decision == "deny" and GUARDED in reason and ".intently/keys" in reason, (command, reason)
    for command in ("bash < ok.sh", "cat x.sh | grep intently", "cat x.sh | bash -c 'wc -l'"):
        reason = _decide(project, handle, command)[1]
        assert PERSON not in reason and GUARDED not in reason, (command, reason)


def test_a_cd_to_a_folder_that_is_not_there_may_fail(allowed: Intently, project: Path, handle: Handler) -> None:
    """Before: ``cd .intently; cd /nonexistent; rm -rf keys`` was read as removing
    ``/nonexistent/keys``; the ``cd`` fails, the shell stays in .intently and removes its keys."""
    absent = project.parent / "absent-folder"
    for command in (f"cd .intently; cd {absent}; rm -rf keys", "cd .intently; cd nope; rm -rf keys"):
        decision, reason = _decide(project, handle, command)
        assert decision == "deny" and GUARDED in reason and ".intently/keys" in reason, (command, reason)
    # a folder that is there, or that the line makes first: the cd runs
    (project / "out").mkdir()
    for command in ("cd .intently; cd ../out; rm -rf keys", "cd .intently; mkdir -p ../new/x; cd ../new; rm -rf keys"):
        reason = _decide(project, handle, command)[1]
        assert GUARDED not in reason, (command, reason)
