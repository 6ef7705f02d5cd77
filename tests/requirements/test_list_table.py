"""``intently req list`` as a person reads it: one table line per rule, on a pipe and on a terminal.

The table is drawn as one line per rule (Rich measured and wrapped each of the 10,000 cells
of 2,000 rules: 5-7 s of CPU for a listing); these tests hold what a reader relies on: every
rule, every column, ids whole, a cell too long for a terminal cut with an ellipsis, stored
text shown as written (never as markup), and ``--json`` as before.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from intently import Intently

from .._pty import run_on_pty
from .conftest import run_main

pytestmark = pytest.mark.sqlite_only  # the drawing, not the store, is under test

INTENTLY = Path(sys.executable).with_name("intently")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
COLUMNS = ["ID", "STATUS", "SCOPE", "SOURCE", "STATEMENT"]
LONG = "Always run the full integration suite against a real database before merging a change to the API."


def _rules(ix: Intently) -> dict[str, tuple[str, str]]:
    """Four rules whose cells wrapped at 80 columns or carried terminal control; id -> (scope as listed, statement as listed)."""
    long = ix.requirements.add(LONG)
    scoped = ix.requirements.add(
        "Keep handlers thin.", domains=["api"], paths=["src/api/handlers/**", "src/api/routes/**"]
    )
    markup = ix.requirements.add("Never print [bold]secrets[/bold] in logs.")
    control = ix.requirements.add("Keep\tthe \x1b]0;pwned\x07\x1b[31mred\x1b[0m build green.")
    return {
        control.id: ("project", "Keep the  ]0;pwned  [31mred [0m build green."),
        long.id: ("project", LONG[:60] + "…"),
        scoped.id: ("api @src/api/handlers/**,src/api/routes/**", "Keep handlers thin."),
        markup.id: ("project", "Never print [bold]secrets[/bold] in logs."),
    }


def _cells(line: str) -> list[str]:
    """The cells of one table line, header (``┃``) or body (``│``)."""
    return [c.strip() for c in re.split("[│┃]", line.strip())[1:-1]]


def test_a_piped_listing_keeps_every_rule_on_one_whole_line(ix: Intently) -> None:
    """On a pipe (80 columns) each rule used to wrap over several lines, so ``grep ID`` found
    a third of a statement; now the table is as wide as its rows and nothing is cut."""
    rules = _rules(ix)
    code, out, err = run_main(ix.home.path, "req", "list", env={"COLUMNS": "80"})
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    lines = out.splitlines()
    assert lines[0].strip() == "requirements"
    assert _cells(next(line for line in lines if "STATEMENT" in line)) == COLUMNS
    body = [line for line in lines if line.startswith("│")]
    assert len(body) == len(rules)  # one line per rule, no wrapped continuation lines
    for rid, (scope, statement) in rules.items():
        (line,) = [line for line in body if rid in line]
        assert _cells(line) == [rid, "active", scope, "user", statement]


def test_json_lists_every_field_as_before(ix: Intently) -> None:
    rules = _rules(ix)
    code, out, err = run_main(ix.home.path, "req", "list", "--json", env={"COLUMNS": "80"})
    assert code == 0, err
    listed = {r["id"]: r for r in json.loads(out)}
    assert set(listed) == set(rules)
    long = next(r for r in listed.values() if r["statement"] == LONG)  # whole: --json never cuts
    assert long["scope"]["level"] == "project" and long["provenance"]["kind"] == "user"
    assert set(long) >= {"id", "status", "scope", "provenance", "statement", "rationale", "file", "content_hash"}


def _on_terminal(*args: str, cwd: Path, columns: int) -> str:
    """What a terminal ``columns`` wide shows for ``intently ARGS`` (stdout on a pty)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("INTENTLY_") and k != "NO_COLOR"}
    environ.update({"INTENTLY_ACTOR": "user:alice", "TERM": "xterm", "COLUMNS": str(columns)})
    code, shown, stderr = run_on_pty([str(INTENTLY), *args], cwd=cwd, env=environ, on_pty="stdout")
    assert code == 0, stderr
    return ANSI.sub("", shown.decode()).replace("\r\n", "\n")


def test_a_terminal_listing_fits_its_width_and_cuts_long_cells_with_an_ellipsis(ix: Intently) -> None:
    rules = _rules(ix)
    shown = _on_terminal("req", "list", cwd=ix.home.project_root, columns=80)
    lines = [line for line in shown.splitlines() if line.strip()]
    assert max(len(line) for line in lines) <= 80
    assert _cells(next(line for line in lines if "STATEMENT" in line)) == COLUMNS
    body = [line for line in lines if line.startswith("│")]
    assert len(body) == len(rules)
    for rid, (scope, statement) in rules.items():
        (line,) = [line for line in body if rid in line]  # the id whole: it is what a person copies
        got = _cells(line)
        assert got[:2] == [rid, "active"] and got[3] == "user"
        for full, cell in ((scope, got[2]), (statement, got[4])):
            assert cell == full or (cell.endswith("…") and full.startswith(cell[:-1]) and len(cell) > 1)
    (long_line,) = [line for line in body if "Always run" in line]
    assert _cells(long_line)[4].endswith("…")
