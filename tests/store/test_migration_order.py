"""A fresh home initialises whatever intently module was imported first.

Components register their schema steps when their module is imported, and the gate's steps read
the log's table (``log_ops``): with ``import intently.gate`` before ``Intently.init`` the gate's
ran first on a fresh database and the init failed with ``no such table: log_ops``. The log's
steps now run first whatever the import order.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from intently.store._base import registered_migrations

INIT_AFTER = """
import sys
import {module}
from intently import Intently
with Intently.init(sys.argv[1], actor="user:alice", name="demo") as ix:
    ix.goals.add("Ship the parser")
print("initialised")
"""


def test_the_log_schema_is_applied_first() -> None:
    assert next(iter(registered_migrations())) == "log"


def test_init_after_importing_the_gate_first(tmp_path: Path) -> None:
    for module in ("intently.gate", "intently.access", "intently.triggers"):
        project = tmp_path / module
        project.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        done = subprocess.run(
            [sys.executable, "-c", INIT_AFTER.format(module=module), str(project)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "initialised"
