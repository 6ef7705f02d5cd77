"""A tool call through the installed hook command loads what deciding it needs, and no more.

Claude Code starts ``python -m intently.hooks hook claude`` afresh before every tool call, so
every module that process imports is paid on each one. ``PreToolUse`` opens the home and asks
the gate; the context assembler and its token counter (a prompt's work), the assent reader
(a prompt's), the scan queue (a session end's) and the engines the gate does not consult used
to load as well. Checked by module name in the child process, never by timing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from intently import Intently
from intently.hooks import ScanQueue

from .conftest import event, run_command

# Each of these is another event's work, or another engine's.
NOT_FOR_A_TOOL_CALL = {
    "intently.context",
    "intently.core.tokens",
    "intently.hooks._assent",
    "intently.hooks._queue",
    "intently.goals",
    "intently.triggers",
    "intently.requirements",
    "intently.extract",
    "intently.cli",
    "intently.embed",
}
# Start-up cost a tool call's decision does not need: the config and the event are checked
# without pydantic (its import and the plugin scan it runs through importlib.metadata were
# about a third of the process's CPU), and the signing key is read without the module of
# every other key format (SSH, PKCS #12, ciphers). (importlib.metadata itself is not listed:
# PostgreSQL's driver imports it.)
NOT_FOR_A_TOOL_CALL |= {"cryptography.hazmat.primitives.serialization"}
HEAVY = {"typer", "rich", "fastapi", "uvicorn", "numpy", "onnxruntime", "tokenizers", "mcp", "httpx", "pydantic"}

DRIVER = """
import json, sys
from intently.hooks.__main__ import main
code = main(["hook", "claude"])
sys.stderr.write("\\n" + json.dumps(sorted(sys.modules)) + "\\n")
sys.exit(code)
"""


def test_a_tool_call_loads_only_what_deciding_it_needs(ix: Intently, project: Path) -> None:
    (project / "README.md").write_text("hello\n", encoding="utf-8")
    payload = event("PreToolUse", project, tool_name="Read", tool_input={"file_path": str(project / "README.md")})
    done = run_command([sys.executable, "-c", DRIVER], payload, cwd=project)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse"
    assert answer.get("permissionDecision", "allow") == "allow"  # the gate decided (and logged it) ...
    assert len(ix.log.read("proj", op="GATE_DECIDED")) == 1
    loaded = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "intently.gate" in loaded  # ... with the gate loaded, and nothing another event needs
    assert not NOT_FOR_A_TOOL_CALL & loaded, sorted(NOT_FOR_A_TOOL_CALL & loaded)
    assert not HEAVY & {name.partition(".")[0] for name in loaded}


def test_a_prompt_still_gets_its_context_block(ix: Intently, project: Path) -> None:
    """The imports moved into the prompt's path still run there: the block is assembled."""
    ix.goals.add("Keep the parser green", priority="HIGH")
    payload = event("UserPromptSubmit", project, prompt="fix the parser")
    done = run_command([sys.executable, "-m", "intently.hooks", "hook", "claude"], payload, cwd=project)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Keep the parser green" in context


def test_a_session_end_still_queues_its_transcript(ix: Intently, project: Path) -> None:
    (project / "transcript.jsonl").write_text("", encoding="utf-8")
    done = run_command(
        [sys.executable, "-m", "intently.hooks", "hook", "claude"], event("SessionEnd", project), cwd=project
    )
    assert done.returncode == 0, done.stderr
    queued = ScanQueue(ix.home.state_dir).entries()
    assert [(e["session_id"], e["event"]) for e in queued] == [("8a2f7c1e-5b0d-4f2a-9c3e-1d2b3c4d5e6f", "SessionEnd")]


# Modules a prompt read by the rules, with no active rule to rank, has no use for.
NOT_FOR_A_RULES_PROMPT = {"intently.embed._index", "intently.extract._llm", "intently.extract._scoring"}

PROMPT_DRIVER = """
import json, re, sys
from intently.hooks.__main__ import main
code = main(["hook", "claude"])
from intently.extract._lexicon import Phrases, load_lexicon
lists = [v for v in vars(load_lexicon()).values() if isinstance(v, Phrases)] if load_lexicon.cache_info().currsize else []
compiled = sum(1 for p in lists if "regex" in vars(p))
from intently.extract import _patterns
lazy = getattr(_patterns, "LazyPattern", re.Pattern)
shapes = [v for v in vars(_patterns).values() if isinstance(v, (lazy, re.Pattern))]
shaped = sum(1 for p in shapes if isinstance(p, re.Pattern) or p.compiled)
seen = {"modules": sorted(sys.modules), "lists": len(lists), "compiled": compiled}
sys.stderr.write("\\n" + json.dumps({**seen, "shapes": len(shapes), "shaped": shaped}) + "\\n")
sys.exit(code)
"""


