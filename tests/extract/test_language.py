"""The rule extractor says when a turn is not in English instead of returning a silent nothing."""

from __future__ import annotations

from pathlib import Path

from intently import Intently
from intently.extract._language import looks_english
from intently.extract._scoring import load_labelled
from tests.extract.test_cli import _run

DATA = Path(__file__).parent / "data"


def test_no_labelled_english_turn_is_taken_for_another_language(shared_dir: Path) -> None:
    """Every turn of every labelled file is English: none may be reported as unread."""
    paths = [*sorted(DATA.glob("*.jsonl")), shared_dir / "datasets" / "extraction-dev.jsonl"]
    rows = [row for path in paths for row in load_labelled(path)]
    assert len(rows) > 5000
    assert [row.id for row in rows if not looks_english(row.text)] == []


def test_short_and_mixed_text_counts_as_english() -> None:
    for text in ("ok", "LGTM, merging now", "Danke! I'll send it tomorrow.", "merci", "`git rebase -i`"):
        assert looks_english(text), text


def test_the_cli_says_a_turn_was_not_read(ix: Intently) -> None:
    shown = _run(ix, "review", "observe", "Je vais envoyer le rapport demain si l'équipe est d'accord avec nous.")
    assert "does not look like English" in shown and "llm extractor" in shown
