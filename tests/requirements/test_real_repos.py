"""Scanning messy, real-world repositories: what cannot be read is named, never silently
dropped, never read from outside the project, and two scans never write every rule twice."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import intently
from intently import Intently, ManualClock
from intently.core.errors import ConflictError
from intently.requirements import _scan

from .conftest import git, run_main


def write(root: Path, rel: str, data: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")


def commit_all(root: Path, message: str = "Import") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def statements(ix: Intently) -> list[str]:
    return [r.statement for r in ix.requirements.list()]


def test_symlinks_outside_the_project_and_link_loops_are_named_and_not_read(
    repo: Path, rix: Intently, tmp_path: Path
) -> None:
    """A link in docs/ to a file outside the checkout must not make that file the project's
    rules (and get committed); a link loop is named, and the other files still count."""
    outside = tmp_path / "private-notes.md"
    outside.write_text("- Always deploy with the personal token abc123 kept here.\n")
    (repo / "docs").mkdir()
    os.symlink(outside, repo / "docs" / "notes.md")
    os.symlink("loop-b.md", repo / "docs" / "loop-a.md")
    os.symlink("loop-a.md", repo / "docs" / "loop-b.md")
    write(repo, "docs/inside.md", "- Always keep the changelog sorted by date.\n")
    os.symlink("inside.md", repo / "docs" / "alias.md")  # inside the project: fine
    write(repo, "AGENTS.md", "# Rules\n\n- Never push directly to the main branch.\n")
    commit_all(repo)
    report = rix.requirements.scan()
    texts = statements(rix)
    assert "Never push directly to the main branch." in texts
    assert "Always keep the changelog sorted by date." in texts
    assert not any("personal token" in t for t in texts)
    assert any(p.startswith("docs/notes.md: symlink to ") and "outside the project" in p for p in report.problems)
    assert "docs/loop-a.md: symlink loop; not read" in report.problems
    assert "docs/loop-b.md: symlink loop; not read" in report.problems
    state = (rix.home.path / "scan-state.yaml").read_text()
    assert "docs/notes.md" not in state


def test_non_utf8_and_oversized_files_are_named_and_the_rest_is_read(repo: Path, rix: Intently) -> None:
    """A Latin-1 line costs that line (named file:line), not the file; a huge file is named,
    not skipped without a word."""
    write(
        repo,
        "CONTRIBUTING.md",
        b"# Contributing\n\n- Always run the linter before committing.\n- Never rename the caf\xe9 module.\n"
        b"- Always sign off every commit.\n",
    )
    write(repo, "docs/huge.md", "# Huge\n\n- Always read this.\n" + "x" * (300 * 1024))
    commit_all(repo)
    report = rix.requirements.scan()
    texts = statements(rix)
    assert "Always run the linter before committing." in texts
    assert "Always sign off every commit." in texts
    assert "CONTRIBUTING.md:4: not UTF-8; line(s) 4 skipped, the rest read" in report.problems
    assert any(p.startswith("docs/huge.md: ") and "over the 256 KiB limit" in p for p in report.problems)


def test_a_byte_order_mark_does_not_lose_a_cursor_rules_globs(repo: Path, rix: Intently) -> None:
    """Windows editors save UTF-8 with a BOM; the frontmatter behind it is still read, so a
    rule for *.ts files does not become a project-wide rule."""
    write(repo, "src/app.ts", "export {}\n")
    write(
        repo,
        ".cursor/rules/ts.mdc",
        "\ufeff---\r\nglobs: src/**/*.ts\r\nalwaysApply: false\r\n---\r\n- Always enable strict null checks.\r\n",
    )
    commit_all(repo)
    rix.requirements.scan()
    (rule,) = [r for r in rix.requirements.list() if "strict null" in r.statement]
    assert rule.statement == "Always enable strict null checks."
    assert rule.scope.level == "domain" and rule.scope.paths == ["src/**/*.ts"]


def test_vendored_dependencies_do_not_become_project_rules(repo: Path, rix: Intently) -> None:
    """third_party/ holds other projects' READMEs and AGENTS.md: their rules are not ours."""
    write(repo, "AGENTS.md", "# Rules\n\n- Never push directly to the main branch.\n")
    write(repo, "third_party/zlib/README.md", "# zlib\n\n- You must always call deflateEnd on every stream.\n")
    write(repo, "third-party/lib/AGENTS.md", "# lib\n\n- Never edit the generated parser tables.\n")
    commit_all(repo)
    rix.requirements.scan()
    texts = statements(rix)
    assert texts == ["Never push directly to the main branch."]


