"""Namespace names. A namespace isolates every object and owns one log stream."""

from __future__ import annotations

import re

from .errors import InvalidInput

__all__ = ["namespace_problem", "validate_namespace"]

_NS = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


def validate_namespace(name: str) -> str:
    """Return the canonical (lower-case) namespace or raise :class:`InvalidInput`."""
    problem = namespace_problem(name)
    if problem is not None:
        raise InvalidInput(problem, where="namespace")
    return name.strip().lower()


def namespace_problem(name: str) -> str | None:
    """What is wrong with ``name`` as a namespace, or ``None``: for validators (the config's)
    that report the problem at their own place."""
    if not _NS.match(name.strip().lower()):
        return f"namespace {name!r} must be 1-64 of a-z 0-9 . _ - and start with a letter or digit"
    return None


def namespace_from_folder(folder_name: str) -> str:
    """Derive a default namespace from a project folder's name."""
    canon = re.sub(r"[^a-z0-9._-]+", "-", folder_name.lower()).strip("-._") or "default"
    return canon[:64]
