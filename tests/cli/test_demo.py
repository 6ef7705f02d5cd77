"""``intently demo``'s foundation chapters: the log verifies, and a tampered copy does not."""

from __future__ import annotations

import io

from rich.console import Console

from intently.demo import run


def test_demo_verifies_and_shows_tampering_caught() -> None:
    buffer = io.StringIO()
    assert run(Console(file=buffer, width=200)) == 0
    text = buffer.getvalue()
    assert "verifies" in text
    assert "LeafMismatch: stream 'sample' at seq" in text
