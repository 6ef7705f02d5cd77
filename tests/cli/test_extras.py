"""A command that needs an optional extra, run where it is not installed, says which extra to
install: one line, a non-zero exit, no traceback (`pip install intently` is the core only).

The extra is made unimportable in the real ``intently`` process by a ``sitecustomize`` that
puts ``None`` in ``sys.modules`` for its modules, which is what Python reports for a package
that is not installed (``ModuleNotFoundError``, ``find_spec`` finds nothing)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import Result, run

pytestmark = pytest.mark.sqlite_only  # the CLI tests run on the default SQLite home

SERVER = "fastapi,starlette,uvicorn,jinja2,multipart,python_multipart,httpx,mcp,mcp_types"
HINT = "needs the 'server' extra"
INSTALL = "pip install 'intently[server]'"


def _without(tmp_path: Path, modules: str) -> dict[str, str]:
    """The environment of a process in which ``modules`` cannot be imported."""
    site = tmp_path / "no-extra"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(
        "import os, sys\nfor name in os.environ['TEST_BLOCKED_MODULES'].split(','):\n    sys.modules[name] = None\n"
    )
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "TEST_BLOCKED_MODULES": modules}


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (["serve"], "intently serve"),  # was: internal error: ModuleNotFoundError ... 'uvicorn' (exit 70)
        (["mcp"], "intently mcp"),  # was: internal error: ModuleNotFoundError ... 'mcp' (exit 70)
        # was: "the upstream MCP server (...) stopped or did not answer: ... 'mcp_types'"
        (["gateway", "--", sys.executable, "-c", "pass"], "intently gateway"),
    ],
)
def test_a_server_command_without_the_extra_names_it(home: Path, tmp_path: Path, args: list[str], command: str) -> None:
    result = run(*args, cwd=home, env=_without(tmp_path, SERVER))
    assert result.code == 1
    line = result.error_line()
    assert line.startswith(f"error: {command} {HINT} (module ")
    assert line.endswith(INSTALL)


def test_the_llm_extractor_without_httpx_names_the_extra(home: Path, tmp_path: Path) -> None:
    config = home / ".intently" / "intently.toml"
    text = config.read_text()
    text = text.replace('extractor = "rules"', 'extractor = "llm"', 1)
    text = re.sub(r'(?m)^base_url = ""$', 'base_url = "http://127.0.0.1:9/v1"', text, count=1)
    text = re.sub(r'(?m)^model = ""$', 'model = "some-model"', text, count=1)
    config.write_text(text)
    result = run("review", "observe", "I'll send the deck by Friday", cwd=home, env=_without(tmp_path, "httpx"))
    assert result.code == 1  # was an internal error (70): ModuleNotFoundError: No module named 'httpx'
    line = result.error_line()
    assert line.startswith(f"error: the LLM extractor ([extract] extractor = 'llm') {HINT} (module 'httpx'")
    assert line.endswith(INSTALL)


def test_a_benchmark_without_its_extra_names_it_instead_of_not_built(tmp_path: Path) -> None:
    env = {**os.environ, **_without(tmp_path, SERVER)}
    proc = subprocess.run(
        [sys.executable, "-m", "intently.bench", "serve", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    result = Result(proc.returncode, proc.stdout, proc.stderr)
    assert result.code == 2
    # was: "benchmark 'serve' is not built yet"
    assert result.error_line() == f"benchmark 'serve' {HINT} (module 'httpx' is not installed): {INSTALL}"


def test_a_postgresql_url_without_the_extra_names_it(home: Path, tmp_path: Path) -> None:
    env = {**_without(tmp_path, "psycopg,psycopg_pool"), "INTENTLY_DATABASE_URL": "postgresql://127.0.0.1:9/none"}
    result = run("goal", "list", cwd=home, env=env)
    assert result.code == 1  # was StoreError's own exit code, worded unlike every other extra
    line = result.error_line()
    assert line.startswith("error: the PostgreSQL backend needs the 'postgres' extra (module 'psycopg'")
    assert line.endswith("pip install 'intently[postgres]'")


def test_the_agentdojo_eval_without_its_extra_names_it(home: Path, tmp_path: Path) -> None:
    result = run("eval", "agentdojo", "--suites", "banking", cwd=home, env=_without(tmp_path, "agentdojo"))
    assert result.code == 1  # was an InvalidInput (exit 2) worded unlike every other extra
    line = result.error_line()
    assert line.startswith("error: intently eval agentdojo needs the 'agentdojo' extra (module 'agentdojo'")
    assert line.endswith("pip install 'intently[agentdojo]'")
