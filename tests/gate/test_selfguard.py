"""The read-only list of intently commands an agent's shell may run names real commands of the CLI."""

from __future__ import annotations

from typing import Any

import typer

from intently.gate._selfguard import CLI_COMMANDS, READ_ONLY, intently_acts


def _tree() -> dict[str, Any]:
    """The CLI's commands by name, each group with its ``commands`` (the real command tree)."""
    import intently.cli  # registers every command group
    from intently.cli import _app

    assert intently.cli is not None
    commands: dict[str, Any] = typer.main.get_command(_app.app).commands  # type: ignore[attr-defined]
    return commands


def test_every_read_only_command_exists_in_the_cli() -> None:
    """A renamed or removed command must not leave a stale entry (the list only names commands that exist)."""
    root = _tree()
    for group, subs in READ_ONLY.items():
        for sub in subs:
            if group == "":
                assert sub in root, sub
            else:
                assert sub in getattr(root[group], "commands", {}), f"{group} {sub}"


def test_every_other_cli_command_is_refused() -> None:
    """Each command of the tree run through Bash: refused unless on the read-only list (fail closed)."""
    for name, found in _tree().items():
        for sub in getattr(found, "commands", None) or [""]:
            command = " ".join(w for w in ("intently", name, sub, "x") if w)
            read_only = name in READ_ONLY[""] or sub in READ_ONLY.get(name, frozenset())
            assert (intently_acts(command) == []) is read_only, command


def test_the_command_list_is_the_clis() -> None:
    """A program the guard cannot resolve counts as intently by these names: they are the CLI's own."""
    tree = {name: frozenset(getattr(found, "commands", None) or ()) for name, found in _tree().items()}
    assert tree == CLI_COMMANDS