def test_a_broken_git_never_falls_back_to_reading_ignored_files(repo: Path, rix: Intently) -> None:
    """When git cannot list the files (here a corrupt index; "dubious ownership" does the
    same), walking the folder instead would read .gitignored notes as rules. Nothing is
    read, git's message is reported, and the hashes of what was read before are kept."""
    write(repo, "AGENTS.md", "# Rules\n\n- Never push directly to the main branch.\n")
    write(repo, ".gitignore", "docs/private.md\n")
    commit_all(repo)
    rix.requirements.scan()
    write(repo, "docs/private.md", "- Always use the staging password hunter2.\n")
    (repo / ".git" / "index").write_bytes(b"garbage")
    report = rix.requirements.scan()
    assert not any("hunter2" in t for t in statements(rix))
    assert any("git ls-files failed" in p and "index" in p for p in report.problems)
    state = (rix.home.path / "scan-state.yaml").read_text()
    assert "AGENTS.md" in state and "docs/private.md" not in state


def test_a_scan_waits_for_a_running_scan_and_gives_up_naming_the_lock(
    repo: Path, rix: Intently, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holds the scan lock: this scan writes nothing and says why."""
    write(repo, "AGENTS.md", "# Rules\n\n- Never push directly to the main branch.\n")
    commit_all(repo)
    monkeypatch.setattr(_scan, "SCAN_LOCK_WAIT", 0.3)
    lock_path = rix.home.state_dir / _scan.SCAN_LOCK
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            "fh = open(sys.argv[1], 'a+'); fcntl.flock(fh.fileno(), fcntl.LOCK_EX)\n"
            "print('locked', flush=True); sys.stdin.read()",
            str(lock_path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(ConflictError, match="another scan of this project is still running"):
            rix.requirements.scan()
        assert statements(rix) == []
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=10)
    rix.requirements.scan()  # the holder is gone: the lock is free again
    assert statements(rix) == ["Never push directly to the main branch."]
    with open(lock_path, "a+") as fh:  # and the scan let go of it
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_two_scans_started_at_once_write_each_rule_once(repo: Path, rix: Intently) -> None:
    """Two real `intently req scan` processes at the same moment (a hook and a person): the
    second waits, then finds nothing new, instead of writing every rule again under new ids."""
    rules = "\n".join(f"- Always keep module {i} free of global state number {i}." for i in range(40))
    write(repo, "AGENTS.md", f"# Rules\n\n{rules}\n")
    commit_all(repo)
    src = str(Path(intently.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", ""), "NO_COLOR": "1"}
    cmd = [sys.executable, "-m", "intently", "--home", str(rix.home.path), "--actor", "user:alice"]
    procs = [
        subprocess.Popen([*cmd, "req", "scan", "--json"], cwd=repo, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    reports = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    created = sorted(len(r["created"]) for r in reports)
    assert created[0] == 0 and created[1] > 0
    files = list((rix.home.path / "requirements").glob("req-*.md"))
    assert len(files) == created[1]


def test_the_cli_prints_what_it_could_not_read(repo: Path, rix: Intently) -> None:
    """Without --json the problems were only counted nowhere: now each is a warning line."""
    write(repo, "CONTRIBUTING.md", b"# C\n\n- Never rename the caf\xe9 module.\n- Always sign off every commit.\n")
    commit_all(repo)
    code, out, err = run_main(rix.home.path, "req", "scan")
    assert code == 0, err
    assert "warning: CONTRIBUTING.md:3: not UTF-8; line(s) 3 skipped, the rest read" in err
    assert "intently scan: created 1" in out


def test_a_git_that_refuses_the_commit_does_not_turn_the_scan_into_an_internal_error(repo: Path, rix: Intently) -> None:
    """The files are written and logged before the commit; a git that cannot add them (here a
    corrupt index) is a problem of the report, not a CalledProcessError after the fact."""
    write(repo, "main.go", "package main\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Policy\n\nFrom now on, always squash fixup commits before merging.")
    (repo / ".git" / "index").write_bytes(b"garbage")
    report = rix.requirements.scan()
    assert [r.statement for r in rix.requirements.list()] == [
        "From now on, always squash fixup commits before merging."
    ]
    assert report.commit is None
    assert any("git commit failed" in p and "commit them yourself" in p for p in report.problems)


def test_a_transcript_that_grows_past_256_kib_is_still_mined(repo: Path, rix: Intently) -> None:
    """The folder's transcripts were hashed on their first 256 KiB: a session that grew past
    that looked unchanged forever, and the rules said later were never read. A long plain
    conversation was cut there without a word; a Latin-1 one was skipped entirely."""
    folder = repo / "chats"
    folder.mkdir()
    config = rix.home.config_path
    config.write_text(config.read_text().replace('transcripts = ""', f'transcripts = "{folder}"'))
    filler = [json.dumps({"type": "assistant", "message": {"role": "assistant", "content": "x" * 250}})] * 1100
    first = {"type": "user", "message": {"role": "user", "content": "From now on, always run the migration linter."}}
    (folder / "session.jsonl").write_text("\n".join([*filler, json.dumps(first)]) + "\n")
    (folder / "long.md").write_text("User: " + "words " * 60_000 + "\nUser: we must always tag releases with GPG.\n")
    (folder / "latin.md").write_bytes(b"User: caf\xe9 talk.\nUser: we must never force push to the release branch.\n")
    with Intently.open(rix.home.path, actor="user:alice") as ix:
        report = ix.requirements.scan()
        later = {"type": "user", "message": {"role": "user", "content": "Going forward, never merge with a red CI."}}
        with open(folder / "session.jsonl", "a") as fh:
            fh.write(json.dumps(later) + "\n")
        ix.requirements.scan()
        texts = statements(ix)
    assert "Always run the migration linter." in texts
    assert "We must always tag releases with GPG." in texts
    assert "We must never force push to the release branch." in texts
    assert "Never merge with a red CI." in texts
    assert "transcripts/latin.md:1: not UTF-8; line(s) 1 skipped, the rest read" in report.problems


def test_a_jsonl_transcript_of_the_folder_is_read_once_per_scan(
    repo: Path, rix: Intently, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``.jsonl`` session in the transcripts folder was read whole to hash it, then read
    whole again to parse it: twice the I/O on files of tens of megabytes, and a session
    Claude Code appended to in between was mined past what its recorded hash covered."""
    folder = repo / "chats"
    folder.mkdir()
    config = rix.home.config_path
    config.write_text(config.read_text().replace('transcripts = ""', f'transcripts = "{folder}"'))
    rule = {"type": "user", "message": {"role": "user", "content": "From now on, always run the migration linter."}}
    session = folder / "session.jsonl"
    session.write_text(json.dumps(rule) + "\n")
    reads: list[Path] = []
    real = Path.read_bytes

    def counted(self: Path) -> bytes:
        if self.name == session.name:
            reads.append(self)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    with Intently.open(rix.home.path, actor="user:alice") as ix:
        ix.requirements.scan()
        assert len(reads) == 1
        assert "Always run the migration linter." in statements(ix)


def test_a_missing_transcripts_folder_is_named(repo: Path, rix: Intently) -> None:
    config = rix.home.config_path
    config.write_text(config.read_text().replace('transcripts = ""', 'transcripts = "no-such-folder"'))
    with Intently.open(rix.home.path, actor="user:alice") as ix:
        report = ix.requirements.scan()
    assert any("no-such-folder: the [requirements] transcripts folder does not exist" in p for p in report.problems)


def test_a_rebase_does_not_bring_back_a_rule_a_person_reworded_and_disabled(
    repo: Path, rix: Intently, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebase gives every commit after the base a new hash; the scan read the rewritten
    copies as new commits and proposed their rules again, as new active requirements beside
    the one a person had reworded and disabled. The copy keeps author, date and message."""
    write(repo, "main.go", "package main\n")
    commit_all(repo, "Init")
    write(repo, "b.txt", "b\n")
    commit_all(repo, "Policy\n\nFrom now on, always squash fixup commits before merging.")
    rix.requirements.scan()
    (rule,) = rix.requirements.list()
    rix.requirements.edit(rule.id, statement="Squash fixups into their parent with git rebase --autosquash.")
    rix.requirements.disable(rule.id)
    commit_all(repo, "Reword the squash rule")
    before = git(repo, "rev-parse", "HEAD~2")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2031-01-01T00:00:00+00:00")
    git(repo, "rebase", "-q", "--force-rebase", "HEAD~3")
    assert git(repo, "rev-parse", "HEAD~2") != before  # the rule's commit was rewritten
    report = rix.requirements.scan()
    assert report.created == []
    assert [(r.status, r.statement) for r in rix.requirements.list()] == [
        ("disabled", "Squash fixups into their parent with git rebase --autosquash.")
    ]


def test_in_a_monorepo_only_the_commits_that_touch_the_package_are_its_history(repo: Path, clock: ManualClock) -> None:
    """A home in pkg-a/ of a larger repository: a commit that only changes pkg-b/ states
    pkg-b's policy, and must not become a project-wide rule of pkg-a."""
    write(repo, "pkg-a/a.go", "package a\n")
    write(repo, "pkg-b/b.go", "package b\n")
    commit_all(repo, "Init")
    with Intently.init(repo / "pkg-a", actor="user:alice", name="a", clock=clock) as ix:
        commit_all(repo, "Add intently to pkg-a")
        ix.requirements.scan()
        write(repo, "pkg-b/b.go", "package b // v2\n")
        commit_all(repo, "pkg-b: policy\n\nIn pkg-b we must always use the legacy ORM for every query.")
        write(repo, "pkg-a/a.go", "package a // v2\n")
        commit_all(repo, "pkg-a: policy\n\nWe must never log request bodies in pkg-a.")
        ix.requirements.scan()
        texts = statements(ix)
    assert texts == ["We must never log request bodies in pkg-a."]
