"""Selection: status, scope, meaning, caps, budget, explanations, injection and opt-outs."""

from __future__ import annotations

import warnings

import pytest

from intently import Intently
from intently.core.tokens import default_counter
from intently.requirements import Policy, Requirements, place
from intently.requirements._select import select as run_select


@pytest.fixture
def rules(ix: Intently) -> dict[str, str]:
    r = ix.requirements
    ids = {
        "gui": r.add(
            "Do not read model state synchronously after Refresh; use RefreshOptions.Then.", paths=["pkg/gui/**"]
        ),
        "i18n": r.add("Only edit english.go; never hand-edit other translations.", paths=["pkg/i18n/**"]),
        "go": r.add("Every commit must be gofumpt-formatted.", languages=["go"]),
        "docs": r.add("Write docs prose with one sentence per line.", domains=["docs"]),
        "changelog": r.add("Bug-fix-only pull requests must not modify any CHANGELOG.md.", paths=["**/CHANGELOG.md"]),
        "ruby": r.add("Never use the system Ruby; run it through the vendored interpreter.", domains=["tooling"]),
        "project": r.add("Keep comments minimal; prefer self-documenting code."),
        "old": r.add("Use make for every build step."),
    }
    r.disable(ids["old"].id)
    r.add_domain("docs", paths=["docs/**"])
    return {k: v.id for k, v in ids.items()}


def test_scope_uses_paths_languages_and_domains_of_touched_files(ix: Intently, rules: dict[str, str]) -> None:
    sel = ix.requirements.select("Fix a crash in the branches panel", paths=["pkg/gui/branches.go"], record=False)
    assert rules["gui"] in sel.ids and rules["project"] in sel.ids
    assert rules["i18n"] not in sel.ids and rules["old"] not in sel.ids
    go = ix.requirements.select("Format the branches panel code", paths=["pkg/gui/b.go"], explain=True, record=False)
    assert rules["go"] in go.ids
    assert {d.id: d.scope for d in go.explain or []}[rules["go"]] == "language"
    py = ix.requirements.select("Format the branches panel code", paths=["tools/b.py"], explain=True, record=False)
    assert {d.id: d.scope for d in py.explain or []}[rules["go"]] == "elsewhere"
    docs = ix.requirements.select("Clarify the install guide", paths=["docs/Install.md"], record=False)
    assert rules["docs"] in docs.ids  # through domains.yaml's docs/** paths
    named = ix.requirements.select("Reword a help page", domains=["docs"], record=False)
    assert rules["docs"] in named.ids


def test_paths_mentioned_in_the_task_text_count(ix: Intently, rules: dict[str, str]) -> None:
    sel = ix.requirements.select("Add a key to pkg/i18n/english.go for the new prompt", record=False)
    assert rules["i18n"] in sel.ids


def test_a_glob_shared_by_many_rules_lets_meaning_choose(ix: Intently) -> None:
    topics = ["logging format", "error wrapping", "naming of tests", "retry backoff", "metrics labels"]
    ids = {t: ix.requirements.add(f"For {t}: follow the {t} conventions.", paths=["src/**"]).id for t in topics}
    sel = ix.requirements.select("Change the retry backoff", paths=["src/net/retry.py"], explain=True, record=False)
    assert ids["retry backoff"] in sel.ids
    assert ids["metrics labels"] not in sel.ids
    dropped = {d.id: d for d in sel.explain or []}[ids["metrics labels"]]
    assert dropped.stage == "floor" and dropped.scope == "path"


def test_meaning_catches_an_unscoped_rule_and_negation_counts(ix: Intently, rules: dict[str, str]) -> None:
    sel = ix.requirements.select(
        "Fix: run ruby scripts with the system ruby interpreter", paths=["scripts/run.rb"], explain=True, record=False
    )
    assert rules["ruby"] in sel.ids
    why = {d.id: d for d in sel.explain or []}
    assert why[rules["ruby"]].scope == "none" and why[rules["ruby"]].stage == "selected"


def test_explain_covers_every_requirement(ix: Intently, rules: dict[str, str]) -> None:
    sel = ix.requirements.select("Fix a crash", paths=["pkg/gui/a.go"], explain=True, record=False)
    assert sel.explain is not None
    by_id = {d.id: d for d in sel.explain}
    assert set(by_id) == set(rules.values())
    assert by_id[rules["old"]].stage == "status" and not by_id[rules["old"]].kept
    assert by_id[rules["gui"]].scope == "path" and "pkg/gui/**" in by_id[rules["gui"]].reason
    assert all(d.kept == (d.id in sel.ids) for d in sel.explain)
    assert ix.requirements.select("x", record=False).explain is None


def test_project_level_rules_are_capped(ix: Intently) -> None:
    for i in range(8):
        ix.requirements.add(f"Project rule number {i}: follow convention {i}.")
    specific = ix.requirements.add("Never edit generated manpages directly.", paths=["manpages/**"])
    sel = ix.requirements.select(
        "Update maintainers", paths=["manpages/brew.1"], explain=True, record=False, policy=_policy(cap=3)
    )
    assert specific.id in sel.ids
    assert sum(1 for d in sel.explain or [] if d.scope == "project" and d.kept) == 3
    assert any(d.stage == "cap" for d in sel.explain or [])


def _policy(cap: int) -> Policy:
    return Policy(floor=0.35, scoped_floor=0.1, project_cap=cap)


