"""Bearer tokens for the HTTP API, mapped to actors, kept in the log itself.

A token is ``itk_<id>_<secret>``. Creating one appends ``TOKEN_CREATE`` (the id, the
actor and the SHA-256 of the token, never the token) to the namespace's stream; revoking
appends ``TOKEN_REVOKE``. Resolving a token reads those two operations by target id, so
there is no token table to migrate or rebuild: the log is the only state, and replay needs
nothing more than the record-only appliers below. Creating or revoking needs admin in the
namespace; the token then carries only the grants its actor holds, namespace by namespace.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..access import Permission
from ..core.actors import Actor
from ..core.errors import InvalidInput, NotFound
from ..log import Operation, register_applier

if TYPE_CHECKING:
    from .._intently import Intently

__all__ = ["IssuedToken", "TokenInfo", "TokenStore", "hash_token"]

POLICY_VERSION = "server-tokens@1"
_TOKEN = re.compile(r"^itk_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$")


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TokenInfo:
    id: str
    actor: str
    label: str
    namespace: str
    created_by: str
    created_at: str
    revoked_at: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "actor": self.actor,
            "label": self.label,
            "namespace": self.namespace,
            "created_by": self.created_by,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }


@dataclass(frozen=True)
class IssuedToken:
    """A new token: ``token`` is shown once and never stored."""

    token: str
    info: TokenInfo

    def to_json(self) -> dict[str, Any]:
        return {"token": self.token, **self.info.to_json()}


class TokenStore:
    """Create, list, revoke and resolve tokens of one home."""

    def __init__(self, ix: Intently) -> None:
        self._ix = ix

    def create(self, actor: Actor | str, *, label: str = "") -> IssuedToken:
        grantee = actor if isinstance(actor, Actor) else Actor.parse(actor)
        if len(label) > 200:
            raise InvalidInput("at most 200 characters", where="label")
        token_id = secrets.token_hex(6)
        token = f"itk_{token_id}_{secrets.token_urlsafe(32)}"
        rt = self._ix.runtime
        with rt.store.transaction() as tx:
            rt.access.require(rt.actor, self._ix.namespace, Permission.ADMIN, tx)
            op = rt.log.append(
                tx,
                namespace=self._ix.namespace,
                actor=str(rt.actor),
                op="TOKEN_CREATE",
                target=token_id,
                payload={"id": token_id, "actor": str(grantee), "label": label, "token_hash": hash_token(token)},
                policy_version=POLICY_VERSION,
            )
        return IssuedToken(token, _info(op, None))

    def revoke(self, token_id: str) -> TokenInfo:
        rt = self._ix.runtime
        ns = self._ix.namespace
        with rt.store.transaction() as tx:
            rt.access.require(rt.actor, ns, Permission.ADMIN, tx)
            created, revoked = _ops(tx, ns, token_id)
            if created is None:
                raise NotFound(f"no token {token_id!r}")
            if revoked is None:
                revoked = rt.log.append(
                    tx,
                    namespace=ns,
                    actor=str(rt.actor),
                    op="TOKEN_REVOKE",
                    target=token_id,
                    payload={"id": token_id},
                    policy_version=POLICY_VERSION,
                )
        return _info(created, revoked)

    def list(self) -> list[TokenInfo]:
        rt = self._ix.runtime
        ns = self._ix.namespace
        with rt.store.transaction(write=False) as tx:
            rt.access.require(rt.actor, ns, Permission.ADMIN, tx)
        created = rt.log.read(ns, op="TOKEN_CREATE")
        revoked = {o.target: o for o in rt.log.read(ns, op="TOKEN_REVOKE")}
        return [_info(o, revoked.get(o.target)) for o in created]

    def resolve(self, token: str) -> Actor | None:
        """The actor a live token stands for, or ``None`` (unknown, malformed or revoked)."""
        match = _TOKEN.match(token)
        if match is None:
            return None
        token_id = match.group(1)
        with self._ix.store.transaction(write=False) as tx:
            for row in tx.query("SELECT stream FROM log_streams ORDER BY stream"):
                created, revoked = _ops(tx, str(row["stream"]), token_id)
                if created is None:
                    continue
                if revoked is not None:
                    return None
                if hmac.compare_digest(str(created.payload["token_hash"]), hash_token(token)):
                    return Actor.parse(str(created.payload["actor"]))
                return None
        return None


def _ops(tx: Any, stream: str, token_id: str) -> tuple[Operation | None, Operation | None]:
    rows = tx.query(
        "SELECT * FROM log_ops WHERE stream = ? AND target = ? AND op IN ('TOKEN_CREATE', 'TOKEN_REVOKE') ORDER BY seq",
        (stream, token_id),
    )
    ops = [Operation.from_row(r) for r in rows]
    created = next((o for o in ops if o.op == "TOKEN_CREATE"), None)
    revoked = next((o for o in ops if o.op == "TOKEN_REVOKE"), None)
    return created, revoked


def _info(created: Operation, revoked: Operation | None) -> TokenInfo:
    p = created.payload
    return TokenInfo(
        id=str(p["id"]),
        actor=str(p["actor"]),
        label=str(p["label"]),
        namespace=created.stream,
        created_by=created.actor,
        created_at=created.time,
        revoked_at=None if revoked is None else revoked.time,
    )


register_applier("TOKEN_CREATE", None)
register_applier("TOKEN_REVOKE", None)
