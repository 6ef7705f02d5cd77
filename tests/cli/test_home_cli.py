"""``intently init|grant|revoke|grants|whoami`` and the CLI conventions, through a real subprocess."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from intently import Actor, Permission, __version__

from .conftest import library, run

pytestmark = pytest.mark.sqlite_only  # edits or copies the SQLite file directly


def test_init_creates_the_home_and_reports_stable_keys(tmp_path: Path) -> None:
    root = tmp_path / "My Project"
    root.mkdir()
    result = run("init", "--json", cwd=root)
    assert result.code == 0, result.stderr
    data = result.json
    assert set(data) == {"joined", "home", "namespace", "owner", "actor", "key_id", "database"}
    assert data["joined"] is False and data["database"]
    assert (data["namespace"], data["owner"]) == ("my-project", "user:alice")
    home = root / ".intently"
    assert data["home"] == str(home)
    gitignore = (home / ".gitignore").read_text().splitlines()
    assert "state/" in gitignore and "keys/private/" in gitignore
    for tracked in ("intently.toml", "keys/public.json", "checkpoints.json"):
        assert (home / tracked).is_file(), tracked
    assert (home / "requirements").is_dir()
    assert data["key_id"] in (home / "keys" / "public.json").read_text()
    again = run("init", cwd=root)
    assert "already exists" in again.error_line()
    assert again.code == 2


def test_init_prints_a_folder_name_with_brackets_as_it_is(tmp_path: Path) -> None:
    """The folder is the user's, but Rich read ``[bold]`` in it as markup and dropped it, so the
    line named a folder that does not exist."""
    root = tmp_path / "proj [bold]x"
    root.mkdir()
    result = run("init", cwd=root)
    assert result.code == 0, result.stderr
    assert f"Created {root / '.intently'} " in result.stdout.replace("\n", "")


def test_whoami_grant_revoke_grants(home: Path) -> None:
    who = run("whoami", "--json", cwd=home).json
    assert who == {
        "actor": "user:alice",
        "namespace": "proj",
        "home": str(home / ".intently"),
        "permissions": ["admin", "manage-reminders", "read", "write"],
        "namespaces": {"proj": ["admin", "manage-reminders", "read", "write"]},
    }
    granted = run("grant", "agent:claude", "write", "--json", cwd=home)
    assert granted.json == {"namespace": "proj", "actor": "agent:claude", "permission": "write"}
    claude = run("whoami", "--json", cwd=home, actor="agent:claude").json
    assert claude["permissions"] == ["read", "write"]
    assert claude["namespaces"] == {"proj": ["read", "write"]}
    listing = run("grants", cwd=home)  # people get a table
    assert "agent:claude" in listing.stdout and "owner user:alice" in listing.stdout
    revoked = run("revoke", "claude", "read", "--json", cwd=home).json
    assert revoked == {"namespace": "proj", "actor": "user:claude", "permission": "read", "revoked": False}
    revoked = run("revoke", "agent:claude", "write", "--json", cwd=home).json
    assert revoked == {"namespace": "proj", "actor": "agent:claude", "permission": "write", "revoked": True}
    with library(home) as ix:
        assert ix.access.permissions(Actor.parse("agent:claude"), "proj") == set()
        assert [o.op for o in ix.log.read("proj")] == ["HOME_INIT", "GRANT", "REVOKE"]
        grants = ix.access.grants()
    assert grants == []


def test_grants_json_keys(home: Path) -> None:
    with library(home) as ix:
        ix.access.grant(Actor.parse("bob"), Permission.READ)
    listing = run("grants", "--json", cwd=home).json
    assert listing["owner"] == "user:alice"
    (grant,) = listing["grants"]
    assert set(grant) == {"namespace", "actor", "permission", "granted_by", "granted_at"}
    assert (grant["actor"], grant["permission"], grant["granted_by"]) == ("user:bob", "read", "user:alice")


def test_default_deny_and_admin_only_grants(home: Path) -> None:
    denied = run("log", "show", cwd=home, actor="bob")
    assert denied.error_line() == "error: namespace 'proj' not found"
    assert denied.code == 3
    with library(home) as ix:
        ix.access.grant(Actor.parse("bob"), Permission.WRITE)
    forbidden = run("grant", "carol", "read", cwd=home, actor="bob")
    assert forbidden.error_line() == "error: user:bob lacks admin in namespace 'proj'"
    assert forbidden.code == 4


def test_non_readers_cannot_tell_whether_a_namespace_exists(home: Path) -> None:
    with library(home, namespace="secret") as ix:
        ix.access.grant(Actor.parse("carol"), Permission.READ)
    lines = {}
    for ns in ("secret", "no-such-ns"):
        result = run("--namespace", ns, "log", "show", cwd=home, actor="bob")
        lines[ns] = (result.code, result.error_line().replace(ns, "<ns>"))
    assert lines["secret"] == lines["no-such-ns"] == (3, "error: namespace '<ns>' not found")


def test_home_is_found_from_a_subfolder_and_by_env_and_option(home: Path, tmp_path: Path) -> None:
    sub = home / "src" / "deep"
    sub.mkdir(parents=True)
    expected = str(home / ".intently")
    assert run("whoami", "--json", cwd=sub).json["home"] == expected
    outside = tmp_path / "outside"
    outside.mkdir()
    assert run("whoami", "--json", cwd=outside, env={"INTENTLY_HOME": expected}).json["home"] == expected
    assert run("--home", str(home), "whoami", "--json", cwd=outside).json["home"] == expected
    missing = run("whoami", cwd=outside)
    assert "no .intently/ found" in missing.error_line()
    assert missing.code == 3


def test_bad_input_is_one_line_naming_the_field(home: Path) -> None:
    bad_ns = run("--namespace", "Not OK!", "whoami", cwd=home)
    assert bad_ns.error_line().startswith("error: namespace:")
    assert bad_ns.code == 2
    bad_actor = run("whoami", cwd=home, actor="robot:x")
    assert "unknown actor kind" in bad_actor.error_line()
    config = home / ".intently" / "intently.toml"
    config.write_text(config.read_text().replace("budget = 4000", "budget = 'lots'"))
    bad_config = run("whoami", cwd=home)
    assert "intently.toml:" in bad_config.error_line() and ": context.budget" in bad_config.error_line()


def test_usage_errors_say_what_is_wrong_with_exit_2_and_no_traceback(home: Path) -> None:
    for args, says in ((("bogus",), "No such command 'bogus'"), (("goal", "add"), "Missing argument")):
        result = run(*args, cwd=home)
        assert result.code == 2
        assert says in result.stderr
        assert "internal error" not in result.stderr and "Traceback" not in result.stderr


def test_a_database_newer_than_the_code_is_one_line_and_untouched(home: Path) -> None:
    db = home / ".intently" / "state" / "intently.db"
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE schema_versions SET version = 42 WHERE component = 'access'")
    before = db.read_bytes()
    result = run("whoami", cwd=home)
    assert "'access' schema is version 42" in result.error_line()
    assert result.code == 7
    upgrade = run("store", "upgrade", cwd=home)
    assert "version 42" in upgrade.error_line()
    assert db.read_bytes() == before


def test_store_status_and_upgrade(home: Path) -> None:
    db = home / ".intently" / "state" / "intently.db"
    with closing(sqlite3.connect(db)) as conn, conn:  # as an intently from before grants left it
        conn.execute("DROP TABLE access_grants")
        conn.execute("DELETE FROM schema_versions WHERE component = 'access'")
    status = run("store", "status", "--json", cwd=home).json
    assert set(status) == {"url", "components"}
    by_name = {c["component"]: c for c in status["components"]}
    assert by_name["access"] == {"component": "access", "current": 0, "latest": 1, "pending": [1]}
    assert set(by_name["log"]) == {"component", "current", "latest", "pending"}
    upgraded = run("store", "upgrade", "--json", cwd=home).json
    assert upgraded == {"applied": [{"component": "access", "version": 1}], "adopted": 0}
    with library(home) as ix:
        assert not [s for s in ix.store.schema_status() if s.pending]
        ix.access.grant(Actor.parse("bob"), Permission.READ)


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        (["req", "preview", "--help"], "[requirements] budget"),
        (["req", "scan", "--help"], "[llm] endpoint"),
        (["context", "--help"], "[context] budget"),
        (["review", "edit", "--help"], "[e]dit"),
    ],
)
def test_help_shows_config_tables_in_brackets(command: list[str], shown: str) -> None:
    """Help text names settings as `[table] key`; the help renderer must not swallow the
    brackets as markup and leave "(default:  budget)"."""
    from typer.testing import CliRunner

    from intently.cli._app import app

    result = CliRunner().invoke(app, command, env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert shown in " ".join(result.output.split())


def test_python_dash_m_intently_runs_the_cli(tmp_path: Path) -> None:
    """Where the scripts folder is not on PATH, ``python -m intently`` is the same command."""
    done = subprocess.run(
        [sys.executable, "-m", "intently", "--version"], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert __version__ in done.stdout
