"""One string or many: the shape of ``paths``, ``domains`` and list filters (goals by state, type, priority)."""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["printable", "quoted_line", "str_list"]


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


def printable(text: str, keep: str = "") -> str:
    """``text`` with every character that is not printable (and not in ``keep``) made a space.

    The one rule for untrusted text shown to a person or a model: an ANSI escape, another
    control, a zero-width or bidi mark is shown inert, and the words around it stay. A space
    for each, not nothing, so two words never run together. Printable text, the usual case,
    is returned as it is without a walk over its characters."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch in keep else " " for ch in text)


def quoted_line(text: str) -> str:
    """``text`` as one line of quoted data inside a rendered block (the context block, the
    requirements block, a reminder line).

    Item text comes from files, commits and agents nobody reviewed line by line, so it must
    not be able to shape the block around it: line breaks (U+2028 and U+0085 too) are
    flattened, so it cannot start a heading or a bullet of its own; characters that are not
    printable (ANSI escapes and other controls, zero-width and bidi marks that hide or
    reorder what a reviewer sees) become spaces; and the angle brackets of anything shaped
    like a tag (``</section>``, ``<system>``, ``<!--``) become ``‹``/``›``, so it can neither
    close nor open one. Other angle brackets stay, since rules are often about code (``$this->``,
    ``x <= y``, ``=>``). The replacements are one character each, so what a person wrote stays
    readable and costs the same tokens.
    """
    # Tabs and line breaks become spaces first, in one pass: a rule's usual text (statement,
    # then its rationale on the next line) is then printable and skips the per-character walk,
    # which was most of rendering a block at 2,000 rules. Either way they end up one space.
    text = text.translate(_BREAKS)
    line = _TAG.sub("\u2039\\1\u203a", " ".join(printable(text).split()))
    return _TAG_OPEN.sub("\u2039", line)


# A tag: "<" then a letter, "/", "!" or "?", up to its ">"; and such an opening left unclosed.
_BREAKS = str.maketrans({"\n": " ", "\r": " ", "\t": " "})
_TAG = re.compile(r"<([A-Za-z/!?][^<>]*)>")
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
