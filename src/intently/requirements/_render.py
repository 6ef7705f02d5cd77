"""The injected block, and where it goes in a prompt."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..core.strings import quoted_line
from ._model import Requirement

__all__ = ["HEADER", "TEMPLATE_SLOT", "bullet", "omitted_marker", "place", "render_block"]

HEADER = (
    "## Standing project requirements\n\n"
    "These are established constraints and decisions for this project. Follow them unless the task "
    "explicitly overrides one. Requirement IDs like [req-1a2b3c4d5e6f] are for reference; one you believe "
    "is wrong or outdated should be flagged in your output, not silently ignored.\n"
)
TEMPLATE_SLOT = re.compile(r"\{\{\s*\$?intent\s*\}\}")


def bullet(req: Requirement) -> str:
    """``- [id] (domains) body`` on one line; project-level rules carry no domains.

    The body is quoted (:func:`quoted_line`): a rule comes from a file anyone can edit in a
    pull request or a commit message a scan read, and its text must not close the context
    block's tags, open a fake section, or carry escape and bidi characters into the prompt.
    """
    body = quoted_line(req.body)
    domains = req.scope.domains if req.scope.level == "domain" else []
    tag = f"({', '.join(domains)}) " if domains else ""
    return f"- [{req.id}] {tag}{body}"


def omitted_marker(count: int) -> str:
    return f"({count} more requirements omitted; run intently req list)"


def render_block(lines: Sequence[str], omitted: int) -> str:
    if not lines:
        return ""
    text = HEADER + "\n" + "\n".join(lines) + "\n"
    if omitted:
        text += "\n" + omitted_marker(omitted) + "\n"
    return text


def place(prompt: str, block: str) -> str:
    """Put ``block`` where the prompt says ``{{ intent }}``; otherwise prepend it.

    An empty block leaves a prompt without the slot byte-identical.
    """
    if TEMPLATE_SLOT.search(prompt):
        return TEMPLATE_SLOT.sub(lambda _m: block.rstrip("\n"), prompt)
    if not block:
        return prompt
    return block + "\n" + prompt
