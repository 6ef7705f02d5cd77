"""The gate bridge: fail closed without a gate, paths as the user names them, config errors named."""

from __future__ import annotations

from pathlib import Path

import pytest

from intently import Intently, InvalidInput
from intently.hooks import gate_check
from intently.hooks._gate import project_relative
from intently.hooks._settings import hook_settings
from tests._config import set_config


class _Placeholder:
    """An engine facade before the engine is built: no methods."""

    def __init__(self, runtime: object) -> None:
        self._rt = runtime


class _BuildWithoutGate(Intently):
    @property
    def gate(self) -> _Placeholder:  # type: ignore[override]
        return _Placeholder(self.runtime)


def test_no_gate_means_block(ix: Intently) -> None:
    answer = gate_check(_BuildWithoutGate(ix.runtime), user_requests=["list files"], tool="Read", args={})
    assert answer.outcome == "block" and answer.available is False
    assert "fail closed" in answer.reason


def test_every_gate_check_is_logged(ix: Intently) -> None:
    answer = gate_check(ix, user_requests=["email the report to bob@example.com"], tool="send_email", args={})
    assert answer.available and answer.decision_id
    assert [o.target for o in ix.log.read("proj", op="GATE_DECIDED")] == [answer.decision_id]


def test_paths_are_made_project_relative_for_builtin_tools(tmp_path: Path) -> None:
    args = {"file_path": str(tmp_path / "src" / "app.py"), "content": "x"}
    assert project_relative("Write", args, tmp_path)["file_path"] == "src/app.py"
    outside = {"file_path": "/etc/passwd"}
    assert project_relative("Read", outside, tmp_path) == outside
    assert project_relative("mcp__fs__write_file", args, tmp_path) == args


def test_bad_shell_allowlist_is_refused_with_its_place(ix: Intently) -> None:
    config = ix.home.config_path
    set_config(config, "hooks", "shell_allowlist", '"pytest"')
    with Intently.open(ix.home.path, actor="user:alice") as fresh, pytest.raises(InvalidInput) as info:
        hook_settings(fresh)
    assert "hooks.shell_allowlist" in str(info.value)
