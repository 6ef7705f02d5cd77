"""Contradicting requirements: the injected block keeps one, and says which and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from intently import Intently, ManualClock
from intently.embed import get_embedder
from intently.requirements._conflicts import contradicts

from .conftest import run_main

TABS = "Use tabs for indentation in Go files."
NO_TABS = "Never use tabs for indentation in Go files; gofmt output with spaces is required."
TASK = "Reformat the indentation of the Go files"


def cli(home: Path, *args: str) -> tuple[int, str, str]:
    return run_main(home, *args, env={"COLUMNS": "300"})


@pytest.mark.parametrize("embedder", ["minilm", "none"])
def test_the_newer_of_two_contradicting_rules_is_injected_and_the_other_is_reported(
    ix: Intently, clock: ManualClock, monkeypatch: pytest.MonkeyPatch, embedder: str
) -> None:
    monkeypatch.setenv("INTENTLY_EMBEDDER", embedder)
    with Intently.open(ix.home.path, actor="user:alice", clock=clock) as handle:
        old = handle.requirements.add(TABS, user_edited=False)
        clock.advance("1h")
        new = handle.requirements.add(NO_TABS, user_edited=False)
        other = handle.requirements.add("Never commit generated protobuf files.")
        sel = handle.requirements.select(TASK, explain=True, record=False)
    assert new.id in sel.ids and other.id in sel.ids
    assert old.id not in sel.ids and old.id not in sel.block
    (omission,) = [o for o in sel.omissions if o.id == old.id]
    assert omission.stage == "conflict" and omission.conflicts_with == new.id
    assert f"conflicts with [{new.id}]" in omission.reason
    why = {d.id: d for d in sel.decisions}
    assert why[old.id].stage == "conflict" and f"conflicts with [{new.id}]" in why[old.id].reason
    assert [(c.kept, c.dropped, c.why) for c in sel.conflicts] == [(new.id, old.id, "newer")]
    assert sel.to_json()["omissions"][0]["conflicts_with"] == new.id


def test_two_rules_written_in_the_same_second_are_not_called_newer(ix: Intently, clock: ManualClock) -> None:
    """With the same time on both, only the id order decides; the report says so instead of
    claiming the kept rule is newer."""
    with Intently.open(ix.home.path, actor="user:alice", clock=clock) as handle:
        first = handle.requirements.add(TABS, user_edited=False)
        second = handle.requirements.add(NO_TABS, user_edited=False)
        (conflict,) = handle.requirements.select(TASK, explain=True, record=False).conflicts
    assert {conflict.kept, conflict.dropped} == {first.id, second.id}
    assert conflict.kept == max(first.id, second.id) and conflict.why == "tie: same time, larger id"


def test_a_user_edited_rule_wins_over_a_newer_scanned_one(ix: Intently, clock: ManualClock) -> None:
    mine = ix.requirements.add(NO_TABS)  # written by a person: user_edited
    clock.advance("1d")
    scanned = ix.requirements.add(TABS, user_edited=False)
    sel = ix.requirements.select(TASK, explain=True, record=False)
    assert sel.ids == [mine.id]
    assert [(c.kept, c.dropped, c.why) for c in sel.conflicts] == [(mine.id, scanned.id, "user-edited")]


def test_rules_that_merely_share_words_or_a_negation_are_all_kept(ix: Intently) -> None:
    pairs = [
        "Run commands with `./bin/brew`, not a system `brew` on PATH.",
        "Compose brew commands by shelling out via HOMEBREW_BREW_FILE instead of requiring cmd/ files.",
        "Use tabs for indentation in Makefiles.",
        "Use tabs for indentation in Go files.",
    ]
    ids = [ix.requirements.add(text).id for text in pairs]
    sel = ix.requirements.select("Change how brew commands and Makefiles are indented", record=False)
    assert sel.conflicts == [] and all(o.stage != "conflict" for o in sel.omissions)
    assert set(ids) == set(sel.ids)


def test_validate_warns_naming_both_files_and_still_passes(ix: Intently, clock: ManualClock) -> None:
    old = ix.requirements.add(TABS, user_edited=False)
    clock.advance("1h")
    new = ix.requirements.add(NO_TABS, user_edited=False)
    code, out, err = cli(ix.home.path, "req", "validate")
    assert code == 0, err
    warning = " ".join(err.split())
    assert f"requirements/{old.id}.md conflicts with requirements/{new.id}.md" in warning
    assert "all requirement files are valid" in out
    code, out, err = cli(ix.home.path, "req", "preview", "--task", TASK, "--explain", "--json")
    assert code == 0, err
    preview = json.loads(out)
    assert preview["ids"] == [new.id] and old.id not in preview["block"]
    assert [(o["id"], o["stage"], o["conflicts_with"]) for o in preview["omissions"]] == [(old.id, "conflict", new.id)]
    (why,) = [d for d in preview["explain"] if d["id"] == old.id]
    assert f"conflicts with [{new.id}]" in why["reason"]
    (found,) = ix.requirements.conflicts()
    assert (found.kept, found.dropped) == (new.id, old.id)
    ix.requirements.disable(old.id)  # resolved by a person: no more warning
    code, out, err = cli(ix.home.path, "req", "validate", "--json")
    assert code == 0 and "conflicts with" not in err and json.loads(out)["ok"] is True


CONTRADICTIONS = [
    ("Use pnpm to install dependencies.", "Do not use pnpm; install dependencies with npm."),
    ("Always squash commits before merging.", "Never squash commits."),
    ("Write tests with pytest fixtures.", "Avoid pytest fixtures in tests."),
]
COMPATIBLE = [
    ("Log errors with the logger module.", "Never log secrets."),
    ("Run just lint before every commit.", "Do not run the full test suite before every commit."),
    ("Use pnpm to install dependencies.", "Use pnpm workspaces for every package."),
]


@pytest.mark.parametrize("embedder", ["minilm", None])
def test_opposite_rules_about_one_subject_contradict_and_rules_about_different_ones_do_not(
    embedder: str | None,
) -> None:
    emb = get_embedder(embedder) if embedder else None
    assert all(contradicts(a, b, embedder=emb) is not None for a, b in CONTRADICTIONS)
    assert all(contradicts(a, b, embedder=emb) is None for a, b in COMPATIBLE)


def test_a_rule_cannot_be_emptied_oversized_or_scoped_out_of_reach(ix: Intently) -> None:
    """Saving an empty statement used to write a file the loader skips, losing the rule."""
    from intently import InvalidInput

    rule = ix.requirements.add("Never commit secrets.")
    for bad in ("   ", "x" * 5001):
        with pytest.raises(InvalidInput, match="statement"):
            ix.requirements.edit(rule.id, statement=bad)
    with pytest.raises(InvalidInput, match="never applies"):
        ix.requirements.edit(rule.id, level="domain")
    with pytest.raises(InvalidInput, match="never applies"):
        ix.requirements.add("Use tabs.", level="domain")
    with pytest.raises(InvalidInput, match="at most 5000"):
        ix.requirements.add("Never do the thing. " * 300)
    assert ix.requirements.get(rule.id).statement == "Never commit secrets."


def test_one_long_rule_does_not_push_out_the_rules_ranked_after_it(ix: Intently) -> None:
    """Packing passes over a rule that does not fit and goes on with smaller ones."""
    big = ix.requirements.add("Edit generated files only through the generator. " * 60)
    small = [ix.requirements.add(f"Never reformat the file header {n} of a module.") for n in range(3)]
    sel = ix.requirements.select("edit generated files", paths=["gen/api.py"], budget=300, record=False, explain=True)
    ranks = {d.id: d.rank for d in sel.decisions}
    assert ranks[big.id] < min(ranks[r.id] for r in small)  # the long rule is the most valuable
    assert big.id not in sel.ids and {r.id for r in small} <= set(sel.ids)
    assert sel.omitted == 1 and sel.tokens <= 300


@pytest.mark.parametrize("target", ["", "SELF", "req-aaaaaaaaaaaa"])
def test_validate_refuses_a_supersede_that_points_nowhere(ix: Intently, target: str) -> None:
    rule = ix.requirements.add("Use tabs for indentation in Go files.")
    path = ix.home.requirements_dir / f"{rule.id}.md"
    text = path.read_text(encoding="utf-8").replace("status: active", "status: superseded")
    named = rule.id if target == "SELF" else target
    text = text.replace("superseded_by: ''", f"superseded_by: '{named}'")
    path.write_text(text, encoding="utf-8")
    errors = ix.requirements.validate()
    assert [(e.field, e.file.endswith(f"{rule.id}.md")) for e in errors] == [("superseded_by", True)], errors
    why = {"": "names the rule", "SELF": "itself", "req-aaaaaaaaaaaa": "no requirement"}[target]
    assert why in errors[0].message
