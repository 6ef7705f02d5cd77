"""Bearer tokens for the HTTP API, mapped to actors, kept in the log itself.

A token is ``itk_<id>_<secret>``. Creating one appends ``TOKEN_CREATE`` (the id, the
actor and the SHA-256 of the token, never the token) to the namespace's stream; revoking
appends ``TOKEN_REVOKE``. Resolving a token reads those two operations by target id, so
there is no token table to migrate or rebuild: the log is the only state, and replay needs
nothing more than the record-only appliers below. Creating or revoking needs admin in the
namespace; the token then carries only the grants its actor holds, namespace by namespace.

An actor is one identity across every namespace, so a token for someone else is a key to
every namespace that someone can reach. Only the home's owner (who holds admin everywhere)
may create one; a namespace admin creates tokens for itself only, and a token for another
actor that the owner did not create resolves to nothing.

A console login is a token of its own (:meth:`TokenStore.open_session`): derived from the
pasted token, labelled ``console session``, expiring, and revoked by logging out, so a
session cookie that was logged out (or copied from the browser) is refused from then on,
while the pasted token stays valid. Revoking the pasted token ends its sessions too.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from ..access import Permission
from ..core.actors import Actor
from ..core.clock import format_time, parse_duration, parse_time
from ..core.errors import InvalidInput, NotFound, PermissionDenied
from ..log import Operation, register_applier

if TYPE_CHECKING:
    from .._intently import Intently

__all__ = ["SESSION_LABEL", "IssuedToken", "TokenInfo", "TokenStore", "hash_token"]

POLICY_VERSION = "server-tokens@1"
SESSION_LABEL = "console session"
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
    expires_at: str | None = None
    parent: str | None = None  # the token a console session was opened with
    #: Why a token that is neither revoked nor expired is refused anyway, or None. A home made
    #: by an older intently can hold tokens a namespace admin created for another actor; those
    #: now resolve to nothing, and a list that showed them as live would send people hunting
    #: for a bug in their client.
    refused: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "actor": self.actor,
            "label": self.label,
            "namespace": self.namespace,
            "created_by": self.created_by,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
            "expires_at": self.expires_at,
            "parent": self.parent,
            "refused": self.refused,
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

    def create(self, actor: Actor | str, *, label: str = "", expires: str | None = None) -> IssuedToken:
        """A token for ``actor``; with ``expires`` (a duration: ``8h``, ``30d``) it is refused
        once that much time has passed, without anyone having to remember to revoke it."""
        grantee = actor if isinstance(actor, Actor) else Actor.parse(actor)
        if len(label) > 200:
            raise InvalidInput("at most 200 characters", where="label")
        lifetime = None if expires is None else _lifetime(expires)
        token_id = secrets.token_hex(6)
        token = f"itk_{token_id}_{secrets.token_urlsafe(32)}"
        rt = self._ix.runtime
        payload: dict[str, Any] = {
            "id": token_id,
            "actor": str(grantee),
            "label": label,
            "token_hash": hash_token(token),
        }
        if lifetime is not None:
            payload["expires_at"] = format_time(rt.clock.now() + lifetime)
        with rt.store.transaction() as tx:
            rt.access.require(rt.actor, self._ix.namespace, Permission.ADMIN, tx)
            if str(grantee) != str(rt.actor) and not rt.access.is_owner(rt.actor):
                raise PermissionDenied(
                    f"{rt.actor} may create tokens only for itself: a token for {grantee} would act in every "
                    f"namespace {grantee} can reach, so only the home's owner ({rt.access.owner}) creates it"
                )
            op = rt.log.append(
                tx,
                namespace=self._ix.namespace,
                actor=str(rt.actor),
                op="TOKEN_CREATE",
                target=token_id,
                payload=payload,
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
        infos = []
        for op in created:
            info = _info(op, revoked.get(op.target))
            if info.revoked_at is None and not self._created_by_rightful(op):
                info = replace(
                    info,
                    refused=f"created by {op.actor} for {info.actor}: only the home's owner creates a token "
                    "for someone else; revoke it and have the owner create a new one",
                )
            infos.append(info)
        return infos

    def resolve(self, token: str) -> Actor | None:
        """The actor a live token stands for, or ``None`` (unknown, malformed, revoked, expired,
        a session whose parent token died, or a token for another actor the owner did not create)."""
        with self._ix.store.transaction(write=False) as tx:
            found = self._live(tx, token)
        return None if found is None else Actor.parse(str(found.payload["actor"]))

    def resolve_session(self, token: str) -> Actor | None:
        """Like :meth:`resolve`, for a console session token only: the console cookie never
        accepts a plain API token, so only what :meth:`open_session` issued can be logged out."""
        with self._ix.store.transaction(write=False) as tx:
            found = self._live(tx, token)
        if found is None or found.payload.get("parent") is None:
            return None
        return Actor.parse(str(found.payload["actor"]))

    def open_session(self, token: str, *, seconds: int) -> IssuedToken | None:
        """A console session for the live API token ``token`` (``None`` if it is not one).

        The session is a token of its own, for the same actor, created by that actor (no admin
        needed: it reaches nothing the pasted token does not) in the stream of the pasted token,
        expiring after ``seconds`` by the home's clock. Logging the creation keeps every login
        in the log, as every other change made over HTTP is.
        """
        rt = self._ix.runtime
        with rt.store.transaction() as tx:
            parent = self._live(tx, token)
            if parent is None or parent.payload.get("parent") is not None:
                return None  # a session does not open another session
            actor = str(parent.payload["actor"])
            token_id = secrets.token_hex(6)
            issued = f"itk_{token_id}_{secrets.token_urlsafe(32)}"
            op = rt.log.append(
                tx,
                namespace=parent.stream,
                actor=actor,
                op="TOKEN_CREATE",
                target=token_id,
                payload={
                    "id": token_id,
                    "actor": actor,
                    "label": SESSION_LABEL,
                    "token_hash": hash_token(issued),
                    "parent": str(parent.payload["id"]),
                    "expires_at": format_time(rt.clock.now() + timedelta(seconds=seconds)),
                },
                policy_version=POLICY_VERSION,
            )
        return IssuedToken(issued, _info(op, None))

    def end_session(self, token: str) -> bool:
        """Log out: revoke the console session ``token`` (by its own actor), so the cookie that
        held it is refused from then on. A plain API token is never revoked here."""
        rt = self._ix.runtime
        with rt.store.transaction() as tx:
            found = self._live(tx, token)
            if found is None or found.payload.get("parent") is None:
                return False
            rt.log.append(
                tx,
                namespace=found.stream,
                actor=str(found.payload["actor"]),
                op="TOKEN_REVOKE",
                target=found.target,
                payload={"id": found.target},
                policy_version=POLICY_VERSION,
            )
        return True

    def _live(self, tx: Any, token: str) -> Operation | None:
        """The ``TOKEN_CREATE`` of ``token`` if the token is live now, else ``None``."""
        match = _TOKEN.match(token)
        if match is None:
            return None
        created = self._find_live(tx, match.group(1))
        if created is None or not hmac.compare_digest(str(created.payload["token_hash"]), hash_token(token)):
            return None
        parent = created.payload.get("parent")
        if parent is not None:
            above = self._find_live(tx, str(parent))
            if above is None or above.payload.get("parent") is not None:
                return None
            if str(above.payload["actor"]) != str(created.payload["actor"]):
                return None
        return created

    def _find_live(self, tx: Any, token_id: str) -> Operation | None:
        """The creation of ``token_id`` unless it was revoked, has expired, or was made for
        another actor by someone who is not the owner (such tokens from before that rule)."""
        for row in tx.query("SELECT stream FROM log_streams ORDER BY stream"):
            created, revoked = _ops(tx, str(row["stream"]), token_id)
            if created is None:
                continue
            if revoked is not None:
                return None
            if not self._created_by_rightful(created):
                return None
            expires = created.payload.get("expires_at")
            if expires is not None and self._ix.runtime.clock.now() >= parse_time(str(expires)):
                return None
            return created
        return None

    def _created_by_rightful(self, created: Operation) -> bool:
        """Whether the ``TOKEN_CREATE`` ``created`` was made by its own actor or the home's owner
        (a token a namespace admin made for someone else, before that rule, is not)."""
        actor = str(Actor.parse(str(created.payload["actor"])))
        return created.actor == actor or self._ix.runtime.access.is_owner(Actor.parse(created.actor))


_LONGEST = timedelta(days=3660)


def _lifetime(expires: str) -> timedelta:
    """``expires`` as a duration from now: more than nothing, at most ten years (a date past
    what the clock can hold would fail only when the token is created or checked)."""
    try:
        lifetime = parse_duration(expires, where="expires")
    except OverflowError:
        lifetime = _LONGEST + timedelta(days=1)
    if lifetime <= timedelta(0) or lifetime > _LONGEST:
        raise InvalidInput(f"a token lives more than 0s and at most 3660d, not {expires!r}", where="expires")
    return lifetime


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
        expires_at=None if p.get("expires_at") is None else str(p["expires_at"]),
        parent=None if p.get("parent") is None else str(p["parent"]),
    )


register_applier("TOKEN_CREATE", None)
register_applier("TOKEN_REVOKE", None)
