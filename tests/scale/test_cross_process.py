"""Races between real processes on one PostgreSQL database, through the library.

Each worker is its own interpreter with its own connection pool, released by the parent at
the same moment, so the only thing keeping them apart is the database's locking.
"""

from __future__ import annotations

from intently import Intently

from .conftest import assert_log_gap_free, race

WORKERS = 3
TURN = "we deploy production tonight after the review"


def test_a_standing_intent_fires_once_per_cooldown_across_processes(pg_home: Intently) -> None:
    intent = pg_home.triggers.add("Run the launch checklist", when=["deploy production"], cooldown="1h")
    quiet = pg_home.triggers.add("Ping the on-call channel", when=["rollback database"], cooldown="1h")
    results = race("match", pg_home.home.path, [[TURN, "3"] for _ in range(WORKERS)])

    fired = [i for r in results for i in r["fired"]]
    assert fired == [intent.id]  # 12 matching turns across 4 processes: one fire, by one of them
    assert quiet.id not in fired
    ops = assert_log_gap_free(pg_home)
    assert [o.target for o in ops if o.op == "TRIGGER_FIRE"] == [intent.id]
    assert pg_home.triggers.show(intent.id).fire_count == 1


def test_versioned_edits_of_one_goal_have_exactly_one_winner(pg_home: Intently) -> None:
    goal = pg_home.goals.add("Ship the billing export")
    results = race("edit", pg_home.home.path, [[goal.id, str(goal.version), f"w{i}", "1"] for i in range(WORKERS)])

    winners = [r for r in results if r["won"]]
    assert len(winners) == 1 and winners[0]["won"] == [goal.version + 1]
    assert sum(r["conflicts"] for r in results) == WORKERS - 1
    after = pg_home.goals.get(goal.id)
    assert after.version == goal.version + 1
    ops = assert_log_gap_free(pg_home)
    assert len([o for o in ops if o.op == "INTENT_UPDATE" and o.target == goal.id]) == 1


def test_unversioned_edits_of_one_goal_are_all_applied_in_some_order(pg_home: Intently) -> None:
    goal = pg_home.goals.add("Keep the public API backwards compatible")
    rounds = 5
    results = race("edit", pg_home.home.path, [[goal.id, "-", f"w{i}", str(rounds)] for i in range(WORKERS)])

    assert all(r["conflicts"] == 0 for r in results)
    versions = sorted(v for r in results for v in r["won"])
    # Each update saw the one before it: versions are consecutive, none reused (no lost update).
    assert versions == list(range(goal.version + 1, goal.version + 1 + WORKERS * rounds))
    after = pg_home.goals.get(goal.id)
    assert after.version == goal.version + WORKERS * rounds
    ops = assert_log_gap_free(pg_home)
    updates = [o for o in ops if o.op == "INTENT_UPDATE" and o.target == goal.id]
    assert [o.payload["version"] for o in updates] == versions
    assert after.context_note == updates[-1].payload["changes"]["context_note"]
    for worker in range(WORKERS):  # each process's own edits land in the order it made them
        mine = [
            o.payload["changes"]["context_note"]
            for o in updates
            if o.payload["changes"]["context_note"].startswith(f"w{worker}-")
        ]
        assert mine == [f"w{worker}-{i}" for i in range(rounds)]
