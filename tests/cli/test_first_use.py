"""What a first-time user hits on the command line, each through the real ``intently``
process: typos in filters, a missing folder or editor, a log nobody may read, ids in a
piped table, ``--help`` that says what each option means."""

from __future__ import annotations

import json
import re
import sqlite3
import stat
from contextlib import closing
from pathlib import Path

import pytest
import typer

from intently import Actor, Permission
from intently.cli._app import app

from .conftest import library, run

pytestmark = pytest.mark.sqlite_only  # the CLI tests run on the default SQLite home

SEND = {
    "name": "send_email",
    "description": "Send an email.",
    "inputSchema": {"type": "object", "properties": {"recipients": {"type": "array"}, "body": {"type": "string"}}},
}


def test_trigger_list_state_filter_is_checked_and_takes_any_case(home: Path) -> None:
    with library(home) as ix:
        ix.triggers.add("Check the rollback plan", when="deploy")
    bad = run("trigger", "list", "--state", "bogus", cwd=home)
    assert bad.code == 2  # was an internal error (70): ValueError from the enum
    line = bad.error_line()
    assert line.startswith("error: state: unknown state 'bogus'") and "armed" in line
    listed = run("trigger", "list", "--state", "ARMED", "--json", cwd=home)
    assert listed.code == 0, listed.stderr
    assert [i["reminder"] for i in listed.json] == ["Check the rollback plan"]


def test_req_list_status_filter_is_checked(home: Path) -> None:
    assert run("req", "add", "Never commit secrets", cwd=home).code == 0
    bad = run("req", "list", "--status", "activ", cwd=home)
    assert bad.code == 2  # was exit 0 and "No requirements found."
    assert bad.error_line() == "error: status: unknown status 'activ' (one of active, proposed, disabled, superseded)"
    listed = run("req", "list", "--status", "ACTIVE", "--json", cwd=home)
    assert [r["statement"] for r in listed.json] == ["Never commit secrets"]


def test_gate_export_into_a_missing_folder_names_the_path(home: Path, tmp_path: Path) -> None:
    with library(home) as ix:
        session = ix.gate.session([SEND], user_request="Reply to bob@example.com about the offsite")
        session.check("send_email", {"recipients": ["bob@example.com"], "body": "See you Friday"})
        run_id = ix.gate.runs(1)[0]["id"]
    target = tmp_path / "no-such-folder" / "trace.json"
    failed = run("gate", "export", run_id, "--out", str(target), cwd=home)
    assert failed.code == 2  # was an internal error (70): FileNotFoundError
    assert failed.error_line().startswith(f"error: {target}: cannot write the trace")
    written = run("gate", "export", run_id, "--out", str(tmp_path / "trace.json"), "--json", cwd=home)
    assert written.code == 0 and written.json["decisions"] == 1


