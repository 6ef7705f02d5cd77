"""Assembles the command groups and turns errors into one line and an exit code."""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from typing import Annotated, Any

import typer

from ..core.errors import IntentlyError
from ..core.extras import missing_extra

try:  # typer >= 0.29 vendors click; older releases use click itself
    from typer._click.exceptions import ClickException
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import ClickException  # type: ignore[assignment,unused-ignore]
from ._common import State, err, escape
from ._helptext import reflow_help

__all__ = ["app", "main"]

app = typer.Typer(
    name="intently",
    help="The intent layer for AI agents: goals, project rules, standing reminders and a tool-call gate.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _show_version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"intently {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    home: Annotated[
        str | None,
        typer.Option("--home", envvar="INTENTLY_HOME", help="The home folder (default: .intently found upward)."),
    ] = None,
    actor: Annotated[
        str | None,
        typer.Option("--actor", envvar="INTENTLY_ACTOR", help="Who acts: name or kind:name (default: OS user)."),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", envvar="INTENTLY_NAMESPACE", help="Namespace (default: the home's)."),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", is_eager=True, callback=_show_version, help="Print the version and exit.")
    ] = False,
) -> None:
    ctx.obj = State(home=home, actor=actor, namespace=namespace)


# Each module adds its commands or group to ``app`` when imported. Engines add theirs here.
COMMAND_MODULES: tuple[str, ...] = (
    "intently.cli.home",
    "intently.cli.log",
    "intently.cli.store",
    "intently.cli.demo",
    "intently.cli.goal",
    "intently.cli.review",
    "intently.cli.trigger",
    "intently.cli.req",
    "intently.cli.gate",
    "intently.cli.eval",
    "intently.cli.token",
    "intently.cli.serve",
    "intently.cli.hook",
    "intently.cli.mcp",
)


def _register() -> None:
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        module.register(app)
    reflow_help(app)


_register()


def _show_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    """A warning is one ``warning:`` line naming what was skipped, as `req preview` prints it,
    not Python's file-and-source dump."""
    err.print(f"[yellow]warning:[/yellow] {escape(str(message))}")


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    warnings.showwarning = _show_warning
    try:
        code = app(args=argv, standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except IntentlyError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        sys.exit(exc.exit_code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err.print("aborted")
        sys.exit(130)
    except ClickException as exc:  # usage errors: unknown command, bad option
        exc.show()
        sys.exit(exc.exit_code)
    except Exception as exc:
        if os.environ.get("INTENTLY_DEBUG"):
            raise
        missing = missing_extra(exc)  # an optional module a command reached for: name the extra
        if missing is not None:
            err.print(f"[red]error:[/red] {escape(str(missing))}")
            sys.exit(missing.exit_code)
        # Never a traceback (it can hold secrets in locals); one line, and a way to see more.
        err.print(f"[red]internal error:[/red] {escape(type(exc).__name__)}: {escape(str(exc))}")
        err.print("set INTENTLY_DEBUG=1 to see the traceback")
        sys.exit(70)
