"""`--help` shows each command's docstring as paragraphs that wrap to the terminal, not as the
source's hard-wrapped lines (which Typer 0.29 keeps: a full line, then a fragment, ...)."""

from __future__ import annotations

import os
import subprocess
import sys

import typer

from intently.cli._app import app
from intently.cli._helptext import reflow


def _commands(command: object, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    found = [(path, command)]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _commands(sub, (*path, name))
    return found


def test_every_commands_help_is_paragraphs_not_source_lines() -> None:
    ragged = []
    for path, command in _commands(typer.main.get_command(app)):
        text = str(getattr(command, "help", None) or "").partition("\f")[0]
        for paragraph in text.split("\n\n"):
            lines = paragraph.split("\n")
            listed = any(line[:2] in ("- ", "* ") or line[:1].isspace() for line in lines[1:])
            if len(lines) > 1 and not listed and not paragraph.startswith("\b"):
                ragged.append(f"intently {' '.join(path)}: {lines[0][:50]!r}")
    assert ragged == []


def test_help_wraps_to_the_terminal() -> None:
    """In a real process, at 200 columns, a sentence the docstring wraps is on one line."""
    shown = subprocess.run(
        [sys.executable, "-m", "intently", "goal", "list", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", "TERM": "dumb"},
        check=True,
    ).stdout
    assert "it waits for its owner to reopen it, archive it (`intently goal archive`), or, for a risk" in shown


def test_reflow_keeps_lists_indented_blocks_and_what_follows_a_form_feed() -> None:
    text = """First line
    goes on.

    Steps:
    - one
    - two

        code block
        stays

    \b
    kept
    as is
    \f
    internal
    note"""
    assert reflow(text) == (
        "First line goes on.\n\nSteps:\n- one\n- two\n\n    code block\n    stays\n\n\b\nkept\nas is\n\f\ninternal\nnote"
    )
