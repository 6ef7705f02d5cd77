"""The derived vector index: keyed by content hash and model id, self-healing, atomic."""

from __future__ import annotations

import json
from pathlib import Path

from intently.embed import HashingEmbedder, VectorIndex


def test_only_new_or_changed_texts_are_embedded(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    index = VectorIndex(tmp_path, emb)
    first = index.vectors(["alpha rule", "beta rule"])
    assert index.embedded == 2
    reopened = VectorIndex(tmp_path, emb)
    assert reopened.vectors(["alpha rule", "beta rule"]) == first
    assert reopened.embedded == 0
    reopened.vectors(["alpha rule", "beta rule, reworded"])
    assert reopened.embedded == 1
    assert (tmp_path / ".gitignore").read_text() == "*\n"


def test_corrupt_or_foreign_model_files_are_rebuilt(tmp_path: Path) -> None:
    emb = HashingEmbedder()
    index = VectorIndex(tmp_path, emb)
    index.vectors(["alpha rule"])
    assert index.path is not None
    index.path.write_text("{not json")
    healed = VectorIndex(tmp_path, emb)
    assert healed.vectors(["alpha rule"]) == emb.embed(["alpha rule"])
    assert healed.embedded == 1
    assert json.loads(index.path.read_text())["model_id"] == emb.model_id
    other = VectorIndex(tmp_path, HashingEmbedder(dim=64))
    other.vectors(["alpha rule"])
    assert other.embedded == 1  # another model never reuses these vectors


def test_vanished_texts_are_pruned(tmp_path: Path) -> None:
    index = VectorIndex(tmp_path, HashingEmbedder())
    index.vectors(["one", "two", "three"])
    index.vectors(["one"])
    assert index.path is not None
    assert len(json.loads(index.path.read_text())["entries"]) == 1
