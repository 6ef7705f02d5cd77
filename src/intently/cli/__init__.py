"""The ``intently`` command: a thin skin over the library (see ``cli/_app.py``)."""

from __future__ import annotations

from ._app import app, main

__all__ = ["app", "main"]
