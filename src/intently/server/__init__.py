"""The HTTP API: FastAPI over the library, bearer tokens mapped to actors.

Importing this package is light (no FastAPI): it registers the record-only appliers of the
token operations, so it can sit in the engine list. :func:`create_app` imports FastAPI on
first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._tokens import IssuedToken, TokenInfo, TokenStore, hash_token

if TYPE_CHECKING:
    from fastapi import FastAPI

    from .._intently import Intently

__all__ = ["IssuedToken", "TokenInfo", "TokenStore", "create_app", "hash_token"]


def create_app(ix: Intently, **options: Any) -> FastAPI:
    """The API for the home ``ix`` opened (see :func:`intently.server._app.create_app`)."""
    from ._app import create_app as build

    return build(ix, **options)
