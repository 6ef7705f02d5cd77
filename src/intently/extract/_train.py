"""Training the recall layer (``_model.py``) from labelled JSONL files.

A sentence is a positive example of a type when a gold span of that type overlaps it; the loss
is L2-regularised logistic loss with the two classes weighted equally (positives are rare), fit
by a fixed number of full-batch gradient steps from zero. No randomness anywhere, so the same
files give the same weights: ``python -m intently.extract.train`` rebuilds the shipped
``model.json`` from the files it names in ``trained_on``.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._lexicon import load_lexicon
from ._model import SentenceModel, sentence_features
from ._models import CandidateType
from ._scoring import LabelledTurn, load_labelled
from ._text import normalize, sentences

__all__ = ["TrainSettings", "labelled_sentences", "train", "train_files"]


@dataclass(frozen=True)
class TrainSettings:
    """The knobs, recorded in the model file. Defaults are the ones measured in docs/extraction.md."""

    types: tuple[str, ...] = ("COMMITMENT", "OPEN_QUESTION", "DECISION")
    threshold: float = 0.8
    # Per-type bars where a type's curve differs from the default: measured in docs/extraction.md.
    thresholds: tuple[tuple[str, float], ...] = (("COMMITMENT", 0.65), ("OPEN_QUESTION", 0.7))
    l2: float = 5.0
    steps: int = 300
    learning_rate: float = 0.5
    min_count: int = 2
    keep_weight: float = 0.05


def labelled_sentences(rows: Sequence[LabelledTurn]) -> list[tuple[list[str], set[str]]]:
    """Each sentence's features and the gold types whose span overlaps it."""
    out: list[tuple[list[str], set[str]]] = []
    verbs = load_lexicon().action_verbs
    for row in rows:
        spans: list[tuple[str, int, int]] = []
        for label in row.labels:
            at = row.text.find(label.span) if label.span else -1
            if at >= 0 and label.type in CandidateType.__members__:  # an unknown type trains nothing
                spans.append((label.counted_as, at, at + len(label.span)))
        norm = normalize(row.text, verbs)  # as the extractor reads it
        for sent in sentences(norm):
            features = sentence_features(sent.text, sent.is_question)
            if not features:
                continue
            start, end = norm.original_span(sent.start, sent.end)
            out.append((features, {kind for kind, a, b in spans if a < end and b > start}))
    return out


def _fit(rows: np.ndarray, cols: np.ndarray, n_rows: int, n_cols: int, y: np.ndarray, s: TrainSettings) -> np.ndarray:
    """Weights (last entry: bias) by full-batch gradient descent on a sparse binary design."""
    w = np.zeros(n_cols + 1)
    positives = float(y.mean())
    sample = np.where(y == 1.0, 0.5 / max(positives, 1e-3), 0.5 / max(1.0 - positives, 1e-3))
    for _ in range(s.steps):
        z = np.bincount(rows, weights=w[cols], minlength=n_rows) + w[-1]
        p = 1.0 / (1.0 + np.exp(-np.clip(z, -60.0, 60.0)))
        g_row = (p - y) * sample
        grad = np.bincount(cols, weights=g_row[rows], minlength=n_cols + 1) / n_rows
        grad[-1] = g_row.sum() / n_rows
        grad[:-1] += s.l2 * w[:-1] / n_rows
        w -= s.learning_rate * grad
    return w


def train(
    rows: Sequence[LabelledTurn], settings: TrainSettings | None = None, *, trained_on: dict[str, object]
) -> SentenceModel:
    """Fit one model per type in ``settings.types`` on the sentences of ``rows``."""
    s = settings or TrainSettings()
    data = labelled_sentences(rows)
    counts = Counter(name for features, _ in data for name in features)
    vocab = {name: i for i, name in enumerate(sorted(n for n, c in counts.items() if c >= s.min_count))}
    row_idx: list[int] = []
    col_idx: list[int] = []
    for i, (features, _) in enumerate(data):
        for name in features:
            j = vocab.get(name)
            if j is not None:
                row_idx.append(i)
                col_idx.append(j)
    r = np.asarray(row_idx, dtype=np.int64)
    c = np.asarray(col_idx, dtype=np.int64)
    names = sorted(vocab, key=vocab.__getitem__)
    bias: dict[CandidateType, float] = {}
    weights: dict[CandidateType, dict[str, float]] = {}
    for type_name in s.types:
        y = np.asarray([1.0 if type_name in gold else 0.0 for _, gold in data])
        w = _fit(r, c, len(data), len(vocab), y, s)
        kind = CandidateType(type_name)
        bias[kind] = round(float(w[-1]), 4)
        weights[kind] = {
            name: round(float(w[j]), 4) for j, name in enumerate(names) if abs(float(w[j])) >= s.keep_weight
        }
    return SentenceModel(
        threshold=s.threshold,
        thresholds={CandidateType(name): bar for name, bar in s.thresholds if name in s.types},
        bias=bias,
        weights=weights,
        trained_on={**trained_on, "sentences": len(data), "turns": len(rows)},
        settings={k: v for k, v in s.__dict__.items() if k not in ("types", "thresholds")}
        | {"types": list(s.types), "thresholds": [list(pair) for pair in s.thresholds]},
    )


def train_files(paths: Sequence[Path], settings: TrainSettings | None = None) -> SentenceModel:
    """Train on labelled JSONL files, recording each file's name and SHA-256 in the model."""
    rows: list[LabelledTurn] = []
    files: dict[str, str] = {}
    for path in paths:
        rows.extend(load_labelled(path))
        files[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return train(rows, settings, trained_on={"files": files})
