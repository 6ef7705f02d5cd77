"""Routes that need only the foundation: health, whoami, the log, grants, the context block."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from .. import __version__
from ..access import Permission
from ..context import assemble, engine_method
from ..core.actors import Actor
from ..log import verify_inclusion
from ._deps import Caller, NamespaceView, base
from ._models import ACTOR_PATTERN, ContextRequest, GrantRequest
from ._problems import PROBLEM_RESPONSES

__all__ = ["router"]

router = APIRouter(prefix="/v1", responses=PROBLEM_RESPONSES)

Limit = Annotated[int, Query(ge=1, le=500, description="Page size.")]
After = Annotated[int, Query(ge=0, le=2**53, description="Cursor: the last sequence number already seen.")]

#: What ``GET /v1/engines`` describes: every engine call a route, an MCP tool or a context section
#: makes (``tests/server/test_engine_routes.py`` holds it to them, so a new route cannot be left
#: out, as the goals' get, cancel, archive and completion-claim calls once were). Extend, never
#: rename: clients read these keys.
_ENGINE_METHODS = {
    "goals": (
        "bundle",
        "add",
        "list_intents",
        "edit",
        "complete",
        "review_queue",
        "promote",
        "dismiss",
        "endorse",
        "get",
        "cancel",
        "archive",
        "claim_completion",
        "confirm_completion",
        "reject_completion",
    ),
    "triggers": ("match", "add", "list", "cancel", "test"),
    "requirements": ("select", "list", "scan"),
    "gate": ("gate", "approve"),
    "extraction": ("observe",),
}


@router.get("/health", tags=["meta"])
def health() -> dict[str, str]:
    """Liveness; needs no token."""
    return {"status": "ok", "version": __version__}


@router.get("/whoami", tags=["meta"])
def whoami(request: Request, actor: Caller) -> dict[str, Any]:
    """The actor the token stands for, and the namespaces it may read."""
    ix = base(request).as_actor(actor)
    readable = ix.access.readable_namespaces(actor)
    return {
        "actor": str(actor),
        "namespaces": {ns: sorted(p.value for p in ix.access.permissions(actor, ns)) for ns in readable},
        "default_namespace": ix.namespace,
    }


@router.get("/engines", tags=["meta"])
def engines(request: Request, actor: Caller) -> dict[str, dict[str, bool]]:
    """Which engine operations this build provides (routes of missing ones answer 501)."""
    ix = base(request).as_actor(actor)
    return {e: {m: engine_method(ix, e, m) is not None for m in methods} for e, methods in _ENGINE_METHODS.items()}


@router.get("/namespaces/{namespace}/log/ops", tags=["log"])
def log_ops(view: NamespaceView, after: After = 0, limit: Limit = 100) -> dict[str, Any]:
    """Operations of the namespace's stream in order, a page at a time (``next_after`` continues)."""
    ops = view.log.read(view.namespace, after=after, limit=limit + 1)
    page = ops[:limit]
    return {
        "items": [o.to_json() for o in page],
        "next_after": page[-1].seq if len(ops) > limit else None,
    }


@router.get("/namespaces/{namespace}/log/verify", tags=["log"])
def log_verify(view: NamespaceView) -> dict[str, Any]:
    """Recompute the stream's leaves, tree and signatures."""
    return view.log.verify([view.namespace]).to_json()


@router.get("/namespaces/{namespace}/log/proof/{seq}", tags=["log"])
def log_proof(
    view: NamespaceView,
    seq: Annotated[int, Path(ge=1, le=2**53, description="The operation's sequence number.")],
    size: Annotated[int | None, Query(ge=1, le=2**53, description="Tree size to prove against (default: now).")] = None,
) -> dict[str, Any]:
    """Inclusion proof of operation ``seq``, checked before it is returned."""
    data = view.log.inclusion_proof(view.namespace, seq, size)
    verify_inclusion(
        bytes.fromhex(data["leaf_hash"]),
        data["leaf_index"],
        data["tree_size"],
        [bytes.fromhex(h) for h in data["proof"]],
        bytes.fromhex(data["root"]),
    )
    data["verified"] = True
    return data


@router.get("/namespaces/{namespace}/log/checkpoints", tags=["log"])
def log_checkpoints(view: NamespaceView) -> dict[str, Any]:
    """The latest signed checkpoint of the stream (``null`` before the first)."""
    cp = view.log.latest_checkpoints().get(view.namespace)
    return {"checkpoint": cp.to_json() if cp else None, "size": view.log.size(view.namespace)}


@router.get("/namespaces/{namespace}/grants", tags=["access"])
def grants_list(view: NamespaceView) -> dict[str, Any]:
    return {"owner": str(view.access.owner), "items": view.access.grants()}


@router.post("/namespaces/{namespace}/grants", status_code=201, tags=["access"])
def grants_add(view: NamespaceView, body: GrantRequest) -> dict[str, str]:
    """Grant a permission (needs admin)."""
    view.access.grant(Actor.parse(body.actor), body.permission)
    view.checkpoint()
    return {"namespace": view.namespace, "actor": str(Actor.parse(body.actor)), "permission": body.permission.value}


@router.delete("/namespaces/{namespace}/grants/{actor}/{permission}", tags=["access"])
def grants_revoke(
    view: NamespaceView, actor: Annotated[str, Path(pattern=ACTOR_PATTERN)], permission: Permission
) -> dict[str, Any]:
    """Revoke a permission (needs admin)."""
    revoked = view.access.revoke(Actor.parse(actor), permission)
    view.checkpoint()
    return {"namespace": view.namespace, "actor": actor, "permission": permission.value, "revoked": revoked}


@router.post("/namespaces/{namespace}/context", tags=["context"])
def context(view: NamespaceView, body: ContextRequest) -> dict[str, Any]:
    """The context block for a task: requirements, goals and standing intents under one budget.
    Firing a standing intent charges its budget and starts its cooldown, a change a reader may
    not make: ``fire`` needs write, and a reader previews with ``fire: false``."""
    if body.fire:
        view.require(Permission.WRITE)
    result = assemble(
        view,
        body.query,
        session=body.session,
        channel=body.channel,
        conversation=body.conversation,
        sender=body.sender,
        paths=tuple(body.paths),
        budget=body.budget,
        fire=body.fire,
    )
    view.checkpoint()
    return result.to_json()
