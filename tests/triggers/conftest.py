"""Fixtures for standing intents: a home with a reminder manager, a writer and a reader."""

from __future__ import annotations

from typing import Any

import pytest

from intently import Actor, Intently, Permission
from intently.store import Store


@pytest.fixture
def team(ix: Intently) -> Intently:
    """``ix`` (owner alice) after granting bob write, carol manage-reminders, dave read."""
    ix.access.grant(Actor.parse("user:bob"), Permission.WRITE)
    ix.access.grant(Actor.parse("user:carol"), Permission.MANAGE_REMINDERS)
    ix.access.grant(Actor.parse("user:dave"), Permission.READ)
    return ix


def rows(store: Store, sql: str) -> list[dict[str, Any]]:
    with store.transaction(write=False) as tx:
        return tx.query(sql)


def ops(ix: Intently, prefix: str = "TRIGGER_") -> list[str]:
    return [o.op for o in ix.log.read(ix.namespace, limit=10_000) if o.op.startswith(prefix)]
