"""Package attributes loaded on first use (PEP 562), for packages on a start-up-critical path.

``import intently.hooks`` runs ``intently/__init__.py`` and ``intently/hooks/__init__.py``
before the hook client's first line; eager re-exports there would import every engine on
each tool call. A package hands :func:`lazy_exports` a map of name to defining module and
binds the two functions it returns as its ``__getattr__`` and ``__dir__``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, MutableMapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, where: dict[str, str], namespace: MutableMapping[str, Any], exported: Iterable[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``where`` maps each lazily exported name
    to its module (relative to ``package``); a loaded name is stored in ``namespace`` so later
    lookups never come back here."""
    listed = frozenset(exported)

    def getattr_(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *listed})

    return getattr_, dir_
