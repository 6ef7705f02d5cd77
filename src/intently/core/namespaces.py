"""Namespace names. A namespace isolates every object and owns one log stream."""

from __future__ import annotations

import re

from .errors import InvalidInput

__all__ = ["validate_namespace"]

_NS = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def validate_namespace(name: str) -> str:
    """Return the canonical (lower-case) namespace or raise :class:`InvalidInput`."""
    canon = name.strip().lower()
    if not _NS.match(canon):
        raise InvalidInput(
            f"namespace {name!r} must be 1-64 of a-z 0-9 . _ - and start with a letter or digit",
            where="namespace",
        )
    return canon


def namespace_from_folder(folder_name: str) -> str:
    """Derive a default namespace from a project folder's name."""
    canon = re.sub(r"[^a-z0-9._-]+", "-", folder_name.lower()).strip("-._") or "default"
    return canon[:64]
