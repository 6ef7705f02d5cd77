"""The FastAPI application for one home."""

from __future__ import annotations

from fastapi import FastAPI

from .. import __version__
from .._intently import Intently
from ._core_routes import router as core_router
from ._docs import install_docs
from ._engine_routes import router as engine_router
from ._headers import NoSniff
from ._problems import BodyLimit, install_handlers
from ._witness import DEFAULT_WITNESS_INTERVAL, WitnessKeeper

__all__ = ["DEFAULT_MAX_BODY", "DEFAULT_WITNESS_INTERVAL", "create_app"]

DEFAULT_MAX_BODY = 1_000_000


def create_app(
    ix: Intently, *, max_body: int = DEFAULT_MAX_BODY, witness_interval: float = DEFAULT_WITNESS_INTERVAL
) -> FastAPI:
    """An app serving ``ix``'s home; each request acts as its token's actor.

    The schema is at ``/openapi.json``, a self-contained reference at ``/docs`` (FastAPI's
    Swagger UI and ReDoc pages load from CDNs, so they are off); bodies over ``max_body``
    bytes get 413. Every write is signed into the database's checkpoints at once; the
    tracked witness file is caught up every ``witness_interval`` seconds and at shutdown
    (``0``: at every write), see :mod:`intently.server._witness`.
    """
    keeper = WitnessKeeper(ix, witness_interval)
    app = FastAPI(
        title="intently",
        version=__version__,
        description="The intent layer for AI agents: goals, project rules, standing reminders and a tool-call gate.",
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
        lifespan=keeper.running,
    )
    install_docs(app)
    app.state.ix = ix
    install_handlers(app)
    app.include_router(core_router)
    app.include_router(engine_router)
    app.add_middleware(BodyLimit, max_bytes=max_body)
    app.add_middleware(NoSniff)  # outermost: the 413 of BodyLimit gets it too
    from ..console import mount_console

    mount_console(app, ix)
    return app