def _editor(tmp_path: Path, body: str) -> str:
    """An $EDITOR: a shell script that edits the file it is given."""
    script = tmp_path / "editor.sh"
    script.write_text(f'#!/bin/sh\n{body} "$1"\n', encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_req_edit_in_an_editor_keeps_a_refused_text_and_names_a_missing_editor(home: Path, tmp_path: Path) -> None:
    req_id = run("req", "add", "Never commit secrets", "--json", cwd=home).json["id"]
    path = home / ".intently" / "requirements" / f"{req_id}.md"
    before = path.read_text(encoding="utf-8")

    missing = run("req", "edit", req_id, cwd=home, env={"EDITOR": "no-such-editor-anywhere"})
    assert missing.code == 2  # was an internal error (70): FileNotFoundError
    assert missing.error_line().startswith("error: EDITOR: cannot run editor 'no-such-editor-anywhere'")

    # The person rewrote the statement and slipped on the confidence: the file is refused
    # (it stays as it was), but their text is kept where the error says.
    editor = _editor(
        tmp_path,
        "sed -i -e 's/Never commit secrets/Never commit secrets or keys/' -e 's/^confidence:.*/confidence: hgih/'",
    )
    refused = run("req", "edit", req_id, cwd=home, env={"EDITOR": editor})
    assert refused.code == 2
    line = refused.error_line()
    assert "confidence" in line
    found = re.search(r"your text is kept in (\S+)$", line)
    assert found, line
    kept = Path(found.group(1))
    assert "Never commit secrets or keys" in kept.read_text(encoding="utf-8")
    kept.unlink()
    assert path.read_text(encoding="utf-8") == before


def test_log_verify_checks_something_or_fails(home: Path) -> None:
    owner = run("log", "verify", cwd=home)
    assert owner.code == 0, owner.stderr
    assert owner.stderr == ""  # no stray line from a progress bar that cannot draw off a terminal
    nobody = run("log", "verify", "--json", cwd=home, actor="eve")
    assert nobody.code == 3  # was 0: "verified" with not one stream read
    assert nobody.error_line() == "error: user:eve may read no namespace, so there is no stream to verify"
    with library(home) as ix:
        ix.access.grant(Actor.parse("eve"), Permission.READ)
    reader = run("log", "verify", "--json", cwd=home, actor="eve")
    assert reader.code == 0 and [s["stream"] for s in reader.json["streams"]] == ["proj"]


def test_whoami_lists_the_namespaces_a_misspelt_one_included(home: Path) -> None:
    assert run("--namespace", "porj", "goal", "add", "Ship it", cwd=home).code == 0
    who = run("whoami", "--json", cwd=home).json
    assert sorted(who["namespaces"]) == ["porj", "proj"]
    assert who["namespace"] == "proj"


def test_log_consistency_with_sizes_out_of_order_is_bad_input_not_tampering(home: Path) -> None:
    with library(home) as ix:
        for name in ("bob", "carol"):
            ix.access.grant(Actor.parse(name), Permission.READ)
    backwards = run("log", "consistency", "3", "2", cwd=home)
    assert backwards.code == 2  # was 8, the exit code of a log that does not verify
    assert backwards.error_line() == "error: old_size: must be between 1 and the newer size 2, got 3"
    assert run("log", "consistency", "0", cwd=home).code == 2
    good = run("log", "consistency", "1", "3", "--json", cwd=home)
    assert good.code == 0 and good.json["verified"] is True


@pytest.mark.parametrize("command", [("log", "show"), ("gate", "runs"), ("gate", "vocab", "suggest")])
def test_a_negative_limit_is_refused(home: Path, command: tuple[str, ...]) -> None:
    # SQLite read LIMIT -1 as "everything", PostgreSQL refused it with a StoreError (exit 7).
    result = run(*command, "--limit", "-1", cwd=home)
    assert result.code == 2
    assert "--limit" in result.stderr


def test_ids_in_a_piped_table_are_never_cut(home: Path) -> None:
    with library(home) as ix:
        goal = ix.goals.add("Ship the API with a long enough text to squeeze every other column", owner="bob")
        req = ix.requirements.add("Never commit secrets to the repository under any circumstances")
    listed = run("goal", "list", cwd=home, env={"COLUMNS": "50"})  # stdout is a pipe
    assert goal.id[-8:] in listed.stdout, listed.stdout
    shown = run("goal", "show", goal.id[-8:], "--json", cwd=home)
    assert shown.json["id"] == goal.id
    reqs = run("req", "list", cwd=home, env={"COLUMNS": "50"})
    assert req.id in reqs.stdout, reqs.stdout


def test_a_bad_domain_name_says_why(home: Path) -> None:
    bad = run("req", "domains", "add", "Bad Name", cwd=home)
    assert bad.code == 2
    assert bad.error_line() == "error: domains.yaml: name: domain 'Bad Name' must be lower-case letters, digits or ._-"


def test_verify_checkpoint_with_a_missing_keyring_says_so(home: Path, tmp_path: Path) -> None:
    checkpoint = tmp_path / "cp.json"
    checkpoint.write_text("{}", encoding="utf-8")
    with library(home) as ix:
        cp = ix.log.latest_checkpoints()["proj"]
        checkpoint.write_text(json.dumps(cp.to_json()), encoding="utf-8")
    missing = tmp_path / "public.json"
    result = run("log", "verify-checkpoint", str(checkpoint), "--keys", str(missing), cwd=home)
    assert result.code == 2
    assert result.error_line() == f"error: {missing}: no such keyring file"  # was "no public keys"


def test_explicit_bundle_owner_filter_reads_a_bare_name_as_a_user(home: Path) -> None:
    with library(home) as ix:
        ix.goals.add("Ship the API", owner="bob")
        ix.goals.add("Write the docs", owner="carol")
    for owner in ("bob", "user:bob"):
        got = run("goal", "bundle", "--explicit", "--owner", owner, "--json", cwd=home)
        assert [i["intent"]["value"] for i in got.json["items"]] == ["Ship the API"], owner  # "bob" found nothing


def test_every_option_and_argument_has_help() -> None:
    """`--help` is the first documentation a user reads: nothing in it may be a bare name."""
    missing: list[str] = []

    def walk(command: object, path: list[str]) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                walk(sub, [*path, name])
            return
        for param in getattr(command, "params", []):
            text = getattr(param, "help", None) or ""
            if param.name != "help" and (not text.strip() or text.strip() == "Repeat for several."):
                missing.append(f"intently {' '.join(path)}: {param.name}")

    walk(typer.main.get_command(app), [])
    assert missing == []


def test_a_bare_command_group_lists_its_commands(home: Path) -> None:
    for group in ("goal", "trigger", "req", "log", "gate"):
        result = run(group, cwd=home)
        assert "Commands" in result.stdout, (group, result.stderr)  # `goal` said only "Error: Missing command."


def test_a_bad_owner_or_stakeholder_is_named_by_its_field(home: Path) -> None:
    stakeholder = run("goal", "add", "Ship it", "--stakeholder", "carol", "--stakeholder", "bad actor", cwd=home)
    assert stakeholder.code == 2
    assert stakeholder.error_line().startswith("error: stakeholders[1]: actor name 'bad actor'")  # was "actor:"
    owner = run("goal", "add", "Ship it", "--owner", "robot:x", cwd=home)
    assert owner.error_line() == "error: owner: unknown actor kind 'robot' (one of user, agent, system, tool)"


def test_req_preview_says_when_the_project_opted_out(home: Path) -> None:
    with library(home) as ix:
        ix.requirements.add("Never commit secrets to the repository")
    config = home / ".intently" / "intently.toml"
    config.write_text(config.read_text(encoding="utf-8").replace('inject = "on"', 'inject = "off"'), encoding="utf-8")
    preview = run("req", "preview", "commit the secrets", "--explain", cwd=home)
    assert preview.code == 0, preview.stderr
    # was "(no requirements selected)" and an empty "why" table: nothing said where to look
    assert '[requirements] inject = "off"' in preview.stdout and str(config) in preview.stdout


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--cooldown", "99999999d", "error: cooldown: at most 36500 days (100 years)"),
        (
            "--cooldown",
            "9999999999999999999999d",
            "error: cooldown: duration '9999999999999999999999d' is out of range",
        ),
        ("--expires", "99999999d", "error: expires: at most 36500 days (100 years)"),
        ("--max-fires", "1000000000000", "error: max_fires: max fires must be at most 1,000,000"),
    ],
)
def test_trigger_add_refuses_durations_and_budgets_out_of_range(
    home: Path, option: str, value: str, message: str
) -> None:
    # Each was an internal error (OverflowError) or, for the cooldown, accepted and then
    # failing every fire; a fire budget past 2^31 was a StoreError on PostgreSQL only.
    result = run("trigger", "add", "Check the rollback plan", "--when", "deploy", option, value, cwd=home)
    assert result.code == 2
    assert result.error_line() == message


