"""``intently review`` and ``intently eval extraction`` through the real CLI app."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from datetime import time as dtime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner

from intently import Intently
from intently.access import Permission
from intently.cli._app import app
from intently.core.actors import Actor
from intently.core.errors import InvalidTransition

runner = CliRunner()


def _run(ix: Intently, *args: str, input: str | None = None) -> str:
    result = runner.invoke(app, ["--home", str(ix.home.path), "--actor", "user:alice", *args], input=input)
    assert result.exit_code == 0, result.output
    return result.output


def _observe(ix: Intently, text: str) -> dict[str, object]:
    data = json.loads(_run(ix, "review", "observe", text, "--speaker", "bob", "--time", "2026-03-04T10:00:00Z",
                           "--json"))  # fmt: skip
    assert isinstance(data, dict)
    return data


def test_observe_then_list_then_confirm_and_dismiss(ix: Intently) -> None:
    data = _observe(ix, "I'll publish the advisory by 2099-01-01. Should we drop Node 18?")
    proposals = data["proposals"]
    assert isinstance(proposals, list) and [p["status"] for p in proposals] == ["created", "created"]
    queue = json.loads(_run(ix, "review", "--json"))
    assert [q["intent_type"] for q in queue] == ["COMMITMENT", "OPEN_QUESTION"]
    confirmed = json.loads(_run(ix, "review", "confirm", queue[0]["id"], "--json"))
    assert confirmed["epistemic_type"] == "ASSERTED"
    dismissed = json.loads(_run(ix, "review", "dismiss", queue[1]["id"], "--reason", "not ours", "--json"))
    assert dismissed["epistemic_type"] == "DEPRECATED"
    assert json.loads(_run(ix, "review", "--json")) == []


def test_interactive_review_confirm_edit_skip(ix: Intently) -> None:
    _observe(ix, "Michael to close the issue. Should we drop Node 18? Rich will add a comment to the issue.")
    # item 1: confirm; item 2: edit the text, then dismiss with no reason; item 3: skip
    keys = "c\n" + "e\nShould we drop Node 18 in v24?\n\n\n\nd\n\n" + "s\n"
    output = _run(ix, "review", input=keys)
    assert "1 confirmed, 1 dismissed, 1 edited, 1 skipped" in output
    assert "[c]onfirm / [d]ismiss / [e]dit / [s]kip / [q]uit" in output  # the keys are shown, not eaten as markup
    with Intently.open(ix.home.path, actor="user:alice") as again:
        (left,) = again.goals.review_queue()
        assert left.value == "Rich will add a comment to the issue"
        edited = [i for i in again.goals.list_intents(include_dismissed=True) if i.value.endswith("in v24?")]
    assert [i.epistemic_type.value for i in edited] == ["DEPRECATED"]


def test_empty_queue_says_so(ix: Intently) -> None:
    assert "Nothing waiting for review" in _run(ix, "review")


def test_eval_extraction_on_a_tiny_slice(tmp_path: Path) -> None:
    """The eval cannot rot: it runs on a few labelled turns and the figures follow from them."""
    rows = [
        {"id": "a", "speaker": "-", "text": "Michael to rename the TSC repo", "labels": [{"type": "COMMITMENT"}]},
        {"id": "b", "speaker": "x", "text": "I sent it yesterday.", "labels": []},
        {"id": "c", "speaker": "x", "text": "Should we adopt a chalk-like API?", "labels": [{"type": "OPEN_QUESTION"}]},
        {"id": "d", "speaker": "x", "text": "The spec PR is approved.", "labels": [{"type": "DECISION"}]},
        {"id": "e", "speaker": "x", "text": "It rained all day.", "labels": [{"type": "RISK"}]},
    ]
    data = tmp_path / "slice.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["eval", "extraction", "--data", str(data), "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert figures["types"]["COMMITMENT"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "tp": 1, "fp": 0, "fn": 0}
    assert figures["types"]["RISK"]["fn"] == 1
    assert figures["rfc4"] == {"precision": 1.0, "recall": 0.6667, "f1": 0.8}
    assert figures["all"]["recall"] == 0.75
    assert figures["turns_per_second"] > 0
    table = runner.invoke(app, ["eval", "extraction", "--data", str(data)])
    assert "rfc4" in table.output
    alone = runner.invoke(app, ["eval", "extraction", "--data", str(data), "--extractor", "rules-only", "--json"])
    assert alone.exit_code == 0, alone.output
    assert json.loads(alone.output)["extractor"] == "rules-only"


def test_eval_times_a_warm_extractor_with_the_same_figures(tmp_path: Path) -> None:
    """``turns_per_second`` is the extractor's reading speed: the word lists, which compile at
    their first use, are compiled before the clock starts, not by the first turns it times (a
    single pass read about half the speed of ``--repeat 20`` for that alone). Warming changes
    no figure: an extractor that skips it scores the same."""
    from importlib import resources

    from intently.extract import Lexicon, RuleExtractor, load_labelled, score
    from intently.extract._lexicon import Phrases

    class Unwarmed(RuleExtractor):
        def warm(self) -> None:
            return None

    rows = [
        {"id": "a", "speaker": "-", "text": "Michael to rename the TSC repo", "labels": [{"type": "COMMITMENT"}]},
        {"id": "b", "speaker": "x", "text": "Should we adopt it? I sent it.", "labels": [{"type": "OPEN_QUESTION"}]},
    ]
    data = tmp_path / "slice.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    shipped = Path(str(resources.files("intently.extract").joinpath("lexicon.toml")))
    lex = Lexicon.from_path(shipped)  # a lexicon of its own: nothing compiled yet
    lists = [v for v in vars(lex).values() if isinstance(v, Phrases)]
    warm = score(RuleExtractor(lex), load_labelled(data)).to_json()
    assert all("regex" in vars(p) for p in lists), "the eval's clock ran while word lists compiled"
    cold = score(Unwarmed(Lexicon.from_path(shipped)), load_labelled(data)).to_json()
    assert warm.pop("turns_per_second") > 0
    cold.pop("turns_per_second")
    assert warm == cold
    assert warm["types"]["COMMITMENT"]["tp"] == 1


def test_eval_scores_finer_types_as_the_types_they_refine(tmp_path: Path) -> None:
    """FOLLOW_UP counts as COMMITMENT and DECISION_IN_PROGRESS as OPEN_QUESTION, on both sides."""
    rows = [
        {"id": "a", "speaker": "x", "text": "Michael to rename the TSC repo", "labels": [{"type": "FOLLOW_UP"}]},
        {"id": "b", "speaker": "x", "text": "We still need to decide on the license.",
         "labels": [{"type": "DECISION_IN_PROGRESS"}]},
        {"id": "c", "speaker": "x", "text": "I'll write the docs next week. It rained all day.", "labels": []},
    ]  # fmt: skip
    data = tmp_path / "finer.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    result = runner.invoke(app, ["eval", "extraction", "--data", str(data), "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert (figures["types"]["COMMITMENT"]["tp"], figures["types"]["OPEN_QUESTION"]["tp"]) == (1, 1)
    assert figures["turns_with_wrong_type"] == 1 and figures["turns"] == 3  # turn c: a commitment nobody labelled
    table = runner.invoke(app, ["eval", "extraction", "--data", str(data)])
    assert "turns proposing a type the labels lack: 1 of 3" in table.output


def test_eval_bad_line_names_file_and_line(tmp_path: Path) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text('{"id": "a", "text": "ok", "labels": []}\n{"id": "b"\n', encoding="utf-8")
    result = runner.invoke(app, ["eval", "extraction", "--data", str(data)])
    assert result.exit_code != 0
    assert f"{data}:2" in str(result.exception)


def test_review_without_answers_stops_cleanly_and_says_what_is_left(ix: Intently) -> None:
    """`intently review` in a script (no terminal, answers run out) is no crash: it stops, counts
    what it did and names the commands that need no terminal."""
    _observe(ix, "Michael to close the issue. Should we drop Node 18?")
    result = runner.invoke(app, ["--home", str(ix.home.path), "--actor", "user:alice", "review"], input="s\n")
    assert result.exit_code == 0, result.output
    assert "input ended; 1 left in the queue" in result.output
    assert "0 confirmed, 0 dismissed, 0 edited, 1 skipped" in result.output


def test_review_edit_corrects_a_candidate_and_only_a_candidate(ix: Intently) -> None:
    _observe(ix, "Michael to close the issue by 2099-01-01.")
    (candidate,) = json.loads(_run(ix, "review", "--json"))
    edited = json.loads(
        _run(ix, "review", "edit", candidate["id"][-8:], "--text", "Close issue #12", "--owner", "rich", "--json")
    )
    assert (edited["value"], edited["owner"], edited["epistemic_type"]) == ("Close issue #12", "user:rich", "INFERRED")
    cleared = json.loads(_run(ix, "review", "edit", candidate["id"], "--owner", "-", "--due", "-", "--json"))
    assert cleared["owner"] is None and cleared["target_completion"] is None
    _run(ix, "review", "confirm", candidate["id"])
    late = runner.invoke(app, ["--home", str(ix.home.path), "--actor", "user:alice", "review", "edit",
                               candidate["id"], "--text", "changed after review"])  # fmt: skip
    assert isinstance(late.exception, InvalidTransition) and "no longer awaiting review" in str(late.exception)
    again = runner.invoke(app, ["--home", str(ix.home.path), "--actor", "user:alice", "review", "confirm",
                                candidate["id"]])  # fmt: skip
    assert isinstance(again.exception, InvalidTransition) and "already confirmed" in str(again.exception)


def test_interactive_edit_can_remove_an_owner(ix: Intently) -> None:
    """Enter keeps a field; "-" removes it (an empty answer would give the default back)."""
    _observe(ix, "Michael to close the issue.")
    output = _run(ix, "review", input="e\n\n\n-\n\nc\n")
    assert "1 confirmed, 0 dismissed, 1 edited, 0 skipped" in output
    with Intently.open(ix.home.path, actor="user:alice") as again:
        (intent,) = again.goals.list_intents()
    assert intent.value == "Michael to close the issue" and intent.owner is None


def test_observe_time_keeps_the_speakers_zone(ix: Intently) -> None:
    """`--time 2026-03-04T23:30:00-08:00` is Wednesday evening in California: "tomorrow" is
    Thursday there (08:00 UTC Friday), not the day after the UTC date (Friday)."""
    data = json.loads(_run(ix, "review", "observe", "I'll send the report tomorrow.", "--speaker", "bob",
                           "--time", "2026-03-04T23:30:00-08:00", "--json"))  # fmt: skip
    (proposal,) = data["proposals"]
    assert proposal["candidate"]["due"] == "2026-03-06T07:59:59Z"
    bad = runner.invoke(app, ["--home", str(ix.home.path), "review", "observe", "x", "--time", "friday"])
    assert bad.exit_code != 0 and "--time" in str(bad.exception)


def test_interactive_review_goes_on_past_answers_it_refuses(ix: Intently) -> None:
    """A mistyped type or a due date that is no date is said and asked again: the walk does not
    end with exit 2 half-way through the queue."""
    _observe(ix, "Michael to close the issue. Should we drop Node 18?")
    keys = "e\n\nDECISION\n\n\n" + "e\n\n\n\nnext friday\n" + "c\n" + "d\n\n"
    output = _run(ix, "review", input=keys)
    assert "type: unknown value 'DECISION'" in output and "not an RFC 3339 time" in output
    assert "1 confirmed, 1 dismissed, 0 edited, 0 skipped" in output


def _prompted(proc: subprocess.Popen[bytes], times: int) -> str:
    """Read the reviewer's screen until its ``times``-th prompt for a choice (the reviewer waits there)."""
    seen = b""
    deadline = time.monotonic() + 60
    while seen.count(b"[c/d/e/s/q] (s):") < times:
        assert proc.stdout is not None and time.monotonic() < deadline, seen.decode()
        chunk = os.read(proc.stdout.fileno(), 4096)
        assert chunk, seen.decode()
        seen += chunk
    return seen.decode()


