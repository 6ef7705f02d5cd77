"""One string or many: the shape of ``paths``, ``domains`` and list filters (goals by state, type, priority)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["quoted_line", "str_list"]


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


def quoted_line(text: str) -> str:
    """``text`` as one line of quoted data inside a rendered block (the context block, the
    requirements block, a reminder line).

    Item text comes from files, commits and agents nobody reviewed line by line, so it must
    not be able to shape the block around it: line breaks (U+2028 and U+0085 too) are
    flattened, so it cannot start a heading or a bullet of its own; characters that are not
    printable (ANSI escapes and other controls, zero-width and bidi marks that hide or
    reorder what a reviewer sees) become spaces; and ``<``/``>`` become ``‹``/``›``, so it
    can neither close nor open a tag. The replacements are one character each, so what a
    person wrote stays readable and costs the same tokens.
    """
    flat = text if text.isprintable() else "".join(ch if ch.isprintable() else " " for ch in text)
    return " ".join(flat.split()).replace("<", "\u2039").replace(">", "\u203a")
