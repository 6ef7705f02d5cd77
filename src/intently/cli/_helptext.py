"""Command help as paragraphs, not as the docstring's hard-wrapped lines.

Our docstrings are wrapped at the source's line length. Typer up to 0.28 joined a paragraph's
lines before Rich wrapped it to the terminal; from 0.29 it keeps every line break, so each
`--help` came out ragged (a line of 80 characters, then one of two words, ...). The help each
command shows is set here, once, from its docstring with each plain paragraph joined into one
line; lists, indented blocks and Click's ``\\b`` paragraphs keep their lines. Setting it as the
command's ``help`` works the same on every Typer release.
"""

from __future__ import annotations

import inspect
import re

import typer

__all__ = ["reflow", "reflow_help"]

#: A line that starts its own line in the output: a list item or an indented (code) line.
_KEEPS_ITS_LINE = re.compile(r"^(?:[-*+] |\d+[.)] |\s)")


def reflow(text: str) -> str:
    """``text`` with the lines of each plain paragraph joined by spaces.

    A paragraph in which any line after the first is a list item or indented keeps its lines, as
    does one Click marks with ``\\b``; text after a ``\\f`` line (Click's end of help) is kept as it is.
    """
    help_text, cut, rest = inspect.cleandoc(text).partition("\f")
    paragraphs = []
    for paragraph in help_text.split("\n\n"):
        lines = paragraph.split("\n")
        if paragraph.startswith("\b") or any(_KEEPS_ITS_LINE.match(line) for line in lines[1:]):
            paragraphs.append(paragraph)
        else:
            paragraphs.append(" ".join(line.strip() for line in lines))
    return "\n\n".join(paragraphs) + cut + rest


def reflow_help(app: typer.Typer) -> None:
    """Give every command and group of ``app`` (recursively) its docstring, reflowed, as help,
    unless it was given a ``help`` of its own."""
    for command in app.registered_commands:
        if command.help is None and command.callback is not None and command.callback.__doc__:
            command.help = reflow(command.callback.__doc__)
    for group in app.registered_groups:
        sub = group.typer_instance
        if sub is None:
            continue
        registered = sub.registered_callback.callback if sub.registered_callback is not None else None
        callback = group.callback or registered
        if group.help is None and isinstance(sub.info.help, str):  # typer.Typer(help=...)
            group.help = reflow(sub.info.help)
        elif group.help is None and callback is not None and callback.__doc__:
            group.help = reflow(callback.__doc__)
        reflow_help(sub)
