"""The real ``intently trigger`` commands, ``intently eval triggers`` and the benchmark, run tiny."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from intently import Intently
from intently.cli._app import app

INTENTLY = Path(sys.executable).with_name("intently")
DEV_DATA = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "triggers-dev.json"


def run(*args: str, home: Path | None = None, actor: str = "user:alice") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_")}
    env["INTENTLY_ACTOR"] = actor
    if home is not None:
        env["INTENTLY_HOME"] = str(home)
    return subprocess.run([str(INTENTLY), *args], capture_output=True, text=True, env=env, timeout=120)


def ok_json(*args: str, home: Path, actor: str = "user:alice") -> Any:
    """Run a command in-process (the console script's app), expecting success and JSON."""
    result = CliRunner().invoke(
        app, [*args, "--json"], env={"INTENTLY_HOME": str(home), "INTENTLY_ACTOR": actor}, catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_add_list_test_match_show_cancel(ix: Intently) -> None:
    home = ix.home.path
    added = ok_json(
        "trigger", "add", "Confirm the rollback owner", "--when", "launch checklist", "--when", '"go live"',
        "--event", "the launch", "--max-fires", "2", "--cooldown", "1h", "--exclude", "draft", home=home,
    )  # fmt: skip
    assert added["state"] == "armed" and added["when"] == [["launch checklist"], ['"go live"']]
    assert [i["id"] for i in ok_json("trigger", "list", home=home)] == [added["id"]]
    preview = ok_json("trigger", "test", "Launching the checklists now", home=home)
    assert preview["shown"][0]["id"] == added["id"] and not preview["fired"]
    assert "entry 1" in preview["shown"][0]["why"]
    assert ok_json("trigger", "test", "the draft launch checklist", home=home)["hits"] == []
    fired = ok_json("trigger", "match", "we go live tomorrow", home=home)
    assert fired["shown"][0]["fired"] and "Confirm the rollback owner" in fired["block"]
    shown = ok_json("trigger", "show", added["id"], home=home)
    assert shown["fire_count"] == 1 and shown["fires"][0]["entry"] == 1
    assert ok_json("trigger", "tick", home=home) == {"expired": 0, "rearmed": 0}
    assert ok_json("trigger", "cancel", added["id"], home=home)["state"] == "cancelled"
    assert ok_json("trigger", "list", home=home) == []
    env = {"INTENTLY_HOME": str(home), "INTENTLY_ACTOR": "user:alice"}
    people = CliRunner().invoke(app, ["trigger", "list", "--all"], env=env)
    assert people.exit_code == 0 and "cancelled" in people.stdout


def test_proposal_and_confirm_through_the_cli(ix: Intently) -> None:
    from intently import Actor, Permission

    ix.access.grant(Actor.parse("user:bob"), Permission.WRITE)
    proposal = ok_json("trigger", "add", "ask about it", "--when", "budget", home=ix.home.path, actor="user:bob")
    assert proposal["state"] == "pending"
    assert ok_json("trigger", "confirm", proposal["id"], home=ix.home.path)["state"] == "armed"


def test_time_only_request_is_one_error_line(ix: Intently) -> None:
    proc = run("trigger", "add", "standup", "--when", "Friday at 9", home=ix.home.path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "scheduler" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_eval_scores_both_systems_on_the_same_pairs(tmp_path: Path) -> None:
    data = {
        "intents": [
            {"id": "a", "triggers": [["launch"]]},
            {"id": "b", "triggers": [["rollback"]]},
        ],
        "turns": [
            {"id": "t1", "text": "We are launching today"},
            {"id": "t2", "text": "the launch slipped"},
            {"id": "t3", "text": "No rollback was needed"},
            {"id": "t4", "text": "plan the roll-back"},
            {"id": "t5", "text": "see https://x.org/launch"},
        ],
        "should_fire": [{"intent": "a", "turn": "t1"}, {"intent": "a", "turn": "t2"}, {"intent": "b", "turn": "t4"}],
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = ok_json("eval", "triggers", "--data", str(path), home=tmp_path)
    assert result["intently"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "tp": 3, "fp": 0, "fn": 0}
    assert result["exact_baseline"]["tp"] == 1 and result["exact_baseline"]["fp"] == 2  # t3 negated, t5 a URL
    bad = tmp_path / "bad.json"
    bad.write_text('{"intents": [{"id": "x"}], "turns": [], "should_fire": []}', encoding="utf-8")
    proc = run("eval", "triggers", "--data", str(bad))
    assert proc.returncode == 2 and "intents[0]" in proc.stderr


def test_eval_on_the_dev_file_beats_the_reference() -> None:
    assert DEV_DATA.exists(), f"shared dev data not found at {DEV_DATA} (shared/ must sit beside the checkout)"
    result = ok_json("eval", "triggers", "--data", str(DEV_DATA), home=DEV_DATA.parent)
    ours, base = result["intently"], result["exact_baseline"]
    assert ours["recall"] > base["recall"] and ours["precision"] >= base["precision"]


def test_bench_runs_tiny_and_misses_nothing() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "intently.bench", "triggers", "--intents", "300", "--turns", "30",
         "--fire-turns", "5", "--fire-intents", "10", "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["n_intents"] == 300
    assert result["intently"]["missed_fires"] == 0
    assert {"p50_us", "p99_us", "missed_fires"} <= set(result["fts5_baseline"])
    assert result["intently"]["fire_p50_us"] > 0


def test_the_id_a_list_shows_is_enough_to_act_on(ix: Intently) -> None:
    """`trigger list` shows the last 8 characters of each id (UUIDv7s of one minute share their
    start); those, or any unique 6+ character prefix or suffix, name the intent everywhere."""
    home = ix.home.path
    first = ok_json("trigger", "add", "Check the rollback plan", "--when", "deploy", home=home)["id"]
    second = ok_json("trigger", "add", "Ping the on-call", "--when", "incident", home=home)["id"]
    env = {"INTENTLY_HOME": str(home), "INTENTLY_ACTOR": "user:alice", "COLUMNS": "200"}
    listing = CliRunner().invoke(app, ["trigger", "list"], env=env)
    assert first[-8:] in listing.stdout and first not in listing.stdout
    assert ok_json("trigger", "show", first[-8:], home=home)["id"] == first
    assert ok_json("trigger", "show", second[:-3], home=home)["id"] == second  # a prefix works too
    cancelled = ok_json("trigger", "cancel", second[-8:], home=home)
    assert cancelled["id"] == second and cancelled["state"] == "cancelled"
    short = CliRunner().invoke(app, ["trigger", "show", first[-5:]], env=env)
    assert short.exit_code != 0 and "at least 6" in str(short.exception)


def test_eval_refuses_labels_that_name_nothing_in_the_file(tmp_path: Path) -> None:
    """A label whose intent or turn is not in the file was never scored (neither hit nor
    miss), so a typo raised recall silently; a repeated id counted its pairs twice."""
    base = {
        "intents": [{"id": "a", "triggers": [["launch"]]}],
        "turns": [{"id": "t1", "text": "we launch today"}, {"id": "t2", "text": "nothing here"}],
        "should_fire": [{"intent": "a", "turn": "t1"}],
    }
    cases = {
        "unknown-turn": ({"should_fire": [{"intent": "a", "turn": "t1"}, {"intent": "a", "turn": "t9"}]}, "t9"),
        "unknown-intent": ({"should_fire": [{"intent": "b", "turn": "t2"}]}, "'b'"),
        "no-turn-key": ({"should_fire": [{"intent": "a"}]}, "should_fire[0]"),
        "repeated-turn": ({"turns": [{"id": "t1", "text": "launch"}, {"id": "t1", "text": "launch"}]}, "turns[1]"),
        "not-an-object": ({"turns": ["we launch today"]}, "turns[0]"),
        "no-turns": ({"turns": [], "should_fire": []}, "empty list 'turns'"),
    }
    for name, (change, named) in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({**base, **change}), encoding="utf-8")
        proc = run("eval", "triggers", "--data", str(path))
        assert proc.returncode == 2, (name, proc.stderr)
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, name
        assert str(path) in proc.stderr and named in proc.stderr, (name, proc.stderr)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(base), encoding="utf-8")
    assert ok_json("eval", "triggers", "--data", str(good), home=tmp_path)["intently"]["recall"] == 1.0


def test_bench_cold_start_runs_tiny_and_checks_what_it_timed() -> None:
    """``--cold-start`` (documented in docs/triggers.md) had no tiny run in the suite, and its
    figures were printed whatever the probes found: a snapshot that was ignored or lost rows."""
    proc = subprocess.run(
        [sys.executable, "-m", "intently.bench", "triggers", "--intents", "300", "--cold-start", "--changes", "3",
         "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    cold = json.loads(proc.stdout)
    rebuilt, loaded = cold["rebuild"], cold["snapshot_load"]
    assert (rebuilt["origin"], rebuilt["intents"]) == ("store", 300)
    assert (loaded["origin"], loaded["intents"]) == ("snapshot", 303)
    assert rebuilt["hits"] == loaded["hits"] >= cold["planted_hits_expected"] == 2
    assert rebuilt["write_s"] is not None and rebuilt["snapshot_bytes"] > 0


def test_bench_cold_start_refuses_figures_from_a_wrong_load() -> None:
    from intently.bench.triggers import _check_cold

    good = {"origin": "store", "intents": 10, "hits": 2}
    _check_cold(good, {"origin": "snapshot", "intents": 12, "hits": 2}, 10, 2, 2)
    wrong = {
        "ignored snapshot": {"origin": "store", "intents": 12, "hits": 2},
        "lost rows": {"origin": "snapshot", "intents": 7, "hits": 2},
        "lost a fire": {"origin": "snapshot", "intents": 12, "hits": 1},
    }
    for name, loaded in wrong.items():
        try:
            _check_cold(good, loaded, 10, 2, 2)
        except RuntimeError as exc:
            assert "cold-start figures refused" in str(exc), name
        else:
            raise AssertionError(f"{name}: accepted")


def test_bench_refuses_a_count_it_cannot_read() -> None:
    for value in ("abc", "0"):
        proc = subprocess.run(
            [sys.executable, "-m", "intently.bench", "triggers", "--intents", value, "--turns", "3"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 2 and "--intents" in proc.stderr and "Traceback" not in proc.stderr


def test_eval_reads_the_synonyms_file_it_is_given(tmp_path: Path) -> None:
    """``--synonyms team.yaml`` used to read ``synonyms.yaml`` beside it instead (the option
    went through ``Matcher.for_home(parent)``), so a file of any other name was ignored."""
    data = {
        "intents": [{"id": "a", "triggers": [["frobnicator"]]}],
        "turns": [{"id": "t1", "text": "the widgetiser broke again"}, {"id": "t2", "text": "lunch"}],
        "should_fire": [{"intent": "a", "turn": "t1"}],
    }
    path = tmp_path / "data.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    team = tmp_path / "team.yaml"
    team.write_text("equivalents:\n  - [frobnicator, widgetiser]\n", encoding="utf-8")
    plain = ok_json("eval", "triggers", "--data", str(path), home=tmp_path)
    assert plain["intently"]["tp"] == 0
    extended = ok_json("eval", "triggers", "--data", str(path), "--synonyms", str(team), home=tmp_path)
    assert extended["intently"]["tp"] == 1 and extended["intently"]["fp"] == 0
    proc = run("eval", "triggers", "--data", str(path), "--synonyms", str(tmp_path / "nope.yaml"))
    assert proc.returncode == 2 and "nope.yaml" in proc.stderr and "Traceback" not in proc.stderr


def test_update_dash_removes_the_scope_and_the_exclusions(ix: Intently) -> None:
    """A scope or an exclusion could be replaced from the CLI but never removed, short of
    cancelling the intent (and losing its fire history): ``-`` empties the list."""
    home = ix.home.path
    added = ok_json(
        "trigger", "add", "Page the ops lead", "--when", "outage", "--scope", "channel:ops", "--exclude", "drill",
        home=home,
    )  # fmt: skip
    assert ok_json("trigger", "test", "outage drill", "--channel", "ops", home=home)["hits"] == []
    assert ok_json("trigger", "test", "an outage", home=home)["shown"] == []  # out of scope
    updated = ok_json("trigger", "update", added["id"], "--scope", "-", "--exclude", "-", home=home)
    assert updated["scope"] == {"channel": None, "conversation": None, "sender": None} and updated["exclude"] == []
    assert [h["id"] for h in ok_json("trigger", "test", "an outage drill", home=home)["shown"]] == [added["id"]]


def test_list_says_which_intents_are_snoozed_or_cooling_down(ix: Intently) -> None:
    """A snoozed intent is still ``armed``, and the table said just that: it looked as if it
    would fire on the next mention. The state column now says until when it is quiet."""
    snoozed = ix.triggers.add("Check the canary", when="canary", expires="2099-01-01")
    ix.triggers.snooze(snoozed.id, "2098-05-01T10:30:00Z")
    cooling = ix.triggers.add("Check the rollout", when="rollout", expires="2099-01-01", cooldown="36500d")
    assert ix.triggers.match("the rollout").shown
    result = CliRunner().invoke(
        app,
        ["trigger", "list"],
        env={"INTENTLY_HOME": str(ix.home.path), "INTENTLY_ACTOR": "user:alice", "COLUMNS": "300"},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    lines = {
        line.split()[1]: line
        for line in result.stdout.splitlines()
        if snoozed.id[-8:] in line or cooling.id[-8:] in line
    }
    assert "armed, snoozed until 2098-05-01 10:30" in lines[snoozed.id[-8:]]
    assert "fired, quiet until 2126-" in lines[cooling.id[-8:]]
    listed = ok_json("trigger", "list", home=ix.home.path)  # --json keeps its keys
    assert {i["id"]: i["state"] for i in listed} == {snoozed.id: "armed", cooling.id: "fired"}