def test_budget_counts_real_tokens_and_marks_what_was_omitted(ix: Intently) -> None:
    for i in range(12):
        ix.requirements.add(f"Rule {i} about parser part {i}: handle edge case {i} explicitly.", paths=[f"src/p{i}/**"])
    files = [f"src/p{i}/x.py" for i in range(12)]
    full = ix.requirements.select("Fix the parser", paths=files, budget=5000, record=False)
    assert len(full.items) == 12 and full.omitted == 0
    small = ix.requirements.select("Fix the parser", paths=files, budget=250, explain=True, record=False)
    assert 0 < len(small.items) < 12
    assert small.omitted == 12 - len(small.items)
    assert small.block.rstrip().endswith(f"({small.omitted} more requirements omitted; run intently req list)")
    assert small.tokens == default_counter().count(small.block) <= 250
    assert {d.stage for d in small.explain or [] if not d.kept} == {"budget"}


def test_injected_ids_are_logged_and_template_slot_is_used(ix: Intently, rules: dict[str, str]) -> None:
    prompt = "You are a careful engineer.\n\n{{ intent }}\n\nTask: fix it."
    out = ix.requirements.inject(prompt, "Fix a crash in the gui", paths=["pkg/gui/a.go"])
    assert out.startswith("You are a careful engineer.\n\n## Standing project requirements")
    assert "{{ intent }}" not in out and out.endswith("Task: fix it.")
    (op,) = ix.log.read(ix.namespace, op="REQ_INJECTED")
    assert rules["gui"] in op.payload["ids"]
    prepended = ix.requirements.inject("Task: fix it.", "Fix a crash in the gui", paths=["pkg/gui/a.go"])
    assert prepended.startswith("## Standing project requirements") and prepended.endswith("\nTask: fix it.")
    assert place("$intentionally plain", "") == "$intentionally plain"


def test_opt_out_per_call_and_project_wide(ix: Intently, rules: dict[str, str]) -> None:
    assert ix.requirements.inject("Task.", "fix gui", paths=["pkg/gui/a.go"], inject=False) == "Task."
    config = ix.home.config_path
    config.write_text(config.read_text().replace('inject = "on"', 'inject = "off"'))
    with Intently.open(ix.home.path, actor="user:alice") as off:
        assert off.requirements.select("fix gui", paths=["pkg/gui/a.go"]).ids == []
        assert off.requirements.inject("Task.", "fix gui") == "Task."
    assert ix.log.read(ix.namespace, op="REQ_INJECTED") == []


def test_without_an_embedder_selection_degrades_to_scope_and_bm25(ix: Intently, rules: dict[str, str]) -> None:
    lexical = Requirements(ix.runtime, embedder="none")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "none" is a choice, not a failure: no warning
        sel = lexical.select("Never use the system Ruby interpreter for scripts", paths=["pkg/gui/a.go"], record=False)
    assert rules["gui"] in sel.ids and rules["ruby"] in sel.ids
    assert sel.model_id is None


def test_selection_is_deterministic(ix: Intently, rules: dict[str, str]) -> None:
    reqs = ix.requirements.load().requirements
    emb = ix.requirements.embedder
    first = run_select(reqs, "Fix gui refresh bug", paths=["pkg/gui/a.go"], embedder=emb, explain=True)
    second = run_select(reqs, "Fix gui refresh bug", paths=["pkg/gui/a.go"], embedder=emb, explain=True)
    assert first.block == second.block
    assert [d.to_json() for d in first.decisions] == [d.to_json() for d in second.decisions]


def test_paths_and_domains_as_one_string_are_one_item(ix: Intently) -> None:
    """A bare string used to be iterated letter by letter, dropping the rule scoped to it."""
    ix.requirements.add("Amounts in the payments API are integer cents", paths=["src/api/payments.py"])
    as_list = ix.requirements.select("tidy the module", paths=["src/api/payments.py"], record=False)
    as_str = ix.requirements.select("tidy the module", paths="src/api/payments.py", record=False)
    assert "integer cents" in as_list.block
    assert as_str.ids == as_list.ids
    assert (
        ix.requirements.select("tidy", domains="billing", record=False).ids
        == ix.requirements.select("tidy", domains=["billing"], record=False).ids
    )


def test_one_ranking_packs_into_any_budget_as_a_selection_of_its_own_would(ix: Intently, rules: dict[str, str]) -> None:
    """``selector`` ranks the rules once for a task and packs them per budget (the context
    block tries several): each packing must be what ``select`` gives for that budget, the
    reasons included, whatever was packed before it (packing marks its decisions; a second
    packing that saw the first one's marks would report rules cut that it kept)."""
    task = "Fix a crash in the branches panel and note it in the changelog"
    paths = ["pkg/gui/branches.go", "CHANGELOG.md", "pkg/i18n/english.go"]
    pack = ix.requirements.selector(task, paths=paths, explain=True)
    assert pack(60).omitted > 0 and pack(2000).omitted == 0
    for budget in (60, 2000, 60, 120):
        alone = ix.requirements.select(task, paths=paths, budget=budget, explain=True, record=False)
        assert pack(budget).to_json() == alone.to_json(), budget
    assert pack(None).to_json() == ix.requirements.select(task, paths=paths, explain=True, record=False).to_json()
    assert ix.log.read("proj", op="REQ_INJECTED") == []  # ranking and packing record nothing
