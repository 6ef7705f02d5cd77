"""Opening a home imports only what it uses, and the table that allows it stays true."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from intently import Intently, _engines
from intently.store import registered_migrations


def test_schema_versions_table_matches_the_engines_registry() -> None:
    _engines.load()
    assert {c: steps[-1].version for c, steps in registered_migrations().items()} == _engines.SCHEMA_VERSIONS


def _modules_after(code: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_opening_an_up_to_date_home_imports_no_engine_until_used(tmp_path: Path) -> None:
    Intently.init(tmp_path, actor="user:alice", name="proj").close()
    code = (
        "import json, sys\nfrom intently import Intently\n"
        f"ix = Intently.open({str(tmp_path)!r}, actor='user:alice')\n"
        "before = sorted(m for m in sys.modules if m.startswith('intently.'))\n"
        "ix.gate\nix.close()\n"
        "print(json.dumps([m for m in sys.modules if m.startswith('intently.')] + ['--'] + before))"
    )
    loaded = _modules_after(code)
    assert "intently.gate" in loaded
    assert not {"intently.requirements", "intently.extract", "intently.triggers"} & loaded


def test_a_fresh_database_still_gets_every_table(tmp_path: Path) -> None:
    Intently.init(tmp_path, actor="user:alice", name="proj").close()
    (tmp_path / ".intently" / "state" / "intently.db").unlink()  # as on a machine that has not joined yet
    with Intently.open(tmp_path, actor="user:alice") as ix:
        assert ix.store.current_versions() == _engines.SCHEMA_VERSIONS
