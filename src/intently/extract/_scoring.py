"""Scoring an extractor on a labelled JSONL file, per (turn, type).

A predicted type on a turn is a true positive when a gold label of that type is on that turn.
DECISION_IN_PROGRESS counts as OPEN_QUESTION and FOLLOW_UP as COMMITMENT, so an extractor is not
punished for the finer RFC types the labels do not draw.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.errors import InvalidInput
from ._base import ExtractionRejected, Extractor
from ._models import Candidate, CandidateType, Turn

__all__ = ["EVAL_TYPES", "RFC4_TYPES", "LabelledTurn", "Score", "load_labelled", "score"]

RFC4_TYPES: tuple[str, ...] = ("COMMITMENT", "GOAL", "OPEN_QUESTION", "RISK")
EVAL_TYPES: tuple[str, ...] = (*RFC4_TYPES, "DECISION")
# The data sets carry no timestamps; relative dates are resolved against this fixed instant.
DEFAULT_TIME = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class _Label(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: str
    span: str = ""
    owner: str | None = None
    due: str | None = None

    @property
    def counted_as(self) -> str:
        """The type this label is scored as (an unknown type stays itself and matches nothing)."""
        known = CandidateType.__members__.get(self.type)
        return known.coarse.value if known is not None else self.type


class LabelledTurn(BaseModel):
    """One line of the labelled file (see shared/datasets/README.md)."""

    model_config = ConfigDict(extra="ignore")
    id: str
    source: str = ""
    source_kind: str = ""
    speaker: str | None = None
    text: str
    time: datetime | None = None
    labels: list[_Label] = Field(default_factory=list)

    def turn(self) -> Turn:
        return Turn(
            speaker=self.speaker,
            text=self.text,
            time=self.time or DEFAULT_TIME,
            channel=self.source_kind,
            message_id=self.id,
        )

    def gold(self) -> set[str]:
        """The labelled types, finer RFC types counted as the type they refine (FOLLOW_UP as
        COMMITMENT, DECISION_IN_PROGRESS as OPEN_QUESTION), as the issue's scoring says."""
        return {label.counted_as for label in self.labels}


def load_labelled(path: Path) -> list[LabelledTurn]:
    """Read a labelled JSONL file; a bad line is an error naming ``file:line``."""
    rows: list[LabelledTurn] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError as exc:
        raise InvalidInput("no such data file", where=str(path)) from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rows.append(LabelledTurn.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise InvalidInput(str(exc).splitlines()[0], where=f"{path}:{number}") from exc
    return rows


@dataclass
class _Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, other: _Counts) -> None:
        self.tp, self.fp, self.fn = self.tp + other.tp, self.fp + other.fp, self.fn + other.fn

    def figures(self) -> dict[str, float]:
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


@dataclass
class Score:
    """Per-type counts, micro averages, speed, and the turns each error happened on."""

    counts: dict[str, _Counts] = field(default_factory=lambda: {t: _Counts() for t in EVAL_TYPES})
    turns: int = 0
    # Turns on which the extractor proposed a type the labels lack: what a reviewer wades through.
    turns_with_wrong_type: int = 0
    seconds: float = 0.0
    errors: list[dict[str, Any]] = field(default_factory=list)
    rejected: int = 0

    @classmethod
    def pooled(cls, scores: Iterable[Score]) -> Score:
        """One score over several files, counted as if they were one (speed and errors left out)."""
        total = cls()
        for one in scores:
            total.turns += one.turns
            total.turns_with_wrong_type += one.turns_with_wrong_type
            for name in EVAL_TYPES:
                total.counts[name].add(one.counts[name])
        return total

    def micro(self, types: Iterable[str]) -> dict[str, float]:
        total = _Counts()
        for name in types:
            total.add(self.counts[name])
        return total.figures()

    def to_json(self) -> dict[str, Any]:
        return {
            "types": {t: {**c.figures(), "tp": c.tp, "fp": c.fp, "fn": c.fn} for t, c in self.counts.items()},
            "rfc4": self.micro(RFC4_TYPES),
            "all": self.micro(EVAL_TYPES),
            "turns": self.turns,
            "turns_with_wrong_type": self.turns_with_wrong_type,
            "rejected": self.rejected,
            "turns_per_second": round(self.turns / self.seconds, 1) if self.seconds > 0 else None,
        }


def _safe(extractor: Extractor, turn: Turn, result: Score) -> list[Candidate]:
    """A rejected answer predicts nothing for that turn (and is counted), as in ``observe``."""
    try:
        return extractor.extract(turn)
    except ExtractionRejected:
        result.rejected += 1
        return []


def score(extractor: Extractor, rows: list[LabelledTurn], *, repeat: int = 1) -> Score:
    """Run ``extractor`` on every turn and count per (turn, type); time the extraction alone,
    once the extractor is warm (:meth:`Extractor.warm`: the word lists compiled), so that
    ``turns_per_second`` is its reading speed, the same for one pass as for ``repeat``."""
    result = Score(turns=len(rows))
    turns = [row.turn() for row in rows]
    extractor.warm()
    started = time.perf_counter()
    predictions = [_safe(extractor, turn, result) for turn in turns]
    for _ in range(repeat - 1):
        for turn in turns:
            extractor.extract(turn)
    result.seconds = (time.perf_counter() - started) / max(1, repeat)
    for row, cands in zip(rows, predictions, strict=True):
        predicted = {c.type.coarse.value for c in cands}
        gold = row.gold()
        result.turns_with_wrong_type += bool((predicted - gold) & set(EVAL_TYPES))
        for name in EVAL_TYPES:
            p, g = name in predicted, name in gold
            counts = result.counts[name]
            if p and g:
                counts.tp += 1
            elif p:
                counts.fp += 1
                spans = [c.span for c in cands if c.type.coarse.value == name]
                result.errors.append({"id": row.id, "type": name, "kind": "fp", "spans": spans})
            elif g:
                counts.fn += 1
                spans = [lab.span for lab in row.labels if lab.counted_as == name]
                result.errors.append({"id": row.id, "type": name, "kind": "fn", "spans": spans})
    return result
