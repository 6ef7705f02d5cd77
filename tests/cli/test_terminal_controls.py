"""Stored text never acts on the terminal of whoever lists it.

Goals, reminders and review candidates come from people, agents and tool output (a Slack
message, a transcript, a file in a repository). An escape sequence in one, printed as is,
retitles the reader's terminal (``ESC ] 0 ; ... BEL``), recolours it (``ESC [ 31 m``) or moves
the cursor over lines already printed; a bidirectional override reorders what the reader
sees. Every command prints stored text with those characters shown as spaces.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import library, run

HOSTILE = "Ship the \x1b]0;pwned\x07\x1b[31mAPI\x1b[0m by \u202eFriday\u202c\rnow"
CONTROLS = ("\x1b", "\x07", "\r", "\u202e", "\u202c")


def _clean(text: str) -> None:
    for c in CONTROLS:
        assert c not in text, (c, text)


@pytest.mark.parametrize("command", [("goal", "list"), ("goal", "show", "{id}"), ("trigger", "list")])
def test_listing_stored_text_prints_no_terminal_control(home: Path, command: tuple[str, ...]) -> None:
    with library(home) as ix:
        goal = ix.goals.add(HOSTILE, owner="bob")
        ix.triggers.add(HOSTILE, when=["deploy"])
    result = run(*(part.format(id=goal.id) for part in command), cwd=home)
    assert result.code == 0, result.stderr
    _clean(result.stdout)
    assert "API" in result.stdout and "Friday" in result.stdout  # the words are still there


def test_a_review_candidate_from_a_hostile_turn_prints_no_terminal_control(home: Path) -> None:
    turn = "I'll send the \x1b[2J\x1b[Hreport by Friday."  # clear the screen, cursor home
    said = run("review", "observe", turn, "--speaker", "bob", cwd=home)
    assert said.code == 0, said.stderr
    _clean(said.stdout)
    made = run("review", "observe", turn, "--speaker", "carol", "--json", cwd=home)
    (candidate,) = [p["id"] for p in made.json["proposals"] if p["status"] == "created"]
    shown = run("goal", "show", candidate, cwd=home)
    assert shown.code == 0, shown.stderr
    _clean(shown.stdout)
    assert "report" in shown.stdout


# Every way a terminal can be driven from stored text: clear the screen (CSI), plant a link
# (OSC 8), write over what was printed (CR), the one-byte CSI of C1 (U+009B), and the marks
# that reorder (LRM, ALM) or break (LINE SEPARATOR) what the reader sees without showing.
DRIVERS = "\x1b[2J|\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\|done\rOK|\x9b31m|\u200e|\u061c|\u2028|"
WORDS = "Refund the duplicate charge " + DRIVERS + " before Friday"


def _terminal_safe(text: str) -> None:
    """Nothing that acts on a terminal: every character printable, or a newline or a tab."""
    bad = sorted({hex(ord(c)) for c in text if not c.isprintable() and c not in "\n\t"})
    assert not bad, (bad, text)


def test_one_filter_for_every_command_that_prints_stored_text(home: Path) -> None:
    """Goal and trigger listings, the one-line rule table, and what the gate says about a
    hostile request all show the same text the same way: no control, no invisible mark."""
    with library(home) as ix:
        goal = ix.goals.add(WORDS, owner="bob")
        ix.requirements.add(WORDS)
    said = [
        run("goal", "list", cwd=home),
        run("goal", "show", goal.id, cwd=home),
        run("trigger", "add", WORDS, "--when", "refund", cwd=home),
        run("trigger", "list", cwd=home),
        run("req", "list", cwd=home),
    ]
    for result in said:
        assert result.code == 0, result.stderr
        _terminal_safe(result.stdout + result.stderr)
        assert "Refund" in result.stdout  # the words are still there


def test_what_the_gate_says_about_a_hostile_request_drives_no_terminal(home: Path) -> None:
    """The request is the user's prompt (or an agent's relay of it): `gate explain` prints it
    back, with every decision's reason, and printed it as stored."""
    call = json.dumps({"file_path": "src/billing/\x1b[2Jrefund.py", "content": "x"})
    checked = run("gate", "check", "Write", "--request", WORDS, "--args", call, "--json", cwd=home)
    assert checked.code in (0, 10, 11), checked.stderr
    session = checked.json["session_id"]
    again = run("gate", "check", "Write", "--request", WORDS, "--args", call, cwd=home)
    _terminal_safe(again.stdout + again.stderr)
    explained = run("gate", "explain", session, cwd=home)
    assert explained.code == 0, explained.stderr
    _terminal_safe(explained.stdout + explained.stderr)
    assert "Request: Refund the duplicate charge" in explained.stdout
    assert "before Friday" in explained.stdout
    # --json keeps the request exactly as it was given: the filter is for terminals only.
    as_json = run("gate", "explain", session, "--json", cwd=home)
    assert "\x1b[2J" in as_json.json["text"]
