"""A home that lives in git works on a fresh clone: real git repositories in temp dirs, the
real ``intently`` console script for the commands a teammate types, the library for set-up.

The author commits ``.intently/`` (config, public keys, witness file); the clone has no
database and no private key until it joins, then signs its own database with its own key,
and both witness entries survive a git merge.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from intently import Actor, Intently, Permission

from .conftest import run

pytestmark = pytest.mark.sqlite_only  # copies the SQLite file to roll a clone back

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def witness_databases(repo: Path) -> dict[str, dict[str, int]]:
    """{database id: {stream: witnessed size}} as the tracked file holds it."""
    data = json.loads((repo / ".intently" / "checkpoints.json").read_text())
    return {
        key[3:]: {s: cp["size"] for s, cp in entry["streams"].items()}
        for key, entry in data.items()
        if key.startswith("db:")
    }


def keys_of(repo: Path) -> list[dict[str, Any]]:
    """The tracked keyring's entries, oldest first."""
    data = json.loads((repo / ".intently" / "keys" / "public.json").read_text())
    return [v for k, v in data.items() if k.startswith("key:")]


@pytest.fixture
def author(tmp_path: Path) -> Path:
    """alice's repository: a home with 3 operations in 'proj', committed."""
    repo = tmp_path / "author"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    with Intently.init(repo, actor="user:alice", name="proj") as ix:
        ix.access.grant(Actor.parse("bob"), Permission.WRITE)
        ix.access.grant(Actor.parse("carol"), Permission.READ)
    commit_all(repo, "intently home")
    return repo


@pytest.fixture
def clone(author: Path, tmp_path: Path) -> Path:
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(author), str(repo))
    git(repo, "config", "pull.rebase", "false")
    return repo


def test_a_clone_has_the_tracked_home_but_no_database_and_no_private_key(author: Path, clone: Path) -> None:
    home = clone / ".intently"
    assert (home / "checkpoints.json").is_file() and (home / "keys" / "public.json").is_file()
    assert not (home / "state").exists() and not (home / "keys" / "private").exists()
    before = run("log", "verify", "--json", cwd=clone)
    assert before.code == 0, before.stderr  # the author's entry is not this database's: reported, not failed
    (other,) = before.json["other_databases"]
    (author_db,) = witness_databases(author)
    assert (other["database"], other["stream"], other["size"], other["signature"]) == (author_db, "proj", 3, "ok")
    assert other["ok"] is True and before.json["database"] is None


def test_working_before_joining_says_once_it_cannot_sign_and_strict_verify_fails(clone: Path) -> None:
    granted = run("grant", "dave", "read", cwd=clone)  # alice on her second machine, not joined yet
    assert granted.code == 0, granted.stderr
    warnings = [line for line in granted.stderr.splitlines() if "not signed" in line]
    assert len(warnings) == 1 and "intently init" in warnings[0], granted.stderr
    strict = run("log", "verify", "--strict", cwd=clone)
    line = strict.error_line()
    assert "1 operation(s) after seq 0 no checkpoint covers" in line and "intently init" in line, line
    assert strict.code == 8
    joined = run("init", "--json", cwd=clone)  # joining signs the operations appended before it
    assert joined.code == 0, joined.stderr
    assert "not signed" not in joined.stderr
    again = run("log", "verify", "--strict", "--json", cwd=clone)
    assert again.code == 0, again.stderr
    (stream,) = again.json["streams"]
    # grant, HOME_JOINED, and LOG_ADOPTED: the joiner vouched for the grant made without a key
    assert (stream["size"], stream["unsigned_tail"], stream["witnessed_size"]) == (3, 0, 3)
    with Intently.open(clone / ".intently", actor="user:alice") as ix:
        (adopted,) = ix.log.read("proj", op="LOG_ADOPTED")
        assert (adopted.payload["first_seq"], adopted.payload["count"]) == (1, 1)