def test_two_reviewers_at_once(ix: Intently) -> None:
    """Bob walks the queue in a terminal while Alice works through the API: Bob's confirmation of a
    candidate Alice reworded meanwhile shows him her wording first, and a candidate she already
    confirmed is passed over with a line, not a crash that drops the rest of his walk."""
    _observe(ix, "Michael to close the issue. Should we drop Node 18? Rich will add a comment to the issue.")
    first, second, third = ix.goals.review_queue()
    ix.access.grant(Actor.parse("user:bob"), Permission.WRITE)
    ix.checkpoint()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "200"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "intently", "--home", str(ix.home.path), "--actor", "user:bob", "review"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
    )  # fmt: skip
    try:
        _prompted(proc, 1)  # Bob sees the first candidate as it was read
        ix.goals.edit(first.id, text="Michael to close issue #12", awaiting_review=True)
        ix.goals.promote(second.id)
        rest, _ = proc.communicate(b"c\nc\nd\n\n", timeout=60)
    finally:
        proc.kill()
    screen = rest.decode()
    assert proc.returncode == 0, screen
    assert "edited by another reviewer meanwhile" in screen and "Michael to close issue #12" in screen
    assert f"{second.id[-8:]} was confirmed by another reviewer meanwhile" in screen
    assert "1 confirmed, 1 dismissed, 0 edited, 0 skipped, 1 decided by another reviewer" in screen
    with Intently.open(ix.home.path, actor="user:alice") as again:
        assert again.goals.get(first.id).value == "Michael to close issue #12"
        assert again.goals.get(first.id).epistemic_type.value == "ASSERTED"
        assert again.goals.get(third.id).epistemic_type.value == "DEPRECATED"