def test_a_stored_huge_cooldown_does_not_break_matching(home: Path) -> None:
    """A row written before the cap (here by hand in the real SQLite file) still fires, and
    the other intents of the turn with it: the overflow used to fail the whole match, which
    emptied the standing_intents section of every context block."""
    with library(home) as ix:
        big = ix.triggers.add("Check the rollback plan", when="deploy")
        other = ix.triggers.add("Tell the on-call", when="deploy")
    with closing(sqlite3.connect(home / ".intently" / "state" / "intently.db")) as db:
        db.execute("UPDATE triggers_intents SET cooldown_seconds = ? WHERE id = ?", (8_639_999_913_600, big.id))
        db.commit()
    fired = run("trigger", "match", "deploying now", "--json", cwd=home)
    assert fired.code == 0, fired.stderr
    assert fired.json["fired"] is True
    assert sorted(h["id"] for h in fired.json["shown"] if h["fired"]) == sorted([big.id, other.id])


def test_a_due_date_in_words_is_refused_naming_the_forms_that_are_read(home: Path) -> None:
    """`--due tomorrow` said only "not an RFC 3339 time": the error now shows what to type instead."""
    bad = run("goal", "add", "Send the deck", "--due", "tomorrow", cwd=home)
    assert bad.code == 2
    line = bad.error_line()
    assert line.startswith("error: due: not an RFC 3339 time: 'tomorrow'") and "2026-03-31" in line, line
    example = re.search(r"a date such as (\S+),", line)
    assert example is not None
    later = str(int(example.group(1)[:4]) + 100) + example.group(1)[4:]  # the named form, kept in the future
    added = run("goal", "add", "Send the deck", "--due", later, "--json", cwd=home)
    assert added.code == 0, added.stderr
    assert added.json["target_completion"].startswith(later)
