"""Permissions: default deny for everyone but the owner; grants are log operations; a
caller who may not read a namespace cannot tell whether it exists."""

from __future__ import annotations

import pytest

from intently import Actor, Intently, NotFound, Permission, PermissionDenied

BOB = Actor.parse("bob")


def test_the_owner_holds_everything_everywhere(ix: Intently) -> None:
    assert ix.access.permissions(ix.actor, "proj") == set(Permission)
    assert ix.access.permissions(ix.actor, "not-yet-created") == set(Permission)


def test_default_deny_for_anyone_else(ix: Intently) -> None:
    for actor in ("bob", "agent:claude", "tool:fs", "system:cron", "user:Alice"):
        assert ix.access.permissions(Actor.parse(actor), "proj") == set()
    with pytest.raises(NotFound):
        ix.as_actor(BOB).require(Permission.READ)


@pytest.mark.parametrize(
    ("granted", "implied"),
    [
        (Permission.READ, {Permission.READ}),
        (Permission.WRITE, {Permission.READ, Permission.WRITE}),
        (Permission.MANAGE_REMINDERS, {Permission.READ, Permission.MANAGE_REMINDERS}),
        (Permission.ADMIN, set(Permission)),
    ],
)
def test_what_each_permission_implies(ix: Intently, granted: Permission, implied: set[Permission]) -> None:
    ix.access.grant(BOB, granted)
    assert ix.access.permissions(BOB, "proj") == implied
    assert ix.access.permissions(BOB, "elsewhere") == set()


def test_grant_and_revoke_are_operations_in_the_namespaces_stream(ix: Intently) -> None:
    ix.access.grant(BOB, Permission.WRITE)
    assert ix.access.revoke(BOB, Permission.WRITE) is True
    assert ix.access.revoke(BOB, Permission.WRITE) is False  # nothing held: nothing logged
    ops = ix.log.read("proj", after=1)
    assert [(o.op, o.actor, o.target, o.payload) for o in ops] == [
        ("GRANT", "user:alice", "user:bob", {"actor": "user:bob", "permission": "write"}),
        ("REVOKE", "user:alice", "user:bob", {"actor": "user:bob", "permission": "write"}),
    ]
    assert all(o.policy_version == "access@1" for o in ops)
    assert ix.access.permissions(BOB, "proj") == set()


def test_only_admins_grant(ix: Intently) -> None:
    bob = ix.as_actor(BOB)
    with pytest.raises(NotFound):
        bob.access.grant(Actor.parse("carol"), Permission.READ)
    ix.access.grant(BOB, Permission.WRITE)
    with pytest.raises(PermissionDenied, match="admin"):
        bob.access.grant(Actor.parse("carol"), Permission.READ)
    ix.access.grant(BOB, Permission.ADMIN)
    bob.access.grant(Actor.parse("carol"), Permission.READ)
    assert ix.access.can(Actor.parse("carol"), "proj", Permission.READ)


def test_unreadable_namespaces_look_exactly_like_missing_ones(ix: Intently) -> None:
    ix.in_namespace("secret").access.grant(Actor.parse("carol"), Permission.READ)  # 'secret' now exists
    bob = ix.as_actor(BOB)
    messages = {}
    for ns in ("secret", "nothing-here"):
        with pytest.raises(NotFound) as caught:
            bob.require(Permission.WRITE, ns)
        messages[ns] = str(caught.value).replace(ns, "<ns>")
        with pytest.raises(NotFound) as listing:
            bob.in_namespace(ns).access.grants()
        assert str(listing.value).replace(ns, "<ns>") == messages[ns]
    assert messages["secret"] == messages["nothing-here"]
    assert bob.access.readable_namespaces(BOB) == []
    assert "secret" in ix.access.readable_namespaces(ix.actor)


def test_readers_see_grants_and_only_their_namespaces(ix: Intently) -> None:
    ix.access.grant(BOB, Permission.READ)
    ix.in_namespace("other").access.grant(Actor.parse("carol"), Permission.READ)
    bob = ix.as_actor(BOB)
    assert [g["actor"] for g in bob.access.grants()] == ["user:bob"]
    assert bob.access.readable_namespaces(BOB) == ["proj"]
    with pytest.raises(PermissionDenied):
        bob.require(Permission.WRITE)
