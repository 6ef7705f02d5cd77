"""Stored text never acts on the terminal of whoever lists it.

Goals, reminders and review candidates come from people, agents and tool output (a Slack
message, a transcript, a file in a repository). An escape sequence in one, printed as is,
retitles the reader's terminal (``ESC ] 0 ; ... BEL``), recolours it (``ESC [ 31 m``) or moves
the cursor over lines already printed; a bidirectional override reorders what the reader
sees. Every command prints stored text with those characters shown as spaces.
"""

from __future__ import annotations

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
