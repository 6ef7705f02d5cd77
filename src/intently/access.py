"""Permissions per namespace and actor: read, write, manage reminders, administer.

Default deny for everyone but the home's owner. Grants and revocations are operations in
the log of the namespace they concern. A caller that may not read a namespace gets the
same :class:`NotFound` whether or not the namespace exists.

An agent acting on behalf of a person (``agent:mcp for user:alice``) holds that person's
permissions except :attr:`Permission.ADMIN`: whoever steers the agent (a prompt injection in
a page it read) must not grant, revoke or make tokens. Some acts are a person's whatever the
permissions (:func:`require_person`): language proposes, people decide.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from .core.actors import Actor
from .core.errors import NotFound, PermissionDenied
from .core.namespaces import validate_namespace
from .log import Operation, register_applier
from .store import Transaction, register_migration

if TYPE_CHECKING:
    from ._runtime import Runtime

__all__ = ["Access", "Permission", "require_person"]

register_migration(
    "access",
    1,
    "CREATE TABLE access_grants (namespace TEXT NOT NULL, actor TEXT NOT NULL, permission TEXT NOT NULL, "
    "granted_by TEXT NOT NULL, granted_at TEXT NOT NULL, PRIMARY KEY (namespace, actor, permission))",
    description="per-namespace grants",
)


class Permission(StrEnum):
    READ = "read"
    WRITE = "write"
    MANAGE_REMINDERS = "manage-reminders"
    ADMIN = "admin"


# What each granted permission implies.
_IMPLIES: dict[Permission, set[Permission]] = {
    Permission.READ: {Permission.READ},
    Permission.WRITE: {Permission.READ, Permission.WRITE},
    Permission.MANAGE_REMINDERS: {Permission.READ, Permission.MANAGE_REMINDERS},
    Permission.ADMIN: set(Permission),
}

POLICY_VERSION = "access@1"


class Access:
    """Checks and changes grants. The owner (``[home] owner``) holds every permission."""

    def __init__(self, runtime: Runtime) -> None:
        self._rt = runtime

    @property
    def owner(self) -> Actor:
        return Actor.parse(self._rt.config.home.owner)

    def is_owner(self, actor: Actor) -> bool:
        return str(actor) == str(self.owner)

    def permissions(self, actor: Actor, namespace: str, tx: Transaction | None = None) -> set[Permission]:
        if actor.on_behalf_of is not None:  # the person's, never administering (module docstring)
            return self.permissions(actor.on_behalf_of, namespace, tx) - {Permission.ADMIN}
        if self.is_owner(actor):
            return set(Permission)
        sql = "SELECT permission FROM access_grants WHERE namespace = ? AND actor = ?"
        params = (namespace, str(actor))
        if tx is None:
            with self._rt.store.transaction(write=False) as own:
                rows = own.query(sql, params)
        else:
            rows = tx.query(sql, params)
        held: set[Permission] = set()
        for row in rows:
            held |= _IMPLIES[Permission(str(row["permission"]))]
        return held

    def can(self, actor: Actor, namespace: str, permission: Permission, tx: Transaction | None = None) -> bool:
        return permission in self.permissions(actor, namespace, tx)

    def require(self, actor: Actor, namespace: str, permission: Permission, tx: Transaction | None = None) -> None:
        """Raise unless ``actor`` holds ``permission`` in ``namespace``.

        Without read access the error is :class:`NotFound`, worded the same whether or not
        the namespace exists, so its existence does not leak.
        """
        held = self.permissions(actor, namespace, tx)
        if Permission.READ not in held:
            raise NotFound(f"namespace {namespace!r} not found")
        if permission not in held:
            raise PermissionDenied(f"{actor} lacks {permission.value} in namespace {namespace!r}")

    def readable_namespaces(self, actor: Actor) -> list[str]:
        if actor.on_behalf_of is not None:
            return self.readable_namespaces(actor.on_behalf_of)
        with self._rt.store.transaction(write=False) as tx:
            if self.is_owner(actor):
                rows = tx.query("SELECT stream AS namespace FROM log_streams UNION SELECT namespace FROM access_grants")
            else:
                rows = tx.query("SELECT DISTINCT namespace FROM access_grants WHERE actor = ?", (str(actor),))
        names = {str(r["namespace"]) for r in rows}
        if self.is_owner(actor):
            names.add(self._rt.config.home.name)
        return sorted(names)

    def grant(self, grantee: Actor, permission: Permission, namespace: str | None = None) -> None:
        ns = validate_namespace(namespace or self._rt.namespace)
        with self._rt.store.transaction() as tx:
            self.require(self._rt.actor, ns, Permission.ADMIN, tx)
            payload = {"actor": str(grantee), "permission": permission.value}
            op = self._rt.log.append(
                tx,
                namespace=ns,
                actor=str(self._rt.actor),
                op="GRANT",
                target=str(grantee),
                payload=payload,
                policy_version=POLICY_VERSION,
            )
            _apply_grant(tx, op)

    def revoke(self, grantee: Actor, permission: Permission, namespace: str | None = None) -> bool:
        ns = validate_namespace(namespace or self._rt.namespace)
        with self._rt.store.transaction() as tx:
            self.require(self._rt.actor, ns, Permission.ADMIN, tx)
            held = tx.scalar(
                "SELECT COUNT(*) FROM access_grants WHERE namespace = ? AND actor = ? AND permission = ?",
                (ns, str(grantee), permission.value),
            )
            if not held:
                return False
            op = self._rt.log.append(
                tx,
                namespace=ns,
                actor=str(self._rt.actor),
                op="REVOKE",
                target=str(grantee),
                payload={"actor": str(grantee), "permission": permission.value},
                policy_version=POLICY_VERSION,
            )
            _apply_revoke(tx, op)
            return True

    def grants(self, namespace: str | None = None) -> list[dict[str, str]]:
        ns = validate_namespace(namespace or self._rt.namespace)
        with self._rt.store.transaction(write=False) as tx:
            self.require(self._rt.actor, ns, Permission.READ, tx)
            rows = tx.query(
                "SELECT namespace, actor, permission, granted_by, granted_at FROM access_grants "
                "WHERE namespace = ? ORDER BY actor, permission",
                (ns,),
            )
        return [{k: str(v) for k, v in r.items()} for r in rows]


def require_person(actor: Actor, act: str, *, instead: str) -> None:
    """Raise unless ``actor`` is a person acting for itself (a ``user:`` actor, not an agent for one).

    For the acts that turn a proposal into what the project holds true: an agent that could
    confirm a candidate could confirm what it proposed itself, or what a prompt injection made it
    propose. ``instead`` tells the person how to do it themselves.
    """
    if not actor.is_person:
        raise PermissionDenied(f"{actor} cannot {act}: that is a person's decision, not an agent's; {instead}")


def may_review(actor: Actor, agents_may_review: bool) -> bool:
    """Whether ``actor`` may decide on a proposal awaiting review: a person acting for itself,
    or anyone once the home lets agents review (``[review] agents_may_review``)."""
    return actor.is_person or agents_may_review


def require_reviewer(actor: Actor, agents_may_review: bool, act: str, *, review_with: str) -> None:
    """Raise unless ``actor`` :func:`may_review`: the one rule for goal candidates and proposed
    requirements alike. ``review_with`` names the command a person decides with."""
    if not may_review(actor, agents_may_review):
        require_person(
            actor,
            act,
            instead=f"a person reviews it with {review_with} (or lets agents do it: [review] agents_may_review = "
            "true in intently.toml)",
        )


def _apply_grant(tx: Transaction, op: Operation) -> None:
    tx.execute(
        "INSERT INTO access_grants (namespace, actor, permission, granted_by, granted_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (namespace, actor, permission) DO NOTHING",
        (op.stream, op.payload["actor"], op.payload["permission"], op.actor, op.time),
    )


def _apply_revoke(tx: Transaction, op: Operation) -> None:
    tx.execute(
        "DELETE FROM access_grants WHERE namespace = ? AND actor = ? AND permission = ?",
        (op.stream, op.payload["actor"], op.payload["permission"]),
    )


register_applier("GRANT", _apply_grant)
register_applier("REVOKE", _apply_revoke)
register_applier("HOME_INIT", None)
