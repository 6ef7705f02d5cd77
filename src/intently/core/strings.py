"""One string or many: the shape of ``paths``, ``domains`` and list filters (goals by state, type, priority)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["str_list"]


def str_list(value: str | Sequence[str] | None) -> list[str]:
    """``value`` as a list of strings; a bare string is one item.

    A ``str`` is itself a sequence of strings, so code that expects a list of paths and is
    handed ``"src/api/payments.py"`` would otherwise iterate it letter by letter and quietly
    match nothing. Every API that takes ``paths``, ``domains`` or a filter of one or several
    values goes through this, so they all read a bare string the same way: as the one item it names.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]
