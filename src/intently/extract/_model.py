"""The rule extractor's statistical recall layer: one logistic regression per type over a
sentence's words and word pairs, shipped as data (``model.json``) and scored in pure Python.

Why it exists: the rules read structure and are precise, but new text keeps bringing forms no
cue list names, and their recall on unseen documents stays under half (docs/extraction.md). A
linear model over the labelled corpus catches some of those forms. It only ever *adds* a type
the rules did not find in a turn, it proposes like everything else (people decide in review),
and it is deterministic: fixed weights, features summed in sorted order, no randomness, no
download. Training lives in ``_train.py``; this module only reads and scores.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.errors import InvalidInput, first_problem
from ._models import CandidateType

__all__ = ["MODEL_FORMAT", "SentenceModel", "load_model", "sentence_features"]

MODEL_FORMAT = 1
_TOKEN = re.compile(r"[a-z]+(?:'[a-z]+)?|\?|!")


def sentence_features(text: str, is_question: bool) -> list[str]:
    """The sparse binary features of one (normalised) sentence, sorted.

    Words and adjacent word pairs carry the content; the first word or two carry the sentence's
    form ("should we", "will", "let's"), and whether it ends as a question carries its mood.
    The same function serves training and scoring, so the two cannot drift apart.
    """
    tokens = _TOKEN.findall(text.lower())
    if not tokens:
        return []
    found = {"first=" + tokens[0], f"q={int(is_question)}"}
    if len(tokens) > 1:
        found.add(f"first2={tokens[0]}_{tokens[1]}")
    for i, word in enumerate(tokens):
        found.add("w=" + word)
        if i + 1 < len(tokens):
            found.add(f"b={word}_{tokens[i + 1]}")
    return sorted(found)


class _TypeFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    bias: float
    weights: dict[str, float]


class _ModelFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: int = Field(ge=MODEL_FORMAT, le=MODEL_FORMAT)
    # (0, 1]: a bar of 1.0 keeps the layer from proposing that type, as `[extract] model_thresholds` allows.
    threshold: float = Field(gt=0.0, le=1.0)
    thresholds: dict[CandidateType, Annotated[float, Field(gt=0.0, le=1.0)]] = Field(default_factory=dict)
    types: dict[CandidateType, _TypeFile]
    trained_on: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class SentenceModel:
    """Per-type weights and the probability a sentence must reach to propose that type.

    ``threshold`` is the default bar; ``thresholds`` overrides it per type, because the types'
    precision-recall curves differ (docs/extraction.md, "Per-type thresholds").
    """

    threshold: float
    bias: dict[CandidateType, float]
    weights: dict[CandidateType, dict[str, float]]
    trained_on: dict[str, Any]
    settings: dict[str, Any]
    thresholds: dict[CandidateType, float] = field(default_factory=dict)

    @property
    def types(self) -> tuple[CandidateType, ...]:
        return tuple(self.weights)

    def threshold_for(self, kind: CandidateType) -> float:
        """The probability a sentence must reach for the layer to propose ``kind``."""
        return self.thresholds.get(kind, self.threshold)

    def probability(self, kind: CandidateType, features: list[str]) -> float:
        """P(type | sentence); ``features`` sorted, as :func:`sentence_features` returns them."""
        table = self.weights[kind]
        z = self.bias[kind]
        for name in features:
            z += table.get(name, 0.0)
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": MODEL_FORMAT,
            "threshold": self.threshold,
            **({"thresholds": {kind.value: t for kind, t in self.thresholds.items()}} if self.thresholds else {}),
            "trained_on": self.trained_on,
            "settings": self.settings,
            "types": {
                kind.value: {"bias": self.bias[kind], "weights": dict(sorted(self.weights[kind].items()))}
                for kind in self.weights
            },
        }

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=0, sort_keys=False) + "\n", encoding="utf-8")

    @classmethod
    def from_json(cls, raw: object, *, where: str) -> SentenceModel:
        try:
            data = _ModelFile.model_validate(raw)
        except ValidationError as exc:
            field, message = first_problem(exc)
            raise InvalidInput(message, where=f"{where}: {field}") from exc
        return cls(
            threshold=data.threshold,
            thresholds=dict(data.thresholds),
            bias={kind: t.bias for kind, t in data.types.items()},
            weights={kind: t.weights for kind, t in data.types.items()},
            trained_on=data.trained_on,
            settings=data.settings,
        )

    @classmethod
    def from_path(cls, path: Path) -> SentenceModel:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InvalidInput(f"cannot read the extraction model: {exc}", where=str(path)) from exc
        return cls.from_json(raw, where=str(path))


@cache
def load_model() -> SentenceModel:
    """The model shipped with the package (``extract/model.json``), read once per process."""
    ref = resources.files("intently.extract").joinpath("model.json")
    return SentenceModel.from_json(json.loads(ref.read_text(encoding="utf-8")), where="intently/extract/model.json")
