"""The dev-set table in docs/extraction.md is what `intently eval extraction` prints today."""

from __future__ import annotations

import re
from pathlib import Path

from intently.extract import EVAL_TYPES, RFC4_TYPES, RuleExtractor, load_labelled, score

DOC = Path(__file__).parents[2] / "docs" / "extraction.md"
_ROW = re.compile(r"^\| (\*\*rfc4\*\*|[A-Z_]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| (?:(\d+) / (\d+) / (\d+))? ?\|$")


def _dev_table() -> dict[str, tuple[str, ...]]:
    """The rows of the table under the "**Dev**" paragraph, by type."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("**Dev** (`intently eval extraction --data ../shared/datasets/extraction-dev.jsonl`")
    rows: dict[str, tuple[str, ...]] = {}
    for line in text[start:].splitlines()[1:]:
        m = _ROW.match(line.strip())
        if m:
            rows[m.group(1).strip("*")] = m.groups()[1:]
        elif rows and not line.startswith("|"):
            break
    return rows


def test_the_dev_table_in_the_docs_is_the_evaluation_today(shared_dir: Path) -> None:
    result = score(RuleExtractor(), load_labelled(shared_dir / "datasets" / "extraction-dev.jsonl"))
    table = _dev_table()
    assert set(table) == {*EVAL_TYPES, "rfc4"}
    for name in EVAL_TYPES:
        c = result.counts[name]
        micro = result.micro([name])
        p, r, f1, tp, fp, fn = table[name]
        assert (int(tp), int(fp), int(fn)) == (c.tp, c.fp, c.fn), name
        assert (p, r, f1) == tuple(f"{micro[k]:.2f}" for k in ("precision", "recall", "f1")), name
    rfc4 = result.micro(RFC4_TYPES)
    assert table["rfc4"][:3] == tuple(f"{rfc4[k]:.2f}" for k in ("precision", "recall", "f1"))


def test_the_agent_session_figures_of_today_in_the_docs_are_what_the_eval_prints() -> None:
    """The agent-session table records each set's first score; the line under it claims what
    the command prints now, which had drifted (b 5 and f 3 in the table, 4 and 1 today)."""
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    m = re.search(r"prints turns proposing a wrong type of ((?:[a-g] \d+, )+[a-g] \d+) \(", text)
    assert m, "the 'Run today' line about the agent-session sets is gone"
    claimed = {k: int(v) for k, v in (part.split() for part in m.group(1).split(", "))}
    data = Path(__file__).parent / "data"
    for name, wrong in claimed.items():
        result = score(RuleExtractor(), load_labelled(data / f"agent-session-{name}.jsonl"))
        assert result.to_json()["turns_with_wrong_type"] == wrong, name
