"""``log replay`` rebuilds the goals tables exactly, from the operations alone."""

from __future__ import annotations

from pathlib import Path

from intently import Actor, Intently, ManualClock, Permission
from intently.goals import TABLES
from intently.log import OperationLog, replay
from intently.store import Store, open_store


def _dump(store: Store, table: str) -> list[tuple[object, ...]]:
    with store.transaction(write=False) as tx:
        rows = tx.query(f"SELECT * FROM {table}")
    return sorted((tuple(sorted(r.items())) for r in rows), key=repr)


def _exercise(ix: Intently, clock: ManualClock) -> None:
    g = ix.goals
    api = g.add("Ship the API", priority="HIGH", owner="bob", due="2026-03-20", stakeholders=["carol"])
    docs = g.add("Write the docs for api/server.py", context_note="after the freeze")
    risk = g.add("Certificate expiry", type="RISK", priority="HIGH", due="2026-03-10")
    lapse = g.add("Domain lapses", type="RISK", priority="HIGH", due="2026-03-10")
    g.depend(api.id, docs.id)
    g.block(risk.id, api.id)
    g.undepend(api.id, risk.id)
    g.edit(docs.id, text="Write the API docs", priority="LOW", expected_version=g.get(docs.id).version)
    proposed = g.propose("COMMITMENT", "Send Dana the report", evidence_id="turn-1", span="0:20").intent
    g.propose("COMMITMENT", "I'll send Dana the report", evidence_id="turn-2")
    dismissed = g.propose("GOAL", "Rewrite everything in Rust", evidence_id="turn-3").intent
    assert proposed is not None and dismissed is not None
    g.promote(proposed.id)
    g.dismiss(dismissed.id)
    g.record_decision("We use PostgreSQL", evidence_id="turn-4")
    g.bundle("", session="s-1")
    stale = g.add("Book the venue", due="2026-03-08")
    held = g.add("Plan the offsite")
    g.depend(held.id, api.id)  # carried to the replacement when it is superseded
    g.hold(held.id)
    g.resume(held.id)
    g.supersede(held.id, text="Plan a smaller offsite")
    g.cancel(docs.id)
    clock.advance("10d")
    g.organise()  # the risk expires and escalates
    g.reopen(risk.id, due="2026-04-30")
    g.archive(stale.id, reason="no longer wanted")  # expired, put out of view
    g.edit(lapse.id, priority="HIGH")  # the escalated risk downgraded, then closed out
    g.cancel(lapse.id)
    g.complete(proposed.id)
    theirs = ix.as_actor("agent:ci").goals.add("Tidy the changelog")  # the agent's reading ...
    g.endorse(theirs.id)  # ... made the user's word: an EPISTEMIC_TRANSITION and an event
    ci = ix.as_actor("agent:ci").goals
    ci.claim_completion(theirs.id, note="tidied", evidence_ids=["commit:1"])  # a completion claim ...
    g.reject_completion(theirs.id, reason="not yet")  # ... rejected
    ci.claim_completion(theirs.id, note="tidied again")
    g.confirm_completion(theirs.id)  # ... and one confirmed, the transition crediting it
    ix.in_namespace("other").goals.add("Elsewhere")


def test_replay_rebuilds_every_goals_table_exactly(ix: Intently, clock: ManualClock, tmp_path: Path) -> None:
    ix.access.grant(Actor.parse("agent:claude"), Permission.READ)
    ix.access.grant(Actor.parse("agent:ci"), Permission.WRITE)
    _exercise(ix, clock)
    ix.checkpoint()
    target_store = open_store(f"sqlite:///{tmp_path / 'replayed.db'}")
    try:
        target_store.upgrade()
        target = OperationLog(
            target_store, clock=clock, keyring=ix.log.keyring, origin=ix.log.origin, witness_path=None
        )
        count = replay(ix.log, target)
        assert count >= 25
        for table in TABLES:
            original = _dump(ix.store, table)
            assert original, f"{table} was not exercised"
            assert _dump(target_store, table) == original, table
    finally:
        target_store.close()
