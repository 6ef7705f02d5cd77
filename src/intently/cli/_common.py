"""What every command shares: global options, opening the home, output and errors.

Results go to stdout (a Rich table for people, JSON with ``--json``); diagnostics go to
stderr; an :class:`IntentlyError` becomes one line and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape as _markup_escape
from rich.measure import Measurement
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
from rich.segment import Segments
from rich.table import Table
from rich.text import Text

from ..core.strings import printable

if TYPE_CHECKING:  # `intently --help` must not load the store, the log and the config models
    from .._intently import Intently

__all__ = [
    "Bar",
    "JsonOpt",
    "State",
    "emit",
    "err",
    "escape",
    "open_home",
    "out",
    "plain",
    "progress_bar",
    "state",
    "table",
]

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

JsonOpt = Annotated[bool, typer.Option("--json", help="Machine output on stdout (stable keys).")]


@dataclass
class State:
    home: str | None = None
    actor: str | None = None
    namespace: str | None = None


def state(ctx: typer.Context) -> State:
    root = ctx.find_root()
    if not isinstance(root.obj, State):
        root.obj = State()
    return root.obj


@contextmanager
def open_home(ctx: typer.Context) -> Iterator[Intently]:
    """Open the home named by the global options; checkpoint and close on the way out."""
    from .._intently import Intently

    st = state(ctx)
    ix = Intently.open(st.home, actor=st.actor, namespace=st.namespace)
    try:
        yield ix
    finally:
        ix.close()


def plain(text: str, *, one_line: bool = False) -> str:
    """Untrusted text with no terminal control in it: the one filter every command prints through.

    Goals, rules, reminders, candidates, prompts and log payloads come from people, agents,
    repositories and tool output. An escape sequence in one (``ESC ] 0 ; ... BEL`` retitles a
    terminal, ``ESC ] 8 ;; URL`` plants a link, ``ESC [ 2 J`` clears it, C1 ``\\x9b`` is a
    one-byte ``ESC [``, ``\\r`` returns the cursor to write over what was printed) must not act
    on the terminal of whoever reads it, and a bidi or zero-width mark must not reorder or hide
    what they read. One policy, the rendered blocks' own (:func:`core.strings.printable`):
    every character that is not printable becomes a space, so the sequence is shown inert
    and the words around it stay. Newline and tab stay where the output is several lines
    (``one_line=False``); in a one-line cell they become spaces too, since they would break
    the row. Two filters with two lists drifted apart (a listing kept a left-to-right mark
    that the one-line table dropped), so there is one."""
    return printable(text, "" if one_line else "\n\t")


def escape(text: str, *, one_line: bool = False) -> str:
    """Untrusted text for a Rich print with markup: :func:`plain`, then not read as markup."""
    return _markup_escape(plain(text, one_line=one_line))


def emit(data: Any, as_json: bool, render: Callable[[Any], None] | None = None) -> None:
    """``--json``: dump ``data``; otherwise call ``render`` (or print a readable default)."""
    if as_json:
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
        return
    if render is not None:
        render(data)
    elif isinstance(data, dict):
        for key, value in data.items():
            out.print(f"[bold]{escape(str(key))}[/bold]: {escape(str(value))}")
    else:
        out.print(escape(str(data)))


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], *, one_line: bool = False) -> None:
    """Print a Rich table; no cell is read as markup, since stored text is untrusted.

    An ``id`` column is never wrapped or cut: it is what a person copies into the next
    command. Rich fits a table to the console, 80 columns when stdout is a pipe, and would
    otherwise print ``d7c97a…`` for an id, which no command accepts.

    ``one_line``: one line per row, for lists that grow to thousands of rows (see
    :func:`_one_line_table`); a cell too long for the terminal ends in an ellipsis.
    """
    cells = [["" if v is None else str(v) for v in row] for row in rows]
    if one_line and cells:
        _one_line_table(title, columns, cells)
        return
    tbl = Table(title=title, title_justify="left")
    for i, col in enumerate(columns):
        if col.lower() == "id":
            tbl.add_column(col, no_wrap=True, min_width=max((len(r[i]) for r in cells), default=0))
        else:
            tbl.add_column(col)
    for row in cells:
        tbl.add_row(*(escape(v) for v in row))
    out.print(tbl)


def _one_line_table(title: str, columns: Sequence[str], cells: Sequence[Sequence[str]]) -> None:
    """The same table, drawn in a fraction of the time: one line per row, widths set here.

    Rich measures and renders every cell on its own (markup parsed, words wrapped, lines
    padded): 2.5-3.5 s of CPU for the 10,000 cells of 2,000 rules (4.5 s the whole
    command), for a command a person runs to look. A table whose rows are one line each is, character for character, one row of
    cells holding one line per row, so each column is one :class:`~rich.text.Text` of
    lines (never markup: stored text shows as written) that Rich crops, with its public
    ``no_wrap`` and ``overflow="ellipsis"``, to widths decided here from one measure per
    column. On a terminal the columns are fitted to its width; the shortest keep their
    width whole and the longest share what is left, so an id is never cut. Off a terminal
    (a pipe, a file) nothing is cut: the table is as wide as its longest row, for ``grep``.
    """
    # One line per cell (a line break or a tab would push its column out of line), and no
    # terminal control (:func:`plain`): a rule file anyone can edit must not drive the terminal.
    lines = [[plain(v, one_line=True) for v in row] for row in cells]
    texts = [Text("\n".join(row[i] for row in lines)) for i in range(len(columns))]
    options = out.options.update_width(1 << 20)  # the widths the cells need, not what fits
    natural = [
        max(len(col), Measurement.get(out, options, text).maximum) for col, text in zip(columns, texts, strict=True)
    ]
    frame = 3 * len(columns) + 1  # "│ " before each cell, " " after it, and the closing "│"
    width = sum(natural) + frame
    widths = natural
    if out.is_terminal and width > out.width:
        fixed = [i for i, col in enumerate(columns) if col.lower() == "id"]
        widths = _fit(natural, out.width - frame, keep=fixed)
        width = out.width
    tbl = Table(title=title, title_justify="left")
    for col, w in zip(columns, widths, strict=True):
        tbl.add_column(col, width=w, no_wrap=True, overflow="ellipsis")
    tbl.add_row(*texts)
    # ``print(width=...)`` never goes wider than the console (80 columns on a pipe): render
    # at the table's own width, then print those lines as they are.
    out.print(Segments(out.render(tbl, out.options.update(width=max(width, len(title))))))


def _fit(natural: Sequence[int], room: int, *, keep: Sequence[int] = ()) -> list[int]:
    """Column widths that fill ``room``: columns in ``keep`` and every column narrower than
    an even share of what is left keep their natural width; the wider ones share the rest."""
    widths = list(natural)
    room -= sum(natural[i] for i in keep)
    shrink = sorted((i for i in range(len(natural)) if i not in keep), key=lambda i: natural[i])
    for k, i in enumerate(shrink):
        share = max(room, 0) // (len(shrink) - k)
        if natural[i] <= share:
            room -= natural[i]
            continue
        rest = shrink[k:]
        extra = max(room, 0) - share * len(rest)
        for n, j in enumerate(rest):
            widths[j] = max(1, share + (1 if n < extra else 0))
        break
    return widths


class Bar:
    """A progress bar on stderr, or nothing: what :func:`progress_bar` yields."""

    def __init__(self, progress: Progress | None = None, task: TaskID | None = None) -> None:
        self._progress, self._task = progress, task

    def advance(self, steps: int) -> None:
        """``steps`` more units done (the log's verify and replay report counts of operations)."""
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task, steps)

    def update(self, done: int, total: int, what: str = "") -> None:
        """``done`` of ``total`` units, now working on ``what`` (a scan names each source)."""
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=done, total=total, description=escape(what))


@contextmanager
def progress_bar(label: str, total: int | None = None) -> Iterator[Bar]:
    """A bar on stderr for long work (a whole log, a first scan), cleared when it ends.

    Only on a terminal: off one Rich cannot redraw, so the bar would show nothing and still
    leave a blank line on stderr (in CI logs, and before an error line)."""
    if not err.is_terminal:
        yield Bar()
        return
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn("{task.description}"))
    with Progress(*columns, console=err, transient=True) as progress:
        yield Bar(progress, progress.add_task("", total=total))


def home_option() -> Any:
    return typer.Option(None, "--home", envvar="INTENTLY_HOME", help="The .intently home (default: found upward).")


def path_arg(value: str) -> Path:
    return Path(value).expanduser()
