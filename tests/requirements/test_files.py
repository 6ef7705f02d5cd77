"""Requirement files are the source of truth: format, validation, round trips, the log."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from intently import Intently, InvalidInput, InvalidTransition, ManualClock, NotFound
from intently.log import OperationLog, replay
from intently.requirements import RequirementFileWarning
from intently.store import SQLiteStore


def test_add_writes_frontmatter_then_statement_and_why(ix: Intently) -> None:
    req = ix.requirements.add(
        "Never bump the major version unless told to.",
        rationale="Major releases are batched by the maintainers.",
        domains=["versioning"],
        paths=["internal/version/**"],
        hints=["is this a breaking change"],
    )
    assert req.path == ix.home.requirements_dir / f"{req.id}.md"
    text = req.path.read_text()
    assert text.startswith(f"---\nid: {req.id}\nstatus: active\n")
    assert "level: domain" in text and "domains: [versioning]" in text
    assert text.endswith(
        "---\n\nNever bump the major version unless told to.\n\n**Why:** Major releases are batched by the maintainers.\n"
    )
    assert len(req.id) == len("req-") + 12
    loaded = ix.requirements.get(req.id)
    assert loaded.meta.user_edited and loaded.meta.provenance.kind == "user"
    assert loaded.meta.hints == ["is this a breaking change"]


def test_edit_keeps_comments_and_key_order(ix: Intently) -> None:
    req = ix.requirements.add("Keep diffs minimal.")
    text = req.path.read_text().replace("confidence: high\n", "confidence: high  # agreed in the March review\n")
    text = text.replace("status: active\n", "# lifecycle\nstatus: active\n")
    req.path.write_text(text)
    before_keys = [line.split(":")[0] for line in text.splitlines() if line and not line.startswith((" ", "#"))]
    edited, changed = ix.requirements.edit(req.id, hints=["small pull requests"])
    assert changed == ["hints"]
    after = edited.path.read_text()
    assert "# agreed in the March review" in after and "# lifecycle" in after
    after_keys = [line.split(":")[0] for line in after.splitlines() if line and not line.startswith((" ", "#"))]
    assert after_keys == before_keys


def test_user_edited_is_set_only_when_statement_or_scope_change(ix: Intently) -> None:
    req = ix.requirements.add("Write unit tests for new code.", user_edited=False)
    same, changed = ix.requirements.edit(req.id, statement="Write unit tests for new code.", confidence="medium")
    assert changed == ["confidence"] and not same.meta.user_edited
    scoped, changed = ix.requirements.edit(req.id, paths=["src/**"])
    assert changed == ["scope.paths"] and scoped.meta.user_edited


def test_edit_text_from_an_editor_is_validated_and_compared(ix: Intently) -> None:
    req = ix.requirements.add("Use tabs.", user_edited=False)
    raw = req.path.read_text()
    unchanged, changed = ix.requirements.edit_text(req.id, raw)
    assert changed == [] and not unchanged.meta.user_edited
    with pytest.raises(InvalidInput, match="status"):
        ix.requirements.edit_text(req.id, raw.replace("status: active", "status: sometimes"))
    edited, changed = ix.requirements.edit_text(req.id, raw.replace("Use tabs.", "Use four spaces."))
    assert changed == ["statement"] and edited.meta.user_edited and edited.statement == "Use four spaces."


def test_errors_name_file_line_and_field_and_skip_only_that_file(ix: Intently) -> None:
    good = ix.requirements.add("Run the linter before committing.")
    bad = ix.requirements.add("Never push to main.")
    bad.path.write_text(bad.path.read_text().replace("confidence: high", "confidence: very"))
    errors = ix.requirements.validate()
    assert len(errors) == 1
    err = errors[0]
    assert err.file == f"requirements/{bad.id}.md" and err.field == "confidence"
    assert err.line == next(i for i, line in enumerate(bad.path.read_text().splitlines(), 1) if "confidence" in line)
    with pytest.warns(RequirementFileWarning, match=f"{bad.id}.md:{err.line}: confidence"):
        ids = [r.id for r in ix.requirements.list()]
    assert ids == [good.id]
    with warnings.catch_warnings(record=True) as sel_warns:
        warnings.simplefilter("always")
        chosen = ix.requirements.select("commit my change", record=False)
    assert good.id in chosen.ids and sel_warns


def test_unknown_keys_and_broken_yaml_are_reported(ix: Intently) -> None:
    req = ix.requirements.add("Pin dependencies.")
    req.path.write_text(req.path.read_text().replace("hints: []", "hints: []\nsecret_flag: true"))
    assert ix.requirements.validate()[0].field == "secret_flag"
    req.path.write_text("---\nid: [unclosed\n---\nbody\n")
    err = ix.requirements.validate()[0]
    assert "invalid YAML" in err.message and err.line is not None


def test_outside_edits_are_logged_with_old_and_new_hash(ix: Intently) -> None:
    req = ix.requirements.add("Prefer composition.")
    old = req.content_hash
    req.path.write_text(req.path.read_text().replace("Prefer composition.", "Prefer composition over inheritance."))
    ix.requirements.list()
    ops = ix.log.read(ix.namespace, op="REQ_OUTSIDE_CHANGE")
    assert len(ops) == 1
    assert ops[0].payload["old_hash"] == old
    assert ops[0].payload["new_hash"] == ix.requirements.get(req.id).content_hash
    ix.requirements.list()
    assert len(ix.log.read(ix.namespace, op="REQ_OUTSIDE_CHANGE")) == 1  # seen once, logged once
    req.path.unlink()
    ix.requirements.list()
    gone = ix.log.read(ix.namespace, op="REQ_OUTSIDE_CHANGE")[-1]
    assert gone.payload["new_hash"] is None


def test_status_transitions(ix: Intently) -> None:
    a = ix.requirements.add("Use UK spelling.")
    b = ix.requirements.add("Use US spelling.")
    assert ix.requirements.disable(a.id).status == "disabled"
    assert ix.requirements.disable(a.id).status == "disabled"  # idempotent
    assert ix.requirements.enable(a.id).status == "active"
    sup = ix.requirements.supersede(a.id, by=b.id)
    assert sup.status == "superseded" and sup.meta.superseded_by == b.id
    with pytest.raises(InvalidTransition):
        ix.requirements.enable(a.id)
    with pytest.raises(NotFound):
        ix.requirements.get("req-000000000000")


def test_domains_round_trip_and_are_user_edited(ix: Intently) -> None:
    ix.requirements.add_domain("versioning", description="Releases.", paths=["internal/version/**"])
    path = ix.home.path / "domains.yaml"
    path.write_text("# our domain map\n" + path.read_text())
    ix.requirements.edit_domain("versioning", paths=["internal/version/**", "CHANGELOG.md"])
    assert path.read_text().startswith("# our domain map\n")
    (dom,) = ix.requirements.domains()
    assert dom.user_edited and dom.paths == ["internal/version/**", "CHANGELOG.md"]
    with pytest.raises(InvalidInput):
        ix.requirements.add_domain("versioning")


def test_replay_rebuilds_the_seen_table(ix: Intently, tmp_path: Path, clock: ManualClock) -> None:
    a = ix.requirements.add("Sign commits.")
    ix.requirements.add_domain("git")
    ix.requirements.disable(a.id)
    a.path.write_text(a.path.read_text().replace("Sign commits.", "Sign every commit."))
    ix.requirements.select("commit", record=True)
    ix.checkpoint()
    store = SQLiteStore(tmp_path / "rebuilt.db")
    store.upgrade()
    target = OperationLog(store, clock=clock, keyring=ix.log.keyring, origin=ix.log.origin)
    replay(ix.log, target)
    sql = "SELECT * FROM requirements_seen ORDER BY namespace, file"
    with store.transaction(write=False) as tx1, ix.store.transaction(write=False) as tx2:
        assert tx1.query(sql) == tx2.query(sql)
        assert len(tx2.query(sql)) == 2
    store.close()


def test_an_unchanged_rule_file_is_parsed_once_and_any_edit_is_read(ix: Intently) -> None:
    """Every select (every context block) loads every rule file; re-parsing unchanged YAML made
    a block over 1,000 rules take seconds. A parse is kept for the exact bytes read (in memory,
    and on disk for the next process: see test_parse_cache), so a second load parses nothing,
    and an edit that keeps the size and the mtime is still read."""
    import os

    from intently.requirements._files import _parse

    reqs = [ix.requirements.add(f"Rule {n:02d}: sign the release tag", level="project") for n in range(12)]
    _parse.cache_clear()
    ix.requirements.load()
    cold = _parse.cache_info()
    ix.requirements.load()
    warm = _parse.cache_info()
    assert warm.misses == cold.misses
    path = reqs[3].path
    before = path.stat()
    path.write_text(path.read_text().replace("Rule 03: sign", "Rule 03: SIGN"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    assert ix.requirements.get(reqs[3].id).statement == "Rule 03: SIGN the release tag"
    shown = ix.requirements.get(reqs[3].id)
    shown.meta.status = "disabled"  # a caller's own copy: the kept parse is not changed
    assert ix.requirements.get(reqs[3].id).meta.status == "active"
