"""The authored held-out sets (tests/triggers/data/blind-*.json) go through the same
evaluation as the dev data: the matcher must beat the reference matching on each."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_cli import ok_json

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("name", ["blind-01.json", "blind-02.json"])
def test_held_out_sets_beat_the_reference_matching(name: str) -> None:
    result = ok_json("eval", "triggers", "--data", str(DATA / name), home=DATA)
    ours, ref = result["intently"], result["exact_baseline"]
    assert ours["f1"] > ref["f1"]
    assert ours["recall"] > ref["recall"] and ours["precision"] >= ref["precision"]
    assert ours["tp"] + ours["fn"] == ref["tp"] + ref["fn"]  # both scored on the same gold pairs
