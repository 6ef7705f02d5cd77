"""``intently req ...`` through the real command-line app (in process, on a real home)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from intently import Intently

from .conftest import run_main


def cli(project: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Run ``intently`` on the project's home through its real entry point, capturing both streams."""
    return run_main(project / ".intently", *args, env=env)


def js(project: Path, *args: str) -> Any:
    code, out, err = cli(project, *args, "--json")
    assert code == 0, err + out
    return json.loads(out)


def test_add_list_show_edit_disable_enable_supersede(ix: Intently, project: Path) -> None:
    added = js(
        project,
        "req",
        "add",
        "Never edit generated manpages.",
        "--why",
        "They are regenerated.",
        "--path",
        "manpages/**",
        "--domain",
        "generated",
    )
    rid = added["id"]
    assert added["scope"] == {"level": "domain", "domains": ["generated"], "paths": ["manpages/**"], "languages": []}
    listed = js(project, "req", "list")
    assert [r["id"] for r in listed] == [rid]
    assert js(project, "req", "show", rid)["rationale"] == "They are regenerated."
    edited = js(project, "req", "edit", rid, "--hint", "updating the man page")
    assert edited["changed"] == ["hints"]
    assert js(project, "req", "disable", rid)["status"] == "disabled"
    assert js(project, "req", "list", "--status", "active") == []
    assert js(project, "req", "enable", rid)["status"] == "active"
    other = js(project, "req", "add", "Regenerate manpages with the generator.")["id"]
    assert js(project, "req", "supersede", rid, "--by", other)["superseded_by"] == other
    code, _, err = cli(project, "req", "show", "req-ffffffffffff")
    assert code == 3 and "no requirement" in err


def test_edit_with_an_editor_marks_user_edited_only_on_real_change(ix: Intently, project: Path, tmp_path: Path) -> None:
    req = ix.requirements.add("Use tabs.", user_edited=False)
    noop = tmp_path / "noop.sh"
    noop.write_text("#!/bin/sh\nexit 0\n")
    noop.chmod(0o755)
    code, out, err = cli(project, "req", "edit", req.id, "--json", env={"EDITOR": str(noop)})
    assert code == 0, err
    assert json.loads(out)["changed"] == [] and not json.loads(out)["user_edited"]
    sed = tmp_path / "sed.sh"
    sed.write_text("#!/bin/sh\nsed -i 's/Use tabs./Use four spaces./' \"$1\"\n")
    sed.chmod(0o755)
    code, out, err = cli(project, "req", "edit", req.id, "--json", env={"EDITOR": str(sed)})
    data = json.loads(out)
    assert data["changed"] == ["statement"] and data["user_edited"] and data["statement"] == "Use four spaces."


def test_an_editor_save_over_a_newer_file_is_refused_and_the_text_kept(
    ix: Intently, project: Path, tmp_path: Path
) -> None:
    """An editor stays open for minutes. If the file changes meanwhile (a teammate's edit, a
    git pull), saving the stale copy would silently undo that change: it is refused, exit 5,
    and what the user typed is kept in a file the error names."""
    req = ix.requirements.add("Use tabs.", user_edited=False)
    slow_editor = tmp_path / "slow.sh"
    slow_editor.write_text(
        "#!/bin/sh\n"
        f"sed -i 's/Use tabs./Use tabs in Makefiles only./' {req.path}\n"  # someone else, meanwhile
        "sed -i 's/Use tabs./Use four spaces./' \"$1\"\n"
    )
    slow_editor.chmod(0o755)
    code, _, err = cli(project, "req", "edit", req.id, env={"EDITOR": str(slow_editor)})
    assert code == 5, err
    assert "changed while it was being edited" in err
    kept = Path(err.split("your text is kept in ")[1].split()[0].rstrip("."))
    assert "Use four spaces." in kept.read_text()
    assert ix.requirements.get(req.id).statement == "Use tabs in Makefiles only."
    # The teammate's hand edit of the statement is recorded as theirs (user_edited, by the log);
    # the refused save wrote nothing.
    ops = [o for o in ix.log.read(ix.namespace) if o.target == req.id]
    assert [o.op for o in ops] == ["REQ_CREATE", "REQ_UPDATE"]
    assert ops[1].payload["detail"]["by"] == "outside edit" and ix.requirements.get(req.id).meta.user_edited