def test_a_clone_joins_works_verifies_and_both_witness_entries_survive_a_merge(author: Path, clone: Path) -> None:
    (author_db,) = witness_databases(author)
    author_keys = keys_of(author)
    joined = run("join", "--json", cwd=clone, actor="bob")
    assert joined.code == 0, joined.stderr
    data = joined.json
    assert set(data) == {"joined", "home", "namespace", "owner", "actor", "key_id", "database"}  # as init's
    assert (data["joined"], data["actor"], data["owner"]) == (True, "user:bob", "user:alice")
    clone_db = data["database"]
    assert clone_db and clone_db != author_db
    keys = keys_of(clone)
    assert [k["key_id"] for k in keys] == [k["key_id"] for k in author_keys] + [data["key_id"]]
    assert all(k["retired"] is None for k in keys)  # joining adds a key, never replaces the author's
    with Intently.open(clone / ".intently", actor="user:bob") as ix:
        (op,) = ix.log.read("proj")
        assert (op.op, op.actor, op.payload["key_id"]) == ("HOME_JOINED", "user:bob", data["key_id"])
        assert str(ix.access.owner) == "user:alice"  # ownership stays with intently.toml
    assert run("join", cwd=clone, actor="bob").error_line().startswith("error: ")  # this machine already signs
    with Intently.open(clone / ".intently", actor="user:alice") as ix:  # more work on the clone
        ix.access.grant(Actor.parse("erin"), Permission.READ)
    assert witness_databases(clone) == {author_db: {"proj": 3}, clone_db: {"proj": 2}}
    commit_all(clone, "bob joins")

    with Intently.open(author / ".intently", actor="user:alice") as ix:  # meanwhile the author works on
        ix.access.grant(Actor.parse("frank"), Permission.READ)
    commit_all(author, "more grants")
    git(author, "pull", "-q", "--no-rebase", "--no-edit", str(clone), "main")  # a plain line-by-line merge, no conflict
    assert witness_databases(author) == {author_db: {"proj": 4}, clone_db: {"proj": 2}}
    git(clone, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
    assert witness_databases(clone) == witness_databases(author)

    expected = {author: (author_db, 4, clone_db, 2), clone: (clone_db, 2, author_db, 4)}
    for repo, (mine, my_size, theirs, their_size) in expected.items():
        report = run("log", "verify", "--strict", "--json", cwd=repo)
        assert report.code == 0, report.stderr
        assert report.json["database"] == mine
        assert [(s["stream"], s["size"], s["witnessed_size"]) for s in report.json["streams"]] == [
            ("proj", my_size, my_size)
        ]
        (other,) = report.json["other_databases"]
        assert (other["database"], other["size"], other["signature"], other["ok"]) == (theirs, their_size, "ok", True)
    assert "other databases" in run("log", "verify", cwd=clone).stdout  # people see them in a second table


def test_a_clone_that_restores_an_older_copy_of_its_own_database_is_caught(clone: Path, tmp_path: Path) -> None:
    Intently.join(clone / ".intently", actor="user:bob").close()
    db = clone / ".intently" / "state" / "intently.db"
    backup = tmp_path / "clone-at-1.db"
    shutil.copyfile(db, backup)
    with Intently.open(clone / ".intently", actor="user:alice") as ix:
        ix.access.grant(Actor.parse("erin"), Permission.READ)
        ix.access.grant(Actor.parse("frank"), Permission.READ)
    shutil.copyfile(backup, db)
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    rolled = run("log", "verify", cwd=clone)
    assert rolled.error_line().startswith("error: log does not verify (RolledBack): stream 'proj' at seq 2:")
    assert rolled.code == 8


def test_a_lost_database_is_caught_by_the_entry_this_machine_signed(author: Path) -> None:
    """Deleting the database gives a fresh one a new id; the old entry is then another
    database's, but it was signed by the key this machine holds, so it cannot be a clone's."""
    shutil.rmtree(author / ".intently" / "state")
    gone = run("log", "verify", "--json", cwd=author)
    assert gone.code == 8
    (other,) = gone.json["other_databases"]
    assert (other["ok"], other["error_type"], other["size"]) == (False, "RolledBack", 3)


def test_two_clones_joining_at_once_merge_without_conflict(author: Path, clone: Path, tmp_path: Path) -> None:
    """Both add their key and their witness entry at the same place in the two tracked files;
    the home's .gitattributes (merge=union) keeps both lines, and both files stay valid."""
    second = tmp_path / "second"
    git(tmp_path, "clone", "-q", str(author), str(second))
    (author_db,) = witness_databases(author)
    joined = {}
    for repo, who in ((clone, "bob"), (second, "carol")):
        result = run("join", "--json", cwd=repo, actor=who)
        assert result.code == 0, result.stderr
        joined[repo] = result.json
        commit_all(repo, f"{who} joins")
    git(clone, "pull", "-q", "--no-rebase", "--no-edit", str(second), "main")  # would stop on a conflict
    assert (clone / ".intently" / ".gitattributes").read_text().count("merge=union") == 2
    assert {k["key_id"] for k in keys_of(clone)} == {
        keys_of(author)[0]["key_id"],
        joined[clone]["key_id"],
        joined[second]["key_id"],
    }
    assert set(witness_databases(clone)) == {author_db, joined[clone]["database"], joined[second]["database"]}
    report = run("log", "verify", "--strict", "--json", cwd=clone)
    assert report.code == 0, report.stderr
    others = {o["database"]: o["ok"] for o in report.json["other_databases"]}
    assert others == {author_db: True, joined[second]["database"]: True}  # the other clone's checkpoint verifies


def test_a_teammate_who_joins_is_told_they_hold_no_grant_here_and_how_to_get_one(clone: Path) -> None:
    """alice granted bob write in her database; bob's clone makes a database of its own, where
    he held nothing: every command (and every Claude Code tool call) of his answered "namespace
    'proj' not found", and joining had said only "Joined". It now says so, with the fix."""
    joined = run("join", "--json", cwd=clone, actor="bob")
    assert joined.code == 0, joined.stderr
    (warning,) = [line for line in joined.stderr.splitlines() if line.startswith("warning:")]
    assert "user:bob holds no permission in namespace proj" in warning
    fix = re.search(r"`intently (.+?)`", warning)
    assert fix is not None and fix.group(1) == "--actor user:alice grant user:bob write"
    assert run("goal", "add", "Ship the API", cwd=clone, actor="bob").error_line() == (
        "error: namespace 'proj' not found"  # what the warning foretold
    )
    assert run(*fix.group(1).split(), cwd=clone, actor="bob").code == 0  # the command it names, as written
    added = run("goal", "add", "Ship the API", cwd=clone, actor="bob")
    assert added.code == 0, added.stderr


def test_the_owner_joining_from_a_second_machine_is_not_warned(clone: Path) -> None:
    joined = run("init", cwd=clone, actor="alice")
    assert joined.code == 0 and "warning" not in joined.stderr, joined.stderr


def test_init_says_to_commit_the_home_and_its_gitignore_keeps_the_secrets_out(tmp_path: Path) -> None:
    """`intently init` left .intently/ untracked and said nothing of git, yet a teammate's clone
    joins only a home that was committed; what init asks to commit must hold no secret."""
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q")
    created = run("init", cwd=repo)
    assert created.code == 0, created.stderr
    assert "commit it to git" in " ".join(created.stdout.split())
    commit_all(repo, "intently home")
    tracked = git(repo, "ls-files", ".intently").split()
    assert ".intently/intently.toml" in tracked and ".intently/keys/public.json" in tracked
    assert not [p for p in tracked if p.startswith((".intently/state/", ".intently/keys/private/"))], tracked
