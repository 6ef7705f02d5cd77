"""Who is calling, and the view of the home they act in.

Every route but ``/v1/health`` needs ``Authorization: Bearer <token>``. A namespaced route
binds the caller's actor to the namespace in the path and checks read access first, so a
namespace the caller may not read answers 404 exactly like one that does not exist.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from .._intently import Intently
from ..access import Permission
from ..context import run_engine as call
from ..core.actors import Actor
from ..core.errors import InvalidInput, NotFound
from ._json import jsonable
from ._problems import Unauthorized
from ._tokens import TokenStore

__all__ = ["Caller", "NamespaceView", "base", "run_engine"]

_bearer = HTTPBearer(auto_error=False, description="A token from `intently token create --actor ...`.")


def base(request: Request) -> Intently:
    ix: Intently = request.app.state.ix
    return ix


def caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Actor:
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise Unauthorized("a bearer token is required (intently token create --actor ...)")
    actor = TokenStore(base(request)).resolve(credentials.credentials)
    if actor is None:
        raise Unauthorized("unknown or revoked token")
    return actor


Caller = Annotated[Actor, Depends(caller)]

NamespacePath = Annotated[
    str, Path(description="The namespace (a-z 0-9 . _ -).", pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
]


def namespace_view(request: Request, namespace: NamespacePath, actor: Caller) -> Intently:
    try:
        view = base(request).as_actor(actor).in_namespace(namespace)
    except InvalidInput as exc:
        raise NotFound(f"namespace {namespace!r} not found") from exc
    view.require(Permission.READ)
    return view


NamespaceView = Annotated[Intently, Depends(namespace_view)]


def run_engine(view: Intently, engine: str, method: str, *args: Any, **fields: Any) -> Any:
    """The shared engine call (501 while the engine is not built), checkpointed, as JSON."""
    result = call(view, engine, method, *args, **fields)
    view.checkpoint()
    return jsonable(result)