def test_validate_reports_file_line_field_and_exits_2(ix: Intently, project: Path) -> None:
    req = ix.requirements.add("Pin versions.")
    assert js(project, "req", "validate") == {"ok": True, "errors": [], "conflicts": []}
    req.path.write_text(req.path.read_text().replace("status: active", "status: paused"))
    code, out, _ = cli(project, "req", "validate", "--json")
    assert code == 2
    (error,) = json.loads(out)["errors"]
    assert error["file"] == f"requirements/{req.id}.md" and error["field"] == "status" and error["line"] == 3
    code, out, err = cli(project, "req", "list", "--json")
    assert code == 0 and json.loads(out) == []
    assert err.startswith(f"warning: skipped requirements/{req.id}.md:3: status:")


def test_preview_explains_and_records_nothing(ix: Intently, project: Path) -> None:
    gui = ix.requirements.add("Do not read model state right after a refresh.", paths=["pkg/gui/**"])
    ix.requirements.add("Only edit english.go for translations.", paths=["pkg/i18n/**"])
    data = js(project, "req", "preview", "--task", "Fix a refresh race", "--paths", "pkg/gui/a.go", "--explain")
    assert data["ids"] == [gui.id]
    assert data["block"].startswith("## Standing project requirements")
    assert {d["id"] for d in data["explain"]} == {r.id for r in ix.requirements.list()}
    assert ix.log.read(ix.namespace, op="REQ_INJECTED") == []
    code, out, _ = cli(
        project, "req", "preview", "--task", "Fix a refresh race", "--paths", "pkg/gui/a.go", "--explain"
    )
    assert code == 0 and "why" in out and gui.id in out
    # the task as an argument, as `intently context` takes it; given twice or not at all is an error
    assert js(project, "req", "preview", "Fix a refresh race", "--paths", "pkg/gui/a.go")["ids"] == [gui.id]
    assert cli(project, "req", "preview", "--paths", "pkg/gui/a.go")[0] == 2
    assert cli(project, "req", "preview", "x", "--task", "y")[0] == 2


def test_domains_commands(ix: Intently, project: Path) -> None:
    js(project, "req", "domains", "add", "docs", "--description", "User docs.", "--path", "docs/**")
    js(project, "req", "domains", "edit", "docs", "--path", "docs/**", "--path", "guides/**")
    (dom,) = js(project, "req", "domains", "list")
    assert dom == {"name": "docs", "description": "User docs.", "paths": ["docs/**", "guides/**"], "user_edited": True}
    code, _, err = cli(project, "req", "domains", "edit", "nope")
    assert code == 3 and "no domain 'nope'" in err


@pytest.mark.timeout(120)
def test_scan_and_preview_as_a_real_process(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env.update(
        INTENTLY_ACTOR="user:alice",
        NO_COLOR="1",
        GIT_AUTHOR_NAME="A",
        GIT_AUTHOR_EMAIL="a@x",
        GIT_COMMITTER_NAME="A",
        GIT_COMMITTER_EMAIL="a@x",
        GIT_CONFIG_GLOBAL="/dev/null",
    )
    exe = str(Path(sys.executable).with_name("intently"))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(args, cwd=project, env=env, capture_output=True, text=True, timeout=100)

    run("git", "init", "-q")
    (project / "AGENTS.md").write_text("# Rules\n\n- Never commit generated files by hand.\n")
    run("git", "add", "-A")
    run("git", "commit", "-qm", "init")
    assert run(exe, "init").returncode == 0
    scanned = run(exe, "req", "scan", "--json")
    assert scanned.returncode == 0, scanned.stderr
    report = json.loads(scanned.stdout)
    assert len(report["created"]) == 1 and report["commit"]
    assert report["proposed"] == report["created"]
    preview = run(exe, "req", "preview", "--task", "regenerate files", "--json")
    assert json.loads(preview.stdout)["ids"] == []  # proposed: not injected before review
    accepted = run(exe, "req", "accept", "--all", "--json")
    assert [r["id"] for r in json.loads(accepted.stdout)] == report["created"], accepted.stderr
    preview = run(exe, "req", "preview", "--task", "regenerate files", "--json")
    assert json.loads(preview.stdout)["ids"] == report["created"]