def test_observe_without_a_time_is_said_now_in_the_terminals_zone(
    ix: Intently, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a terminal in California, "by EOD" typed without --time is the end of California's day,
    not of UTC's (which, in the evening there, is already the next day)."""
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    try:
        zone = ZoneInfo("America/Los_Angeles")
        before = datetime.now(zone)
        data = json.loads(_run(ix, "review", "observe", "I'll send the report by EOD.", "--speaker", "bob", "--json"))
        after = datetime.now(zone)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    (proposal,) = data["proposals"]
    ends = {datetime.combine(d.date(), dtime(23, 59, 59), tzinfo=zone).astimezone(UTC) for d in (before, after)}
    assert datetime.fromisoformat(proposal["candidate"]["due"]) in ends


def test_eval_on_a_folder_names_it_instead_of_an_internal_error(tmp_path: Path) -> None:
    """A folder used to raise IsADirectoryError, which the CLI reports as an internal error."""
    from intently.core.errors import InvalidInput

    result = runner.invoke(app, ["eval", "extraction", "--data", str(tmp_path)])
    assert isinstance(result.exception, InvalidInput), result.exception
    assert str(result.exception).startswith(f"{tmp_path}: not a file")


def test_eval_on_an_empty_file_is_refused_not_scored_as_zeros(tmp_path: Path) -> None:
    from intently.core.errors import InvalidInput

    data = tmp_path / "empty.jsonl"
    data.write_text("\n", encoding="utf-8")
    result = runner.invoke(app, ["eval", "extraction", "--data", str(data), "--json"])
    assert isinstance(result.exception, InvalidInput), result.output
    assert str(result.exception) == f"{data}: no labelled turns in the file"