def _prompt(project: Path, prompt: str) -> tuple[str, dict[str, object]]:
    done = run_command(
        [sys.executable, "-c", PROMPT_DRIVER], event("UserPromptSubmit", project, prompt=prompt), cwd=project
    )
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    return context, json.loads(done.stderr.strip().splitlines()[-1])


def test_a_prompt_with_no_rule_to_rank_does_not_load_the_embedder(ix: Intently, project: Path) -> None:
    """Loading MiniLM (onnxruntime, the tokenizer, the weights' check) was about a second of a
    prompt's CPU; with no active rule it ranks nothing, so the prompt's process skips it, and
    compiles only the lexicon lists its reading of the prompt touches."""
    ix.goals.add("Keep the parser green", priority="HIGH")
    context, seen = _prompt(project, "I will fix the parser before Friday")
    assert "Keep the parser green" in context
    loaded = {str(name).partition(".")[0] for name in seen["modules"]}  # type: ignore[attr-defined]
    assert "onnxruntime" not in loaded
    assert 0 < int(seen["compiled"]) < int(seen["lists"])  # type: ignore[call-overload]
    # Nor the sentence shapes around the lists that this prompt never tries (compiling all
    # forty of them was tens of milliseconds of every prompt's process).
    assert int(seen["shaped"]) < int(seen["shapes"]), seen["shaped"]  # type: ignore[call-overload]
    # Nor what only ranking by meaning, an LLM extractor or the eval needs: numpy (the vector
    # index's, a tenth of a second or more), the LLM reply's and the labelled turn's models.
    assert "numpy" not in loaded
    modules = set(seen["modules"])  # type: ignore[call-overload]
    assert not NOT_FOR_A_RULES_PROMPT & modules, sorted(NOT_FOR_A_RULES_PROMPT & modules)


def test_a_prompt_with_an_active_rule_still_ranks_it_by_meaning(ix: Intently, project: Path) -> None:
    ix.requirements.add("Never log request bodies of the payments service", level="project", user_edited=True)
    context, seen = _prompt(project, "add logging to the payments service handler")
    assert "Never log request bodies of the payments service" in context
    loaded = {str(name).partition(".")[0] for name in seen["modules"]}  # type: ignore[attr-defined]
    assert "onnxruntime" in loaded


SYNONYM_DRIVER = """
import json, sys
from intently.triggers import _synonyms
parsed = []
read_file = _synonyms._read_file


def counting(table, path):  # counts, then parses as ever
    parsed.append(str(path))
    return read_file(table, path)


_synonyms._read_file = counting
from intently.hooks.__main__ import main
code = main(["hook", "claude"])
sys.stderr.write("\\n" + json.dumps({"parsed": parsed, "modules": sorted(sys.modules)}) + "\\n")
sys.exit(code)
"""


def test_a_prompt_reads_the_synonym_tables_once(ix: Intently, project: Path) -> None:
    """The standing intents' matcher parses the synonym YAML (shipped, and the home's) once per
    process: the live index read it when created and again for its first build, a tenth of a
    second of every prompt's process. A reminder still fires through a home synonym."""
    (project / ".intently" / "synonyms.yaml").write_text("equivalents:\n  - [parser, tokenizer]\n", encoding="utf-8")
    ix.triggers.add("The parser freeze ends Friday", when=["parser"], expires="2099-01-01")
    payload = event("UserPromptSubmit", project, prompt="rework the tokenizer module")
    done = run_command([sys.executable, "-c", SYNONYM_DRIVER], payload, cwd=project)
    assert done.returncode == 0, done.stderr
    assert "The parser freeze ends Friday" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    parsed = seen["parsed"]
    assert sorted(Path(r).parent.name for r in parsed) == [".intently", "data"], parsed
    # Read by libyaml, not ruamel.yaml (whose import and pure-Python parse were about a tenth
    # of a second of the process); nor does a requirement file the parse cache holds need it.
    assert "ruamel" not in {name.partition(".")[0] for name in seen["modules"]}


def test_a_prompt_over_cached_requirement_files_does_not_load_ruamel(ix: Intently, project: Path) -> None:
    """Requirement files are round-trip YAML; once the parse cache holds a file, a prompt's
    process ranks and injects its rule without loading the round-trip parser."""
    ix.requirements.add("Never log request bodies of the payments service", level="project", user_edited=True)
    payload = event("UserPromptSubmit", project, prompt="add logging to the payments service handler")
    first = run_command([sys.executable, "-m", "intently.hooks", "hook", "claude"], payload, cwd=project)
    assert first.returncode == 0, first.stderr  # (fills the parse cache, if nothing had)
    done = run_command([sys.executable, "-c", SYNONYM_DRIVER], payload, cwd=project)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Never log request bodies of the payments service" in context
    loaded = {str(name).partition(".")[0] for name in json.loads(done.stderr.strip().splitlines()[-1])["modules"]}
    assert "ruamel" not in loaded
